"""When the worker runs next: a fixed interval (``6h``, ``30m``, ``1d``, ``90s``) or a 5-field cron
expression (``minute hour day-of-month month day-of-week``, UTC). Pure functions, no I/O.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from .errors import ConfigError

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_FIELDS = [("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 6)]


def parse_interval(text: str) -> timedelta:
    """``"6h"`` -> 6 hours. Units s, m, h, d; combinations like ``1h30m`` work."""
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([smhd])", text.strip().lower())
    if not parts or "".join(f"{n}{u}" for n, u in parts) != re.sub(r"\s+", "", text.strip().lower()):
        raise ConfigError(f"interval {text!r} is not understood; write e.g. 6h, 30m, 1d or 1h30m")
    seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise ConfigError(f"interval {text!r} must be positive")
    return timedelta(seconds=seconds)


def _parse_field(expr: str, name: str, lo: int, hi: int) -> set[int]:
    values: set[int] = set()
    for part in expr.split(","):
        step = 1
        if "/" in part:
            part, step_s = part.split("/", 1)
            if not step_s.isdigit() or int(step_s) == 0:
                raise ConfigError(f"cron {name} step {step_s!r} must be a positive integer")
            step = int(step_s)
        if part == "*":
            start, end = lo, hi
        elif "-" in part:
            a, b = part.split("-", 1)
            if not (a.isdigit() and b.isdigit()):
                raise ConfigError(f"cron {name} range {part!r} must be two numbers like 1-5")
            start, end = int(a), int(b)
        elif part.isdigit():
            start = end = int(part)
            if step != 1:
                end = hi
        else:
            raise ConfigError(f"cron {name} value {part!r} is not a number, range, list or *")
        if name == "day of week" and end == 7:  # 7 is Sunday too
            values.add(0)
            if start == 7:
                continue
            end = 6
        if start < lo or end > hi or start > end:
            raise ConfigError(f"cron {name} {part!r} is outside {lo}-{hi}")
        values.update(range(start, end + 1, step))
    return values


class Cron:
    """A parsed 5-field cron expression; ``next_after(t)`` is the first matching minute after ``t`` (UTC)."""

    def __init__(self, expr: str):
        fields = expr.split()
        if len(fields) != 5:
            raise ConfigError(f"cron expression {expr!r} needs 5 fields: minute hour day-of-month month day-of-week")
        self.expr = expr
        self.minute, self.hour, self.dom, self.month, self.dow = (
            _parse_field(f, name, lo, hi) for f, (name, lo, hi) in zip(fields, _FIELDS)
        )
        self._dom_any, self._dow_any = fields[2] == "*", fields[4] == "*"

    def _day_matches(self, t: datetime) -> bool:
        dom = t.day in self.dom
        dow = (t.isoweekday() % 7) in self.dow
        if self._dom_any or self._dow_any:  # cron semantics: both restricted -> either matches
            return dom and dow
        return dom or dow

    def next_after(self, t: datetime) -> datetime:
        t = (t.astimezone(timezone.utc) if t.tzinfo else t.replace(tzinfo=timezone.utc)).replace(second=0, microsecond=0)
        t += timedelta(minutes=1)
        limit = t + timedelta(days=366 * 5)
        while t < limit:
            if t.month not in self.month or not self._day_matches(t):
                t = (t + timedelta(days=1)).replace(hour=0, minute=0)
                continue
            if t.hour not in self.hour:
                t = (t + timedelta(hours=1)).replace(minute=0)
                continue
            if t.minute not in self.minute:
                t += timedelta(minutes=1)
                continue
            return t
        raise ConfigError(f"cron expression {self.expr!r} never matches")


def next_run(schedule: str, after: datetime) -> datetime:
    """The next run time for an interval (``6h``) or a cron expression, after ``after`` (a finished run)."""
    if len(schedule.split()) == 5:
        return Cron(schedule).next_after(after)
    return after + parse_interval(schedule)

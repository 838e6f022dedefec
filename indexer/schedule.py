"""When the worker runs next: a fixed interval (``6h``, ``30m``, ``1d``, ``90s``) or a cron expression (in UTC, or
in a ``CRON_TZ`` zone): five fields (``minute hour day-of-month month day-of-week``, with ranges, lists, steps and
the names ``JAN``-``DEC`` and ``SUN``-``SAT``) or a nickname (``@hourly``, ``@daily``/``@midnight``, ``@weekly``,
``@monthly``, ``@yearly``/``@annually``). Cron expressions are parsed by croniter (standard semantics: when both the
day of month and the day of week are restricted, either matches). A leading ``CRON_TZ=ZONE`` (or ``TZ=ZONE``; an
IANA zone such as ``Europe/Berlin``, as cronie and Kubernetes CronJobs take it) reads the expression in that zone's
local time, daylight saving included. Pure functions, no I/O beyond the zone database.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from .errors import ConfigError

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
#: the longest interval between two passes (a leap year): a longer one is a typo, and past about 2.7 million years
#: the next pass's date overflowed Python's datetime (``--every 99999999h`` crashed with OverflowError)
MAX_INTERVAL = timedelta(days=366)
NICKNAMES = ("@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually")


def parse_interval(text: str) -> timedelta:
    """``"6h"`` -> 6 hours. Units s, m, h, d; combinations like ``1h30m`` work; at most :data:`MAX_INTERVAL`
    (366 days), else ConfigError."""
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([smhd])", text.strip().lower())
    if not parts or "".join(f"{n}{u}" for n, u in parts) != re.sub(r"\s+", "", text.strip().lower()):
        raise ConfigError(f"interval {text!r} is not understood; write e.g. 6h, 30m, 1d or 1h30m")
    seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise ConfigError(f"interval {text!r} must be positive")
    if seconds > MAX_INTERVAL.total_seconds():
        raise ConfigError(f"interval {text!r} is longer than the longest allowed, {MAX_INTERVAL.days}d (366 days); "
                          "for a rarer schedule use a cron expression such as @yearly")
    return timedelta(seconds=seconds)


_ZONE = re.compile(r"^(?:CRON_TZ|TZ)=(\S*)\s*(.*)$", re.S)


def _split_zone(schedule: str) -> tuple[str | None, str]:
    """``"CRON_TZ=Europe/Berlin 0 3 * * *"`` -> ``("Europe/Berlin", "0 3 * * *")``; without the prefix,
    ``(None, text)``."""
    text = schedule.strip()
    m = _ZONE.match(text)
    return (m.group(1), m.group(2).strip()) if m else (None, text)


def is_cron(schedule: str) -> bool:
    """True when ``schedule`` is meant as a cron expression (five fields or an ``@`` nickname, after an optional
    ``CRON_TZ=ZONE``), not an interval."""
    zone, text = _split_zone(schedule)
    return zone is not None or text.startswith("@") or len(text.split()) == 5


def _zone(name: str, expr: str):
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        if not name or name.startswith(("/", ".")) or ".." in name:
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"cron expression {expr!r}: time zone {name!r} is not known; name an IANA zone such as "
                          "CRON_TZ=Europe/Berlin or CRON_TZ=America/New_York (or leave CRON_TZ out for UTC)") from None


_FIELDS = ("minute", "hour", "day", "month", "weekday")
_NAMES = ({}, {}, {}, {m: i for i, m in enumerate(("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT",
                                                  "NOV", "DEC"), 1)},
          {d: i for i, d in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))})


def _check_ranges(expr: str, fields: list[str]) -> None:
    """A ConfigError naming the field of a range whose start is after its end (``5-1``, ``FRI-MON``), which cron
    refuses and croniter took as a wrap-around (``5-1 * * * *`` ran at :31)."""
    for name, names, field in zip(_FIELDS, _NAMES, fields):
        for part in field.split(","):
            lo, sep, hi = part.split("/")[0].partition("-")
            if not sep:
                continue
            a, b = (names.get(x.upper(), int(x) if x.isdigit() else None) for x in (lo, hi))
            if name == "weekday" and b == 0:  # Sunday is 0 and 7: a range ending on it ends the week (MON-SUN, 1-0)
                b = 7
            if a is not None and b is not None and a > b:
                raise ConfigError(f"cron expression {expr!r}: the {name} range {part.split('/')[0]!r}: its start is "
                                  f"after its end; cron does not wrap a range around: write it in order, or as a list "
                                  f"of two ranges (e.g. 22-23,0-2)")


class Cron:
    """A cron expression (see the module docstring); ``next_after(t)`` is the first matching minute after ``t``
    (in UTC; matched in the ``CRON_TZ`` zone when one is given, else in UTC). A malformed expression, an unknown zone,
    or one that never matches (``0 0 31 2 *``), raises ConfigError."""

    def __init__(self, expr: str):
        from croniter import croniter

        zone, text = _split_zone(expr)
        self.tz = timezone.utc if zone is None else _zone(zone, expr)
        text = " ".join(text.split())
        if text.startswith("@"):
            if text.lower() not in NICKNAMES:
                raise ConfigError(f"cron nickname {expr!r} is not known; use one of {', '.join(NICKNAMES)}")
            text = text.lower()
        elif len(text.split()) != 5:
            raise ConfigError(f"cron expression {expr!r} needs 5 fields: minute hour day-of-month month day-of-week "
                              f"(or a nickname such as @daily)")
        if not text.startswith("@"):
            _check_ranges(expr, text.split())
        if not croniter.is_valid(text):
            raise ConfigError(f"cron expression {expr!r} is not valid: each field takes numbers in its range "
                              "(minute 0-59, hour 0-23, day 1-31, month 1-12 or JAN-DEC, weekday 0-7 or SUN-SAT), "
                              "ranges a-b, lists a,b, steps */n and *")
        self.expr = text
        self.next_after(datetime(2000, 1, 1, tzinfo=timezone.utc))  # one that never matches fails now

    def next_after(self, t: datetime) -> datetime:
        from croniter import CroniterBadDateError, croniter

        t = (t.astimezone(timezone.utc) if t.tzinfo else t.replace(tzinfo=timezone.utc)).replace(second=0, microsecond=0)
        try:
            return croniter(self.expr, t.astimezone(self.tz)).get_next(datetime).astimezone(timezone.utc)
        except CroniterBadDateError:
            raise ConfigError(f"cron expression {self.expr!r} never matches") from None


def next_run(schedule: str, after: datetime) -> datetime:
    """The next run time for an interval (``6h``) or a cron expression, after ``after`` (a finished run)."""
    if is_cron(schedule):
        return Cron(schedule).next_after(after)
    interval = parse_interval(schedule)
    try:
        return after + interval
    except OverflowError:  # only past the year 9999, which MAX_INTERVAL keeps far away
        raise ConfigError(f"interval {schedule!r} puts the next pass past the year 9999") from None

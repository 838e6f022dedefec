from datetime import datetime, timedelta, timezone

import pytest

from indexer.errors import ConfigError
from indexer.schedule import Cron, next_run, parse_interval

T = datetime(2026, 11, 29, 16, 47, 30, tzinfo=timezone.utc)  # a Sunday


@pytest.mark.parametrize("text,seconds", [("6h", 21600), ("30m", 1800), ("1d", 86400), ("90s", 90), ("1h30m", 5400)])
def test_intervals(text, seconds):
    assert parse_interval(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "6", "six hours", "0h", "5x"])
def test_bad_intervals(text):
    with pytest.raises(ConfigError):
        parse_interval(text)


@pytest.mark.parametrize(
    "expr,expected",
    [
        ("*/15 * * * *", datetime(2026, 11, 29, 17, 0)),
        ("0 */6 * * *", datetime(2026, 11, 29, 18, 0)),
        ("30 2 * * *", datetime(2026, 11, 30, 2, 30)),
        ("0 0 1 * *", datetime(2026, 12, 1, 0, 0)),
        ("0 9 * * 1-5", datetime(2026, 11, 30, 9, 0)),  # next weekday
        ("0 9 * * 7", datetime(2026, 12, 6, 9, 0)),  # Sunday as 7, today's 9:00 has passed
        ("5,10 17 * * *", datetime(2026, 11, 29, 17, 5)),
    ],
)
def test_cron(expr, expected):
    assert Cron(expr).next_after(T) == expected.replace(tzinfo=timezone.utc)


@pytest.mark.parametrize("expr", ["* * * *", "60 * * * *", "* 24 * * *", "a * * * *", "*/0 * * * *", "0 0 31 2 *"])
def test_bad_cron(expr):
    with pytest.raises(ConfigError):
        Cron(expr).next_after(T)


def test_next_run_picks_kind():
    assert next_run("6h", T) == T + timedelta(hours=6)
    assert next_run("0 * * * *", T) == datetime(2026, 11, 29, 17, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    "expr,expected",
    [
        ("@daily", datetime(2026, 11, 30, 0, 0)),
        ("@hourly", datetime(2026, 11, 29, 17, 0)),
        ("@weekly", datetime(2026, 12, 6, 0, 0)),  # Sunday midnight
        ("@monthly", datetime(2026, 12, 1, 0, 0)),
        ("0 0 * * MON", datetime(2026, 11, 30, 0, 0)),
        ("30 6 * * mon-fri", datetime(2026, 11, 30, 6, 30)),
        ("0 12 1 JAN *", datetime(2027, 1, 1, 12, 0)),
        ("0 0 13 * FRI", datetime(2026, 12, 4, 0, 0)),  # day of month OR day of week, as cron does
    ],
)
def test_cron_nicknames_and_names(expr, expected):
    assert Cron(expr).next_after(T) == expected.replace(tzinfo=timezone.utc)
    assert next_run(expr, T) == expected.replace(tzinfo=timezone.utc)


@pytest.mark.parametrize("expr", ["@reboot", "@often", "0 0 * * FUNDAY", "0 0 * * * *"])
def test_bad_cron_names(expr):
    with pytest.raises(ConfigError):
        next_run(expr, T)


def test_worker_accepts_a_nickname():
    from indexer.worker import Worker

    assert Worker("@daily", lambda stop: None).schedule == "@daily"


@pytest.mark.parametrize("expr,expected", [
    ("0 0 30 * FRI", datetime(2026, 11, 30, 0, 0)),  # the 30th (a Monday) comes before the next Friday
    ("0 0 13 * MON", datetime(2026, 11, 30, 0, 0)),  # Monday the 30th comes before the 13th
    ("0 12 1,15 * SAT", datetime(2026, 12, 1, 12, 0)),  # the 1st (a Tuesday) before Saturday the 5th
    ("0 0 1 1 SUN", datetime(2027, 1, 1, 0, 0)),  # in January: the 1st (a Friday) or a Sunday; the 1st is first
])
def test_cron_day_of_month_or_day_of_week_whichever_comes_first(expr, expected):
    """Both day fields restricted: cron (and croniter's default) runs on either, not only on days matching both
    (an AND would wait for a Friday the 30th: months away)."""
    assert Cron(expr).next_after(T) == expected.replace(tzinfo=timezone.utc)


@pytest.mark.parametrize("text", ["367d", "8785h", "99999999h", "9999999h", "366d1s", "1" + "0" * 400 + "d"])
def test_an_interval_longer_than_366_days_is_a_config_error(text):
    """Intervals are at most 366 days (`indexer.schedule.MAX_INTERVAL`): a longer one is a ConfigError naming the
    limit. Before, `--every 99999999h` crashed with OverflowError (date out of range) and `--every 9999999h` was
    accepted, its next pass in the year 3167."""
    with pytest.raises(ConfigError, match="longer than the longest allowed, 366d"):
        parse_interval(text)
    with pytest.raises(ConfigError, match="366d"):
        next_run(text, T)
    assert parse_interval("366d") == timedelta(days=366) and next_run("8784h", T) == T + timedelta(days=366)


@pytest.mark.parametrize("every", ["99999999h", "9999999h", "400d"])
def test_cli_worker_with_an_interval_over_the_limit_is_one_line_exit_2(every):
    import os
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "indexer.cli", "worker", "--every", every, "--max-passes", "1"],
                         capture_output=True, text=True, env=dict(os.environ), timeout=120)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr[-2000:]
    assert lines[0].startswith("error: taskspace worker: Invalid value for '--every': interval"), lines
    assert "366d" in lines[0] and "Traceback" not in res.stderr


@pytest.mark.parametrize("args,option,says", [
    (["worker", "--every", "abc"], "'--every'", "interval 'abc' is not understood"),
    (["worker", "--every", "0s"], "'--every'", "interval '0s' must be positive"),
    (["worker", "--cron", "99 * * * *"], "'--cron'", "cron expression '99 * * * *' is not valid"),
    (["worker", "--cron", "1 2 3"], "'--cron'", "'1 2 3' is not a cron expression (5 fields or @daily ...); for an "
                                                "interval use --every"),
    (["serve", "--worker-every", "abc"], "'--worker-every' / '--every'", "interval 'abc' is not understood"),
    (["serve", "--cron", "1 2 3"], "'--cron'", "for an interval use --worker-every"),
    (["worker", "--cron", "CRON_TZ=Mars/Base 0 3 * * *"], "'--cron'", "time zone 'Mars/Base' is not known"),
])
def test_a_bad_schedule_is_a_usage_error_naming_its_option(args, option, says):
    """A bad `--every` / `--cron` of `taskspace worker` (and `--worker-every` / `--cron` of `serve`) is a usage error
    naming the option, as every other bad option value is: "error: taskspace worker: Invalid value for '--every':
    interval 'abc' is not understood; ..." (exit 2, one line, before the stores are opened); before, the message named
    no option ("error: interval 'abc' is not understood; ...") and the command's help was not pointed to."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, timeout=120)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert lines[0].startswith(f"error: taskspace {args[0]}: Invalid value for {option}: ") and says in lines[0], lines


@pytest.mark.parametrize("expr,after,expected", [
    # 03:00 in Berlin: 02:00 UTC in winter (CET), 01:00 UTC from the night clocks go forward (CEST)
    ("CRON_TZ=Europe/Berlin 0 3 * * *", T, datetime(2026, 11, 30, 2, 0)),
    ("CRON_TZ=Europe/Berlin 0 3 * * *", datetime(2026, 3, 28, 12, 0, tzinfo=timezone.utc), datetime(2026, 3, 29, 1, 0)),
    ("TZ=America/New_York 0 9 * * MON-FRI", T, datetime(2026, 11, 30, 14, 0)),  # 9:00 EST on Monday
    ("CRON_TZ=Asia/Kolkata @daily", T, datetime(2026, 11, 29, 18, 30)),  # midnight at +05:30
    ("CRON_TZ=UTC 30 2 * * *", T, datetime(2026, 11, 30, 2, 30)),
])
def test_a_cron_expression_can_name_its_time_zone(expr, after, expected):
    """`--cron "CRON_TZ=Europe/Berlin 0 3 * * *"` (or `TZ=...`, as cronie and Kubernetes CronJobs take it) matches in
    that zone's local time, daylight saving included, and the next pass is given in UTC; before, cron was UTC only and
    the prefix made it "not a cron expression", so a nightly job at 3 am local time had to be rewritten at every clock
    change."""
    from indexer.schedule import is_cron

    assert is_cron(expr) and next_run(expr, after) == expected.replace(tzinfo=timezone.utc)


@pytest.mark.parametrize("zone", ["Mars/Base", "", "../../etc/passwd", "/etc/localtime"])
def test_an_unknown_cron_time_zone_is_a_config_error_naming_it(zone):
    with pytest.raises(ConfigError, match=f"time zone {zone!r} is not known; name an IANA zone such as CRON_TZ="):
        Cron(f"CRON_TZ={zone} 0 3 * * *")


@pytest.mark.parametrize("args,option", [
    (["worker", "--every", "0 3 * * *"], "'--every'"),
    (["worker", "--every", "@daily"], "'--every'"),
    (["serve", "--worker-every", "CRON_TZ=Europe/Berlin 0 3 * * *"], "'--worker-every' / '--every'"),
])
def test_a_cron_expression_given_as_an_interval_says_to_give_it_as_cron(args, option):
    """A cron expression given to `worker --every` or `serve --worker-every` (the option a crontab line's schedule
    goes to first) is a usage error saying it is a cron expression and to give it as --cron, the option that takes it
    (exit 2), as `--cron 6h` says to use the interval option; before, "interval '0 3 * * *' is not understood; write
    e.g. 6h, 30m, 1d or 1h30m", which did not say that the schedule was right and the option wrong."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "indexer.cli", *args], capture_output=True, text=True, timeout=120)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, res.stderr
    assert lines[0].startswith(f"error: taskspace {args[0]}: Invalid value for {option}: "), lines
    assert "is a cron expression, not an interval" in lines[0] and f'--cron "{args[2]}"' in lines[0], lines


@pytest.mark.parametrize("expr,field", [("5-1 * * * *", "minute"), ("0 22-2 * * *", "hour"), ("0 0 20-10 * *", "day"),
                                        ("0 0 1 DEC-JAN *", "month"), ("0 0 * * FRI-MON", "weekday"),
                                        ("0-30/5,50-40 * * * *", "minute")])
def test_a_reversed_cron_range_is_a_config_error_naming_its_field(expr, field):
    """A range whose start is after its end (`5-1`, `FRI-MON`) is refused, as cron refuses it, naming the field and
    the range; before, croniter took it as a wrap-around (`--cron "5-1 * * * *"` ran at :31)."""
    with pytest.raises(ConfigError, match=f"{field} range .* start is after its end"):
        Cron(expr)
    assert Cron("1-5 22-23 10-20 JAN-DEC MON-FRI").expr  # in order: taken


@pytest.mark.parametrize("expr,days", [("0 3 * * MON-SUN", 7), ("0 3 * * 1-0", 7), ("0 3 * * FRI-SUN", 3),
                                       ("0 3 * * SAT-0", 2)])
def test_a_weekday_range_ending_on_sunday_runs_through_sunday(expr, days):
    """Sunday is 0 and 7 in the weekday field, so a range ending on it (`MON-SUN`, `FRI-SUN`, `1-0`) ends on the last
    day of the week, as cron and croniter read it, not a reversed range: `MON-SUN` is every day. (The check of
    reversed ranges took SUN for 0 there, and refused a schedule that ran.)"""
    cron = Cron(expr)
    t = datetime(2026, 12, 7, tzinfo=timezone.utc)  # a Monday
    seen = set()
    for _ in range(7):
        t = cron.next_after(t)
        seen.add(t.weekday())
    assert len(seen) == days, (expr, sorted(seen))

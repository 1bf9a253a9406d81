"""qrsub with a window that does not lie ahead: refused as Grid Engine's ar_validate
refuses it, "start time is later than end time" first, then "start time is in the
past" (on standard output, exit status 1), and nothing is reserved."""

import re
import time

PAST = "start time is in the past\n"
REVERSED = "start time is later than end time\n"


def at(seconds_from_now, seconds=True):
    """A -a/-e date_time ``seconds_from_now`` away (with or without .SS)."""
    form = "%Y%m%d%H%M.%S" if seconds else "%Y%m%d%H%M"
    return time.strftime(form, time.localtime(time.time() + seconds_from_now))


def refused(cell, *args):
    proc = cell.run("qrsub", *args)
    return proc.returncode, proc.stdout, proc.stderr


def test_a_start_an_hour_ago_is_refused_not_shortened(cell):
    assert refused(cell, "-a", at(-3600, seconds=False), "-d", "3:0:0") == (1, PAST, "")
    assert cell.run("qrstat", "-u", "*").stdout == ""


def test_a_window_wholly_in_the_past_gets_the_same_sentence(cell):
    assert refused(cell, "-a", at(-7200, seconds=False), "-d", "0:30:0") == (1, PAST, "")
    assert refused(cell, "-a", at(-7200), "-e", at(-5400)) == (1, PAST, "")


def test_a_start_seconds_ago_is_refused_too(cell):
    assert refused(cell, "-a", at(-5), "-d", "1:0:0") == (1, PAST, "")


def test_an_end_in_the_past_without_a_start(cell):
    """-e alone starts now: an end before it puts the start after the end."""
    assert refused(cell, "-e", at(-3600)) == (1, REVERSED, "")


def test_a_start_after_the_end(cell):
    assert refused(cell, "-a", at(7200), "-e", at(3600)) == (1, REVERSED, "")
    assert refused(cell, "-a", at(-600), "-e", at(-1200)) == (1, REVERSED, "")


def test_a_start_ahead_is_granted_and_refusals_use_no_id(cell):
    refused(cell, "-a", at(-3600), "-d", "1:0:0")
    first = cell.run("qrsub", "-a", at(3600), "-d", "1:0:0")
    assert first.returncode == 0, first.stdout + first.stderr
    assert re.fullmatch(r"Your advance reservation 1 has been granted\n", first.stdout)
    proc = cell.run("qrsub", "-e", at(3600))
    assert proc.returncode == 0 and "advance reservation 2 " in proc.stdout

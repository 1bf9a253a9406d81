"""LastMatchTime, LastRejMatchTime and LastRejMatchReason in the job ads, and what condor_q
-analyze and -better-analyze say of them ("Last successful match", "Last failed match",
"Reason for last match failure"), against a daemon in the negotiator's order."""

import os
import re
import time

import pytest

from conftest import destroy_cell, make_cell, wait_for
from condortools import negotiated, submit


@pytest.fixture
def cms(workdir):
    """Four slots; the group group_cms has a quota of 2 (a group at its quota is passed over
    with "group quota exceeded"). Every pass records its own rejections: the regular pass
    (schedule_interval) is ten minutes away, so the ones the test reads are those of the
    pass that filled the quota, not those of a later pass that comes on its own while the
    test reads the ads (15 seconds after it, by default)."""
    cell = make_cell(slots=4, start=False)
    negotiated(cell, "GROUP_NAMES = group_cms\nGROUP_QUOTA_group_cms = 2\n")
    path = os.path.join(cell.root, "etc", "sched_conf")
    with open(path) as fh:
        text = re.sub(r"(?m)^schedule_interval\s+.*$", "schedule_interval 0:10:0", fh.read())
    with open(path, "w") as fh:
        fh.write(text)
    cell.start_daemon()
    try:
        yield cell
    finally:
        destroy_cell(cell)


def q(cell, *args, user=None):
    proc = cell.run("condor_q", *args, user=user)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def attrs(cell, jid, user=None):
    return dict(line.split(" = ", 1) for line in q(cell, jid, "-l", user=user).splitlines() if " = " in line)


def test_the_negotiators_last_match_and_rejection_in_the_ads_and_the_analysis(cms, workdir, users):
    before = int(time.time())
    cluster = submit(cms, "executable = /bin/sleep\narguments = 60\naccounting_group = group_cms\n"
                          "accounting_group_user = alice\nqueue 4\n", cwd=workdir)
    wait_for(lambda: q(cms, str(cluster), "-af", "JobStatus").split() == ["2", "2", "1", "1"], timeout=20)
    waiting = wait_for(lambda: (lambda a: a if "LastRejMatchReason" in a else None)(attrs(cms, f"{cluster}.3")))
    assert waiting["LastRejMatchReason"] == '"group quota exceeded"'
    rejected_at = int(waiting["LastRejMatchTime"])
    assert before <= rejected_at <= time.time() and "LastMatchTime" not in waiting
    ran = attrs(cms, f"{cluster}.0")
    assert ran["LastMatchTime"] == ran["JobCurrentStartDate"]
    assert "LastRejMatchTime" not in ran and "LastRejMatchReason" not in ran
    # another user's view carries them too (the reasons are public)
    assert q(cms, f"{cluster}.3", "-af", "LastRejMatchReason", "LastMatchTime", user="gtbob") == \
        "group quota exceeded undefined\n"
    assert q(cms, f"{cluster}.0", "-af", "LastMatchTime", user="gtbob") == ran["LastMatchTime"] + "\n"
    assert q(cms, "-constraint", 'LastRejMatchReason == "group quota exceeded"', "-af", "ProcId") == "2\n3\n"
    for view in ("-analyze", "-better-analyze"):
        out = q(cms, f"{cluster}.3", view)
        found = re.search(r"\tNo successful match recorded\.\n\tLast failed match: (.+)\n"
                          r"\tReason for last match failure: group quota exceeded\n", out)
        assert found, out
        assert found.group(1) == time.ctime(int(attrs(cms, f"{cluster}.3")["LastRejMatchTime"])) or \
            found.group(1) == time.ctime(rejected_at)
    # a proc passed over, then matched: the successful match is the last word
    cms.run("condor_rm", f"{cluster}.0", check=True)
    wait_for(lambda: q(cms, f"{cluster}.2", "-af", "JobStatus") == "2\n", timeout=20)
    now_running = attrs(cms, f"{cluster}.2")
    assert int(now_running["LastMatchTime"]) >= rejected_at
    out = q(cms, f"{cluster}.2", "-better-analyze")
    assert f"\tLast successful match: {time.ctime(int(now_running['LastMatchTime']))}\n" in out
    assert "Last failed match" not in out


def test_grid_engines_order_records_matches_and_no_rejections(cell, workdir):
    """Without the negotiator a start is still a match; nothing is a negotiator's rejection."""
    cluster = submit(cell, "executable = /bin/sleep\narguments = 60\nqueue 3\n", cwd=workdir)
    wait_for(lambda: sorted(q(cell, str(cluster), "-af", "JobStatus").split()) == ["1", "2", "2"], timeout=20)
    ads = [attrs(cell, f"{cluster}.{proc}") for proc in range(3)]
    assert sorted("LastMatchTime" in a for a in ads) == [False, True, True]
    assert not any("LastRejMatchTime" in a or "LastRejMatchReason" in a for a in ads)


def test_the_preempting_reason_is_the_negotiators_own_word_for_a_match():
    from gridtools.cli.condor import queue
    from gridtools.sched import matchpass
    assert queue._PREEMPTING == matchpass.WAITING
    snap = {"negotiator": {"time": 100.0},
            "reasons": {1: [["negotiator", matchpass.WAITING]], 2: [["negotiator", "no match found"]],
                        3: [["more", "negotiator", 2]]}}
    assert queue.rejection(snap, 1) is None and queue.rejection(snap, 3) is None
    assert queue.rejection(snap, 2) == (100, "no match found")
    assert queue.rejection({"reasons": snap["reasons"], "negotiator": {"time": 0.0}}, 2) is None

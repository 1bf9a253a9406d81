"""condor_rm, condor_hold, condor_release, condor_prio and condor_qedit with a running daemon."""

import os
import re

from condortools import events, statuses, submit, wait_events, wait_status
from conftest import wait_for

SLEEP = "executable = /bin/sleep\narguments = 300\n"


def test_rm_messages_and_exit_codes(cell, workdir):
    cluster = submit(cell, SLEEP + "hold = true\nqueue 2\n", cwd=workdir)
    one = cell.run("condor_rm", f"{cluster}.1", f"{cluster}.9")
    assert one.stdout == f"Job {cluster}.1 marked for removal\n"
    assert one.stderr == f"Job {cluster}.9 not found\n" and one.returncode == 1
    assert set(statuses(cell, str(cluster))) == {f"{cluster}.0"}
    rest = cell.run("condor_rm", str(cluster))
    assert rest.stdout == f"All jobs in cluster {cluster} have been marked for removal\n" and rest.returncode == 0
    empty = cell.run("condor_rm", str(cluster))                # nothing in the queue: no error
    assert empty.returncode == 0 and empty.stderr == "condor_rm:0:There are no jobs in the queue\n"
    other = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, name="o.sub")
    again = cell.run("condor_rm", str(cluster))
    assert again.returncode == 1 and again.stderr == f"\nCouldn't find/remove all jobs in cluster {cluster}\n"
    assert set(statuses(cell, str(other))) == {f"{other}.0"}
    none = cell.run("condor_rm")
    assert none.returncode == 1 and none.stderr.startswith("You did not specify any jobs\n")


def test_totals_and_cluster_zero(cell, workdir):
    """-totals prints HTCondor's counts line before the usual lines; cluster 0 is refused
    with its own line and the rest goes on."""
    a = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    b = submit(cell, SLEEP + "hold = true\nqueue 2\n", cwd=workdir, name="b.sub")
    by_id = cell.run("condor_rm", "-totals", f"{a}.0", "999.0")
    assert by_id.returncode == 1 and by_id.stderr == "Job 999.0 not found\n"
    assert by_id.stdout == ("1 Succeeded, 0 Failed, 1 Not Found, 0 Bad Status, 0 Already Done, "
                            f"0 Permission Denied\nJob {a}.0 marked for removal\n")
    held = cell.run("condor_hold", "-tot", str(b))
    assert held.returncode == 1 and held.stderr == f"\nCouldn't find/hold all jobs in cluster {b}\n"
    assert held.stdout == "0 Succeeded, 0 Failed, 0 Not Found, 0 Bad Status, 2 Already Done, 0 Permission Denied\n"
    released = cell.run("condor_release", "0", str(b))
    assert released.stderr == "Invalid cluster # from 0.\n" and released.returncode == 1
    assert released.stdout == f"All jobs in cluster {b} have been released\n"
    assert wait_for(lambda: set(statuses(cell, str(b)).values()) <= {1, 2})
    zero = cell.run("condor_rm", "0")
    assert zero.returncode == 1 and zero.stdout == ""
    assert zero.stderr.startswith("Invalid cluster # from 0.\nYou did not specify any jobs\nUsage: condor_rm ")
    gone = cell.run("condor_rm", "-totals", str(b))
    assert (gone.returncode, gone.stderr) == (0, "")
    assert gone.stdout == ("2 Succeeded, 0 Failed, 0 Not Found, 0 Bad Status, 0 Already Done, 0 Permission Denied\n"
                           f"All jobs in cluster {b} have been marked for removal\n")


def test_long_prints_the_result_ad(cell, workdir, users):
    """-long prints the ad HTCondor's schedd answers an action with, then a blank line,
    before the usual lines: job_C_P = each named job's result (1 done, 2 not found, 4
    already done, 5 denied), ActionResultType 1, JobAction (1 hold, 2 release, 3 remove),
    ActionResult (1 when any job was acted on), TotalJobAds and IsQueueSuperUser; with
    -totals of a constraint, result_total_N counts and ActionResultType 2."""
    cluster = submit(cell, SLEEP + "hold = true\nqueue 2\n", cwd=workdir)
    removed = cell.run("condor_rm", "-l", f"{cluster}.0", f"{cluster}.7")
    assert (removed.returncode, removed.stderr) == (1, f"Job {cluster}.7 not found\n")
    assert removed.stdout == (f"job_{cluster}_0 = 1\njob_{cluster}_7 = 2\nActionResultType = 1\nJobAction = 3\n"
                              "ActionResult = 1\nTotalJobAds = 2\nIsQueueSuperUser = true\n\n"
                              f"Job {cluster}.0 marked for removal\n")
    again = cell.run("condor_hold", "-long", "-constraint", f"ClusterId == {cluster}")
    assert again.returncode == 1
    assert again.stdout == (f"job_{cluster}_1 = 4\nActionResultType = 1\nJobAction = 1\nActionResult = 0\n"
                            "TotalJobAds = 1\nIsQueueSuperUser = true\n\n")
    theirs = cell.run("condor_release", "-long", f"{cluster}.1", user=users[0])
    assert theirs.stdout.startswith(f"job_{cluster}_1 = 5\nActionResultType = 1\nJobAction = 2\nActionResult = 0\n")
    assert theirs.stdout.endswith("IsQueueSuperUser = false\n\n")
    totals = cell.run("condor_release", "-long", "-totals", str(cluster))
    assert (totals.returncode, totals.stderr) == (0, "")
    assert totals.stdout == ("result_total_0 = 0\nresult_total_1 = 1\nresult_total_2 = 0\nresult_total_3 = 0\n"
                             "result_total_4 = 0\nresult_total_5 = 0\nresult_total_6 = 0\nActionResultType = 2\n"
                             "JobAction = 2\nActionResult = 1\nTotalJobAds = 1\nIsQueueSuperUser = true\n\n"
                             f"All jobs in cluster {cluster} have been released\n")


def test_options_and_usage_as_htcondor_24(cell, workdir):
    """The usage (on stderr, -help's too, exit 0) lists HTCondor 24's options with each
    tool's own; an unknown option is named before it (exit 1); -debug is taken, -addr
    takes a sinful string and refuses anything else in HTCondor's words."""
    helped = cell.run("condor_hold", "-help")
    assert (helped.returncode, helped.stdout) == (0, "")
    assert helped.stderr.startswith("Usage: condor_hold [options] [constraints]\n where [options] is zero or more of:\n"
                                    "  -help               Display this message and exit\n"
                                    "  -version            Display version information and exit\n"
                                    "  -long               Display full result classad\n")
    assert "  -reason reason      Use the given HoldReason\n  -subcode number     Set HoldReasonSubCode\n" in helped.stderr
    assert "  -reason reason      Use the given ReleaseReason\n and where" in cell.run("condor_release", "-h").stderr
    bad = cell.run("condor_rm", "-bogus", "1")
    assert bad.returncode == 1 and bad.stderr.startswith("Unrecognized option: -bogus\nUsage: condor_rm [options]")
    assert "(only affects jobs already being removed)\n" in bad.stderr
    address = cell.run("condor_rm", "-addr", "nowhere", "1")
    assert (address.returncode, address.stderr) == (1, 'condor_rm: "nowhere" is not a valid address\n'
                                                       "Should be of the form <ip.address.here:port>\n"
                                                       "For example: <123.456.789.123:6789>\n")
    cluster = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    done = cell.run("condor_rm", "-debug", "-addr", "<127.0.0.1:9618>", str(cluster))
    assert (done.returncode, done.stdout) == (0, f"All jobs in cluster {cluster} have been marked for removal\n")


def test_rm_by_user_constraint_and_all(cell, workdir):
    a = submit(cell, SLEEP + "+Tag = 1\nhold = true\nqueue\n", cwd=workdir)
    b = submit(cell, SLEEP + "+Tag = 2\nhold = true\nqueue\n", cwd=workdir, name="b.sub")
    by = cell.run("condor_rm", "-constraint", "Tag == 2")
    assert by.stdout == "All jobs matching constraint (Tag == 2) have been marked for removal\n"
    assert set(statuses(cell, str(a), str(b))) == {f"{a}.0"}
    user = cell.run("condor_rm", "root")
    assert user.stdout == 'All jobs of user "root" have been marked for removal\n'
    c = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, name="c.sub")
    assert cell.run("condor_rm", "-all").stdout == "All jobs have been marked for removal\n"
    assert not statuses(cell, str(c))
    mixed = cell.run("condor_rm", "-all", str(c))
    assert mixed.returncode == 1 and "can't mix -all with other constraints" in mixed.stderr


def test_running_job_removed_then_forced_out_as_parsl_does(cell, workdir):
    cluster = submit(cell, SLEEP + "leave_in_queue = TRUE\nlog = f.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 2)
    cancel = cell.run("sh", "-c", f"condor_rm {jid}; condor_rm -forcex {jid}")
    assert cancel.returncode == 0, cancel.stderr
    assert cancel.stdout == (f"Job {jid} marked for removal\n"
                             f"Job {jid} removed locally (remote state unknown)\n")
    wait_events(os.path.join(workdir, "f.log"), jid, [0, 1, 9])
    wait_for(lambda: not statuses(cell, jid))
    not_x = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, name="x.sub")
    refused = cell.run("condor_rm", "-forcex", f"{not_x}.0")
    assert refused.returncode == 1
    assert refused.stderr == f"\nJob {not_x}.0 not in `X' state to be forcibly removed\n"


def test_parsl_cancel_of_a_running_job_without_leave_in_queue_exits_0(cell, workdir):
    """The job removed while it ran counts as in X for a -forcex just after (HTCondor keeps
    it in the queue until its processes are gone): forced out, once; later not found."""
    cluster = submit(cell, SLEEP + "log = p.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 2)
    cancel = cell.run("sh", "-c", f"condor_rm {jid}; condor_rm -forcex {jid}")
    assert (cancel.returncode, cancel.stderr) == (0, "")
    assert cancel.stdout == (f"Job {jid} marked for removal\n"
                             f"Job {jid} removed locally (remote state unknown)\n")
    wait_events(os.path.join(workdir, "p.log"), jid, [0, 1, 9])
    wait_for(lambda: not statuses(cell, jid))
    again = cell.run("condor_rm", "-forcex", jid)              # (forced out already: not found)
    assert (again.returncode, again.stdout, again.stderr) == (1, "", f"\nJob {jid} not found\n")
    # (the final ad is written to the history after the status that shows the job gone)
    wait_for(lambda: cell.run("condor_history", jid, "-af", "JobStatus").stdout)
    assert cell.run("condor_history", jid, "-af", "JobStatus").stdout == "3\n"


def test_parsl_cancel_of_waiting_and_held_jobs_exits_0(cell, workdir):
    """condor_rm takes a waiting or held job out of the queue at once; the -forcex that
    parsl's cancel runs next (only its exit status counts) succeeds for the removed jobs,
    and fails for an id that never was, a job forced out before, or a job that ended
    without being removed."""
    idle = submit(cell, SLEEP + "requirements = False\nqueue\n", cwd=workdir)
    held = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, name="h.sub")
    wait_status(cell, f"{idle}.0", 1)
    wait_status(cell, f"{held}.0", 5)
    ids = f"{idle}.0 {held}.0"
    cancel = cell.run("sh", "-c", f"condor_rm {ids}; condor_rm -forcex {ids}")
    assert (cancel.returncode, cancel.stderr) == (0, "")
    assert cancel.stdout == "".join(f"Job {j} marked for removal\n" for j in ids.split()) + \
        "".join(f"Job {j} removed locally (remote state unknown)\n" for j in ids.split())
    assert not statuses(cell, str(idle), str(held))
    never = cell.run("condor_rm", "-forcex", f"{idle}.0", "99999.0")      # (forced out already)
    assert (never.returncode, never.stderr) == (1, f"\nJob {idle}.0 not found\nJob 99999.0 not found\n")
    done = submit(cell, "executable = /bin/true\nqueue\n", cwd=workdir, name="d.sub")
    wait_for(lambda: cell.run("condor_history", f"{done}.0", "-af", "JobStatus").stdout == "4\n")
    ended = cell.run("condor_rm", "-forcex", f"{done}.0")
    assert (ended.returncode, ended.stderr) == (1, f"\nJob {done}.0 not found\n")


def test_leave_in_queue_keeps_completed_jobs_until_forced_out(cell, workdir):
    cluster = submit(cell, "executable = /bin/true\nleave_in_queue = TRUE\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 4)
    assert "C" in cell.run("condor_q", "-nobatch", jid).stdout.split("\n")[4].split()
    assert cell.run("condor_rm", jid).stdout == f"Job {jid} marked for removal\n"
    wait_status(cell, jid, 3)
    assert cell.run("condor_rm", "-forcex", jid).returncode == 0
    wait_for(lambda: not statuses(cell, jid))
    # (the final ad is written to the history after the status that shows the job gone)
    wait_for(lambda: f"{jid} " in cell.run("condor_history").stdout)
    assert f"{jid} " in cell.run("condor_history").stdout


def test_hold_a_running_job_stops_it_release_runs_it_again(cell, workdir):
    cluster = submit(cell, SLEEP + "log = h.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 2)
    out = cell.run("condor_hold", "-reason", "maintenance", "-subcode", "4", jid)
    assert out.stdout == f"Job {jid} held\n"
    wait_for(lambda: "hRq" in cell.run("qstat").stdout)          # stopped, waiting again, held
    assert cell.run("condor_q", jid, "-af", "HoldReason", "HoldReasonSubCode").stdout == \
        "maintenance (by user root) 4\n"
    assert cell.run("condor_hold", jid).stderr == f"\nJob {jid} already held\n"
    assert cell.run("condor_release", "-subcode", "9", jid).stdout == f"Job {jid} released\n"   # read, unused
    wait_events(os.path.join(workdir, "h.log"), jid, [0, 1, 12, 13, 1])
    assert cell.run("condor_release", jid).stderr == f"\nJob {jid} not held to be released\n"
    # (a proc the cluster does not have: not found, as the schedd answers any id with no ad)
    assert cell.run("condor_release", f"{cluster}.7").stderr == f"\nJob {cluster}.7 not found\n"


def test_release_while_the_hold_still_stops_the_job_runs_it_again(cell, workdir):
    """A job shows as held (JobStatus 5) from the hold on, while its processes are still
    being stopped (this one takes its time over SIGTERM): condor_release then releases it,
    and it runs again once it has stopped, as HTCondor's schedd does."""
    slow = os.path.join(workdir, "slow.sh")
    with open(slow, "w") as fh:
        fh.write("#!/bin/sh\necho run >> runs\ntrap 'sleep 3; exit 1' TERM\nsleep 300 & wait\nsleep 300\n")
    os.chmod(slow, 0o755)
    cluster = submit(cell, f"executable = {slow}\nlog = s.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_for(lambda: os.path.exists(os.path.join(workdir, "runs")), timeout=30)
    assert cell.run("condor_hold", jid).stdout == f"Job {jid} held\n"
    wait_status(cell, jid, 5)
    assert cell.task_states(cluster) == {1: "running"}            # (still being stopped)
    released = cell.run("condor_release", jid)
    assert (released.stdout, released.returncode) == (f"Job {jid} released\n", 0)
    wait_events(os.path.join(workdir, "s.log"), jid, [0, 1, 12, 13, 1], timeout=30)
    wait_for(lambda: open(os.path.join(workdir, "runs")).read() == "run\nrun\n")
    wait_for(lambda: cell.run("condor_q", jid, "-af", "JobStatus", "NumJobStarts").stdout == "2 2\n")


def test_grid_engine_hold_is_an_htcondor_hold(cell, workdir):
    cell.run("qconf", "-rattr", "queue", "slots", "0", "all.q", check=True)
    cluster = submit(cell, SLEEP + "hold = true\nlog = g.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    assert cell.run("qrls", str(cluster)).returncode == 0
    wait_status(cell, jid, 1)
    assert cell.run("qhold", str(cluster)).returncode == 0
    wait_status(cell, jid, 5)
    assert cell.run("condor_q", jid, "-af", "HoldReasonCode").stdout == "1\n"
    assert events(os.path.join(workdir, "g.log"))[jid] == [0, 12, 13, 12]


def test_prio_orders_one_owners_jobs(cell, workdir):
    cell.run("qconf", "-rattr", "queue", "slots", "1", "all.q", check=True)
    blocker = submit(cell, SLEEP + "queue\n", cwd=workdir)
    wait_status(cell, f"{blocker}.0", 2)
    low = submit(cell, "executable = /bin/true\nlog = o.log\nqueue\n", cwd=workdir, name="low.sub")
    high = submit(cell, "executable = /bin/true\nlog = o.log\nqueue\n", cwd=workdir, name="high.sub")
    assert cell.run("condor_prio", "+5", str(high)).returncode == 0
    assert cell.run("condor_prio", "-p", "-3", str(low)).returncode == 0
    assert cell.run("condor_q", str(low), str(high), "-af", "JobPrio").stdout == "-3\n5\n"
    # any integer, as HTCondor's (no -20..20 range): the order stays high before low
    for argv, prio in ((("-p", "25", str(high)), "25"), (("-30", f"{low}.0"), "-33")):
        moved = cell.run("condor_prio", *argv)
        assert (moved.returncode, moved.stdout, moved.stderr) == (0, "", ""), argv
    assert cell.run("condor_q", str(low), str(high), "-af", "JobPrio").stdout == "-33\n25\n"
    cell.run("condor_rm", str(blocker), check=True)
    log = os.path.join(workdir, "o.log")
    wait_for(lambda: len([e for e in _order(log) if e[1] == 1]) == 2)
    started = [jid for jid, kind in _order(log) if kind == 1]
    assert started == [f"{high}.0", f"{low}.0"]


def test_condor_prio_says_what_it_skipped_and_exits_0_as_htcondors(cell, workdir):
    # (prio.cpp: once connected it returns 0; a cluster with no jobs is silent, a proc that
    # is not there is said; -p reads its number as atoi; other words are skipped)
    cluster = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    proc = cell.run("condor_prio", "-p", "4", "999", f"{cluster}.9", f"{cluster}.0x", "-constraint", str(cluster))
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr == (f'Warning: unrecognized "{cluster}.0x" skipped\nWarning: unrecognized "-constraint" '
                           f"skipped\nCouldn't retrieve current priority for {cluster}.9.\n")
    assert cell.run("condor_q", str(cluster), "-af", "JobPrio").stdout == "4\n"
    assert cell.run("condor_prio", "-p", "abc", str(cluster)).returncode == 0
    assert cell.run("condor_q", str(cluster), "-af", "JobPrio").stdout == "0\n"


def test_each_proc_has_its_own_priority_and_arguments_in_condor_q(cell, workdir):
    text = "executable = /bin/sleep\nhold = true\narguments = 100\nqueue\narguments = 1\nqueue 2\n"
    cluster = submit(cell, text, cwd=workdir)
    assert cell.run("condor_prio", "-p", "5", f"{cluster}.0").returncode == 0
    assert cell.run("condor_prio", "+3", f"{cluster}.1").returncode == 0
    assert cell.run("condor_prio", "-2", f"{cluster}.2").returncode == 0
    assert cell.run("condor_q", str(cluster), "-af", "JobPrio", "Args").stdout == "5 100\n3 1\n-2 1\n"
    rows = cell.run("condor_q", str(cluster), "-nobatch").stdout.splitlines()[4:7]
    assert [(r.split()[0], r.split()[6], " ".join(r.split()[8:])) for r in rows] == [
        (f"{cluster}.0", "5", "sleep 100"), (f"{cluster}.1", "3", "sleep 1"), (f"{cluster}.2", "-2", "sleep 1")]


def _order(path):
    from gridtools.formats.condor.userlog import parse_events
    with open(path) as fh:
        return [(f"{e.cluster}.{e.proc}", int(e.type)) for e in parse_events(fh.read())]


def test_qedit_sets_attributes_and_the_scheduler_follows(cell, workdir):
    cluster = submit(cell, SLEEP + "hold = true\nqueue 2\n", cwd=workdir)
    out = cell.run("condor_qedit", str(cluster), "Colour", '"green"', "RequestCpus", "2")
    assert out.stdout == ('Set attribute "Colour" for 2 matching jobs.\n'
                          'Set attribute "RequestCpus" for 2 matching jobs.\n')
    assert cell.run("condor_q", str(cluster), "-af", "Colour", "RequestCpus").stdout == "green 2\ngreen 2\n"
    assert re.search(r"parallel environment:\s+smp range: 2", cell.run("qstat", "-j", str(cluster)).stdout)
    one = cell.run("condor_qedit", f"{cluster}.1", "Colour", '"red"')
    assert one.stdout == 'Set attribute "Colour" for 1 matching jobs.\n'
    assert cell.run("condor_q", str(cluster), "-af", "Colour").stdout == "green\nred\n"
    denied = cell.run("condor_qedit", str(cluster), "Owner", '"bob"')
    assert (denied.returncode, denied.stdout) == (1, "")
    assert denied.stderr == ('Update of immutable attribute "Owner" is not allowed.\n'
                             "Transaction failed.  No attributes were set.\n")
    for name in ("JobUniverse", "OsUser"):         # (HTCondor's SYSTEM_IMMUTABLE_JOB_ATTRS)
        denied = cell.run("condor_qedit", f"{cluster}.0", name, "7")
        assert (denied.returncode, denied.stderr.splitlines()[0]) == \
            (1, f'Update of immutable attribute "{name}" is not allowed.'), name
    for name in ("NumJobStarts", "NumShadowStarts", "JobRunCount"):     # (the counts of its runs)
        denied = cell.run("condor_qedit", str(cluster), name, "7")
        assert (denied.returncode, denied.stderr.splitlines()[0]) == \
            (1, f'Update of protected attribute "{name}" is not allowed.'), name
    syntax = cell.run("condor_qedit", str(cluster), "Colour", '"unclosed')
    assert syntax.returncode == 1 and "illegal value" in syntax.stderr


def test_qedit_keeps_the_attributes_the_configuration_makes_immutable_or_protected(cell, workdir, users):
    """IMMUTABLE_JOB_ATTRS: no one may edit them (condor_qedit refuses before it looks at
    the queue); PROTECTED_JOB_ATTRS: only the queue super users (QUEUE_SUPER_USERS,
    root and condor by default) may."""
    user = users[0]
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("IMMUTABLE_JOB_ATTRS = Site\nPROTECTED_JOB_ATTRS = Budget, Tier\n")
    assert cell.run("condor_reconfig").returncode == 0
    os.chmod(workdir, 0o777)
    cluster = submit(cell, SLEEP + '+Site = "north"\n+Budget = 5\nhold = true\nqueue\n', cwd=workdir, user=user)
    denied = cell.run("condor_qedit", str(cluster), "Site", '"south"', user=user)
    assert (denied.returncode, denied.stderr) == (1, 'Update of immutable attribute "Site" is not allowed.\n'
                                                     "Transaction failed.  No attributes were set.\n")
    denied = cell.run("condor_qedit", str(cluster), "Budget", "50", user=user)
    assert (denied.returncode, denied.stderr.splitlines()[0]) == \
        (1, 'Update of protected attribute "Budget" is not allowed.')
    assert cell.run("condor_qedit", str(cluster), "Budget", "7").returncode == 0         # (root)
    assert cell.run("condor_qedit", str(cluster), "Site", '"south"').returncode == 1
    assert cell.run("condor_q", str(cluster), "-af", "Site", "Budget").stdout == "north 7\n"
    allowed = cell.run("condor_qedit", str(cluster), "Colour", '"red"', user=user)
    assert allowed.returncode == 0, allowed.stderr


FAILED = "Queue transaction failed.  No attributes were set.\n"


def test_qedit_failures_in_htcondor_words(cell, workdir, users):
    """A job named by its id that cannot be edited names the job; any other selection
    that matches nothing names the constraint condor_qedit made of it."""
    mine = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir)
    for argv, first in ((["999.0", "Foo", "1"], 'Failed to set attribute "Foo" for job 999.0.\n'),
                        (["999", "Foo", "1"], 'Failed to set attribute "Foo" by constraint: ( (ClusterId == 999 ) )\n'),
                        (["-constraint", "Tag == 9", "Foo", "1"],
                         'Failed to set attribute "Foo" by constraint: ( (Tag == 9) )\n'),
                        (["nobody", "Foo", "1"],
                         'Failed to set attribute "Foo" by constraint: ( (Owner=="nobody") )\n')):
        proc = cell.run("condor_qedit", *argv)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", first + FAILED), argv
    theirs = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, user="gtalice", name="t.sub")
    other = cell.run("condor_qedit", f"{theirs}.0", "JobPrio", "5", "Colour", "1", user="gtbob")
    assert (other.returncode, other.stdout) == (1, "")
    assert other.stderr == f'Failed to set attribute "Colour" for job {theirs}.0.\n' + FAILED
    assert cell.run("condor_q", str(theirs), "-af", "JobPrio", "Colour").stdout == "0 undefined\n"
    assert cell.run("condor_qedit", f"{mine}.0", "Zed", "1").returncode == 0


def test_qedit_takes_attr_equals_value_words_job_id_lists_and_a_dry_run(cell, workdir):
    # (qedit.cpp: attr=value is one word; -jobids and -dry-run; any other -word is refused)
    cluster = submit(cell, SLEEP + "hold = true\nqueue 2\n", cwd=workdir)
    proc = cell.run("condor_qedit", str(cluster), "Tag=5", 'Note = "x y"')
    assert proc.returncode == 0 and sorted(proc.stdout.splitlines()) == [
        'Set attribute "Note" for 2 matching jobs.', 'Set attribute "Tag" for 2 matching jobs.']
    assert cell.run("condor_q", str(cluster), "-af", "Tag", "Note").stdout == "5 x y\n5 x y\n"
    dry = cell.run("condor_qedit", "-dry-run", "-jobids", f"{cluster}.1", "Tag", "7")
    assert (dry.returncode, dry.stdout) == (0, 'Can Set attribute "Tag" for 1 matching jobs.\n')
    assert cell.run("condor_q", str(cluster), "-af", "Tag").stdout == "5\n5\n"
    done = cell.run("condor_qedit", "-jobids", f"{cluster}.1", "Tag", "7")
    assert done.stdout == 'Set attribute "Tag" for 1 matching jobs.\n'
    assert cell.run("condor_q", str(cluster), "-af", "Tag").stdout == "5\n7\n"
    bad = cell.run("condor_qedit", "-bogus", str(cluster), "Tag", "1")
    assert bad.returncode == 1 and bad.stderr.startswith("condor_qedit: -bogus is not a valid option\nUsage: ")


def test_qedit_of_the_first_proc_leaves_the_others_alone(cell, workdir):
    cluster = submit(cell, SLEEP + "hold = true\n+Shade = 1\nqueue 3\n", cwd=workdir)
    assert cell.run("condor_qedit", f"{cluster}.0", "Zed", "1", "Shade", "2").returncode == 0
    shown = cell.run("condor_q", str(cluster), "-af:j", "Zed", "Shade").stdout
    assert shown == f"{cluster}.0 1 2\n{cluster}.1 undefined 1\n{cluster}.2 undefined 1\n"
    assert "Zed" not in cell.run("condor_q", f"{cluster}.1", "-l").stdout
    assert cell.run("condor_qedit", f"{cluster}.2", "Zed", "3").returncode == 0
    assert cell.run("condor_q", str(cluster), "-af", "Zed").stdout == "1\nundefined\n3\n"
    assert cell.run("condor_qedit", str(cluster), "Zed", "4").returncode == 0
    assert cell.run("condor_q", str(cluster), "-af", "Zed").stdout == "4\n4\n4\n"


def test_qedit_of_a_qsub_job(cell, workdir):
    proc = cell.qsub("-h", "-b", "y", "sleep", "300", cwd=workdir)
    jid = int(re.search(r"(\d+)", proc.stdout).group(1))
    assert cell.run("condor_qedit", str(jid), "Note", '"x"').returncode == 0
    assert cell.run("condor_q", str(jid), "-af", "Note", "Cmd").stdout == "x sleep\n"


def test_qedit_takes_only_attribute_names_and_one_bad_history_record_spoils_no_query(cell, workdir, users):
    """As HTCondor's IsValidAttrName: a name with a dot or other signs is refused, by the
    command (HTCondor's words) and by the daemon (a request written by hand), so that
    no record of the history holds a line its reader refuses; a record that does (an
    older cell's, a file edited by hand) loses that line only."""
    from attack_tools import forge_request
    jid = int(re.search(r"(\d+)", cell.qsub("-h", "-b", "y", "true", cwd=workdir, user=users[0]).stdout).group(1))
    for name in ("Foo.Bar", "X;Owner", "9lives"):
        if not name[0].isdigit():       # (the command reads a number as a job id)
            proc = cell.run("condor_qedit", str(jid), name, "1", user=users[0])
            assert (proc.returncode, proc.stderr) == (
                1, f'Update aborted, illegal attribute-name specified for attribute "{name}".\n')
        _name, answer = forge_request(cell, users[0], "condor_qedit",
                                      {"targets": [{"id": jid}], "attrs": {name: "1"}})
        assert answer[0] == 1 and answer[2].startswith("error: invalid condor_qedit request: "), answer
    assert cell.run("condor_qedit", str(jid), "Good_Name", "1", user=users[0]).returncode == 0
    cell.run("qdel", str(jid), check=True)
    assert wait_for(lambda: cell.run("condor_history", str(jid), "-af", "Good_Name").stdout == "1\n")
    path = os.path.join(cell.root, "spool", "history")
    with open(path) as fh:
        text = fh.read()
    with open(path, "w") as fh:
        fh.write(text.replace("Good_Name = 1\n", "Good_Name = 1\n'Foo.Bar' = 1\n", 1))
    shown = cell.run("condor_history", str(jid), "-af", "Good_Name", "ClusterId")
    assert (shown.returncode, shown.stdout, shown.stderr) == (0, f"1 {jid}\n", "")


def test_write_level_refuses_before_any_job_is_selected(cell, workdir, users):
    """A caller WRITE denies is refused at the schedd whatever the selection (-all,
    -constraint, a user, a cluster, a job): the one DENIED line, exit 1, nothing done."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("ALLOW_WRITE = gtalice@*, root@*\nDENY_WRITE = gtbob@*\n")
    assert cell.run("condor_reconfig").returncode == 0
    cluster = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, user="gtalice")
    denied = re.compile(r'SECMAN:2010:Received "DENIED" from server for user gtbob@\S+ using method FS\.\n')
    for argv in (["condor_rm", "-all"], ["condor_rm", "-constraint", "true"], ["condor_rm", "gtalice"],
                 ["condor_rm", str(cluster)], ["condor_rm", "999"], ["condor_rm", "999.0"],
                 ["condor_hold", "-all"], ["condor_release", "gtalice"],
                 ["condor_qedit", "-constraint", "true", "Tag", "1"], ["condor_qedit", "999", "Tag", "1"],
                 ["condor_prio", "-p", "5", "gtalice"], ["condor_prio", "-p", "5", "999.0"]):
        proc = cell.run(*argv, user="gtbob")
        assert (proc.returncode, proc.stdout) == (1, ""), argv
        assert denied.fullmatch(proc.stderr), (argv, proc.stderr)
    assert statuses(cell, str(cluster)) == {f"{cluster}.0": 5}           # still held
    mine = cell.run("condor_rm", "-all", user="gtalice")
    assert (mine.returncode, mine.stdout) == (0, "All jobs have been marked for removal\n")


def test_messages_of_several_lines_keep_their_lines(idle_cell, tmp_path):
    """HTCondor prints a sentence and then its usage or hint on lines of their own."""
    usage = ("Usage: condor_prio [{+|-}priority ] [-p priority] [ -a ] [-n schedd_name] "
             "[ -pool pool_name ] [user | cluster | cluster.proc | -a] ...\n")
    proc = idle_cell.run("condor_prio", "7")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == "You must specify a new priority or priority adjustment.\n" + usage
    proc = idle_cell.run("condor_qedit")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == ("condor_qedit : Error - there were no jobs specified.\n"
                           "\tuse -constraint, jobid or owner argument to indicate which jobs to edit\n")
    sub = tmp_path / "quote.sub"
    sub.write_text('executable = /bin/true\narguments = a b"c\nqueue\n')
    proc = idle_cell.run("condor_submit", str(sub))
    assert proc.returncode == 1
    assert proc.stderr == ('ERROR: Found illegal unescaped double-quote: "c\n'
                           'The full arguments you specified were: a b"c\n')
    # what a line quotes from its input still cannot break it
    sub.write_text('executable = /bin/true\narguments = a b"c\x1b[2J\nqueue\n')
    proc = idle_cell.run("condor_submit", str(sub))
    assert "\x1b" not in proc.stderr and proc.stderr.count("\n") == 2


def test_num_job_starts_of_a_job_removed_while_held_counts_its_runs_only(cell, workdir):
    cluster = submit(cell, SLEEP + "log = n.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    log = os.path.join(workdir, "n.log")
    for runs in (1, 2):
        if runs == 2:
            cell.run("condor_release", jid, check=True)
        wait_events(log, jid, [0] + [1, 12, 13] * (runs - 1) + [1])
        cell.run("condor_hold", jid, check=True)
        wait_status(cell, jid, 5)
        assert cell.run("condor_q", jid, "-af", "NumJobStarts").stdout == f"{runs}\n"
    cell.run("condor_rm", jid, check=True)
    wait_for(lambda: cell.run("condor_history", jid, "-af", "NumJobStarts").stdout == "2\n")
    assert events(log)[jid].count(1) == 2


def test_forcex_is_only_valid_with_condor_rm(idle_cell):
    """HTCondor's condor_hold and condor_release refuse -forcex with a line and their usage
    (they accepted it and ignored it)."""
    for prog in ("condor_hold", "condor_release"):
        for word in ("-forcex", "-fo"):
            proc = idle_cell.run(prog, word, "7")
            assert (proc.returncode, proc.stdout) == (1, "")
            assert proc.stderr.startswith("-forcex is only valid with condor_rm\n"
                                          f"Usage: {prog} [options] [constraints]\n")
            assert proc.stderr.endswith("all jobs (cannot be used with other constraints)\n")

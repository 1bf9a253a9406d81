"""Each proc of an HTCondor cluster held or idle as its own ad says where it was not yet:
procs materialized late (max_materialize, max_idle) as they come into the queue, and
condor_q and qstat of a cluster the daemon has not taken in yet; qrls of several held
tasks of which SYSTEM_MAX_RELEASES forbids some (one refusal each, the others released
and answered as Grid Engine answers them)."""

import os

from attack_tools import user_py
from condortools import af, configure_now, events, statuses, submit
from conftest import unanswered, wait_for
from gridtools.formats.condor.userlog import EventType

SLEEPER = "executable = /bin/sleep\narguments = 300\nrequirements = false\n"


def _held_procs(log):
    """The procs whose user log has a hold event (012)."""
    return sorted(int(jid.split(".")[1]) for jid, kinds in events(log).items() if int(EventType.JOB_HELD) in kinds)


def test_procs_materialized_late_are_held_or_idle_as_their_own_ads_say(cell, workdir):
    log = os.path.join(workdir, "m.log")
    # max_idle 1: proc 0 comes in held, proc 1 idle, and no more while proc 1 is idle
    cluster = submit(cell, SLEEPER + f"log = {log}\nhold = $(Process) == 0 || $(Process) == 2\n"
                                     "max_idle = 1\nqueue 4\n", cwd=workdir)
    wait_for(lambda: not unanswered(cell.root), timeout=30)
    assert statuses(cell, str(cluster)) == {f"{cluster}.0": 5, f"{cluster}.1": 1}
    assert af(cell, f"{cluster}.0", "HoldReasonCode", "HoldReason") == \
        "15, submitted on hold at user's request\n"
    assert _held_procs(log) == [0]
    # proc 1 leaves: proc 2 comes in held, then proc 3 idle
    assert cell.run("condor_rm", f"{cluster}.1").returncode == 0
    wait_for(lambda: f"{cluster}.3" in statuses(cell, str(cluster)), timeout=30)
    assert statuses(cell, str(cluster)) == {f"{cluster}.0": 5, f"{cluster}.2": 5, f"{cluster}.3": 1}
    assert _held_procs(log) == [0, 2]

    # a first proc that is not held: only its later procs that say so are
    other = submit(cell, SLEEPER + "hold = $(Process) == 1\nmax_materialize = 10\nqueue 3\n",
                   cwd=workdir, name="b.sub")
    wait_for(lambda: not unanswered(cell.root), timeout=30)
    assert statuses(cell, str(other)) == {f"{other}.0": 1, f"{other}.1": 5, f"{other}.2": 1}


def test_a_cluster_not_taken_in_yet_shows_each_proc_as_its_own_ad_says(cell, workdir):
    cell.stop_daemon()
    cluster = submit(cell, SLEEPER + "hold = $(Process) == 0\nqueue 3\n", cwd=workdir)
    other = submit(cell, SLEEPER + "hold = false\nqueue\nhold = true\nqueue 2\n", cwd=workdir, name="b.sub")
    wanted = {f"{cluster}.0": 5, f"{cluster}.1": 1, f"{cluster}.2": 1,
              f"{other}.0": 1, f"{other}.1": 5, f"{other}.2": 5}
    reason = "15, submitted on hold at user's request\n"

    def shown():
        rows = [line.split() for line in cell.run("qstat").stdout.splitlines()[2:]]
        return (statuses(cell, str(cluster), str(other)), sorted((r[0], r[4], r[-1]) for r in rows),
                af(cell, f"{cluster}.0", "HoldReasonCode", "HoldReason"),
                af(cell, f"{other}.1", "HoldReasonCode", "HoldReason"))
    before = shown()
    assert before[0] == wanted
    assert before[1] == sorted([(str(cluster), "hqw", "1"), (str(cluster), "qw", "2,3"),
                                (str(other), "qw", "1"), (str(other), "hqw", "2,3")])
    assert before[2:] == (reason, reason)
    cell.start_daemon()
    wait_for(lambda: not unanswered(cell.root), timeout=30)
    assert shown() == before


FORGED_LATER_AD = """
from gridtools.cli import ask
from gridtools.spool import requests

def tell(kind, body):
    ads = body["job"]["condor_ad"]
    body["job"]["condor_ad"] = [ads[0] if isinstance(ads, list) else ads, "JobStatus = ((("]
    requests.write(kind, body)
ask.tell = tell
from gridtools.cli.condor import submit
submit.main([{path!r}])
"""


def test_a_later_ad_that_cannot_be_read_does_not_stop_other_users_listings(cell, workdir, users):
    """A submission whose later proc's ad is no ClassAd, written by hand while the daemon
    is not looking, is left out of root's qstat and condor_q as it came (the daemon refuses
    it when it takes it in): it does not make them fail."""
    mine = submit(cell, SLEEPER + "queue\n", cwd=workdir)
    cell.stop_daemon()
    path = os.path.join(workdir, "forged.sub")
    with open(path, "w") as fh:
        fh.write(SLEEPER + "queue 2\n")
    os.chmod(path, 0o644)
    user_py(cell, users[0], FORGED_LATER_AD.format(path=path), check=True)
    for argv in (["qstat", "-u", "*"], ["condor_q", "-allusers"], ["qstat", "-j", str(mine)]):
        shown = cell.run(*argv)
        assert shown.returncode == 0 and "unexpected" not in shown.stderr, (argv, shown.stderr)
        assert str(mine) in shown.stdout, argv


def test_qrls_of_several_tasks_answers_each_and_refuses_those_past_system_max_releases(cell, workdir, users):
    configure_now(cell, "SYSTEM_MAX_RELEASES = 1\n")
    user = users[0]
    many = submit(cell, SLEEPER + "hold = true\nqueue 3\n", cwd=workdir, user=user)
    once = submit(cell, SLEEPER + "hold = true\nqueue\n", cwd=workdir, user=user, name="b.sub")
    twice = submit(cell, SLEEPER + "hold = true\nqueue\n", cwd=workdir, user=user, name="c.sub")
    wanted = {f"{many}.0": 5, f"{many}.1": 5, f"{many}.2": 5, f"{once}.0": 5, f"{twice}.0": 5}
    wait_for(lambda: statuses(cell, str(many), str(once), str(twice)) == wanted, timeout=30)
    # held a second time (NumHolds 2): proc 1 of the first cluster and the third cluster
    for word in (f"{many}.2", str(twice)):
        assert cell.run("qrls", word, user=user).returncode == 0
        assert cell.run("qhold", word, user=user).returncode == 0
    wait_for(lambda: af(cell, str(twice), "NumHolds") == "2\n" and af(cell, f"{many}.1", "NumHolds") == "2\n")
    refusal = "Job {} cannot be released again, has reached SYSTEM_PERIODIC_RELEASES limit"
    proc = cell.run("sh", "-c", f"qrls {twice} {many} {once} 2>&1", user=user)
    assert proc.returncode == 1, proc.stdout
    assert proc.stdout.splitlines() == [
        refusal.format(f"{twice}.0"),
        f"modified hold of job-array task {many}.1",
        refusal.format(f"{many}.1"),
        f"modified hold of job-array task {many}.3",
        f"modified hold of job {once}"]
    assert statuses(cell, str(many), str(once), str(twice)) == {
        f"{many}.0": 1, f"{many}.1": 5, f"{many}.2": 1, f"{once}.0": 1, f"{twice}.0": 5}
    # the refusals on standard error, the answers on standard output
    again = cell.run("qrls", str(twice), f"{many}.2", user=user)
    assert (again.returncode, again.stdout, again.stderr) == (
        1, "", refusal.format(f"{twice}.0") + "\n" + refusal.format(f"{many}.1") + "\n")

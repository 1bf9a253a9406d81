"""How an HTCondor job is stopped and judged, as HTCondor does it: the seconds from its
soft kill signal to SIGKILL (job_max_vacate_time, MachineMaxVacateTime), a removal that
wants no grace, the signal a hold sends, noop jobs, SYSTEM_MAX_RELEASES against
condor_release, policy expressions whose value is a real, and condor_config_val's
defaults of these knobs."""

import os
import time

from condortools import events, history, read, statuses, submit, wait_events, wait_status, write
from conftest import wait_for
from gridtools.daemon import condorpolicy
from gridtools.jobads import parsed_ad

#: a job that notes each signal it gets (TERM, INT, USR1, USR2) in NAME.sig and goes on
#: running; NAME.ready once its traps are set
TRAPS = """#!/bin/sh
for s in TERM INT USR1 USR2; do trap "echo got $s >> $1.sig" $s; done
echo up > $1.ready
while :; do sleep 0.1; done
"""


def _traps(workdir):
    write(os.path.join(workdir, "traps.sh"), TRAPS, 0o755)


def _ready(workdir, name):
    wait_for(lambda: os.path.exists(os.path.join(workdir, f"{name}.ready")), timeout=30)


def _config(cell, text):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(text)
    assert cell.run("condor_reconfig").returncode == 0


def test_job_max_vacate_time_is_the_time_between_the_kill_signal_and_sigkill(cell, workdir):
    """A job that goes on after its SIGTERM is killed its job_max_vacate_time later (2 s
    here), not after a fixed 30 s; the kill signal came once."""
    _traps(workdir)
    cluster = submit(cell, "executable = traps.sh\narguments = mvt\njob_max_vacate_time = 2\n"
                           "log = mvt.log\nqueue\n", cwd=workdir)
    _ready(workdir, "mvt")
    began = time.time()
    assert cell.run("condor_rm", str(cluster)).returncode == 0
    wait_events(os.path.join(workdir, "mvt.log"), f"{cluster}.0", [0, 1, 9], timeout=20)
    wait_for(lambda: str(cluster) in history(cell, "-af", "ClusterId"), timeout=20)
    assert time.time() - began < 20
    assert read(os.path.join(workdir, "mvt.sig")) == "got TERM\n"
    assert history(cell, str(cluster), "-af", "JobMaxVacateTime") == "2\n"


def test_without_job_max_vacate_time_the_machine_gives_its_max_vacate_time(cell, workdir):
    """MachineMaxVacateTime (10 minutes by default) bounds the job's: set to 1 s, a job
    asking for 100 s is killed 1 s after its SIGTERM."""
    _config(cell, "MachineMaxVacateTime = 1\n")
    _traps(workdir)
    cluster = submit(cell, "executable = traps.sh\narguments = mach\njob_max_vacate_time = 100\n"
                           "log = mach.log\nqueue\n", cwd=workdir)
    _ready(workdir, "mach")
    assert cell.run("condor_rm", str(cluster)).returncode == 0
    wait_events(os.path.join(workdir, "mach.log"), f"{cluster}.0", [0, 1, 9], timeout=20)
    assert read(os.path.join(workdir, "mach.sig")) == "got TERM\n"


def test_want_graceful_removal_false_kills_the_job_at_once(cell, workdir):
    """want_graceful_removal = false: condor_rm sends SIGKILL, never the kill signal."""
    _traps(workdir)
    cluster = submit(cell, "executable = traps.sh\narguments = fast\nwant_graceful_removal = false\n"
                           "log = fast.log\nqueue\n", cwd=workdir)
    _ready(workdir, "fast")
    assert cell.run("condor_rm", str(cluster)).returncode == 0
    wait_events(os.path.join(workdir, "fast.log"), f"{cluster}.0", [0, 1, 9], timeout=15)
    assert read(os.path.join(workdir, "fast.sig")) == ""


def test_gracefully_remove_jobs_false_is_the_default_a_job_may_override(cell, workdir):
    """GRACEFULLY_REMOVE_JOBS = false: removals kill at once, but for a job whose
    want_graceful_removal is true."""
    _config(cell, "GRACEFULLY_REMOVE_JOBS = false\n")
    _traps(workdir)
    fast = submit(cell, "executable = traps.sh\narguments = cfg\nlog = cfg.log\nqueue\n", cwd=workdir)
    kind = submit(cell, "executable = traps.sh\narguments = kind\nwant_graceful_removal = true\n"
                        "job_max_vacate_time = 1\nlog = kind.log\nqueue\n", cwd=workdir)
    _ready(workdir, "cfg")
    _ready(workdir, "kind")
    assert cell.run("condor_rm", str(fast), str(kind)).returncode == 0
    wait_events(os.path.join(workdir, "cfg.log"), f"{fast}.0", [0, 1, 9], timeout=15)
    wait_events(os.path.join(workdir, "kind.log"), f"{kind}.0", [0, 1, 9], timeout=15)
    assert read(os.path.join(workdir, "cfg.sig")) == ""
    assert read(os.path.join(workdir, "kind.sig")) == "got TERM\n"


def test_a_hold_sends_remove_kill_sig_when_the_job_has_one(cell, workdir):
    """condor_hold stops the job as the starter's graceful shutdown does: its
    remove_kill_sig when it has one (not kill_sig, not hold_kill_sig)."""
    _traps(workdir)
    both = submit(cell, "executable = traps.sh\narguments = both\nkill_sig = SIGINT\n"
                        "remove_kill_sig = SIGUSR1\nhold_kill_sig = SIGUSR2\njob_max_vacate_time = 1\n"
                        "log = both.log\nqueue\n", cwd=workdir)
    plain = submit(cell, "executable = traps.sh\narguments = plain\nkill_sig = SIGINT\n"
                         "job_max_vacate_time = 1\nlog = plain.log\nqueue\n", cwd=workdir)
    _ready(workdir, "both")
    _ready(workdir, "plain")
    assert cell.run("condor_hold", str(both), str(plain)).returncode == 0
    wait_for(lambda: read(os.path.join(workdir, "both.sig")) and read(os.path.join(workdir, "plain.sig")),
             timeout=15)
    wait_for(lambda: cell.task_states(both) == {1: "pending"} and cell.task_states(plain) == {1: "pending"},
             timeout=15)
    assert read(os.path.join(workdir, "both.sig")) == "got USR1\n"
    assert read(os.path.join(workdir, "plain.sig")) == "got INT\n"


def test_a_hold_of_a_job_that_wants_no_graceful_removal_kills_it_at_once(cell, workdir):
    _traps(workdir)
    cluster = submit(cell, "executable = traps.sh\narguments = hk\nwant_graceful_removal = false\n"
                           "log = hk.log\nqueue\n", cwd=workdir)
    _ready(workdir, "hk")
    assert cell.run("condor_hold", str(cluster)).returncode == 0
    wait_for(lambda: cell.task_states(cluster) == {1: "pending"}, timeout=15)
    assert read(os.path.join(workdir, "hk.sig")) == ""
    assert statuses(cell, f"{cluster}.0") == {f"{cluster}.0": 5}


def test_a_noop_job_completes_at_once_without_running(cell, workdir):
    """noop_job = true: the job never runs; it completes with noop_job_exit_code (event
    005, no 001), and its on_exit_hold is not looked at, as HTCondor's schedd does."""
    write(os.path.join(workdir, "mark.sh"), "#!/bin/sh\necho ran > ran\nsleep 300\n", 0o755)
    cluster = submit(cell, "executable = mark.sh\nnoop_job = true\nnoop_job_exit_code = 4\n"
                           "on_exit_hold = true\nlog = noop.log\nqueue 2\n", cwd=workdir)
    log = os.path.join(workdir, "noop.log")
    for proc in (0, 1):
        wait_events(log, f"{cluster}.{proc}", [0, 5])
    assert "(1) Normal termination (return value 4)" in read(log)
    wait_for(lambda: history(cell, str(cluster), "-af", "ProcId", "JobStatus", "NumJobStarts")
             .splitlines() in (["1 4 0", "0 4 0"], ["0 4 0", "1 4 0"]), timeout=20)
    assert history(cell, f"{cluster}.0", "-af", "ExitCode", "IsNoopJob") == "undefined true\n"
    assert not os.path.exists(os.path.join(workdir, "ran"))
    assert events(log)[f"{cluster}.0"] == [0, 5]


def test_a_noop_job_with_an_exit_signal_held_at_submit_still_completes(cell, workdir):
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nnoop_job = true\n"
                           "noop_job_exit_signal = 9\nhold = true\nlog = sig.log\nqueue\n", cwd=workdir)
    log = os.path.join(workdir, "sig.log")
    wait_events(log, f"{cluster}.0", [0, 12, 5])
    assert "(0) Abnormal termination (signal 9)" in read(log)


def test_system_max_releases_refuses_a_users_release_past_it(cell, workdir, users):
    """SYSTEM_MAX_RELEASES = 1: a user's condor_release of a job held more than once is
    refused in HTCondor's words and the job stays held; a queue super user (root) may
    still release it."""
    _config(cell, "SYSTEM_MAX_RELEASES = 1\n")
    user = users[0]
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n",
                     cwd=workdir, user=user)
    jid = f"{cluster}.0"
    first = cell.run("condor_release", jid, user=user)            # NumHolds 1: not above 1
    assert (first.stdout, first.returncode) == (f"Job {jid} released\n", 0)
    assert cell.run("condor_hold", jid, user=user).returncode == 0
    wait_status(cell, jid, 5)
    wait_for(lambda: cell.run("condor_q", jid, "-af", "NumHolds").stdout == "2\n")
    refused = cell.run("condor_release", jid, user=user)
    assert refused.returncode == 1
    assert refused.stderr == f"\nJob {jid} cannot be released again, has reached SYSTEM_PERIODIC_RELEASES limit\n"
    whole = cell.run("condor_release", str(cluster), user=user)
    assert whole.returncode == 1 and whole.stderr == f"\nCouldn't find/release all jobs in cluster {cluster}\n"
    assert statuses(cell, jid) == {jid: 5}
    assert cell.run("condor_release", jid).stdout == f"Job {jid} released\n"      # (root)
    assert cell.run("condor_rm", jid).returncode == 0


def test_policy_values_are_read_as_htcondor_reads_them():
    """A real is cut toward 0 (0.5 does not fire, 1.5 and -1.2 do; an OnExitRemove of 0.5
    keeps the job); strings and UNDEFINED never fire; a boolean lookup (LeaveJobInQueue)
    takes any non-zero number."""
    for value, fires in ((0.5, False), (-0.9, False), (1.5, True), (-1.2, True), (True, True),
                         (False, False), (0, False), (3, True), ("yes", False), (None, False)):
        assert condorpolicy._true(value) is fires, value
    assert condorpolicy.true(0.5) is True and condorpolicy.true("x") is False
    now = int(time.time())
    running = 'Cmd = "x"\nJobStatus = 2\n'
    assert condorpolicy.periodic(parsed_ad(running + "PeriodicHold = 0.5\n"), now) is None
    decision = condorpolicy.periodic(parsed_ad(running + "PeriodicHold = 0.5\nPeriodicRemove = 1.5\n"), now)
    assert decision.action is condorpolicy.Action.REMOVE
    exited = 'Cmd = "x"\nExitCode = 0\nExitBySignal = false\n'
    assert condorpolicy.at_exit(parsed_ad(exited + "OnExitRemove = 0.5\n")).action is condorpolicy.Action.REQUEUE
    assert condorpolicy.at_exit(parsed_ad(exited + 'OnExitRemove = "no"\n')) is None
    assert condorpolicy.at_exit(parsed_ad(exited + "OnExitHold = 0.9\n")) is None
    rule = condorpolicy.system_policy(lambda name: "0.7" if name == "SYSTEM_PERIODIC_HOLD" else None)
    assert condorpolicy.periodic(parsed_ad(running), now, rule) is None


def test_an_on_exit_remove_of_one_half_runs_the_job_again(cell, workdir):
    """on_exit_remove = 0.5 is false to HTCondor: the job exits 0 and is requeued (004)
    until its periodic_remove takes it out; periodic_hold = 0.5 never holds it."""
    _config(cell, "PERIODIC_EXPR_INTERVAL = 1\n")
    cluster = submit(cell, "executable = /bin/true\non_exit_remove = 0.5\nperiodic_hold = 0.5\n"
                           "periodic_remove = NumJobStarts >= 2\nlog = half.log\nqueue\n", cwd=workdir)
    log = os.path.join(workdir, "half.log")
    wait_events(log, f"{cluster}.0", [0, 1, 4, 1], timeout=30)
    wait_for(lambda: events(log)[f"{cluster}.0"][-1] == 9, timeout=30)
    assert 12 not in events(log)[f"{cluster}.0"] and 5 not in events(log)[f"{cluster}.0"]


def test_condor_config_val_prints_the_defaults_of_these_knobs(cell):
    out = cell.run("condor_config_val", "MAX_PERIODIC_EXPR_INTERVAL", "PERIODIC_EXPR_TIMESLICE",
                   "SYSTEM_MAX_RELEASES", "GRACEFULLY_REMOVE_JOBS", "MachineMaxVacateTime")
    assert (out.stdout, out.returncode) == ("1200\n0.01\n-1\ntrue\n10 * 60\n", 0)

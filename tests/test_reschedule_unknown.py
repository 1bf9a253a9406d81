"""A host whose execution daemon went away, end to end with two ``gridtools execd --host``:
qstat -f shows its queue instance unknown (u) and no new job goes there; after
reschedule_unknown (sge_conf(5)) its rerunnable jobs and its checkpointing jobs under
``when r`` are rescheduled (Rq, an accounting record with failed 25) and run again on
the other host, while the others stay where they are. A job left running on a machine
the dispatcher cannot reach is ended by its own shepherd once its run was taken away."""

import os

import pytest

from conftest import destroy_cell, make_cell, wait_for
from qtools import add_object, jid_of, queue_letters, reasons, state_of, wait_state


@pytest.fixture
def two_hosts():
    """Hosts testhost and node2 with their execution daemons ({host: process})."""
    cell = make_cell(slots=4, hosts=["testhost", "node2"])
    try:
        procs = cell.start_execds(["testhost", "node2"])
        yield cell, dict(zip(["testhost", "node2"], procs))
    finally:
        destroy_cell(cell)


def queue_of(cell, jid):
    """The queue instance qstat shows a running job in, or None."""
    for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]:
        fields = line.split()
        if fields and fields[0] == str(jid) and "@" in line:
            return next(f for f in fields if "@" in f)
    return None


def kill_execd(proc):
    proc.terminate()
    proc.wait(timeout=10)


def log(workdir):
    path = os.path.join(workdir, "log")
    return open(path).read().splitlines() if os.path.exists(path) else []


def runner(cell, workdir, *options):
    script = f'echo "run $JOB_ID $HOSTNAME RESTARTED=$RESTARTED" >> {workdir}/log\nsleep 120\n'
    jid = jid_of(cell.qsub(*options, "-o", "/dev/null", "-j", "y", input=script, cwd=workdir))
    wait_for(lambda: f"run {jid} node2 RESTARTED=0" in log(workdir), timeout=20)
    return jid


def test_no_new_job_goes_to_a_host_whose_execd_went_away(two_hosts, workdir):
    cell, execds = two_hosts
    assert "u" not in queue_letters(cell, "all.q@node2")
    kill_execd(execds["node2"])
    wait_for(lambda: "u" in queue_letters(cell, "all.q@node2"), timeout=20)
    assert "u" not in queue_letters(cell, "all.q@testhost")
    jids = [jid_of(cell.qsub("-b", "y", "sleep", "120", cwd=workdir)) for _ in range(5)]
    wait_for(lambda: sum(state_of(cell, j) == "r" for j in jids) == 4, timeout=20)
    assert {queue_of(cell, j) for j in jids[:4]} == {"all.q@testhost"}
    assert state_of(cell, jids[4]) == "qw"
    assert 'queue instance "all.q@node2" dropped because it is temporarily not available' in \
        reasons(cell, jids[4])


CKPT = """ckpt_name          {name}
interface          hibernator
ckpt_command       none
migr_command       none
restart_command    /bin/sh {dir}/restart.sh
clean_command      none
ckpt_dir           {dir}
signal             none
when               {when}
"""


def test_jobs_of_a_host_unknown_past_reschedule_unknown_run_again_elsewhere(two_hosts, workdir):
    cell, execds = two_hosts
    with open(os.path.join(workdir, "restart.sh"), "w") as fh:
        fh.write(f'echo "restart $JOB_ID $HOSTNAME RESTARTED=$RESTARTED" >> {workdir}/log\n')
    add_object(cell, "-Ackpt", CKPT.format(name="ckr", dir=workdir, when="r"))
    add_object(cell, "-Ackpt", CKPT.format(name="cks", dir=workdir, when="s"))
    cell.run("qconf", "-aattr", "queue", "ckpt_list", "ckr cks", "all.q", check=True)
    edit = cell.run("qconf", "-mconf", env={"EDITOR": "sed -i 's/^reschedule_unknown .*/reschedule_unknown 0:0:2/'"})
    assert edit.returncode == 0, edit.stderr
    cell.run("qmod", "-d", "all.q@testhost", check=True)
    rerun = runner(cell, workdir, "-r", "y")
    plain = runner(cell, workdir)                      # all.q has rerun FALSE
    ckpt_r = runner(cell, workdir, "-ckpt", "ckr")
    ckpt_s = runner(cell, workdir, "-ckpt", "cks", "-r", "y")
    kill_execd(execds["node2"])
    wait_for(lambda: state_of(cell, rerun) == "Rq" and state_of(cell, ckpt_r) == "Rq", timeout=30)
    assert queue_letters(cell, "all.q@node2") == "u"
    assert queue_of(cell, plain) == queue_of(cell, ckpt_s) == "all.q@node2"
    assert state_of(cell, plain) == state_of(cell, ckpt_s) == "r"
    records = [r for r in cell.accounting() if r[5] in (str(rerun), str(ckpt_r))]
    assert sorted((r[5], r[1], r[11], r[12]) for r in records) == sorted(
        [(str(rerun), "node2", "25", "0"), (str(ckpt_r), "node2", "25", "0")])
    cell.run("qmod", "-e", "all.q@testhost", check=True)
    wait_for(lambda: {f"run {rerun} testhost RESTARTED=1", f"restart {ckpt_r} testhost RESTARTED=1"}
             <= set(log(workdir)), timeout=20)
    wait_state(cell, rerun, "Rr")
    assert queue_of(cell, rerun) == "all.q@testhost"
    assert queue_of(cell, plain) == queue_of(cell, ckpt_s) == "all.q@node2"
    qacct = cell.run("qacct", "-j", str(rerun))
    assert "rescheduling" in qacct.stdout
    wait_for(lambda: f"Pushed rescheduling of job {rerun} on host node2" in messages(cell))
    assert f"rescheduling of job {plain} " not in messages(cell)


def messages(cell):
    path = os.path.join(cell.root, "spool", "messages")
    return open(path).read() if os.path.exists(path) else ""


def test_a_job_left_on_a_lost_machine_is_ended_by_its_own_shepherd(workdir):
    """node2's execution daemon runs on another machine (a UTS namespace of its own
    names it otherwise), so the dispatcher cannot kill what is left there: when node2 is
    lost past reschedule_unknown, the job's shepherd sees in the spool that its run was
    taken away, ends the job, and leaves the run that starts again on testhost alone."""
    import shutil
    import subprocess
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare(1) for a second machine name")
    cell = make_cell(slots=4, hosts=["testhost", "node2"])
    try:
        cell.start_execds(["testhost"])
        other = subprocess.Popen(["unshare", "--uts", "sh", "-c",
                                  "hostname othermachine && exec gridtools execd --host node2"],
                                 env=cell.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lock = os.path.join(cell.root, "spool", "execd", "node2", "execd.lock")
        wait_for(lambda: os.path.exists(lock) or other.poll() is not None)
        if other.poll() is not None:
            pytest.skip("unshare --uts is not allowed here")
        edit = cell.run("qconf", "-mconf", env={"EDITOR": "sed -i 's/^reschedule_unknown .*/reschedule_unknown 0:0:2/'"})
        assert edit.returncode == 0, edit.stderr
        cell.run("qmod", "-d", "all.q@testhost", check=True)
        script = (f'echo "run $JOB_ID $HOSTNAME $(hostname) $$" >> {workdir}/log\n'
                  "exec sleep 120\n")
        jid = jid_of(cell.qsub("-r", "y", "-o", "/dev/null", "-j", "y", input=script, cwd=workdir))
        first = wait_for(lambda: next((line.split() for line in log(workdir)), None), timeout=20)
        assert first[:4] == ["run", str(jid), "node2", "othermachine"]
        old = int(first[4])
        kill_execd(other)
        wait_for(lambda: state_of(cell, jid) == "Rq", timeout=30)
        cell.run("qmod", "-e", "all.q@testhost", check=True)
        wait_for(lambda: not os.path.exists(f"/proc/{old}"), timeout=20)
        wait_for(lambda: len(log(workdir)) == 2, timeout=20)
        assert log(workdir)[1].split()[:3] == ["run", str(jid), "testhost"]
        wait_state(cell, jid, "Rr")
        assert cell.task_states(jid).get(1) == "running"
    finally:
        destroy_cell(cell)


def test_qdel_of_a_job_on_an_unknown_host_is_forced_when_qmaster_params_say_so(two_hosts, workdir, users):
    """A user's qdel of a job whose host went unknown leaves it being deleted (dr) until
    the host is back; with qmaster_params ENABLE_FORCED_QDEL_IF_UNKNOWN it ends at once,
    as a forced deletion would, though the user may not use qdel -f."""
    from qtools import set_qmaster_params
    cell, execds = two_hosts
    alice = users[0]
    cell.run("qmod", "-d", "all.q@testhost", check=True)
    first = jid_of(cell.qsub("-b", "y", "sleep", "120", user=alice, cwd=workdir))
    second = jid_of(cell.qsub("-b", "y", "sleep", "120", user=alice, cwd=workdir))
    wait_state(cell, first, "r")
    wait_state(cell, second, "r")
    kill_execd(execds["node2"])
    wait_for(lambda: "u" in queue_letters(cell, "all.q@node2"), timeout=20)
    assert cell.run("qdel", str(first), user=alice).returncode == 0
    wait_state(cell, first, "dr")
    set_qmaster_params(cell, "ENABLE_FORCED_QDEL_IF_UNKNOWN=true")
    assert cell.run("qdel", "-f", str(second), user=alice).returncode != 0    # (-f stays the manager's)
    assert cell.run("qdel", str(second), user=alice).returncode == 0
    wait_for(lambda: state_of(cell, second) is None, timeout=20)
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert f"changed non-forced request to forced request for job {second}.1because host can't be " \
        "contacted" in messages
    assert f"for job {first}.1" not in messages

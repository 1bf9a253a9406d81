"""condor_checkpoint and PERIODIC_CHECKPOINT: a running HTCondor job that asked for its
checkpoint signal (+WantCheckpointSignal) gets it and goes on; exiting as it promised starts
it again where it ran, any other exit holds it (FailedToCheckpoint). Other jobs are left
alone. As HTCondor's tool words it; DAEMON access at the STARTD."""

import os

from conftest import wait_for
from condortools import submit

#: a job that counts its runs in $1.count and notes them, and the signals it gets, in $1
#: (and its runs on its standard output);
#: asked to checkpoint (SIGUSR2) it exits with $2; its second run ends at once, or once
#: file $3 is there
CHECKPOINTING = """#!/bin/sh
n=$(cat "$1.count" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$1.count"
echo "started $n" >> "$1"
echo "run $n"
trap 'echo USR2 >> "$1"; exit $2' USR2
trap 'echo TERM >> "$1"; exit 0' TERM
if [ $n -ge 2 ]; then
    while [ -n "$3" ] && [ ! -e "$3" ]; do sleep 0.1; done
    exit 0
fi
sleep 60 & wait
"""


def script(workdir):
    path = os.path.join(workdir, "ckpt.sh")
    with open(path, "w") as fh:
        fh.write(CHECKPOINTING)
    os.chmod(path, 0o755)
    return path


def notes(path):
    return open(path).read().split("\n")[:-1] if os.path.exists(path) else []


def running(cell, cluster):
    wait_for(lambda: cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.strip() == "2")


def messages(cell):
    return open(os.path.join(cell.root, "spool", "messages")).read()


def test_a_job_that_asked_checkpoints_when_told_and_starts_again_where_it_ran(cell, workdir):
    notes_file = os.path.join(workdir, "notes")
    cluster = submit(cell, f"executable = {script(workdir)}\narguments = {notes_file} 0\noutput = out.txt\n"
                           '+WantCheckpointSignal = true\n+CheckpointSig = "SIGUSR2"\nqueue\n', cwd=workdir)
    running(cell, cluster)
    wait_for(lambda: notes(notes_file) == ["started 1"])
    proc = cell.run("condor_checkpoint", check=True)
    assert proc.stdout == 'Sent "Checkpoint-All-Jobs" command to local startd\n' and proc.stderr == ""
    # its checkpoint signal, an exit with code 0 as promised, and at once its second run, which ends
    wait_for(lambda: cell.run("condor_history", str(cluster), "-af", "ExitCode").stdout.strip() == "0",
             timeout=20)
    assert notes(notes_file) == ["started 1", "USR2", "started 2"]
    assert f"job {cluster}.1 on {cell.host} asked to checkpoint" in messages(cell)
    with open(os.path.join(workdir, "out.txt")) as fh:
        assert fh.read() == "run 1\nrun 2\n"             # its runs add to its output


def test_a_job_that_exits_otherwise_when_told_is_held(cell, workdir):
    notes_file = os.path.join(workdir, "notes")
    cluster = submit(cell, f"executable = {script(workdir)}\narguments = {notes_file} 3\n"
                           '+WantCheckpointSignal = true\n+CheckpointSig = "SIGUSR2"\nqueue\n', cwd=workdir)
    running(cell, cluster)
    wait_for(lambda: notes(notes_file) == ["started 1"])
    slot = cell.run("condor_q", str(cluster), "-af", "RemoteHost").stdout.strip()
    proc = cell.run("condor_checkpoint", slot, check=True)
    assert proc.stdout == f'Sent "Checkpoint-Job" command to startd {slot}\n'
    wait_for(lambda: cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.strip() == "5", timeout=20)
    held = cell.run("condor_q", str(cluster), "-af:,", "HoldReasonCode", "HoldReasonSubCode", "HoldReason")
    assert held.stdout == ("36, 768, Job did not exit as promised when sent its checkpoint signal.  Promised exit "
                           "was with exit code 0, actual exit status was with exit code 3.\n")
    assert notes(notes_file) == ["started 1", "USR2"]
    cell.run("condor_rm", str(cluster), check=True)


def test_jobs_that_did_not_ask_are_left_alone(cell, workdir):
    notes_file = os.path.join(workdir, "notes")
    cluster = submit(cell, f"executable = {script(workdir)}\narguments = {notes_file} 0\nqueue\n", cwd=workdir)
    jid = cell.qsub("-terse", "-b", "y", "sleep", "60", cwd=workdir, check=True).stdout.strip()
    running(cell, cluster)
    wait_for(lambda: notes(notes_file) == ["started 1"])
    wait_for(lambda: cell.task_states(int(jid)).get(1) == "running")
    proc = cell.run("condor_checkpoint", "-all", check=True)
    assert proc.stdout == f'Sent "Checkpoint-All-Jobs" command to startd {cell.host}\n'
    wait_for(lambda: "condor_checkpoint: 0 jobs asked to checkpoint" in messages(cell))
    assert notes(notes_file) == ["started 1"]
    assert cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.strip() == "2"
    assert cell.task_states(int(jid)).get(1) == "running"
    cell.run("condor_rm", str(cluster), check=True)
    cell.run("qdel", jid, check=True)


def test_names_options_and_refusals_as_htcondor_words_them(cell, users, workdir):
    proc = cell.run("condor_checkpoint", "nohost")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == "Can't find address for startd nohost\nPerhaps you need to query another pool.\n"
    proc = cell.run("condor_checkpoint", "-fast")
    assert proc.returncode == 1 and proc.stderr.startswith("ERROR: unknown option -fast\nUsage: condor_checkpoint")
    proc = cell.run("condor_checkpoint", "-constraint", "SlotID ==")
    assert proc.returncode == 1 and proc.stderr == "ERROR: Invalid constraint (SlotID ==)\n"
    proc = cell.run("condor_checkpoint", "-help")
    assert proc.returncode == 0 and "perform a periodic checkpoint on running jobs" in proc.stdout + proc.stderr
    proc = cell.run("condor_checkpoint", user="gtbob")
    assert proc.returncode == 1 and proc.stdout == ""
    assert 'SECMAN:2010:Received "DENIED" from server for user gtbob' in proc.stderr
    assert proc.stderr.endswith("Can't send Checkpoint-All-Jobs command to local startd\n")


def test_periodic_checkpoint_asks_by_itself_and_the_slot_says_when(cell, workdir):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("POLLING_INTERVAL = 1\nPERIODIC_CHECKPOINT = (CurrentTime - JobStart) >= 2 && "
                 "LastPeriodicCheckpoint =?= undefined\n")
    cell.run("condor_reconfig", check=True)
    notes_file, go = os.path.join(workdir, "notes"), os.path.join(workdir, "go")
    cluster = submit(cell, f"executable = {script(workdir)}\narguments = {notes_file} 0 {go}\n"
                           '+WantCheckpointSignal = true\n+CheckpointSig = "USR2"\nqueue\n', cwd=workdir)
    running(cell, cluster)
    slot = cell.run("condor_q", str(cluster), "-af", "RemoteHost").stdout.strip()
    wait_for(lambda: notes(notes_file) == ["started 1", "USR2", "started 2"], timeout=20)
    assert f"job {cluster}.1 on {cell.host} asked to checkpoint" in messages(cell)

    def last():
        return cell.run("condor_status", slot, "-af", "LastPeriodicCheckpoint", "JobStart").stdout.split()
    # while the job runs its slot says when it was asked (and asks no more: the expression reads it)
    wait_for(lambda: last()[0] != "undefined")
    when, start = (int(v) for v in last())
    assert when >= start + 2
    open(go, "w").close()
    wait_for(lambda: cell.run("condor_history", str(cluster), "-af", "ExitCode").stdout.strip() == "0",
             timeout=20)
    assert notes(notes_file) == ["started 1", "USR2", "started 2"]
    wait_for(lambda: last() == ["undefined", "undefined"])   # the job is gone: no more


def test_a_self_checkpointing_job_shows_its_checkpoints(cell, workdir):
    """Each exit with checkpoint_exit_code is a checkpoint HTCondor's shadow counts:
    CheckpointNumber, JobLastCheckpointTime and CommittedTime (the seconds up to the
    last checkpoint) show while the job runs on, and the count stays after it ends."""
    path = os.path.join(workdir, "self.sh")
    with open(path, "w") as fh:
        fh.write('#!/bin/sh\nn=$(cat n 2>/dev/null || echo 0); n=$((n + 1)); echo $n > n\n'
                 'if [ $n -le 2 ]; then sleep 1; exit 85; fi\nwhile [ ! -e go ]; do sleep 0.1; done\n')
    os.chmod(path, 0o755)
    began = int(__import__("time").time())
    cluster = submit(cell, f"executable = {path}\ncheckpoint_exit_code = 85\nqueue\n", cwd=workdir)

    def shown():
        return cell.run("condor_q", str(cluster), "-af", "CheckpointNumber", "JobLastCheckpointTime",
                        "CommittedTime").stdout.split()
    number, last, committed = wait_for(lambda: shown()[0] == "2" and shown(), timeout=20)
    assert began <= int(last) <= int(__import__("time").time()) and 2 <= int(committed) <= int(last) - began + 1
    open(os.path.join(workdir, "go"), "w").close()
    wait_for(lambda: cell.run("condor_history", str(cluster), "-af", "CheckpointNumber").stdout == "2\n",
             timeout=20)

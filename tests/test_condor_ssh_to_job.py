"""condor_ssh_to_job and condor_submit -interactive against a running daemon: a session
beside a running job, in its environment and directory, for its owner only; an
interactive job that waits for its session and ends with it."""

import os
import select

from condortools import submit, wait_status
from conftest import wait_for

SLEEP = 'executable = /bin/sleep\narguments = 300\nenvironment = "COLOUR=blue"\n'


def test_a_command_runs_beside_the_job_in_its_environment_and_directory(cell, workdir):
    """The command runs through /bin/sh with the job's environment (its own variables,
    _CONDOR_SLOT, _CONDOR_JOB_PIDS), in its Iwd; its exit status is the command's."""
    cluster = submit(cell, SLEEP + "queue\n", cwd=workdir)
    wait_status(cell, f"{cluster}.0", 2)
    proc = cell.run("condor_ssh_to_job", str(cluster), 'echo $COLOUR $_CONDOR_SLOT; pwd; '
                    'kill -0 $_CONDOR_JOB_PIDS && echo alive; exit 4')
    assert (proc.returncode, proc.stderr) == (4, "")
    colour, where, alive = proc.stdout.splitlines()
    assert colour.split()[0] == "blue" and colour.split()[1].startswith("slot")
    assert (where, alive) == (os.path.realpath(workdir), "alive")
    assert cell.run("condor_q", f"{cluster}.0", "-af", "JobStatus").stdout == "2\n"    # (the job goes on)
    cell.run("condor_rm", str(cluster), check=True)


def test_who_may_and_the_jobs_that_are_not_running(cell, workdir, users):
    """Only the owner (and root) may; a job that is not running, is held, or does not
    exist is said in HTCondor's words, exit 1; bad arguments too."""
    mine = submit(cell, SLEEP + "queue\n", cwd=workdir)
    wait_status(cell, f"{mine}.0", 2)
    other = cell.run("condor_ssh_to_job", str(mine), "true", user=users[0])
    assert (other.returncode, other.stderr) == (
        1, f"{users[0]} is not authorized for access to the starter for job {mine}.0\n")
    held = submit(cell, SLEEP + "hold = true\nqueue\n", cwd=workdir, name="held.sub")
    said = cell.run("condor_ssh_to_job", f"{held}.0", "true")
    assert (said.returncode, said.stderr) == (1, "Job is held: \"submitted on hold at user's request\".\n")
    cell.run("condor_qedit", str(held), "Requirements", "false", check=True)
    cell.run("condor_release", str(held), check=True)
    wait_status(cell, f"{held}.0", 1)
    idle = cell.run("condor_ssh_to_job", str(held), "true")
    assert (idle.returncode, idle.stderr) == (
        1, f"Job {held}.0 is not running.\n(Use -auto-retry to keep trying periodically.)\n")
    assert cell.run("condor_ssh_to_job", "777.0").stderr == "No such job: 777.0\n"
    assert cell.run("condor_ssh_to_job").stderr == "ERROR: You must specify a job!\n\n"
    assert cell.run("condor_ssh_to_job", "1.x").stderr == "Invalid job id: 1.x\n"
    assert cell.run("condor_ssh_to_job", "-bogus", "1").stderr == "Unrecognized argument: -bogus\n"
    theirs = submit(cell, SLEEP + "queue\n", user=users[0], cwd=os.path.expanduser(f"~{users[0]}"), name="t.sub")
    wait_status(cell, f"{theirs}.0", 2)
    own = cell.run("condor_ssh_to_job", str(theirs), "id -un; echo $COLOUR", user=users[0])
    assert (own.returncode, own.stdout, own.stderr) == (0, f"{users[0]}\nblue\n", "")
    by_root = cell.run("condor_ssh_to_job", str(theirs), "id -un")          # (root: as the owner)
    assert (by_root.returncode, by_root.stdout) == (0, f"{users[0]}\n")
    assert cell.run("condor_ssh_to_job", str(mine), "true", user=users[1]).returncode == 1
    helped = cell.run("condor_ssh_to_job", "-help")
    assert helped.returncode == 0 and helped.stderr.startswith("Usage: condor_ssh_to_job [OPTIONS] ")


def test_auto_retry_waits_for_the_job_to_start(cell, workdir):
    cluster = submit(cell, SLEEP + "requirements = false\nqueue\n", cwd=workdir)
    import subprocess
    from conftest import BIN
    waiting = subprocess.Popen([os.path.join(BIN, "condor_ssh_to_job"), "-auto-retry", str(cluster), "echo $COLOUR"],
                               env=cell.env, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # it has seen the job idle (and said so) before the job may start
        assert select.select([waiting.stderr], [], [], 30)[0], "condor_ssh_to_job said nothing"
        assert waiting.stderr.readline() == "Waiting for job to start...\n"
        cell.run("condor_qedit", str(cluster), "Requirements", "true", check=True)
        waiting.wait(timeout=30)
        out, err = waiting.stdout.read(), waiting.stderr.read()     # (a few bytes: the pipes cannot fill)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert (waiting.returncode, out, err) == (0, "blue\n", "")
    cell.run("condor_rm", str(cluster), check=True)


def test_submit_interactive_opens_a_session_in_a_job_that_ends_with_it(cell, workdir):
    """condor_submit -interactive queues a job that waits for its session (InteractiveJob,
    /bin/sh waiting on the session's directory), opens the session with HTCondor's
    greeting, and the job ends when the session does; the session's status is the
    command's."""
    proc = cell.run("condor_submit", "-interactive", cwd=workdir,
                    input="echo inside $_CONDOR_SLOT\ntest -d $_CONDOR_SCRATCH_DIR/.condor_ssh_to_job_1 && "
                          "echo marked\nexit 3\n")
    assert proc.returncode == 3, proc.stderr
    lines = proc.stdout.splitlines()
    cluster = int(lines[1].split()[-1].rstrip("."))
    assert lines[0] == "Submitting job(s)." and lines[1] == f"1 job(s) submitted to cluster {cluster}."
    assert lines[2].startswith("Welcome to slot") and lines[2].endswith("!")
    assert lines[3].startswith("Your condor job is running with pid(s) ")
    assert lines[4].startswith("inside slot") and lines[5:] == ["marked"]
    assert proc.stderr in ("", "Waiting for job to start...\n")
    assert wait_for(lambda: cell.run("condor_history", str(cluster), "-af", "JobStatus", "InteractiveJob",
                                     "Cmd").stdout == "4 true /bin/sh\n", timeout=20)


def test_submit_interactive_with_a_description_runs_the_waiting_program_instead(cell, workdir):
    """With a description, its executable and arguments give way to the configuration's
    INTERACTIVE_SUBMIT_CMD_OVERRIDE and _ARGS_OVERRIDE; its other commands stay."""
    with open(os.path.join(workdir, "i.sub"), "w") as fh:
        fh.write(SLEEP + "+Tag = \"mine\"\nqueue\n")
    dry = cell.run("condor_submit", "-interactive", "-dry-run", "-", "i.sub", cwd=workdir)
    assert dry.returncode == 0, dry.stderr
    assert 'Cmd = "/bin/sh"' in dry.stdout and "InteractiveJob = true" in dry.stdout
    assert 'Tag = "mine"' in dry.stdout and "Arguments = \"-c d=${_CONDOR_SCRATCH_DIR}/.condor_ssh_to_job_1;' " in dry.stdout
    late = cell.run("condor_submit", "-interactive", "-factory", "i.sub", cwd=workdir)
    assert (late.returncode, late.stderr) == (1, "\nERROR: Interactive jobs cannot be materialized late\n")

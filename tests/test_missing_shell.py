"""A shell that cannot be found, as Grid Engine's shepherd looks for it (posix_compliant
and script_from_stdin; and a binary job's shell): the job's own -S puts the job into
the error state, the queue's shell puts the queue instance into it and the job waits
again; under unix_behavior a script's #! line runs it and no shell is looked for."""

import os

from conftest import wait_for
from qtools import jid_of, queue_letters, set_attr, wait_state

Q = "all.q@testhost"


def _script(workdir, shebang=""):
    path = os.path.join(workdir, "job.sh")
    with open(path, "w") as fh:
        fh.write(f"{shebang}echo ran\n")
    return path


def test_a_missing_job_shell_puts_the_job_into_the_error_state(cell, workdir):
    set_attr(cell, "all.q", "shell_start_mode", "posix_compliant")
    jid = jid_of(cell.qsub("-cwd", "-S", "/no/such/shell", _script(workdir), cwd=workdir))
    wait_state(cell, jid, "Eqw")
    shown = cell.run("qstat", "-j", str(jid)).stdout
    assert 'unable to find shell "/no/such/shell"' in shown
    assert queue_letters(cell, Q) == ""
    assert not os.path.exists(os.path.join(workdir, f"job.sh.o{jid}")) or \
        "ran" not in open(os.path.join(workdir, f"job.sh.o{jid}")).read()


def test_a_missing_queue_shell_puts_the_queue_into_the_error_state(cell, workdir):
    set_attr(cell, "all.q", "shell_start_mode", "posix_compliant")
    set_attr(cell, "all.q", "shell", "/no/such/sh")
    jid = jid_of(cell.qsub("-cwd", _script(workdir), cwd=workdir))
    wait_for(lambda: queue_letters(cell, Q) == "E")
    wait_state(cell, jid, ("qw", "Rq"))
    set_attr(cell, "all.q", "shell", "/bin/sh")
    cell.run("qmod", "-c", "all.q", check=True)
    cell.wait_finished(jid)
    with open(os.path.join(workdir, f"job.sh.o{jid}")) as fh:
        assert fh.read() == "ran\n"


def test_under_unix_behavior_a_scripts_own_interpreter_runs_it(cell, workdir):
    set_attr(cell, "all.q", "shell_start_mode", "unix_behavior")
    jid = jid_of(cell.qsub("-cwd", "-S", "/no/such/shell", _script(workdir, "#!/bin/sh\n"), cwd=workdir))
    cell.wait_finished(jid)
    with open(os.path.join(workdir, f"job.sh.o{jid}")) as fh:
        assert fh.read() == "ran\n"


def test_a_shell_that_cannot_take_the_jobs_environment_fails_the_job_not_the_queue(cell, workdir):
    """The queue's shell is there, but the kernel refuses one of the job's variables
    (over 128 KiB): the job goes into the error state, the queue others use does not."""
    set_attr(cell, "all.q", "shell_start_mode", "posix_compliant")
    path = _script(workdir, f"#$ -v BIG={'x' * 140000}\n")
    jid = jid_of(cell.qsub("-cwd", path, cwd=workdir))
    wait_state(cell, jid, "Eqw")
    assert queue_letters(cell, Q) == ""

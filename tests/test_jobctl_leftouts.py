"""qmod, qhold, qrls and qdel answers as Grid Engine 8.1.9's qmaster and clients give them:
tasks that ran once and wait again, -hold_jid_ad waits, exit codes and -t lists."""

from conftest import wait_for
from qtools import jid_of, state_of, wait_state


def pending(jid, task):
    return f"Modify operation can not be applied on job-array task {jid}.{task} in pending/hold state\n"


def test_a_rescheduled_task_that_waits_again_is_suspended_silently(cell, workdir):
    jid = jid_of(cell.qsub("-r", "y", "-b", "y", "sleep", "300", cwd=workdir))
    wait_state(cell, jid, "r")
    cell.run("qmod", "-d", "all.q", check=True)
    cell.run("qmod", "-rj", str(jid), check=True)
    wait_for(lambda: state_of(cell, jid).endswith("q"))
    for option in ("-sj", "-usj", "-rj"):
        proc = cell.run("qmod", option, str(jid))
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), option
    # it ran once: clearing says it has no error state
    proc = cell.run("qmod", "-cj", str(jid))
    assert (proc.returncode, proc.stdout) == (1, f"Job {jid} is not in error state\n")
    cell.run("qdel", str(jid), check=True)


def test_clearing_a_job_that_never_started_is_a_pending_job_warning(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qmod", "-cj", str(jid))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, pending(jid, 1), "")
    array = jid_of(cell.qsub("-h", "-t", "1-3", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qmod", "-cj", str(array))
    assert (proc.returncode, proc.stdout) == (
        0, f"Modify operation can not be applied on job {array} in pending/hold state\n")
    proc = cell.run("qmod", "-cj", f"{array}.2")
    assert (proc.returncode, proc.stdout) == (0, pending(array, 2))


def test_tasks_waiting_only_for_an_array_predecessor_are_passed_over(cell, workdir):
    first = jid_of(cell.qsub("-h", "-t", "1-2", "-b", "y", "true", cwd=workdir))
    second = jid_of(cell.qsub("-t", "1-2", "-hold_jid_ad", str(first), "-b", "y", "true", cwd=workdir))
    proc = cell.run("qmod", "-sj", f"{second}.1-2")
    assert (proc.returncode, proc.stdout) == (1, f'invalid queue or job "{second}"\n')
    cell.run("qhold", f"{second}.2", check=True)
    proc = cell.run("qmod", "-sj", f"{second}.1-2")
    assert (proc.returncode, proc.stdout) == (0, pending(second, 2))


def test_qhold_and_qrls_of_a_job_that_does_not_exist_exit_3(cell):
    for command in ("qhold", "qrls"):
        proc = cell.run(command, "4242")
        assert (proc.returncode, proc.stdout) == (3, 'denied: job "4242" does not exist\n'), command


def test_a_second_t_without_a_job_before_it_is_refused(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-t", "1-9", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qdel", str(jid), "-t", "9", "-t", "6")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "", "found lonely '-t 6' option (The -t option needs a leading job name).\n")
    # each -t belongs to the job word before it
    other = jid_of(cell.qsub("-h", "-t", "1-3", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qdel", str(jid), "-t", "9", str(other), "-t", "2")
    assert (proc.returncode, proc.stdout) == (
        0, f"root has deleted job-array task {jid}.9\nroot has deleted job-array task {other}.2\n")


def test_qdel_words_deleted_task_ranges_as_grid_engine(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-t", "1-20", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qdel", str(jid), "-t", "1-10")
    assert (proc.returncode, proc.stdout) == (0, f"root has deleted job-array tasks 1-10:1 of job {jid}\n")
    proc = cell.run("qdel", f"{jid}.11-12")
    assert proc.stdout == f"root has deleted job-array tasks 11,12 of job {jid}\n"
    proc = cell.run("qdel", f"{jid}.13-19:3")
    assert proc.stdout == f"root has deleted job-array tasks 13-19:3 of job {jid}\n"

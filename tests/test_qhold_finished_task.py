"""qhold and qrls of an array task that already finished while the job has other tasks
left, as Grid Engine 8.1.9 answers them.

The qmaster forgets a finished array task but still counts its number as one of the
job's (it lies in the job's task range): a hold set on it by number is reported as a
change ("modified hold of job-array task J.T", exit status 0) though nothing is
changed, and a release of it finds no hold to lift and says nothing. A hold of the
whole job concerns only the tasks left. The finished task stays finished either way:
it is accounted once and never waits again."""

import pytest

from conftest import cell_fixture, wait_for
from qtools import jid_of

#: one slot: task 1 ends at once, task 2 then runs (and runs on), task 3 waits
cell = cell_fixture(slots=1)

SCRIPT = '[ "$SGE_TASK_ID" = 1 ] || exec sleep 300\n'


def states(cell, jid):
    """task number -> qstat's state letters of each task of array job ``jid`` it lists."""
    found = {}
    for line in cell.run("qstat", "-g", "d").stdout.splitlines()[2:]:
        words = line.split()
        if words and words[0] == str(jid):
            found[int(words[-1])] = words[4]
    return found


def accounted(cell, jid):
    """The task numbers of qacct -j's records of job ``jid``, one per record."""
    proc = cell.run("qacct", "-j", str(jid))
    return [int(line.split()[1]) for line in proc.stdout.splitlines() if line.startswith("taskid")]


@pytest.fixture
def job(cell, tmp_path):
    """An array job of three tasks whose task 1 finished, task 2 runs and task 3 waits."""
    script = tmp_path / "task.sh"
    script.write_text(SCRIPT)
    jid = jid_of(cell.qsub("-t", "1-3", "-o", "/dev/null", "-e", "/dev/null", str(script), cwd=str(tmp_path)))
    wait_for(lambda: accounted(cell, jid) == [1], timeout=30)
    wait_for(lambda: states(cell, jid) == {2: "r", 3: "qw"}, timeout=30)
    return jid


def answer(proc):
    return proc.returncode, proc.stdout, proc.stderr


def still_finished(cell, jid):
    """Task 1 is finished, accounted once, and qstat does not list it."""
    return cell.task_states(jid).get(1) == "finished" and accounted(cell, jid) == [1] \
        and 1 not in states(cell, jid)


def test_qhold_of_the_finished_task_answers_a_change_and_changes_nothing(cell, job):
    assert answer(cell.run("qhold", f"{job}.1")) == (0, f"modified hold of job-array task {job}.1\n", "")
    assert answer(cell.run("qhold", "-h", "s", f"{job}.1")) == (
        0, f"modified hold of job-array task {job}.1\n", "")
    assert states(cell, job) == {2: "r", 3: "qw"}
    assert still_finished(cell, job)


def test_qhold_of_a_range_answers_for_the_finished_task_among_the_others(cell, job):
    proc = cell.run("qhold", "-h", "u", f"{job}.1-10")
    assert answer(proc) == (0, "".join(f"modified hold of job-array task {job}.{n}\n" for n in (1, 2, 3)), "")
    assert states(cell, job) == {2: "hr", 3: "hqw"}
    proc = cell.run("qhold", str(job), "-t", "1-3:2")
    assert answer(proc) == (0, f"modified hold of job-array task {job}.1\nmodified hold of job-array task {job}.3\n",
                            "")
    assert still_finished(cell, job)


def test_qrls_of_the_finished_task_says_nothing(cell, job):
    assert answer(cell.run("qrls", f"{job}.1")) == (0, "", "")
    cell.run("qhold", f"{job}.3", check=True)
    proc = cell.run("qrls", "-h", "u", f"{job}.1-3")
    assert answer(proc) == (0, f"modified hold of job-array task {job}.2\nmodified hold of job-array task {job}.3\n",
                            "")
    assert states(cell, job) == {2: "r", 3: "qw"}
    assert still_finished(cell, job)


def test_hold_of_the_whole_job_passes_the_finished_task_over(cell, job):
    expected = f"modified hold of job-array task {job}.2\nmodified hold of job-array task {job}.3\n"
    assert answer(cell.run("qhold", str(job))) == (0, expected, "")
    assert states(cell, job) == {2: "hr", 3: "hqw"}
    assert answer(cell.run("qrls", str(job))) == (0, expected, "")
    assert states(cell, job) == {2: "r", 3: "qw"}
    assert still_finished(cell, job)


def test_a_hold_of_the_finished_task_counts_as_a_modification(cell, job):
    # (qstat -j's version counts each request that reaches one of the job's tasks, as
    # the qmaster's; a task the job does not have is no modification)
    def version():
        # (0, before any change: qstat -j shows no version line then)
        return next((int(line.split()[1]) for line in cell.run("qstat", "-j", str(job)).stdout.splitlines()
                     if line.startswith("version:")), 0)
    first = version()
    cell.run("qhold", f"{job}.7", check=True)
    assert version() == first
    cell.run("qhold", f"{job}.1", check=True)
    cell.run("qrls", f"{job}.1", check=True)
    assert version() == first + 2
    assert still_finished(cell, job)

"""qmod's answers for pending, held and failed jobs and for names that match nothing, and
qacct's reading of bad option values and of -t lists, as Grid Engine 8.1.9 gives them."""

import os
import subprocess

import pytest

from conftest import REPO, wait_for
from qtools import jid_of, state_of, wait_state

FIXTURE = os.path.join(REPO, "tests", "data", "accounting", "accounting")
QACCT = os.path.join(REPO, "bin", "qacct")


def pending(jid, task=None):
    what = f"job {jid}" if task is None else f"job-array task {jid}.{task}"
    return f"Modify operation can not be applied on {what} in pending/hold state\n"


# -- qmod ---------------------------------------------------------------------------

def test_a_whole_array_without_a_started_task_gets_one_answer_for_the_job(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-t", "1-4", "-b", "y", "true", cwd=workdir))
    for option in ("-sj", "-usj", "-rj", "-s", "-us"):
        proc = cell.run("qmod", option, str(jid))
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, pending(jid), ""), option
    # named tasks, and a job that is no array, keep the task form
    proc = cell.run("qmod", "-sj", f"{jid}.2-3")
    assert (proc.returncode, proc.stdout) == (0, pending(jid, 2) + pending(jid, 3))
    single = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qmod", "-sj", str(single))
    assert (proc.returncode, proc.stdout) == (0, pending(single, 1))


def test_started_tasks_are_answered_before_pending_ones_and_held_ones_last(cell, workdir):
    jid = jid_of(cell.qsub("-t", "1-4", "-b", "y", "sleep", "300", cwd=workdir))
    wait_for(lambda: state_of(cell, f"{jid}.1") == "r" and state_of(cell, f"{jid}.2") == "r")
    cell.run("qhold", f"{jid}.3", check=True)
    proc = cell.run("qmod", "-sj", f"{jid}.2-4")
    assert proc.returncode == 0
    assert proc.stdout == (f"root - suspended job-array task {jid}.2\n"
                           + pending(jid, 4) + pending(jid, 3))
    proc = cell.run("qmod", "-usj", str(jid), "-t", "2-4")
    assert proc.stdout == (f"root - unsuspended job-array task {jid}.2\n"
                           + pending(jid, 4) + pending(jid, 3))
    # the whole array with a started task: nothing said of the pending ones
    proc = cell.run("qmod", "-sj", str(jid))
    assert proc.stdout == (f"root - suspended job-array task {jid}.1\n"
                           f"root - suspended job-array task {jid}.2\n")
    cell.run("qdel", str(jid), check=True)


def test_a_job_in_error_state_is_suspended_resumed_and_rescheduled_silently(cell, workdir):
    jid = jid_of(cell.qsub("-wd", "/nonexistent/dir", "-b", "y", "true", cwd=workdir))
    wait_state(cell, jid, "Eqw")
    for option in ("-sj", "-usj", "-rj", "-s", "-us", "-r"):
        proc = cell.run("qmod", option, str(jid))
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), option
    assert state_of(cell, jid) == "Eqw"


def test_clear_and_reschedule_of_an_unknown_name_say_invalid_queue(cell):
    for option in ("-c", "-r", "-cq", "-rq"):
        for word in ("nosuch", "4242"):
            proc = cell.run("qmod", option, word)
            assert (proc.returncode, proc.stdout) == (1, f'invalid queue "{word}"\n'), (option, word)
    for option in ("-s", "-us", "-sj", "-usj", "-cj", "-rj"):
        proc = cell.run("qmod", option, "4242")
        assert (proc.returncode, proc.stdout) == (1, 'invalid queue or job "4242"\n'), option


def test_reschedule_of_a_task_range_without_a_live_task_says_invalid_queue(cell, workdir):
    jid = jid_of(cell.qsub("-h", "-t", "1-2", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qmod", "-r", f"{jid}.9")
    assert (proc.returncode, proc.stdout) == (1, f'invalid queue "{jid}"\n')
    proc = cell.run("qmod", "-rj", f"{jid}.9")
    assert (proc.returncode, proc.stdout) == (1, f'invalid queue or job "{jid}"\n')


# -- qacct --------------------------------------------------------------------------

def qacct(*argv):
    env = dict(os.environ, TZ="UTC", LC_ALL="C")
    env.pop("GRIDTOOLS_ROOT", None)
    return subprocess.run([QACCT, *argv, "-f", FIXTURE], capture_output=True, text=True,
                          env=env, timeout=60)


def usage():
    return qacct("-help").stdout


def test_bad_ar_and_days_values_and_unknown_options_are_answered_as_grid_engine_does():
    result = qacct("-ar", "abc")
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == ("ERROR! invalid advance reservation id, must be an unsigned integer\n"
                             + usage())
    for argv in (["-d", "x"], ["-x"], ["-o", "-nosuch"]):
        result = qacct(*argv)
        assert (result.returncode, result.stdout, result.stderr) == (1, "", usage()), argv


def test_slots_value_that_is_no_number_selects_every_job():
    plain = qacct()
    assert plain.returncode == 0
    for value in ("x", "0"):
        result = qacct("-slots", value)
        assert (result.returncode, result.stdout, result.stderr) == (0, plain.stdout, ""), value
    two = qacct("-slots", "2x")
    assert two.returncode == 0 and two.stdout.splitlines()[0].split()[0] == "SLOTS"


def taskids(result):
    return [int(line.split()[1]) for line in result.stdout.splitlines() if line.startswith("taskid")]


@pytest.mark.parametrize("ranges, tasks", [
    ("2,4", [4]),            # a range above the first goes to the head of the list
    ("4,2", [4]),            # one below stays behind it
    ("1-2:1,3-5:2", [3, 5]),  # a range with a step goes to the head
    ("3-4,2-3", [2, 3, 4]),  # overlapping ranges are joined
    ("2-5:2", [2, 4]),
])
def test_only_the_first_range_of_the_list_grid_engine_builds_is_used(ranges, tasks):
    result = qacct("-j", "4", "-t", ranges)
    assert (result.returncode, taskids(result)) == (0, tasks)


def test_a_missing_range_is_reported_alone():
    result = qacct("-j", "54", "-t", "1,2-3")
    assert (result.returncode, result.stdout, result.stderr) == (
        1, "", "error: Job-array tasks 54.2-3:1 not found\n")

"""qhold, qrls and qdel answers and exit codes as Grid Engine 8.1.9 gives them: task
ranges naming tasks a job does not have, the exit status of several failures in one
call, and the wording of deleted task ranges with a step."""

import pytest

from conftest import cell_fixture, test_user
from qtools import jid_of

cell = cell_fixture(scope="module")


def states(cell, jid):
    """task number -> qstat's state letters of each task of job ``jid`` (1 for a job that
    is no array)."""
    found = {}
    for line in cell.run("qstat", "-g", "d", "-u", "*").stdout.splitlines()[2:]:
        words = line.split()
        if words and words[0] == str(jid):
            found[int(words[8]) if len(words) > 8 else 1] = words[4]
    return found


@pytest.fixture(scope="module")
def quiet(cell):
    """No task starts: what is released stays waiting."""
    cell.run("qmod", "-d", "all.q", check=True)


@pytest.fixture(scope="module")
def array(cell, quiet, tmp_path_factory):
    """A held (-h: user hold) array job of three tasks."""
    return jid_of(cell.qsub("-h", "-t", "1-3", "-b", "y", "true", cwd=str(tmp_path_factory.mktemp("w"))))


@pytest.fixture(scope="module")
def single(cell, quiet, tmp_path_factory):
    """A held job that is no array."""
    return jid_of(cell.qsub("-h", "-b", "y", "true", cwd=str(tmp_path_factory.mktemp("w"))))


@pytest.mark.parametrize("command", ["qhold", "qrls"])
@pytest.mark.parametrize("words", [["{a}.7-9"], ["{a}.7"], ["{a}", "-t", "4-10:2"], ["{s}.2"]])
def test_tasks_a_job_does_not_have_are_passed_over_silently(cell, array, single, command, words):
    # (Grid Engine's qmaster skips task ids outside the job's task range without an answer)
    before = (states(cell, array), states(cell, single))
    proc = cell.run(command, *[w.format(a=array, s=single) for w in words])
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert (states(cell, array), states(cell, single)) == before


def test_tasks_the_job_has_are_changed_those_it_lacks_passed_over(cell, array):
    cell.run("qrls", str(array), check=True)
    proc = cell.run("qhold", f"{array}.2-9")
    assert (proc.returncode, proc.stdout) == (
        0, f"modified hold of job-array task {array}.2\nmodified hold of job-array task {array}.3\n")
    assert states(cell, array) == {1: "qw", 2: "hqw", 3: "hqw"}
    proc = cell.run("qrls", f"{array}.3-5")
    assert (proc.returncode, proc.stdout) == (0, f"modified hold of job-array task {array}.3\n")
    cell.run("qhold", str(array), check=True)


def test_several_tasks_of_a_job_that_is_no_array_are_refused(cell, single):
    before = states(cell, single)
    for command in ("qhold", "qrls"):
        proc = cell.run(command, f"{single}.1-2")
        assert (proc.returncode, proc.stdout, proc.stderr) == (4, f"{single} is not a job array\n", "")
    assert states(cell, single) == before
    proc = cell.run("qrls", f"{single}.1")
    assert (proc.returncode, proc.stdout) == (0, f"modified hold of job {single}\n")
    cell.run("qhold", str(single), check=True)


def test_the_exit_status_is_the_first_failures(cell, quiet, workdir):
    bob = test_user("gtbob").pw_name
    work = workdir
    mine = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=work))
    # another user's job first, then one that does not exist: 18, the owner refusal's
    proc = cell.run("qrls", str(mine), "999999", user=bob)
    assert proc.returncode == 18
    assert proc.stdout.splitlines() == [
        f'denied: "{bob}" must be at least owner of job {mine} to change job attributes',
        'denied: job "999999" does not exist']
    # a job that does not exist first: 3, whatever follows
    proc = cell.run("qrls", "999999", str(mine), user=bob)
    assert proc.returncode == 3
    assert proc.stdout.splitlines() == [
        'denied: job "999999" does not exist',
        f'denied: "{bob}" must be at least owner of job {mine} to change job attributes']
    # a job that is no array named with several tasks first: 4
    theirs = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=work, user=bob))
    proc = cell.run("qhold", f"{theirs}.1-2", str(mine), "999999", user=bob)
    assert proc.returncode == 4
    assert proc.stdout.splitlines() == [
        f"{theirs} is not a job array",
        f'denied: "{bob}" must be at least owner of job {mine} to change job attributes',
        'denied: job "999999" does not exist']
    # successes do not count: the first failure after them decides
    proc = cell.run("qrls", str(theirs), "999999", str(mine), user=bob)
    assert proc.returncode == 3
    assert proc.stdout.splitlines() == [
        f"modified hold of job {theirs}",
        'denied: job "999999" does not exist',
        f'denied: "{bob}" must be at least owner of job {mine} to change job attributes']
    assert states(cell, mine) == {1: "hqw"} and states(cell, theirs) == {1: "qw"}
    cell.run("qdel", str(mine), str(theirs), check=True)


@pytest.mark.parametrize("before, selection, wording", [
    (None, "1-9:2", "1-9:2"),
    (None, "13-19:3", "13-19:3"),
    ("2-8:2", "1-9", "1-9:2"),
    ("2-6:2", "1-8", "1-5:2,7,8"),
    ("4-6", "1-10", "1-3:1,7-10:1"),
    ("2-4:2", "1-7", "1,3,5-7:1"),
])
def test_qdel_words_deleted_tasks_as_grid_engines_range_lists(cell, quiet, workdir, before, selection, wording):
    jid = jid_of(cell.qsub("-h", "-t", "1-20", "-b", "y", "true", cwd=workdir))
    if before:
        cell.run("qdel", str(jid), "-t", before, check=True)
    proc = cell.run("qdel", str(jid), "-t", selection)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, f"root has deleted job-array tasks {wording} of job {jid}\n", "")
    cell.run("qdel", str(jid), check=True)

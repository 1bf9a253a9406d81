"""-hold_jid_ad: who may wait for an array job, and how the waiting tasks show.

Grid Engine takes a -hold_jid_ad only from an array job whose first and last task are
those of each array job it names, and refuses the others at submit, as qalter does, with
the same words. Task n waits for task n of its predecessors (for a block of their tasks
when the steps differ): until they ended it has Grid Engine's array-dependency hold
(hqw, priority 0, listed by qstat -s h/hd).
"""

import os

from attack_tools import forge_submit
from conftest import wait_for
from qtools import jid_of

NOT_ARRAY = 'Can only specify "-hold_jid_ad" option with an array job (using "-t" option)'
OTHER_RANGE = ("This array job must have the same range of sub-tasks as the dependent "
               "array job specified with -hold_jid_ad")


def refused(why):
    return f"Unable to run job: {why}\nExiting.\n"


def listed(cell, *args):
    """(job id, state, prior, ja-task-ID) of the rows qstat lists; the prior of a held row
    is None (it keeps the priority of the last pass that ordered the job, if any)."""
    rows = []
    for line in cell.run("qstat", *args).stdout.splitlines()[2:]:
        fields = line.split()
        slots = 8 if "@" in fields[7] else 7              # a running row has a queue column
        prior = None if fields[4].startswith("h") else fields[1]
        rows.append((int(fields[0]), fields[4], prior, " ".join(fields[slots + 1:])))
    return rows


def test_qsub_refuses_what_qalter_refuses_and_queues_nothing(cell, workdir):
    first = jid_of(cell.qsub("-t", "1-3", "-N", "A", "-h", "-b", "y", "true", cwd=workdir))
    plain = jid_of(cell.qsub("-N", "P", "-h", "-b", "y", "true", cwd=workdir))
    for args, why in ((["-N", "D"], NOT_ARRAY), (["-t", "1-4", "-N", "C"], OTHER_RANGE),
                      (["-t", "2-3", "-N", "C"], OTHER_RANGE), (["-t", "1-3", "-N", "C"], None),
                      (["-t", "1-4:2", "-N", "C"], None)):       # tasks 1 and 3: another step
        for named in ("A", str(first)):
            proc = cell.qsub(*args, "-hold_jid_ad", named, "-b", "y", "true", cwd=workdir)
            if why is None:
                assert proc.returncode == 0, proc.stderr
                continue
            assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", refused(why))
    proc = cell.qsub("-t", "1-3", "-hold_jid_ad", "P", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, refused(NOT_ARRAY))
    proc = cell.qsub("-t", "1-3", "-hold_jid_ad", str(plain), "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, refused(NOT_ARRAY))
    ids = sorted({row[0] for row in listed(cell)})
    assert ids == [first] + list(range(plain, plain + 5))       # the four accepted ones, nothing else
    proc = cell.run("qalter", "-hold_jid_ad", "A", str(plain))
    assert (proc.returncode, proc.stdout) == (1, NOT_ARRAY + "\n")


def test_qrsh_refuses_hold_jid_ad_before_it_queues(cell, workdir):
    jid_of(cell.qsub("-t", "1-3", "-N", "A", "-h", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qrsh", "-hold_jid_ad", "A", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, refused(NOT_ARRAY))
    assert len(listed(cell)) == 1


def test_the_daemon_refuses_a_request_that_skipped_the_check(cell, users, workdir):
    first = jid_of(cell.qsub("-t", "1-3", "-h", "-b", "y", "true", user=users[0], cwd=workdir))
    for overrides, why in (({"hold_jid_ad": [str(first)]}, NOT_ARRAY),
                           ({"hold_jid_ad": [str(first)], "tasks": [1, 4, 1]}, OTHER_RANGE)):
        claimed, _name, answer = forge_submit(cell, users[0], overrides, reply=True)
        assert answer == [1, "", refused(why)]
        assert not os.path.exists(os.path.join(cell.root, "spool", "jobs", str(claimed)))
    wait_for(lambda: [row[0] for row in listed(cell, "-u", "*")] == [first])   # requests removed


def test_tasks_waiting_for_their_predecessor_task_are_held(cell, workdir):
    go = os.path.join(workdir, "go")
    wait = f"'while [ ! -e {go}.$SGE_TASK_ID ]; do sleep 0.1; done'"
    first = jid_of(cell.qsub("-t", "1-2", "-N", "A", "-b", "y", "sh", "-c", wait, cwd=workdir))
    wait_for(lambda: sum(1 for row in listed(cell) if row[:2] == (first, "r")) == 2)
    then = jid_of(cell.qsub("-t", "1-2", "-N", "B", "-hold_jid_ad", "A", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: (then, "hqw", None, "1,2") in listed(cell))
    shown = cell.run("qstat", "-j", str(then)).stdout.splitlines()
    assert "ja_ad_predecessor_list (req):  A" in shown
    assert f"ja_ad_predecessor_list:     {first}" in shown
    assert [row[0] for row in listed(cell, "-s", "h")] == [then]
    assert [row[0] for row in listed(cell, "-s", "hd")] == [then]
    assert [row[0] for row in listed(cell, "-s", "hu")] == []
    open(go + ".1", "w").close()
    cell.wait_finished(then, tasks=(1,))                     # B.1 ran once A.1 ended
    wait_for(lambda: [row for row in listed(cell) if row[0] == then] == [(then, "hqw", None, "2")])
    open(go + ".2", "w").close()
    cell.wait_finished(then, tasks=(1, 2))


def test_arrays_of_other_steps_wait_for_blocks_of_tasks(workdir):
    """As Grid Engine pairs them: a task of step 3 waits for the three tasks of step 1 from
    its own number (the last for the last alone), and tasks of step 1 for the task of
    step 3 at or below theirs. (Four slots: two for A's waiting tasks, two for B and C.)"""
    from conftest import destroy_cell, make_cell
    cell = make_cell(slots=4)
    try:
        _other_steps(cell, workdir)
    finally:
        destroy_cell(cell)


def _other_steps(cell, workdir):
    go = os.path.join(workdir, "go")
    wait = f"'while [ ! -e {go}.$SGE_TASK_ID ]; do sleep 0.1; done'"
    fine = jid_of(cell.qsub("-t", "1-7", "-tc", "2", "-N", "A", "-b", "y", "sh", "-c", wait, cwd=workdir))
    coarse = jid_of(cell.qsub("-t", "1-7:3", "-N", "B", "-hold_jid_ad", "A", "-b", "y", "true", cwd=workdir))
    after = jid_of(cell.qsub("-t", "1-7", "-N", "C", "-hold_jid_ad", "B", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: (coarse, "hqw", None, "1-7:3") in listed(cell)
             and (after, "hqw", None, "1-7:1") in listed(cell), timeout=30)
    for task in (1, 2):
        open(f"{go}.{task}", "w").close()
    cell.wait_finished(fine, tasks=(1, 2))
    # (qstat shows what the daemon last published: wait until it shows A.3 and A.4 running)
    wait_for(lambda: {row[3] for row in listed(cell) if row[0] == fine and row[1] == "r"} == {"3", "4"}, timeout=30)
    assert (coarse, "hqw", None, "1-7:3") in listed(cell)     # B.1 still waits for A.3
    open(f"{go}.3", "w").close()
    cell.wait_finished(coarse, tasks=(1,))
    cell.wait_finished(after, tasks=(1, 2, 3))   # C.1-3 waited for B.1 alone
    for task in (4, 5):
        open(f"{go}.{task}", "w").close()
    cell.wait_finished(fine, tasks=(4, 5))
    wait_for(lambda: [row for row in listed(cell) if row[0] == coarse] == [(coarse, "hqw", None, "4,7")], timeout=30)
    open(f"{go}.7", "w").close()
    cell.wait_finished(coarse, tasks=(7,))       # B.7 waited for A.7 alone
    cell.wait_finished(after, tasks=(7,))
    # (both held: each keeps the place of the last pass that ordered it, so either may come first)
    wait_for(lambda: sorted(row for row in listed(cell) if row[0] in (coarse, after))
             == [(coarse, "hqw", None, "4"), (after, "hqw", None, "4-6:1")], timeout=30)
    open(f"{go}.6", "w").close()
    cell.wait_finished(coarse, tasks=(1, 4, 7))  # B.4 once A.4-6 ended; it lets C.4-6 go
    cell.wait_finished(after, tasks=(1, 2, 3, 4, 5, 6, 7))

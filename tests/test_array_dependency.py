"""-hold_jid_ad: how the waiting tasks show.

Task n waits for task n of its predecessors: until that task ended it has Grid
Engine's array-dependency hold (hqw, priority 0, listed by qstat -s h/hd).
"""

import os

from conftest import wait_for
from qtools import jid_of


def listed(cell, *args):
    """(job id, state, prior, ja-task-ID) of the rows qstat lists."""
    rows = []
    for line in cell.run("qstat", *args).stdout.splitlines()[2:]:
        fields = line.split()
        slots = 8 if "@" in fields[7] else 7              # a running row has a queue column
        rows.append((int(fields[0]), fields[4], fields[1], " ".join(fields[slots + 1:])))
    return rows


def test_tasks_waiting_for_their_predecessor_task_are_held(cell, workdir):
    go = os.path.join(workdir, "go")
    wait = f"'while [ ! -e {go}.$SGE_TASK_ID ]; do sleep 0.1; done'"
    first = jid_of(cell.qsub("-t", "1-2", "-N", "A", "-b", "y", "sh", "-c", wait, cwd=workdir))
    wait_for(lambda: sum(1 for row in listed(cell) if row[:2] == (first, "r")) == 2)
    then = jid_of(cell.qsub("-t", "1-2", "-N", "B", "-hold_jid_ad", "A", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: (then, "hqw", "0.00000", "1,2") in listed(cell))
    assert [row[0] for row in listed(cell, "-s", "h")] == [then]
    assert [row[0] for row in listed(cell, "-s", "hd")] == [then]
    assert [row[0] for row in listed(cell, "-s", "hu")] == []
    open(go + ".1", "w").close()
    cell.wait_finished(then, tasks=(1,))                     # B.1 ran once A.1 ended
    wait_for(lambda: [row for row in listed(cell) if row[0] == then] == [(then, "hqw", "0.00000", "2")])
    open(go + ".2", "w").close()
    cell.wait_finished(then, tasks=(1, 2))

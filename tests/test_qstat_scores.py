"""qstat -pri for jobs the scheduler has not yet given numbers (cli.sge.qstat_report.Scores):
POSIX priority is normalized as the scheduler normalizes it (sched.priority, over
the considered pending jobs), so a job's npprior does not change when the
scheduler's numbers arrive."""

from gridtools.cli.sge.qstat_report import Scores
from gridtools.sched import priority


def _snap(jobs):
    return {"jobs": {jid: {"priority": p} for jid, (p, _state) in jobs.items()},
            "rows": [{"id": jid, "state": state} for jid, (_p, state) in jobs.items()]}


def test_npprior_is_normalized_over_the_pending_jobs():
    jobs = {1: (0, "qw"), 2: (-100, "qw"), 3: (100, "qw"), 4: (500, "r"), 5: (-1023, "hqw")}
    scores = Scores(_snap(jobs))
    shown = {jid: f"{scores.of({'id': jid, 'state': state})['npprior']:.5f}"
             for jid, (_p, state) in jobs.items()}
    assert shown == {1: "0.50000", 2: "0.00000", 3: "1.00000", 4: "1.00000", 5: "0.00000"}
    posix = priority.Range.of([0, -100, 100])            # what the scheduler publishes
    assert [f"{posix.normalized(p):.5f}" for p in (0, -100, 100, 500)] == \
        [shown[1], shown[2], shown[3], shown[4]]


def test_equal_priorities_give_one_half():
    scores = Scores(_snap({1: (-100, "qw"), 2: (-100, "qw")}))
    assert scores.of({"id": 1, "state": "qw"})["npprior"] == 0.5

"""qdel, qhold and qrls answer the job words in the order they were given, as Grid
Engine's master answers a request id by id: a word naming no job is answered in its
place, not after the others."""

from qtools import jid_of


def _sleeper(cell, name):
    return jid_of(cell.qsub("-h", "-N", name, "-b", "y", "sleep", "60"))


def test_qdel_answers_in_the_order_of_the_words(cell):
    first, second = _sleeper(cell, "first"), _sleeper(cell, "second")
    proc = cell.run("qdel", "999999", str(first), "nosuchname", str(second), str(first))
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        'denied: job "999999" does not exist',
        f"root has deleted job {first}",
        'denied: job "nosuchname" does not exist',
        f"root has deleted job {second}",
    ]


def test_qdel_task_range_answer_keeps_its_place(cell):
    single = _sleeper(cell, "single")
    array = jid_of(cell.qsub("-h", "-t", "1-2", "-b", "y", "sleep", "60"))
    proc = cell.run("qdel", f"{array}.5", "999998", str(single))
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [
        f'job "{array}" task "5" does not exist',
        'denied: job "999998" does not exist',
        f"root has deleted job {single}",
    ]


def test_qhold_and_qrls_answer_in_the_order_of_the_words(cell):
    jid = _sleeper(cell, "held")
    proc = cell.run("qhold", "999997", str(jid))
    assert proc.returncode == 3         # (the status of the first failed answer, STATUS_EEXIST)
    assert proc.stdout.splitlines() == [
        'denied: job "999997" does not exist',
        f"modified hold of job {jid}",
    ]
    proc = cell.run("qrls", "-h", "u", str(jid), "999996")
    assert proc.stdout.splitlines() == [
        f"modified hold of job {jid}",
        'denied: job "999996" does not exist',
    ]


def test_a_task_word_of_a_job_that_is_no_array_keeps_its_answer(cell):
    jid = _sleeper(cell, "plain")
    proc = cell.run("qdel", "999995", f"{jid}.1")
    assert proc.stdout.splitlines() == ['denied: job "999995" does not exist', f"root has deleted job {jid}"]

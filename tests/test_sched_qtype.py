"""Queue types in the pass (queue_conf(5) qtype), as Grid Engine's scheduler applies them:
a job that must start at once (qrsh, -now y) only in INTERACTIVE queues; the BATCH
type asked only of jobs with neither PE nor checkpointing environment; a queue of type
NONE with a pe_list (ckpt_list) takes parallel (checkpointing) jobs."""

import pytest

from schedkit import reasons, run
from gridtools.formats.sge import reasons as sge_reasons

CKPT = ("ckpt_name ck\ninterface userdefined\nckpt_command none\nmigr_command none\n"
        "restart_command none\nclean_command none\nckpt_dir /tmp\nsignal none\nwhen sx\n")
PE = ("pe_name mpi\nslots 32\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
      "stop_proc_args NONE\nallocation_rule $pe_slots\ncontrol_slaves FALSE\n"
      "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")
QI = "all.q@h1"


def cell(qtype, qsub, pe_list="NONE", ckpt_list="NONE"):
    return {"hosts": ["h1"], "slots": 4, "sched": {"job_load_adjustments": "NONE"},
            "queue": {"qtype": qtype, "pe_list": pe_list, "ckpt_list": ckpt_list},
            "objects": {"pe/mpi": PE, "ckpt/ck": CKPT}, "jobs": [{"id": 1, "qsub": qsub}]}


@pytest.mark.parametrize("qtype, qsub, lists, refusal", [
    # a queue of type NONE with a pe_list: parallel only (queue_conf(5): old qtype PARALLEL)
    ("NONE", "-pe mpi 2", {"pe_list": "mpi"}, None),
    ("NONE", "", {"pe_list": "mpi"}, f'cannot run in queue instance "{QI}" because it is not of type batch'),
    # ... with a ckpt_list: checkpointing jobs
    ("NONE", "-ckpt ck", {"ckpt_list": "ck"}, None),
    ("INTERACTIVE", "-ckpt ck", {"ckpt_list": "ck"}, None),
    # a checkpointing job without PE in a parallel queue that is not BATCH
    ("NONE", "-ckpt ck", {"ckpt_list": "ck", "pe_list": "mpi"},
     f'cannot run in queue instance "{QI}" because the job is not parallel'),
    ("BATCH", "-ckpt ck", {"ckpt_list": "ck", "pe_list": "mpi"}, None),
    ("INTERACTIVE", "-pe mpi 2 -ckpt ck", {"ckpt_list": "ck", "pe_list": "mpi"}, None),
    # -now y: INTERACTIVE queues only, whatever else the job asks
    ("BATCH", "-now y", {}, f'cannot run in queue "{QI}" because it is not of type interactive'),
    ("INTERACTIVE", "-now y", {}, None),
    ("BATCH", "-now y -pe mpi 2", {"pe_list": "mpi"},
     f'cannot run in queue "{QI}" because it is not of type interactive'),
    ("NONE", "-now y -pe mpi 2", {"pe_list": "mpi"},
     f'cannot run in queue "{QI}" because it is not of type interactive'),
    ("INTERACTIVE", "-now y -pe mpi 2", {"pe_list": "mpi"}, None),
    # a plain batch job
    ("BATCH", "", {}, None),
    ("INTERACTIVE", "", {}, f'cannot run in queue instance "{QI}" because it is not of type batch'),
    # -now n (qrsh -now n too) is no immediate job: BATCH is asked of it
    ("BATCH", "-now n", {}, None),
    ("INTERACTIVE", "-now n", {}, f'cannot run in queue instance "{QI}" because it is not of type batch'),
])
def test_queue_types(qtype, qsub, lists, refusal):
    decisions, found = run(cell(qtype, qsub, **lists))
    if refusal is None:
        assert len(found) == 1 and found[0].startswith(f"1.1 {QI}=")
    else:
        assert found == [] and refusal in reasons(decisions, 1)


@pytest.mark.parametrize("kind, number, generic", [
    ("interactive", 11, "Jobs can not run because queue instance is not interactive"),
    ("parallel", 13, "Jobs can not run in queue instance because the job is not parallel")])
def test_generic_texts_of_the_type_refusals(kind, number, generic):
    assert sge_reasons.job_generic(["not_type", QI, kind]) == (number, generic)

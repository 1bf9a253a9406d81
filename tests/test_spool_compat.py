"""A spool written by an earlier gridtools still loads and carries on (tests/data/spool-v1)."""

import os
import re
import shutil

from conftest import REPO, destroy_cell, make_cell, wait_for

FIXTURE = os.path.join(REPO, "tests", "data", "spool-v1")


def test_old_spool_is_taken_over():
    cell = make_cell(start=False)
    try:
        spool = os.path.join(cell.root, "spool")
        shutil.rmtree(os.path.join(spool, "jobs"))
        shutil.copytree(os.path.join(FIXTURE, "jobs"), os.path.join(spool, "jobs"))
        for name in ("jobseqnum", "accounting", "qstates.yaml"):
            shutil.copy(os.path.join(FIXTURE, name), os.path.join(spool, name))
        cell.start_daemon()
        out = cell.run("qstat", "-u", "*").stdout
        assert re.search(r"^\s+2 .* held_job .* hqw ", out, re.M)
        assert re.search(r"^\s+3 .* arr_job .* hqw .* 1,3$", out, re.M)
        assert re.search(r"^\s+4 .* dep_job .* hqw ", out, re.M)
        assert re.search(r"^\s+1 .* done_job .* z ", cell.run("qstat", "-u", "*", "-s", "z").stdout, re.M)
        assert "jobname      done_job" in cell.run("qacct", "-j", "1").stdout
        assert cell.run("qrls", "2").returncode == 0
        cell.wait_finished(2)
        cell.wait_finished(4)                   # its dependency ended
        assert cell.job_state(4)["tasks"]["1"]["start_time"] >= cell.job_state(2)["tasks"]["1"]["end_time"]
        assert cell.run("qdel", "3").returncode == 0
        proc = cell.qsub("-terse", "-h", "-b", "y", "true")
        assert proc.stdout.strip() == "5"       # ids go on from the old sequence
        wait_for(lambda: cell.task_states(3).get(1) == "finished")
    finally:
        destroy_cell(cell)

"""DAGMan as HTCondor's: rescue DAGs with RETRY lines, read as DAG statements over the
original; DAG file errors in DAGMan's words; the .dagman.out lines of an UNLESS-EXIT
and of an ABORT-DAG-ON; one failed-node count in the rescue DAG and the job ad after
an abort; the DAGMan job's command in condor_history."""

import os

import pytest

from conftest import cell_fixture
from gridtools.formats.condor.dag import DagError, parse_dag
from gridtools.formats.condor.dagstate import apply_rescue, ready_nodes, render_rescue
from test_condor_dag_live import dag_ended, dagman_id, in_history, write

cell = cell_fixture(slots=2)

HEADER_END = "#   R1,R2,<ENDLIST>\n\n"


def retry_dag():
    return parse_dag("JOB R1 n.sub\nRETRY R1 2\nJOB R2 n.sub\nRETRY R2 3 UNLESS-EXIT 5\nJOB Q n.sub\n"
                     "PARENT Q CHILD R1\n", source="s.dag")


def test_a_rescue_dag_has_htcondors_retry_lines():
    text = render_rescue("s.dag", retry_dag(), {"Q"}, {"R1", "R2"}, "1/2/2026 03:04:05",
                         retries={"R1": (2, 3), "R2": (0, 5), "Q": (0, None)})
    assert text.split(HEADER_END)[1] == (
        "RETRY R1 2\n"
        "# 0 of 3 retries performed; remaining attempts aborted after node returned 5\n"
        "RETRY R2 3 UNLESS-EXIT 5\n"
        "DONE Q\n")


def test_a_rescue_dag_is_read_as_dag_statements_over_the_original():
    dag = retry_dag()
    apply_rescue(dag, "# a comment\nDONE Q\nRETRY R1 0\nPRIORITY R2 7\n", "s.dag.rescue002")
    assert dag.nodes["Q"].done and dag.nodes["R1"].retry == 0 and dag.nodes["R2"].priority == 7
    assert ready_nodes(dag) == ["R2", "R1"]
    with pytest.raises(DagError) as caught:
        apply_rescue(retry_dag(), "DONE Q\nJOB Q n.sub\n", "s.dag.rescue002")
    assert str(caught.value) == "ERROR: s.dag.rescue002 (line 2): node name 'Q' already exists in DAG"


@pytest.mark.parametrize("text, message", [
    ("JOB A t.sub\nPARENT A CHILD Z\n", "ERROR: b.dag (line 2): Unknown Node Z"),
    ("JOB A t.sub\nPARENT Z CHILD A\n", "ERROR: b.dag (line 2): Unknown Node Z"),
    ("JOB A t.sub\nRETRY Z 2\n", "ERROR: b.dag (line 2): Unknown Node Z"),
    ("JOB A t.sub\nJOB A t.sub\n", "ERROR: b.dag (line 2): node name 'A' already exists in DAG"),
    ("JOB A t.sub\nPARENT A\n", "ERROR: b.dag (line 2): Expected CHILD token"),
])
def test_dag_file_errors_are_in_dagmans_words(text, message):
    with pytest.raises(DagError) as caught:
        parse_dag(text, source="b.dag")
    assert str(caught.value) == message


def test_condor_submit_dag_says_a_dag_files_error_in_dagmans_words(cell, workdir):
    write(workdir, "t.sub", "executable = /bin/true\nqueue\n")
    write(workdir, "b.dag", "JOB A t.sub\nPARENT A CHILD Z\n")
    proc = cell.run("condor_submit_dag", "-no_submit", "b.dag", cwd=workdir)
    assert proc.returncode == 1 and "ERROR: b.dag (line 2): Unknown Node Z\n" in proc.stderr


def out_of(folder, dag):
    path = os.path.join(folder, dag + ".dagman.out")
    return open(path).read() if os.path.exists(path) else ""


def test_retries_end_in_a_rescue_dag_with_retry_lines_that_a_later_run_reads(cell, workdir):
    write(workdir, "job.sh", f"#!/bin/sh\necho $1 >> {workdir}/runs\nexit $1\n")
    write(workdir, "n.sub", "executable = job.sh\narguments = $(rc)\nlog = n.log\nqueue\n")
    write(workdir, "s.dag", 'JOB R1 n.sub\nVARS R1 rc="3"\nRETRY R1 2\nJOB R2 n.sub\nVARS R2 rc="5"\n'
                            'RETRY R2 3 UNLESS-EXIT 5\nJOB Q n.sub\nVARS Q rc="0"\n')
    first = cell.run("condor_submit_dag", "s.dag", cwd=workdir)
    assert first.returncode == 0, first.stderr
    assert dag_ended(cell, dagman_id(first))[0][12] == "1"
    out = out_of(workdir, "s.dag")
    assert "Aborting further retries of node R2 (last attempt returned 5)" in out
    assert "Aborting further retries of node R1" not in out
    rescue = open(os.path.join(workdir, "s.dag.rescue001")).read()
    assert "# Nodes that failed: 2\n#   R1,R2,<ENDLIST>\n" in rescue
    assert rescue.split("<ENDLIST>\n\n")[1] == (
        "RETRY R1 2\n"
        "# 0 of 3 retries performed; remaining attempts aborted after node returned 5\n"
        "RETRY R2 3 UNLESS-EXIT 5\n"
        "DONE Q\n")
    # a rescue DAG of other statements than DONE: R2 done, R1 run once (no retries)
    write(workdir, "s.dag.rescue002", "DONE Q\nDONE R2\nRETRY R1 0\n")
    os.remove(os.path.join(workdir, "runs"))
    second = cell.run("condor_submit_dag", "s.dag", cwd=workdir)
    assert second.returncode == 0, second.stderr
    assert dag_ended(cell, dagman_id(second))[0][12] == "1"
    assert open(os.path.join(workdir, "runs")).read() == "3\n"
    out = out_of(workdir, "s.dag").partition("Running rescue DAG 2")[2]
    assert out and "Retrying node R1" not in out
    # an error of a rescue DAG: said once, with ERROR: once, and the manager exits 1
    write(workdir, "s.dag.rescue003", "DONE Q\nJOB Q n.sub\n")
    third = cell.run("condor_submit_dag", "s.dag", cwd=workdir)
    assert third.returncode == 0, third.stderr
    assert dag_ended(cell, dagman_id(third))[0][12] == "1"
    out = out_of(workdir, "s.dag")
    assert "ERROR: s.dag.rescue003 (line 2): node name 'Q' already exists in DAG" in out
    assert "ERROR: ERROR:" not in out


def test_an_abort_dag_on_says_dagmans_line_and_counts_the_failed_nodes_once(cell, workdir):
    write(workdir, "a.sh", f"#!/bin/sh\nwhile [ ! -e {workdir}/b-runs ]; do sleep 0.05; done\nexit 4\n")
    write(workdir, "b.sh", f"#!/bin/sh\ntouch {workdir}/b-runs\nsleep 60\n")
    write(workdir, "a.sub", "executable = a.sh\nqueue\n")
    write(workdir, "b.sub", "executable = b.sh\nqueue\n")
    write(workdir, "ab.dag", "JOB A a.sub\nJOB B b.sub\nABORT-DAG-ON A 4 RETURN 0\n")
    proc = cell.run("condor_submit_dag", "ab.dag", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    dag = dagman_id(proc)
    assert dag_ended(cell, dag)[0][12] == "0"
    out = out_of(workdir, "ab.dag")
    assert "Aborting DAG because we got the ABORT exit value from a job" in out
    rescue = open(os.path.join(workdir, "ab.dag.rescue001")).read()
    assert "# Nodes that failed: 1\n#   A,<ENDLIST>\n" in rescue
    in_history(cell, dag)
    # (B's job was removed: not a failed node, as in the rescue DAG)
    assert cell.run("condor_history", str(dag), "-af", "DAG_NodesFailed", "DAG_Status").stdout == "1 3\n"
    table = out.rpartition("Of 2 nodes total:")[2].splitlines()
    assert table[3].split()[2:] == ["0", "0", "1", "0", "0", "0", "1", "0"]    # (after its time stamp)


def test_condor_history_shows_the_dagman_job_as_condor_q_does(cell, workdir):
    write(workdir, "t.sub", "executable = /bin/true\nqueue\n")
    write(workdir, "h.dag", "JOB A t.sub\n")
    proc = cell.run("condor_submit_dag", "h.dag", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    dag = dagman_id(proc)
    assert dag_ended(cell, dag)[0][12] == "0"
    in_history(cell, dag)
    shown = cell.run("condor_history", str(dag)).stdout.splitlines()
    assert " condor_dagman -p 0 -f -l . -Lockfile h.dag.lock " in shown[1]

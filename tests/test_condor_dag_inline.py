"""Submit descriptions written in the DAG file (SUBMIT-DESCRIPTION, ``JOB A {`` ... ``}``),
SERVICE and PROVISIONER nodes: how they are read, rendered back and refused, and, against a
running daemon, that their DAGs run as HTCondor's DAGMan runs them."""

import os
import re

import pytest

from conftest import destroy_cell, make_cell, wait_for
from test_condor_dag_live import write
from gridtools.formats.condor.dag import DagError, NodeKind, description_of, parse_dag
from gridtools.formats.condor.dagdesc import with_queue
from gridtools.formats.condor.dagrender import render_dag
from gridtools.formats.condor.dagstate import ready_nodes, render_rescue

NAMED = """\
JOB A step
SUBMIT-DESCRIPTION step {
    executable = step.sh
    # a comment, left out

    arguments  = $(JOB)
}
JOB B {
  executable = other.sh
  // also a comment
} DIR sub NOOP
JOB C @=end
  executable = c.sh
@end
FINAL F step
PARENT A CHILD B
PARENT B CHILD C
"""


# ------------------------------------------------------------------ parsing

def test_named_and_inline_descriptions_are_read_in_any_order():
    dag = parse_dag(NAMED, source="t.dag")
    assert dag.descriptions == {"step": "executable = step.sh\narguments  = $(JOB)\n"}
    a, b, c = dag.nodes["A"], dag.nodes["B"], dag.nodes["C"]
    assert description_of(dag, a) == "executable = step.sh\narguments  = $(JOB)\n"
    assert description_of(dag, dag.nodes["F"]) == description_of(dag, a)
    assert (b.submit_file, b.description, b.directory, b.noop) == ("", "executable = other.sh\n", "sub", True)
    assert c.description == "executable = c.sh\n" and (c.line, b.line) == (12, 8)
    assert dag.edges == {("A", "B"), ("B", "C")}


def test_a_description_is_taken_before_a_file_of_the_same_name():
    dag = parse_dag("JOB A a.sub\nJOB B step\nSUBMIT-DESCRIPTION a.sub {\nexecutable = x\n}\n")
    assert description_of(dag, dag.nodes["A"]) == "executable = x\n"
    assert description_of(dag, dag.nodes["B"]) is None          # a file, read when submitted


def test_a_repeated_description_name_is_a_warning_and_the_last_one_counts():
    dag = parse_dag("SUBMIT-DESCRIPTION d {\nexecutable = 1\n}\nSUBMIT-DESCRIPTION d {\nexecutable = 2\n}\n",
                    source="t.dag")
    assert dag.descriptions["d"] == "executable = 2\n"
    assert dag.notes == ["t.dag (line 4): Warning: Inline Description name 'd' used multiple times; "
                         "the last one is used"]


def test_included_and_spliced_files_bring_their_descriptions_the_dags_own_kept():
    files = {"inc.dag": "SUBMIT-DESCRIPTION inc {\nexecutable = inc.sh\n}\n",
             "s.dag": "SUBMIT-DESCRIPTION step {\nexecutable = never.sh\n}\n"
                      "SUBMIT-DESCRIPTION own {\nexecutable = own.sh\n}\nJOB X step\nJOB Y own\n"}
    dag = parse_dag("SPLICE S s.dag\nJOB A inc\nSUBMIT-DESCRIPTION step {\nexecutable = step.sh\n}\n"
                    "INCLUDE inc.dag\n", source="t.dag", read=files.__getitem__)
    assert description_of(dag, dag.nodes["A"]) == "executable = inc.sh\n"
    assert description_of(dag, dag.nodes["S+X"]) == "executable = step.sh\n"
    assert description_of(dag, dag.nodes["S+Y"]) == "executable = own.sh\n"
    assert any("Conflicting inline descriptions using the same name 'step'" in n for n in dag.notes)


def test_service_and_provisioner_nodes_stand_apart_from_the_graph():
    dag = parse_dag("SERVICE S mon.sub DIR m\nPROVISIONER P {\nexecutable = p.sh\n}\nJOB A a.sub\n"
                    "JOB B b.sub\nPARENT A CHILD B\nVARS ALL_NODES x=\"1\"\nVARS S y=\"2\"\n"
                    "SCRIPT POST S post.sh\nDONE S\n", source="t.dag")
    assert list(dag.nodes) == ["P", "A", "B"] and list(dag.services) == ["S"]
    s = dag.services["S"]
    assert (s.kind, s.submit_file, s.directory, s.vars, s.done) == (NodeKind.SERVICE, "mon.sub", "m",
                                                                    {"y": "2"}, False)
    assert dag.nodes["P"].kind is NodeKind.PROVISIONER and dag.nodes["P"].vars == {}
    assert dag.nodes["A"].vars == {"x": "1"}
    assert dag.notes == ["t.dag (line 11): WARNING: SERVICE node(s) can not be referenced by the DONE command"]


def test_the_provisioner_starts_alone_until_it_has_provisioned():
    dag = parse_dag("JOB A a.sub\nPROVISIONER P p.sub\nJOB B b.sub\nPARENT A CHILD B\n")
    assert ready_nodes(dag, provisioned=False) == ["P"]
    assert ready_nodes(dag, running={"P"}, provisioned=False) == []
    assert ready_nodes(dag, running={"P"}) == ["A"]
    assert ready_nodes(dag, done={"P"}, provisioned=False) == ["A"]


def test_a_rescue_dag_never_names_a_service_node():
    dag = parse_dag("SERVICE S s.sub\nJOB A a.sub\nJOB B b.sub\n")
    text = render_rescue("t.dag", dag, {"A"}, {"B"}, "01/01/25 00:00:00")
    assert "S" not in re.sub(r"#.*", "", text).split() and "# Total number of Nodes: 2" in text


def test_render_writes_descriptions_back_and_reads_again():
    dag = parse_dag(NAMED + "SERVICE S {\nexecutable = mon.sh\n} NOOP\nPROVISIONER P p.sub\n")
    text = render_dag(dag)
    assert "SUBMIT-DESCRIPTION step {\nexecutable = step.sh\narguments  = $(JOB)\n}\n" in text
    assert "JOB B {\nexecutable = other.sh\n} DIR sub NOOP\n" in text
    assert "SERVICE S {\nexecutable = mon.sh\n} NOOP\n" in text and "PROVISIONER P p.sub\n" in text
    again = parse_dag(text)
    assert render_dag(again) == text
    assert again.descriptions == dag.descriptions and list(again.services) == ["S"]


def test_a_description_without_a_queue_statement_queues_one_job():
    assert with_queue("executable = x\n") == "executable = x\nqueue\n"
    assert with_queue("executable = x\nqueue 3\n") == "executable = x\nqueue 3\n"


@pytest.mark.parametrize("text, message", [
    ("JOB A {\nexecutable = x\n", "ERROR: t.dag (line 1): Missing inline description closing token: }"),
    ("\nSUBMIT-DESCRIPTION d {\nexecutable = x\n}x\n",
     "ERROR: t.dag (line 2): Missing inline description closing token: }"),
    ("JOB A @=end\nexecutable = x\n@END\n", "ERROR: t.dag (line 1): Missing inline description closing "
                                            "token: @end"),
    ("JOB A @=\nexecutable = x\n", "ERROR: t.dag (line 1): No inline description closing token specified"),
    ("SUBMIT-DESCRIPTION d d.sub\n", "ERROR: t.dag (line 1): No inline description provided"),
    ("SUBMIT-DESCRIPTION\n", "ERROR: t.dag (line 1): No submit description name provided"),
    ("JOB A {\n} BOGUS\n", 'ERROR: t.dag (line 1): invalid parameter "BOGUS"'),
    ("PROVISIONER P p.sub\nPROVISIONER Q q.sub\n", "ERROR: t.dag (line 2): only one PROVISIONER node is allowed"),
    ("SERVICE S s.sub\nJOB A a.sub\nPARENT A CHILD S\n",
     "ERROR: t.dag (line 3): Tried to add a parent to the SERVICE node S"),
    ("PROVISIONER P p.sub\nJOB A a.sub\nPARENT P CHILD A\n",
     "ERROR: t.dag (line 3): Tried to add a child to the PROVISIONER node P"),
    ("SERVICE S s.sub\nRETRY S 2\n", "ERROR: t.dag (line 2): SERVICE node S can not have a retry specification"),
    ("SERVICE S s.sub\nPRIORITY S 2\n", "ERROR: t.dag (line 2): SERVICE node S can not have a priority"),
    ("SERVICE S s.sub\nCATEGORY S c\n", "ERROR: t.dag (line 2): SERVICE node S can not be added to a category"),
    ("PROVISIONER P p.sub\nSAVE_POINT_FILE P\n",
     "ERROR: t.dag (line 2): PROVISIONER node P can not have a SAVE_POINT_FILE"),
    ("SERVICE S s.sub\nJOB S a.sub\n", "ERROR: t.dag (line 2): node name 'S' already exists in DAG"),
])
def test_errors_in_dagman_words(text, message):
    with pytest.raises(DagError) as info:
        parse_dag(text, source="t.dag")
    assert message in str(info.value)


# ------------------------------------------------------------------ running

@pytest.fixture
def cell():
    c = make_cell(slots=3)
    try:
        yield c
    finally:
        destroy_cell(c)



def run_dag(cell, folder, text, code=0):
    """Submit ``text`` as t.dag; wait for its manager's end; (its id, its exit status)."""
    write(folder, "t.dag", text)
    proc = cell.run("condor_submit_dag", "t.dag", cwd=folder)
    assert proc.returncode == code, proc.stderr + proc.stdout
    dag = int(re.search(r"submitted to cluster (\d+)\.", proc.stdout).group(1))
    assert cell.wait_finished(dag, timeout=90)
    record = [r for r in cell.accounting() if int(r[5]) == dag]
    return dag, int(record[0][12])


def order(folder):
    with open(os.path.join(folder, "order")) as fh:
        return fh.read().split()


def dagman_out(folder):
    with open(os.path.join(folder, "t.dag.dagman.out")) as fh:
        return fh.read()


def test_nodes_from_a_named_and_an_inline_description_run_in_order(cell, workdir):
    write(workdir, "step.sh", f"#!/bin/sh\necho \"$@\" >> {workdir}/order\n")
    write(workdir, "sub/inner.sh", f"#!/bin/sh\necho \"$@\" >> {workdir}/order\n")
    write(workdir, "step", "executable = /bin/false\nqueue\n")        # the description comes first
    _dag, code = run_dag(cell, workdir, (
        "SUBMIT-DESCRIPTION step {\n  executable = step.sh\n  arguments = $(JOB) $(extra)\n"
        "  output = $(JOB).out\n}\n"
        "JOB A step\nJOB B {\n  executable = inner.sh\n  arguments = B-in-$(extra)\n} DIR sub\n"
        "JOB C step\nVARS B extra=\"sub\"\nVARS C extra=\"last\"\n"
        "PARENT A CHILD B\nPARENT B CHILD C\n"))
    assert code == 0, dagman_out(workdir)
    assert order(workdir) == ["A", "B-in-sub", "C", "last"]
    assert os.path.exists(os.path.join(workdir, "A.out"))


def history_of(cell, node_name):
    """``ClusterId JobStatus DAGLifetimeJob`` of the finished job of a node."""
    lines = cell.run("condor_history", "-af", "DAGNodeName", "ClusterId", "JobStatus",
                     "DAGLifetimeJob").stdout.splitlines()
    return [line.split()[1:] for line in lines if line.split()[:1] == [node_name]]


def test_a_dag_with_a_service_node_ends_when_its_nodes_succeed_the_service_job_removed(cell, workdir):
    write(workdir, "a.sh", f"#!/bin/sh\necho A >> {workdir}/order\n")
    _dag, code = run_dag(cell, workdir, (
        "SERVICE S {\n  executable = /bin/sleep\n  arguments = 600\n}\n"
        "JOB A {\n  executable = a.sh\n}\n"))
    assert code == 0 and order(workdir) == ["A"]
    out = dagman_out(workdir)
    assert "Starting service node S..." in out and "Removing service node S job(s)" in out
    assert "Of 1 nodes total:" in out and "All jobs Completed!" in out
    wait_for(lambda: history_of(cell, "S"), 20)
    [[_cluster, status, lifetime]] = history_of(cell, "S")
    assert (status, lifetime) == ("3", "true")          # removed


def test_a_failed_dag_removes_its_service_job_and_its_rescue_dag_does_not_name_it(cell, workdir):
    _dag, code = run_dag(cell, workdir, (
        "SERVICE S {\n  executable = /bin/sleep\n  arguments = 600\n}\n"
        "JOB A {\n  executable = /bin/false\n}\nJOB B {\n  executable = /bin/true\n}\n"))
    assert code == 1
    with open(os.path.join(workdir, "t.dag.rescue001")) as fh:
        rescue = fh.read()
    assert "DONE B\n" in rescue and "S" not in re.sub(r"#.*", "", rescue).split()
    wait_for(lambda: history_of(cell, "S"), 20)
    assert history_of(cell, "S")[0][1] == "3"


def test_service_nodes_run_their_pre_and_post_scripts_as_htcondors_dagman_does(cell, workdir):
    """A SERVICE node's PRE script runs before its job is submitted and its POST script
    when its job ends while the DAG runs (with $RETURN); one whose PRE script fails
    submits nothing; neither counts for the DAG, which succeeds."""
    write(workdir, "note.sh", f"#!/bin/sh\necho \"$@\" >> {workdir}/order\ntest \"$2\" != fail\n")
    write(workdir, "post.sh", f"#!/bin/sh\necho post-$1-$2 >> {workdir}/order\ntouch {workdir}/posted\n")
    write(workdir, "a.sh", f"#!/bin/sh\nwhile [ ! -e {workdir}/posted ]; do sleep 0.05; done\necho A >> {workdir}/order\n")
    _dag, code = run_dag(cell, workdir, (
        "SERVICE S {\n  executable = note.sh\n  arguments = S job\n}\n"
        "SERVICE T {\n  executable = note.sh\n  arguments = T job\n}\n"
        "SCRIPT PRE S note.sh pre-S ok\nSCRIPT POST S post.sh $JOB $RETURN\n"
        "SCRIPT PRE T note.sh pre-T fail\n"
        "JOB A {\n  executable = a.sh\n}\n"))
    assert code == 0, dagman_out(workdir)
    with open(os.path.join(workdir, "order")) as fh:
        lines = fh.read().splitlines()
    # (the two PRE scripts run at once, as HTCondor's DAGMan runs them: either may write first)
    assert sorted(lines[:2]) == ["pre-S ok", "pre-T fail"] and lines[2:] == ["S job", "post-S-0", "A"], lines
    out = dagman_out(workdir)
    assert "Service node T: its PRE script failed, its job is not submitted" in out
    assert "Of 1 nodes total:" in out and "All jobs Completed!" in out
    assert not history_of(cell, "T")


def test_the_other_nodes_wait_for_the_provisioner_to_say_it_is_ready(cell, workdir):
    write(workdir, "prov.sh", f"#!/bin/sh\necho P >> {workdir}/order\nsleep 1.5\n"
                              f"echo P-ready >> {workdir}/order\ncondor_qedit $1 ProvisionerState 2\n"
                              f"for i in $(seq 300); do [ -e {workdir}/A.done ] && break; sleep 0.1; done\n"
                              f"echo P-end >> {workdir}/order\n")
    write(workdir, "a.sh", f"#!/bin/sh\necho A >> {workdir}/order\ntouch {workdir}/A.done\n")
    _dag, code = run_dag(cell, workdir, (
        "JOB A {\n  executable = a.sh\n}\n"
        "PROVISIONER P {\n  executable = prov.sh\n  arguments = $(ClusterId)\n  getenv = true\n}\n"))
    assert code == 0, dagman_out(workdir)
    assert order(workdir) == ["P", "P-ready", "A", "P-end"]
    assert "Provisioner node P reports PROVISIONING_COMPLETE" in dagman_out(workdir)


def test_a_provisioner_that_ends_before_it_is_ready_ends_the_dag(cell, workdir):
    write(workdir, "a.sh", f"#!/bin/sh\necho A >> {workdir}/order\n")
    _dag, code = run_dag(cell, workdir, (
        "JOB A {\n  executable = a.sh\n}\nPROVISIONER P {\n  executable = /bin/true\n}\n"))
    assert code == 1
    assert not os.path.exists(os.path.join(workdir, "order"))
    assert "ERROR: Provisioner node P job exited before giving DAGMan the go ahead!" in dagman_out(workdir)

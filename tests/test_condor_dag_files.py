"""The files a DAG manager writes for others to follow its DAG: the job state log
(JOBSTATE_LOG), the node status file (NODE_STATUS_FILE), the dot file (DOT), and the
lines of DAGFILE.dagman.out that tools read."""

import os

import pytest

from conftest import destroy_cell, make_cell
from gridtools.formats.condor import dagjobstate
from gridtools.formats.condor.dag import DagError, parse_dag
from test_condor_dag_live import dag_ended, dagman_id, submit_dag, write


@pytest.fixture
def cell():
    c = make_cell(slots=2)
    try:
        yield c
    finally:
        destroy_cell(c)


def read(folder, name):
    with open(os.path.join(folder, name)) as fh:
        return fh.read()


# ------------------------------------------------------------------ job state log

def test_jobstate_lines_have_dagmans_form():
    assert dagjobstate.internal_line(1292620511.7, "DAGMAN_STARTED 4972.0") == \
        "1292620511 INTERNAL *** DAGMAN_STARTED 4972.0 ***"
    assert dagjobstate.node_line(1292620525, "NodeA", "SUBMIT", "4973.0", "local", 1) == \
        "1292620525 NodeA SUBMIT 4973.0 local - 1"
    assert dagjobstate.node_line(1292620523, "NodeA", "PRE_SCRIPT_STARTED", "", "", 2) == \
        "1292620523 NodeA PRE_SCRIPT_STARTED - - - 2"
    assert dagjobstate.parse_line("1292620525 NodeA SUBMIT 4973.0 local - 7") == (1292620525, "NodeA", 7)
    assert dagjobstate.parse_line("1292620511 INTERNAL *** DAGMAN_STARTED 4972.0 ***") == \
        (1292620511, "INTERNAL", 0)
    assert dagjobstate.parse_line("garbage") is None


def test_a_nodes_job_tag_comes_from_its_submit_file():
    assert dagjobstate.job_tag('+job_tag_name = "+job_tag_value"\n+job_tag_value = "local"\n') == "local"
    assert dagjobstate.job_tag('+Pegasus_Site = "condorpool"\nqueue\n') == "condorpool"
    assert dagjobstate.job_tag("executable = x\nqueue\n") == "-"
    assert dagjobstate.job_tag('+pegasus_site = "$(site)"\n') == "-"         # macros are not read


def test_recovery_skips_what_the_manager_before_wrote():
    text = ("100 INTERNAL *** DAGMAN_STARTED 4.0 ***\n100 A SUBMIT 5.0 - - 1\n"
            "105 A EXECUTE 5.0 - - 1\n105 B SUBMIT 6.0 - - 2\n")
    seen = dagjobstate.Recovery(text)
    assert (seen.last, seen.highest, seen.sequences) == (105, 2, {"A": 1, "B": 2})
    assert seen.written("100 A SUBMIT 5.0 - - 1") and seen.written("105 B SUBMIT 6.0 - - 2")
    assert not seen.written("105 A JOB_TERMINATED 5.0 - - 1")
    assert not seen.written("106 A JOB_TERMINATED 5.0 - - 1")


def test_jobstate_log_is_read_and_the_first_one_counts():
    dag = parse_dag("JOB A a.sub\nJOBSTATE_LOG js.log\nJOBSTATE_LOG other.log\n", source="t.dag")
    assert dag.jobstate_log == "js.log"
    assert dag.notes == ["t.dag (line 3): Warning: Attempt to set JOBSTATE_LOG to other.log does "
                         "not override existing value of js.log"]
    for text, error in (("JOBSTATE_LOG\n", "Missing jobstate log file name"),
                        ("JOBSTATE_LOG a b\n", "Extra token (b) on JOBSTATE_LOG line")):
        with pytest.raises(DagError) as caught:
            parse_dag("JOB A a.sub\n" + text, source="t.dag")
        assert str(caught.value) == f"ERROR: t.dag (line 2): {error}"


def test_the_jobstate_log_follows_every_node_event_as_dagman_writes_it(cell, workdir):
    write(workdir, "pre.sh", "#!/bin/sh\nexit 0\n")
    write(workdir, "post.sh", "#!/bin/sh\nexit 0\n")
    write(workdir, "A.sh", "#!/bin/sh\nexit 0\n")
    write(workdir, "A.sub", 'executable = A.sh\n+job_tag_name = "+job_tag_value"\n'
                            '+job_tag_value = "local"\nqueue\n')
    write(workdir, "flaky.sh", f"#!/bin/sh\ntest -e {workdir}/tried && exit 0\ntouch {workdir}/tried\n"
                               "exit 5\n")
    write(workdir, "B.sub", "executable = flaky.sh\nqueue\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nSCRIPT PRE A pre.sh\nSCRIPT POST A post.sh\n"
                                  "JOB B B.sub\nRETRY B 1\nPARENT A CHILD B\nJOBSTATE_LOG js.log\n")
    dag = dagman_id(submit_dag(cell, workdir))
    assert dag_ended(cell, dag)[0][12] == "0"
    lines = read(workdir, "js.log").splitlines()
    assert all(line.split()[0].isdigit() for line in lines)
    words = [line.split(" ", 1)[1] for line in lines]
    a, b1, b2 = dag + 1, dag + 2, dag + 3
    assert words == [
        f"INTERNAL *** DAGMAN_STARTED {dag}.0 ***",
        "A PRE_SCRIPT_STARTED - local - 1", "A PRE_SCRIPT_SUCCESS - local - 1",
        f"A SUBMIT {a}.0 local - 1", f"A EXECUTE {a}.0 local - 1",
        f"A JOB_TERMINATED {a}.0 local - 1", "A JOB_SUCCESS 0 local - 1",
        f"A POST_SCRIPT_STARTED {a}.0 local - 1", f"A POST_SCRIPT_TERMINATED {a}.0 local - 1",
        f"A POST_SCRIPT_SUCCESS {a}.0 local - 1",
        f"B SUBMIT {b1}.0 - - 2", f"B EXECUTE {b1}.0 - - 2", f"B JOB_TERMINATED {b1}.0 - - 2",
        "B JOB_FAILURE 5 - - 2",
        f"B SUBMIT {b2}.0 - - 3", f"B EXECUTE {b2}.0 - - 3", f"B JOB_TERMINATED {b2}.0 - - 3",
        "B JOB_SUCCESS 0 - - 3",
        "INTERNAL *** DAGMAN_FINISHED 0 ***"]

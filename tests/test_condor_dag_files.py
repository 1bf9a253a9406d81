"""The files a DAG manager writes for others to follow its DAG: the job state log
(JOBSTATE_LOG), the node status file (NODE_STATUS_FILE), the dot file (DOT), and the
lines of DAGFILE.dagman.out that tools read."""

import os
import re
import time

import pytest

from conftest import cell_fixture, wait_for
from gridtools.formats.condor import dagjobstate
from gridtools.formats.condor.dag import DagError, parse_dag
from test_condor_dag_live import dag_ended, dagman_id, submit_dag, write


cell = cell_fixture(slots=2)


def read(folder, name):
    with open(os.path.join(folder, name)) as fh:
        return fh.read()


def assert_refused(cases):
    """Each (statement, error) of ``cases``, after a JOB line, is refused as DAGMan words it."""
    for text, error in cases:
        with pytest.raises(DagError) as caught:
            parse_dag("JOB A a.sub\n" + text, source="t.dag")
        assert str(caught.value) == f"ERROR: t.dag (line 2): {error}"


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
    assert_refused((("JOBSTATE_LOG\n", "Missing jobstate log file name"),
                    ("JOBSTATE_LOG a b\n", "Extra token (b) on JOBSTATE_LOG line")))


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


# ------------------------------------------------------------------ node status file

def status_dag():
    return parse_dag("JOB A a.sub\nJOB B b.sub\nJOB C c.sub\nJOB D d.sub DONE\nJOB E e.sub\n"
                     "PARENT A CHILD B\nPARENT C CHILD E\n", source="s.dag")


def test_the_node_status_file_is_dagmans_set_of_classads():
    from gridtools.formats.condor.dagnodestatus import Details, render_node_status
    from gridtools.formats.condor.dagprogress import Progress
    p = Progress(done={"A"}, failed={"C"}, queued={"B"}, jobs_idle=1, jobs_held=1)
    d = Details(["s.dag"], retries={"C": 2}, procs={"B": (2, 1, 0)},
                errors={"C": "Job proc (7.0.0) failed with status 3 (after 2 node retries)"})
    when = 1399674138
    stamp = time.ctime(when)
    text = render_node_status(status_dag(), p, d, when, 30)
    ads = [block for block in text.split("]\n") if block]
    assert ads[0] == (
        '[\n  Type = "DagStatus";\n  DagFiles = {\n    "s.dag"\n  };\n'
        f'  Timestamp = {when}; /* "{stamp}" */\n  DagStatus = 3; /* "STATUS_SUBMITTED ()" */\n'
        "  NodesTotal = 5;\n  NodesDone = 2;\n  NodesPre = 0;\n  NodesQueued = 1;\n  NodesPost = 0;\n"
        "  NodesReady = 0;\n  NodesUnready = 0;\n  NodesFutile = 1;\n  NodesFailed = 1;\n"
        "  JobProcsHeld = 1;\n  JobProcsIdle = 2; /* includes held */\n")
    assert ads[2] == ('[\n  Type = "NodeStatus";\n  Node = "B";\n  NodeStatus = 3; /* "STATUS_SUBMITTED" */\n'
                      '  StatusDetails = "idle";\n  RetryCount = 0;\n  JobProcsQueued = 2;\n'
                      "  JobProcsHeld = 1;\n")
    details = [re.search(r'NodeStatus = (\d); .*\n  StatusDetails = (".*");\n  RetryCount = (\d)', ad).groups()
               for ad in ads[1:6]]
    assert details == [("5", '""', "0"), ("3", '"idle"', "0"),
                       ("6", '"Job proc (7.0.0) failed with status 3 (after 2 node retries)"', "2"),
                       ("5", '"User defined as DONE"', "0"), ("7", '"Had an ancestor node fail"', "0")]
    assert ads[6] == (f'[\n  Type = "StatusEnd";\n  EndTime = {when}; /* "{stamp}" */\n'
                      f'  NextUpdate = {when + 30}; /* "{time.ctime(when + 30)}" */\n')


def test_a_finished_dags_status_file_counts_its_running_nodes_failed_and_has_no_next_update():
    from gridtools.formats.condor.dagnodestatus import Details, render_node_status
    from gridtools.formats.condor.dagprogress import Progress
    p = Progress(done={"A"}, failed={"C"}, queued={"B"})
    text = render_node_status(status_dag(), p, Details(["s.dag"], outcome="failed", finished=True), 100, 30)
    assert 'DagStatus = 6; /* "STATUS_ERROR (failed)" */' in text
    assert "NodesQueued = 0;" in text and "NodesFailed = 2;" in text
    assert 'NodeStatus = 6; /* "STATUS_ERROR" */\n  StatusDetails = "Was STATUS_SUBMITTED";' in text
    assert 'NextUpdate = 0; /* "none" */' in text
    done = render_node_status(status_dag(), Progress(done=set("ABCE")), Details(["s.dag"], outcome="success",
                                                                                  finished=True), 100, 30)
    assert 'DagStatus = 5; /* "STATUS_DONE (success)" */' in done


def test_node_status_file_is_read_as_dagman_reads_it():
    dag = parse_dag("JOB A a.sub\nNODE_STATUS_FILE st 5 always-update\nNODE_STATUS_FILE other\n", source="t.dag")
    assert (dag.status_file.path, dag.status_file.min_update, dag.status_file.always) == ("st", 5, True)
    assert dag.notes == ["t.dag (line 3): Warning: Attempt to set NODE_STATUS_FILE to other does "
                         "not override existing value of st"]
    assert parse_dag("JOB A a.sub\nNODE_STATUS_FILE st\n").status_file.min_update == 60
    assert_refused((("NODE_STATUS_FILE\n", "Missing node status file name"),
                    ("NODE_STATUS_FILE st x\n", 'Invalid min update time value "x"'),
                    ("NODE_STATUS_FILE st 5 SOMETIMES\n", 'invalid parameter "SOMETIMES"'),
                    ("NODE_STATUS_FILE st 5 ALWAYS-UPDATE x\n", "Extra token (x) on NODE_STATUS_FILE line")))


def node_status(folder, name="status"):
    """{node: NodeStatus} and the DagStatus of the node status file, parsed as ClassAds."""
    from gridtools.classad.parser import parse_ad
    text = read(folder, name)
    ads = [parse_ad(block + "]") for block in text.split("]\n") if block.strip()]
    values = [{key: ad.eval(key) for key in ("Type", "Node", "NodeStatus", "DagStatus", "EndTime",
                                             "NextUpdate") if key in ad} for ad in ads]
    assert values[0]["Type"] == "DagStatus" and values[-1]["Type"] == "StatusEnd"
    return {v["Node"]: v["NodeStatus"] for v in values[1:-1]}, values[0]["DagStatus"], values[-1]


def test_the_node_status_file_follows_the_dag_and_is_rewritten_whole(cell, workdir):
    write(workdir, "A.sh", f"#!/bin/sh\nwhile [ ! -e {workdir}/go ]; do sleep 0.05; done\n")
    write(workdir, "A.sub", "executable = A.sh\nqueue\n")
    write(workdir, "B.sh", "#!/bin/sh\nexit 4\n")
    write(workdir, "B.sub", "executable = B.sh\nqueue\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nJOB C A.sub\nPARENT A CHILD B\n"
                                  "PARENT B CHILD C\nNODE_STATUS_FILE status 0\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: os.path.exists(os.path.join(workdir, "status"))
             and node_status(workdir)[0].get("A") == 3, timeout=30)
    nodes, status, end = node_status(workdir)
    assert nodes == {"A": 3, "B": 0, "C": 0} and status == 3 and end["NextUpdate"] >= end["EndTime"]
    write(workdir, "go", "")
    assert dag_ended(cell, dag)[0][12] == "1"
    nodes, status, end = node_status(workdir)
    assert nodes == {"A": 5, "B": 6, "C": 7} and status == 6 and end["NextUpdate"] == 0
    text = read(workdir, "status")
    assert f'StatusDetails = "Job proc ({dag + 2}.0.0) failed with status 4";' in text
    assert not os.path.exists(os.path.join(workdir, "status.tmp"))


# ------------------------------------------------------------------ dot file

def test_the_dag_is_drawn_as_dagman_draws_it():
    from gridtools.formats.condor.dagdot import render_dot
    from gridtools.formats.condor.dagnodestatus import NodeStatus as S
    dag = parse_dag("JOB A a.sub\nJOB B b.sub\nJOB C c.sub\nJOB D d.sub\nJOB E e.sub\nJOB F f.sub\n"
                    "JOB G g.sub\nPARENT A CHILD C B\nPARENT B C CHILD D\n")
    statuses = {"A": S.STATUS_DONE, "B": S.STATUS_SUBMITTED, "C": S.STATUS_ERROR, "D": S.STATUS_FUTILE,
                "E": S.STATUS_PRERUN, "F": S.STATUS_POSTRUN, "G": S.STATUS_READY}
    assert render_dot(dag, statuses, 100, ("head.dot", "size=\"7,10\";\n")) == (
        "digraph DAG {\n"
        f'    label="DAGMan Job status at {time.ctime(100)}";\n\n'
        "// Beginning of commands included from head.dot.\n"
        'size="7,10";\n'
        "// End of commands included from head.dot.\n\n"
        '    "A" [shape=ellipse label="A (Done)" style=bold];\n'
        '    "B" [shape=ellipse label="B (R)" peripheries=2];\n'
        '    "C" [shape=box label="C (E)"];\n'
        '    "D" [shape=ellipse label="D (I)"];\n'
        '    "E" [shape=ellipse label="E (Pre)" style=dotted];\n'
        '    "F" [shape=ellipse label="F (Post)" style=dotted];\n'
        '    "G" [shape=ellipse label="G (I)"];\n\n'
        '    "A" -> "B";\n    "A" -> "C";\n    "B" -> "D";\n    "C" -> "D";\n'
        "}\n")


def test_dot_is_read_as_dagman_reads_it():
    dag = parse_dag("JOB A a.sub\nDOT a.dot UPDATE DONT-OVERWRITE INCLUDE h.dot\n")
    assert (dag.dot.path, dag.dot.update, dag.dot.overwrite, dag.dot.include) == \
        ("a.dot", True, False, "h.dot")
    dag = parse_dag("JOB A a.sub\nDOT a.dot\n")
    assert (dag.dot.update, dag.dot.overwrite, dag.dot.include) == (False, True, "")
    assert_refused((("DOT\n", "Missing dot file name"), ("DOT a.dot INCLUDE\n", "Missing include file name.")))


def test_dot_files_are_drawn_at_the_start_and_numbered_with_dont_overwrite(cell, workdir):
    write(workdir, "A.sh", "#!/bin/sh\nexit 0\n")
    write(workdir, "A.sub", "executable = A.sh\nqueue\n")
    write(workdir, "head.dot", "size=\"7,10\";\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B A.sub\nPARENT A CHILD B\n"
                                  "DOT dag.dot UPDATE DONT-OVERWRITE INCLUDE head.dot\n")
    assert dag_ended(cell, dagman_id(submit_dag(cell, workdir)))[0][12] == "0"
    drawn = sorted((name for name in os.listdir(workdir) if name.startswith("dag.dot.")),
                   key=lambda name: int(name.rsplit(".", 1)[1]))
    assert len(drawn) >= 3 and drawn[0] == "dag.dot.0" and not any(n.endswith(".temp") for n in drawn)
    first, last = read(workdir, drawn[0]), read(workdir, drawn[-1])
    assert first.startswith('digraph DAG {\n    label="DAGMan Job status at ')
    assert "// Beginning of commands included from head.dot.\nsize=\"7,10\";\n" in first
    assert '"A" [shape=ellipse label="A (I)"];\n    "B" [shape=ellipse label="B (I)"];\n\n' \
           '    "A" -> "B";\n}\n' in first
    assert '"A" [shape=ellipse label="A (Done)" style=bold];\n' \
           '    "B" [shape=ellipse label="B (Done)" style=bold];\n' in last
    assert any('label="A (R)" peripheries=2' in read(workdir, name) for name in drawn)


# ------------------------------------------------------------------ DAGFILE.dagman.out

def test_dagman_out_has_dagmans_time_stamps_and_the_lines_workflow_tools_read(cell, workdir):
    write(workdir, "pre.sh", "#!/bin/sh\nexit 0\n")
    write(workdir, "A.sh", "#!/bin/sh\nexit 0\n")
    write(workdir, "A.sub", "executable = A.sh\nqueue\n")
    write(workdir, "flaky.sh", f"#!/bin/sh\ntest -e {workdir}/tried && exit 0\ntouch {workdir}/tried\n"
                               "exit 5\n")
    write(workdir, "B.sub", "executable = flaky.sh\nqueue\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nSCRIPT PRE A pre.sh\nJOB B B.sub\nRETRY B 1\n"
                                  "PARENT A CHILD B\n")
    dag = dagman_id(submit_dag(cell, workdir))
    assert dag_ended(cell, dag)[0][12] == "0"
    lines = read(workdir, "diamond.dag.dagman.out").splitlines()
    stamp = re.compile(r"\d\d/\d\d/\d\d \d\d:\d\d:\d\d ")
    assert all(stamp.match(line) for line in lines)
    text = [line[18:] for line in lines]
    a, b1, b2 = dag + 1, dag + 2, dag + 3
    for wanted in (f"** condor_scheduniv_exec.{dag}.0 (CONDOR_DAGMAN) STARTING UP",
                   "Parsing diamond.dag ...", "Running PRE script of Node A...",
                   "PRE Script of node A completed successfully.", "Submitting HTCondor Node A job(s)...",
                   f"\tassigned HTCondor ID ({a}.0.0)", f"Node A job proc ({a}.0.0) completed successfully.",
                   f"Node B job proc ({b1}.0.0) failed with status 5.", "Retrying node B (retry #1 of 1)...",
                   f"Node B job proc ({b2}.0.0) completed successfully.", "All jobs Completed!",
                   "Of 2 nodes total:",
                   " Done     Pre   Queued    Post   Ready   Un-Ready   Failed   Futile",
                   "  ===     ===      ===     ===     ===        ===      ===      ===",
                   "    2       0        0       0       0          0        0        0",
                   "0 job proc(s) currently held"):
        assert wanted in text, wanted
    assert any(re.fullmatch(r"\*\* PID = \d+", line) for line in text)
    banner = text[:text.index("*" * 54, 1) + 1]        # DaemonCore's banner, its version lines in it
    assert banner[0] == "*" * 54 and banner[1].endswith("STARTING UP")
    assert banner[3:5] == ["** $CondorVersion: 24.0.0 gridtools $",
                           "** $CondorPlatform: X86_64-Linux gridtools $"]
    assert re.fullmatch(r"\*\* PID = \d+", banner[5])
    events = [line for line in text if line.startswith("Event: ")]
    assert re.fullmatch(rf"Event: ULOG_SUBMIT for HTCondor Node A \({a}\.0\.0\) "
                        r"\{\d\d/\d\d/\d\d \d\d:\d\d:\d\d\}", events[0])
    assert f"Event: ULOG_JOB_TERMINATED for HTCondor Node B ({b2}.0.0)" in events[-1]
    finished = re.search(r"\(condor_DAGMAN\)[\w\s]+EXITING WITH STATUS (\d+)$", lines[-1])  # Pegasus's
    assert finished and finished.group(1) == "0"
    assert lines[-1].endswith(f"**** condor_scheduniv_exec.{dag}.0 (condor_DAGMAN) pid "
                              f"{lines[-1].split(' pid ')[1].split()[0]} EXITING WITH STATUS 0")


def test_a_held_and_released_dag_recovers_its_jobstate_log_without_writing_a_line_twice(cell, workdir):
    from test_condor_dag_live import dagman_out, gate, manager_status, node, node_started
    node(workdir, "A", body=gate(workdir))
    node(workdir, "B")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\nJOBSTATE_LOG js.log\n"
                                  "NODE_STATUS_FILE status 0\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, "A") and "EXECUTE" in read(workdir, "js.log"), timeout=30)
    assert cell.run("condor_hold", str(dag)).returncode == 0
    wait_for(lambda: manager_status(cell, dag) == "5", timeout=30)
    wait_for(lambda: "DAGMAN_FINISHED 3" in read(workdir, "js.log"), timeout=30)
    assert 'DagStatus = 3; /* "STATUS_SUBMITTED (held)" */' in read(workdir, "status")
    assert cell.run("condor_release", str(dag)).returncode == 0
    wait_for(lambda: "Recovery mode: 1 node(s)" in dagman_out(workdir), timeout=30)
    write(workdir, "go", "")
    wait_for(lambda: "EXITING WITH STATUS 0" in dagman_out(workdir), timeout=60)
    words = [line.split(" ", 1)[1] for line in read(workdir, "js.log").splitlines()]
    a, b = dag + 1, dag + 2
    assert words == [
        f"INTERNAL *** DAGMAN_STARTED {dag}.0 ***", f"A SUBMIT {a}.0 - - 1", f"A EXECUTE {a}.0 - - 1",
        "INTERNAL *** DAGMAN_FINISHED 3 ***",
        f"INTERNAL *** DAGMAN_STARTED {dag}.0 ***", "INTERNAL *** RECOVERY_STARTED ***",
        "INTERNAL *** RECOVERY_FINISHED ***",
        f"A JOB_TERMINATED {a}.0 - - 1", "A JOB_SUCCESS 0 - - 1",
        f"B SUBMIT {b}.0 - - 2", f"B EXECUTE {b}.0 - - 2", f"B JOB_TERMINATED {b}.0 - - 2",
        "B JOB_SUCCESS 0 - - 2", "INTERNAL *** DAGMAN_FINISHED 0 ***"]
    assert 'DagStatus = 5; /* "STATUS_DONE (success)" */' in read(workdir, "status")


def test_held_node_jobs_show_in_the_jobstate_log_and_min_update_time_spaces_status_rewrites(cell, workdir):
    from test_condor_dag_live import dagman_out, node, node_started
    node(workdir, "A", body=f"while [ ! -e {workdir}/go ]; do sleep 0.05; done")
    node(workdir, "B", body=f"while [ ! -e {workdir}/go2 ]; do sleep 0.05; done")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\nJOBSTATE_LOG js.log\n"
                                  "NODE_STATUS_FILE status 3600\n")
    dag = dagman_id(submit_dag(cell, workdir))
    a = dag + 1
    wait_for(lambda: node_started(workdir, "A") and os.path.exists(os.path.join(workdir, "status")), timeout=30)
    first = read(workdir, "status")
    assert node_status(workdir)[0] == {"A": 3, "B": 0}
    assert cell.run("condor_hold", str(a)).returncode == 0
    wait_for(lambda: f"A JOB_HELD {a}.0 - - 1" in read(workdir, "js.log"), timeout=30)
    assert cell.run("condor_release", str(a)).returncode == 0
    wait_for(lambda: f"A JOB_RELEASED {a}.0 - - 1" in read(workdir, "js.log"), timeout=30)
    write(workdir, "go", "")
    wait_for(lambda: node_started(workdir, "B"), timeout=60)
    assert read(workdir, "status") == first              # not rewritten within the hour
    assert cell.run("condor_rm", str(dag)).returncode == 0
    dag_ended(cell, dag)
    nodes, status, end = node_status(workdir)
    assert nodes == {"A": 5, "B": 6} and status == 6 and end["NextUpdate"] == 0
    text = read(workdir, "status")
    assert 'DagStatus = 6; /* "STATUS_ERROR (removed)" */' in text
    # (B's job was removed as the DAG ended: "Was STATUS_SUBMITTED", as HTCondor's DAGMan says it)
    assert 'NodeStatus = 6; /* "STATUS_ERROR" */\n  StatusDetails = "Was STATUS_SUBMITTED";' in text
    assert read(workdir, "js.log").splitlines()[-1].endswith(" INTERNAL *** DAGMAN_FINISHED 2 ***")   # (EXIT_ABORT)
    out = dagman_out(workdir)
    assert "Received SIGUSR1" in out
    assert out.index("Received SIGUSR1") < out.index("Aborting DAG...\n") \
        < out.index("Removing any/all submitted HTCondor jobs...\n") < out.index("Node B: its job was removed")

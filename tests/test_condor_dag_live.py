"""condor_submit_dag and its DAG runner against a running daemon: a diamond runs in order, a failed
node leaves a rescue DAG that a second condor_submit_dag resumes, RETRY, VARS, PRE/POST scripts,
ABORT-DAG-ON, PRIORITY, and the files a previous run left."""

import json
import os
import re
import subprocess
import time

import pytest

from conftest import cell_fixture, destroy_cell, make_cell, wait_for

RULE = "-" * 71


cell = cell_fixture(slots=2)


def write(folder, name, text):
    path = os.path.join(folder, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o755)
    return path


def node(folder, name, body="", args=""):
    """A node whose job appends its name to ``order`` (then runs ``body``)."""
    write(folder, f"{name}.sh", f"#!/bin/sh\necho {name} >> {folder}/order\nsleep 0.3\n{body}\n")
    write(folder, f"{name}.sub", f"executable = {name}.sh\narguments = {args}\noutput = {name}.out\n"
                                 f"error = {name}.err\nqueue\n")


DIAMOND = "JOB A A.sub\nJOB B B.sub\nJOB C C.sub\nJOB D D.sub\nPARENT A CHILD B C\nPARENT B C CHILD D\n"


def submit_dag(cell, folder, *args, user=None, code=0):
    proc = cell.run("condor_submit_dag", *args, "diamond.dag", cwd=folder, user=user)
    assert proc.returncode == code, proc.stderr + proc.stdout
    return proc


def dagman_id(proc):
    return int(re.search(r"submitted to cluster (\d+)\.", proc.stdout).group(1))


def dag_ended(cell, job_id, timeout=60):
    cell.wait_finished(job_id, timeout=timeout)
    return cell.accounting_of(job_id) if hasattr(cell, "accounting_of") else \
        [r for r in cell.accounting() if int(r[5]) == job_id]


def in_history(cell, job_id, timeout=20):
    """Wait until condor_history shows job ``job_id``: its final ad is written at the end of
    the dispatcher's pass that ended it, after its state in the spool (``dag_ended``) and
    after the status that shows it gone."""
    wait_for(lambda: cell.run("condor_history", str(job_id), "-af", "ClusterId").stdout.strip(), timeout)


def gate(folder):
    """A node job's body that waits for the file ``go`` (the test makes it when it is ready)."""
    return f"while [ ! -e {folder}/go ]; do sleep 0.05; done"


def node_started(folder, name):
    """True once node ``name``'s job started (it is in the queue until ``go`` exists)."""
    return os.path.exists(os.path.join(folder, "order")) and name in order(folder)


def batch_rows(cell, *args):
    """The rows of condor_q's batch view, split in words."""
    lines = cell.run("condor_q", *args).stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("OWNER"))
    return [line.split() for line in lines[head + 1:lines.index("", head)]]


def history(cell, *attrs):
    """``condor_history -af ATTRS`` of every job that left the queue, as a set of lines."""
    return set(cell.run("condor_history", "-af", *attrs).stdout.splitlines())


def order(folder):
    with open(os.path.join(folder, "order")) as fh:
        return fh.read().split()


def test_a_diamond_runs_in_order(cell, workdir):
    for name in "ABCD":
        node(workdir, name)
    write(workdir, "diamond.dag", DIAMOND)
    proc = submit_dag(cell, workdir)
    lines = proc.stdout.splitlines()
    assert lines[0] == RULE and lines[-1] == RULE
    assert lines[1] == "File for submitting this DAG to HTCondor           : diamond.dag.condor.sub"
    assert lines[2] == "Log of DAGMan debugging messages                   : diamond.dag.dagman.out"
    assert lines[5] == "Log of the life of condor_dagman itself            : diamond.dag.dagman.log"
    assert lines[7:9] == ["Submitting job(s).", f"1 job(s) submitted to cluster {dagman_id(proc)}."]
    record = dag_ended(cell, dagman_id(proc))
    assert record[0][12] == "0"                                   # DAGMan's exit status
    ran = order(workdir)
    assert ran[0] == "A" and sorted(ran[1:3]) == ["B", "C"] and ran[3] == "D"
    out = open(os.path.join(workdir, "diamond.dag.dagman.out")).read()
    assert "All jobs Completed!" in out and "EXITING WITH STATUS 0" in out
    assert os.path.exists(os.path.join(workdir, "diamond.dag.condor.sub"))
    assert "universe\t= scheduler" in open(os.path.join(workdir, "diamond.dag.condor.sub")).read()
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.lock"))    # its manager let it go


def test_node_jobs_write_their_own_log_and_the_nodes_log_with_the_dag_node_note(cell, workdir):
    """As HTCondor's WriteUserLog: a node job's events go to the log of its own submit
    file and to DAGFILE.nodes.log; its submit events carry DAGMan's note 'DAG Node: NAME'."""
    from condortools import htcondor_events
    node(workdir, "A")
    node(workdir, "B")
    with open(os.path.join(workdir, "A.sub")) as fh:
        text = fh.read()
    write(workdir, "A.sub", "log = own.log\n" + text)
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\n")
    assert dag_ended(cell, dagman_id(submit_dag(cell, workdir)))[0][12] == "0"
    own = open(os.path.join(workdir, "own.log")).read()
    nodes = open(os.path.join(workdir, "diamond.dag.nodes.log")).read()
    assert [line[:3] for line in own.splitlines() if line[:3].isdigit()] == ["000", "001", "005"]
    assert own.count("\n    DAG Node: A\n") == 1 and "DAG Node: B" not in own
    assert nodes.count("\n    DAG Node: A\n") == 1 and nodes.count("\n    DAG Node: B\n") == 1
    a_cluster = re.match(r"000 \((\d+)\.", own).group(1)
    assert own.splitlines()[:2] == [line for line in nodes.splitlines()
                                    if line.startswith(f"000 ({a_cluster}.")] + ["    DAG Node: A"]
    events = htcondor_events(os.path.join(workdir, "diamond.dag.nodes.log"))
    if events is not None:                     # HTCondor's own reader, where it is installed
        notes = [e.get("LogNotes") for e in events if e["type"] == 0]
        assert notes == ["DAG Node: A", "DAG Node: B"]


def test_a_failed_node_leaves_a_rescue_dag_that_resumes_where_it_stopped(cell, workdir):
    for name in "ACD":
        node(workdir, name)
    node(workdir, "B", body=f"test -e {workdir}/fixed || exit 3")
    write(workdir, "diamond.dag", DIAMOND)
    first = submit_dag(cell, workdir)
    record = dag_ended(cell, dagman_id(first))
    assert record[0][12] == "1"
    assert sorted(order(workdir)) == ["A", "B", "C"]                # D never ran
    rescue = open(os.path.join(workdir, "diamond.dag.rescue001")).read()
    assert "# Nodes that failed: 1\n#   B,<ENDLIST>\n" in rescue
    # (dag.cpp: "# Created %d/%d/%d %02d:%02d:%02d UTC", month, day, four-digit year)
    assert re.search(r"^# Created ([1-9]|1[0-2])/([1-9]|[12]\d|3[01])/\d{4} \d\d:\d\d:\d\d UTC$", rescue, re.M)
    assert [ln for ln in rescue.splitlines() if ln.startswith("DONE")] == ["DONE A", "DONE C"]
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.lock"))
    # files of the first run are there: only the rescue DAG lets the DAG be submitted again
    write(workdir, "fixed", "")
    metrics = json.load(open(os.path.join(workdir, "diamond.dag.metrics")))
    assert {key: metrics[key] for key in ("client", "type", "exitcode", "dagman_id", "parent_dagman_id",
                                          "rescue_dag_number", "jobs", "jobs_failed", "jobs_succeeded",
                                          "dag_jobs", "total_jobs", "total_jobs_run", "DagStatus")} == {
        "client": "condor_dagman", "type": "metrics", "exitcode": 1, "dagman_id": str(dagman_id(first)),
        "parent_dagman_id": "", "rescue_dag_number": 0, "jobs": 4, "jobs_failed": 1, "jobs_succeeded": 2,
        "dag_jobs": 0, "total_jobs": 4, "total_jobs_run": 3, "DagStatus": 2}
    assert metrics["end_time"] >= metrics["start_time"] and metrics["version"] == "24.0.0"
    second = submit_dag(cell, workdir)
    assert second.stdout.startswith("Running rescue DAG 1\n" + RULE)
    assert dag_ended(cell, dagman_id(second))[0][12] == "0"
    assert order(workdir)[3:] == ["B", "D"]                          # A and C were not run again
    metrics = json.load(open(os.path.join(workdir, "diamond.dag.metrics")))
    assert [metrics[key] for key in ("exitcode", "rescue_dag_number", "jobs_failed", "jobs_succeeded",
                                     "total_jobs_run", "DagStatus")] == [0, 1, 0, 2, 2, 0]


def test_files_of_a_previous_run_need_f(cell, workdir):
    for name in "ABCD":
        node(workdir, name)
    write(workdir, "diamond.dag", DIAMOND)
    write(workdir, "diamond.dag.condor.sub", "")
    proc = submit_dag(cell, workdir, code=1)
    assert proc.stderr.startswith('ERROR: "diamond.dag.condor.sub" already exists.\n\n'
                                  "Some file(s) needed by condor_dagman already exist.")
    assert proc.stdout == ""
    forced = submit_dag(cell, workdir, "-f")
    assert dag_ended(cell, dagman_id(forced))[0][12] == "0"
    # -update_submit writes the submit file again and goes on; -allowversionmismatch is
    # accepted (the manager is always this gridtools)
    os.remove(os.path.join(workdir, "order"))
    updated = submit_dag(cell, workdir, "-update_submit", "-allowversionmismatch")
    assert dag_ended(cell, dagman_id(updated))[0][12] == "0"
    assert sorted(order(workdir)) == ["A", "B", "C", "D"]


def test_retry_vars_pre_and_post_scripts(cell, workdir):
    write(workdir, "flaky.sh", f"#!/bin/sh\necho $1 >> {workdir}/order\n"
                               f"test -e {workdir}/tried && exit 0\ntouch {workdir}/tried\nexit 5\n")
    write(workdir, "flaky.sub", "executable = flaky.sh\narguments = $(word)\noutput = f.out\n"
                                "error = f.err\nqueue\n")
    write(workdir, "pre.sh", f"#!/bin/sh\necho pre-$1 >> {workdir}/order\n")
    write(workdir, "post.sh", f"#!/bin/sh\necho post-$1-$2 >> {workdir}/order\nexit 0\n")
    node(workdir, "Z", body="exit 9")
    write(workdir, "diamond.dag", "JOB F flaky.sub\nVARS F word=\"hello\"\nRETRY F 2\n"
                                  "SCRIPT PRE F pre.sh $JOB\nJOB Z Z.sub\nSCRIPT POST Z post.sh $JOB $RETURN\n"
                                  "PARENT F CHILD Z\n")
    proc = submit_dag(cell, workdir)
    assert dag_ended(cell, dagman_id(proc))[0][12] == "0"
    assert order(workdir) == ["pre-F", "hello", "pre-F", "hello", "Z", "post-Z-9"]


def test_abort_dag_on_ends_the_dag_with_its_return_value(cell, workdir):
    node(workdir, "A", body="exit 3")
    write(workdir, "slow.sh", "#!/bin/sh\nsleep 60\n")
    write(workdir, "slow.sub", "executable = slow.sh\noutput = s.out\nerror = s.err\nqueue\n")
    node(workdir, "C")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB S slow.sub\nJOB C C.sub\nPARENT A CHILD C\n"
                                  "ABORT-DAG-ON A 3 RETURN 2\n")
    proc = submit_dag(cell, workdir)
    record = dag_ended(cell, dagman_id(proc))
    assert record[0][12] == "2"                 # the RETURN value, not the node's 3
    assert "C" not in order(workdir)
    wait_for(lambda: all(st == "finished" for jid in range(1, dagman_id(proc) + 5)
                         for st in cell.task_states(jid).values()), timeout=20)
    assert os.path.exists(os.path.join(workdir, "diamond.dag.rescue001"))


def test_a_return_value_above_2_keeps_the_manager_in_the_queue_as_on_exit_remove_says(cell, workdir):
    node(workdir, "A", body="exit 3")
    write(workdir, "diamond.dag", "JOB A A.sub\nABORT-DAG-ON A 3 RETURN 7\n")
    dag = dagman_id(submit_dag(cell, workdir))
    log = os.path.join(workdir, "diamond.dag.dagman.out")

    def second_run_ended():
        """The second run wrote its rescue DAG, said so, then wrote its last line."""
        text = open(log).read() if os.path.exists(log) else ""
        return "EXITING WITH STATUS" in text.partition("diamond.dag.rescue002")[2]
    wait_for(second_run_ended, timeout=60)
    assert os.path.exists(os.path.join(workdir, "diamond.dag.rescue002"))
    out = open(log).read()
    assert "EXITING WITH STATUS 7" in out and "Running rescue DAG 1 (diamond.dag.rescue001)" in out
    assert cell.run("condor_rm", str(dag)).returncode == 0
    dag_ended(cell, dag)


def test_a_bad_dag_is_refused_before_anything_is_submitted(cell, workdir):
    write(workdir, "diamond.dag", "JOB A A.sub\nPARENT A CHILD X\n")
    proc = submit_dag(cell, workdir, code=1)
    assert proc.stderr.startswith("ERROR: ") and proc.stdout == ""
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.condor.sub"))
    missing = cell.run("condor_submit_dag", "nothere.dag", cwd=workdir)
    assert missing.returncode == 1 and missing.stderr.startswith("Error reading DAG file")


def test_a_users_dag_runs_as_that_user_with_node_priorities(cell, users, workdir):
    for name in "ABCD":
        node(workdir, name)
    write(workdir, "diamond.dag", DIAMOND + "PRIORITY C 10\n")
    proc = submit_dag(cell, workdir, user="gtalice")
    dag_ended(cell, dagman_id(proc))
    owners = {r[3] for r in cell.accounting()}
    assert owners == {"gtalice"}
    ran = order(workdir)
    assert ran[:3] == ["A", "C", "B"] or ran[:3] == ["A", "B", "C"]   # both may start at once


def test_removing_the_dag_removes_its_node_jobs_and_leaves_a_rescue_dag(cell, workdir):
    write(workdir, "slow.sh", "#!/bin/sh\nsleep 60\n")
    write(workdir, "slow.sub", "executable = slow.sh\noutput = s.out\nerror = s.err\nqueue\n")
    write(workdir, "diamond.dag", "JOB A slow.sub\nJOB B slow.sub\nPARENT A CHILD B\n")
    proc = submit_dag(cell, workdir)
    dag = dagman_id(proc)
    wait_for(lambda: cell.task_states(dag + 1) == {1: "running"}, timeout=20)
    assert cell.run("qdel", str(dag)).returncode == 0
    record = dag_ended(cell, dag)
    assert record
    wait_for(lambda: cell.task_states(dag + 1) == {1: "finished"}, timeout=20)
    # as HTCondor's DAGMan writes it before it removes the node jobs: A, whose job was
    # removed, is not a failed node of it (nor done)
    rescue = open(os.path.join(workdir, "diamond.dag.rescue001")).read()
    assert "# Nodes that failed: 0\n#   <ENDLIST>" in rescue and "DONE" not in rescue.split("<ENDLIST>")[1]
    out = open(os.path.join(workdir, "diamond.dag.dagman.out")).read()
    assert "Node A: its job was removed" in out and "EXITING WITH STATUS 2" in out     # EXIT_ABORT
    assert out.index("Writing Rescue DAG file") < out.index("Removing submitted jobs...") \
        < out.index("Node A: its job was removed")
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.lock"))


def gated_diamond(cell, workdir, *args):
    """Submit the diamond with node A waiting for ``go``; its manager's id, once A runs."""
    node(workdir, "A", body=gate(workdir))
    for name in "BCD":
        node(workdir, name)
    write(workdir, "diamond.dag", DIAMOND)
    dag = dagman_id(submit_dag(cell, workdir, *args))
    wait_for(lambda: node_started(workdir, "A"), timeout=30)
    return dag


def test_a_dag_and_its_node_jobs_are_one_batch_named_after_the_dag_file(cell, workdir):
    dag = gated_diamond(cell, workdir)
    name = f"diamond.dag+{dag}"
    # one row: the node jobs (not the manager) running and idle, the nodes done and in all
    # as the manager counts them (DAG_NodesDone, DAG_NodesTotal)
    rows = wait_for(lambda: (lambda r: r if len(r) == 1 and r[0][-2] == "4" else None)(batch_rows(cell)))
    assert rows[0][1] == name and rows[0][4:] == ["_", "1", "_", "4", f"{dag + 1}.0"]
    assert batch_rows(cell, "-constraint", "true") == rows      # the view of a record per proc
    counts = cell.run("condor_q", str(dag), "-af", "DAG_NodesTotal", "DAG_NodesDone", "DAG_NodesFailed")
    assert counts.stdout == "4 0 0\n"
    shown = cell.run("condor_q", "-af", "ClusterId", "JobBatchName", "DAGManJobId").stdout.splitlines()
    assert shown == [f"{dag} {name} undefined", f"{dag + 1} {name} {dag}"]
    write(workdir, "go", "")
    assert dag_ended(cell, dag)[0][12] == "0"
    in_history(cell, dag)
    assert history(cell, "JobBatchName") == {name}                   # the manager and its 4 nodes
    assert cell.run("condor_history", str(dag), "-af", "DAG_NodesDone").stdout == "4\n"
    assert len(cell.run("condor_history", "-af", "ClusterId").stdout.split()) == 5


def test_dags_sharing_a_batch_name_are_a_row_each_but_with_batch_2(cell, workdir):
    """As HTCondor's condor_q links batches: each DAG is a row of its own, even when
    another DAG has its batch name; -batch:2 (its experimental form) makes the DAGs of
    one owner's batch name one row, their nodes added up."""
    dags = []
    for sub in ("one", "two"):
        folder = os.path.join(workdir, sub)
        os.makedirs(folder)
        node(folder, "A", body=gate(workdir))
        write(folder, "diamond.dag", "JOB A A.sub\n")
        dags.append(dagman_id(submit_dag(cell, folder, "-batch-name", "shared")))
        wait_for(lambda: node_started(folder, "A"), timeout=30)
    expected = [["_", "1", "_", "1", f"{dags[0] + 1}.0"], ["_", "1", "_", "1", f"{dags[1] + 1}.0"]]
    # the started node jobs are shown as running once the dispatcher has published their state
    rows = wait_for(lambda: (lambda r: r if [x[4:] for x in r] == expected else None)(batch_rows(cell)))
    assert [r[1] for r in rows] == ["shared", "shared"]
    assert batch_rows(cell, "-constraint", "true") == rows          # the view of a record per proc
    folded = batch_rows(cell, "-batch:2")
    assert [r[4:] for r in folded] == [["_", "2", "_", "2", f"{dags[0] + 1}.0", "...", f"{dags[1] + 1}.0"]]
    assert batch_rows(cell, "-batch:2", "-constraint", "true") == folded
    assert batch_rows(cell, "-batch:1") == rows
    write(workdir, "go", "")
    for dag in dags:
        dag_ended(cell, dag)


def test_dags_that_have_not_started_are_a_row_each(cell, workdir):
    """A DAG's manager is a DAG of its own from its submission, before it has counted its
    nodes: two held DAGs of one batch name are two rows, not one."""
    dags = []
    for sub in ("one", "two"):
        folder = os.path.join(workdir, sub)
        os.makedirs(folder)
        node(folder, "A")
        write(folder, "diamond.dag", "JOB A A.sub\n")
        submit_dag(cell, folder, "-no_submit", "-batch-name", "waiting")
        proc = cell.run("condor_submit", "-append", "hold = true", "diamond.dag.condor.sub", cwd=folder)
        assert proc.returncode == 0, proc.stderr
        dags.append(dagman_id(proc))
    rows = batch_rows(cell)
    assert [r[1] for r in rows] == ["waiting", "waiting"]
    assert [r[-1] for r in rows] == [f"{dags[0]}.0", f"{dags[1]}.0"]
    assert len(batch_rows(cell, "-batch:2")) == 1


def test_batch_name_names_the_dag_and_a_node_may_name_its_own(cell, workdir):
    for name in "ABCD":
        node(workdir, name)
    write(workdir, "B.sub", "batch_name = mine\n" + open(os.path.join(workdir, "B.sub")).read())
    write(workdir, "diamond.dag", DIAMOND)
    dag = dagman_id(submit_dag(cell, workdir, "-batch-name", "mydag"))
    assert dag_ended(cell, dag)[0][12] == "0"
    in_history(cell, dag)
    assert history(cell, "DAGNodeName", "JobBatchName") == {
        "undefined mydag", "A mydag", "B mine", "C mydag", "D mydag"}


def test_a_dag_submit_file_submitted_by_hand_gets_its_batch_name_from_its_manager(cell, workdir):
    for name in "ABCD":
        node(workdir, name)
    write(workdir, "diamond.dag", DIAMOND)
    submit_dag(cell, workdir, "-no_submit")
    proc = cell.run("condor_submit", "diamond.dag.condor.sub", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    dag = dagman_id(proc)
    assert dag_ended(cell, dag)[0][12] == "0"
    in_history(cell, dag)
    assert history(cell, "JobBatchName") == {f"diamond.dag+{dag}"}


def test_a_second_manager_of_a_running_dag_leaves_it_to_the_first(cell, workdir):
    first = gated_diamond(cell, workdir)
    lock = open(os.path.join(workdir, "diamond.dag.lock")).read().split()
    assert lock[3] == str(first)
    second = dagman_id(submit_dag(cell, workdir, "-f"))            # -f: its files are overwritten
    assert dag_ended(cell, second)[0][12] == "1"
    refusal = (f"ERROR: another DAG manager (pid {lock[0]}, job {first}) is running diamond.dag "
               "(lock file diamond.dag.lock); this one ends without running it")
    assert open(os.path.join(workdir, "diamond.dag.lib.err")).read() == refusal + "\n"
    assert refusal in open(os.path.join(workdir, "diamond.dag.dagman.out")).read()
    assert cell.task_states(first) == {1: "running"} and order(workdir) == ["A"]
    write(workdir, "go", "")
    assert dag_ended(cell, first)[0][12] == "0"
    ran = order(workdir)
    assert sorted(ran) == ["A", "B", "C", "D"] and ran[3] == "D"     # each node once
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.lock"))


def test_a_lock_left_by_a_manager_that_is_gone_is_taken_over(cell, workdir):
    node(workdir, "A")
    write(workdir, "diamond.dag", "JOB A A.sub\n")
    gone = subprocess.Popen(["true"])
    gone.wait()
    write(workdir, "diamond.dag.lock", f"{gone.pid} 1 {os.uname().nodename} 3\n")
    dag = dagman_id(submit_dag(cell, workdir))
    assert dag_ended(cell, dag)[0][12] == "0"
    assert order(workdir) == ["A"]
    out = open(os.path.join(workdir, "diamond.dag.dagman.out")).read()
    assert f"Lock file diamond.dag.lock names manager pid {gone.pid}, which is gone: taking it over" in out
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.lock"))


def test_a_node_that_names_its_own_batch_is_still_in_its_dags_row(cell, workdir):
    node(workdir, "A")
    node(workdir, "B", body=gate(workdir))
    write(workdir, "B.sub", "batch_name = mine\n" + open(os.path.join(workdir, "B.sub")).read())
    for name in "CD":
        node(workdir, name)
    write(workdir, "diamond.dag", DIAMOND)
    dag = dagman_id(submit_dag(cell, workdir, "-batch-name", "mydag"))
    wait_for(lambda: node_started(workdir, "B"), timeout=30)
    # B runs, and C runs or has ended (done once the manager counted it): one row of 4
    rows = wait_for(lambda: (lambda r: r if len(r) == 1 and r[0][4] in ("1", "2") and r[0][5] in ("1", "2")
                             and r[0][7] == "4" else None)(batch_rows(cell)))
    assert rows[0][1] == "mydag"
    assert [r[1] for r in batch_rows(cell, "-constraint", "true")] == ["mydag"]
    write(workdir, "go", "")
    assert dag_ended(cell, dag)[0][12] == "0"


def dagman_out(folder):
    path = os.path.join(folder, "diamond.dag.dagman.out")
    return open(path).read() if os.path.exists(path) else ""


def manager_status(cell, dag):
    return cell.run("condor_q", str(dag), "-af", "JobStatus").stdout.strip()


def clusters_of(cell, node_name):
    """The clusters, in the queue or gone, of the jobs of DAG node ``node_name``."""
    lines = cell.run("condor_history", "-af", "DAGNodeName", "ClusterId").stdout.splitlines()
    lines += cell.run("condor_q", "-af", "DAGNodeName", "ClusterId").stdout.splitlines()
    return sorted({int(line.split()[1]) for line in lines if line.split()[0] == node_name})


def held_while_a_runs(cell, workdir):
    """Submit the DAG A -> B (A waits for a file ``go``) and hold its manager while A
    runs; the manager's id, once it is held with A still running."""
    node(workdir, "A", body=gate(workdir))
    node(workdir, "B")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, "A"), timeout=30)
    assert cell.run("condor_hold", str(dag)).returncode == 0
    wait_for(lambda: manager_status(cell, dag) == "5", timeout=30)          # held
    assert cell.task_states(dag + 1) == {1: "running"}                       # A runs on
    return dag


def test_holding_the_dag_leaves_its_node_jobs_running_and_release_resumes_it(cell, workdir):
    """As HTCondor's condor_hold of a DAGMan job: nothing new is submitted, the node jobs in
    the queue go on undisturbed, no rescue DAG; condor_release resumes (recovery mode)."""
    dag = held_while_a_runs(cell, workdir)
    wait_for(lambda: "the next start recovers the DAG" in dagman_out(workdir), timeout=30)
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.rescue001"))
    assert "its job was removed" not in dagman_out(workdir)
    assert cell.run("condor_release", str(dag)).returncode == 0
    wait_for(lambda: "Recovery mode: 1 node(s)" in dagman_out(workdir), timeout=30)
    write(workdir, "go", "")
    wait_for(lambda: "EXITING WITH STATUS 0" in dagman_out(workdir), timeout=60)
    assert order(workdir) == ["A", "B"]                                      # A ran once
    assert clusters_of(cell, "A") == [dag + 1]
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.rescue001"))
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.lock"))


def test_a_manager_killed_and_requeued_recovers_its_dag_without_running_a_node_twice(cell, workdir):
    node(workdir, "A", body=gate(workdir))
    node(workdir, "B")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, "A"), timeout=30)
    wait_for(lambda: "Submitting HTCondor Node A" in dagman_out(workdir), timeout=30)
    pid = int(open(os.path.join(workdir, "diamond.dag.lock")).read().split()[0])
    os.kill(pid, 9)                                  # a crash: on_exit_remove requeues the job
    wait_for(lambda: "Recovery mode: 1 node(s)" in dagman_out(workdir), timeout=60)
    assert f"Recovery: node A has job(s) in cluster {dag + 1}" in dagman_out(workdir)
    write(workdir, "go", "")
    wait_for(lambda: "EXITING WITH STATUS 0" in dagman_out(workdir), timeout=60)
    assert order(workdir) == ["A", "B"]
    assert clusters_of(cell, "A") == [dag + 1]


def test_the_final_node_runs_after_abort_dag_on_and_its_success_is_the_dags(cell, workdir):
    node(workdir, "A", body="exit 3")
    node(workdir, "B")
    node(workdir, "Z")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nFINAL Z Z.sub\nPARENT A CHILD B\n"
                                  "ABORT-DAG-ON A 3 RETURN 5\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: "EXITING WITH STATUS" in dagman_out(workdir), timeout=60)
    assert order(workdir) == ["A", "Z"]
    assert "EXITING WITH STATUS 0" in dagman_out(workdir)
    rescue = open(os.path.join(workdir, "diamond.dag.rescue001")).read()
    assert "#   A,<ENDLIST>" in rescue and "DONE Z" not in rescue           # Z runs again with it
    dag_ended(cell, dag)


def test_a_final_node_failing_after_abort_dag_on_exits_1_as_htcondors_dagman(cell, workdir):
    """HTCondor's DAGMan shuts down again when the FINAL node fails (EXIT_ERROR), not
    with the ABORT-DAG-ON value; its rescue DAG, written at the abort, is written over."""
    node(workdir, "A", body="exit 3")
    node(workdir, "B")
    node(workdir, "Z", body="exit 4")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nFINAL Z Z.sub\nPARENT A CHILD B\n"
                                  "ABORT-DAG-ON A 3 RETURN 5\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: "EXITING WITH STATUS" in dagman_out(workdir), timeout=60)
    out = dagman_out(workdir)
    assert "EXITING WITH STATUS 1" in out and out.count("Writing Rescue DAG file") == 2
    assert "#   A,Z,<ENDLIST>" in open(os.path.join(workdir, "diamond.dag.rescue001")).read()
    dag_ended(cell, dag)


def test_a_failed_node_and_a_successful_final_node_make_a_successful_dag(cell, workdir):
    node(workdir, "A", body="exit 3")
    node(workdir, "B")
    node(workdir, "Z")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nFINAL Z Z.sub\nPARENT A CHILD B\n")
    record = dag_ended(cell, dagman_id(submit_dag(cell, workdir)))
    assert record[-1][12] == "0"
    assert order(workdir) == ["A", "Z"]


def test_a_failed_final_node_fails_the_dag(cell, workdir):
    node(workdir, "A")
    node(workdir, "Z", body="exit 4")
    write(workdir, "diamond.dag", "JOB A A.sub\nFINAL Z Z.sub\n")
    record = dag_ended(cell, dagman_id(submit_dag(cell, workdir)))
    assert record[-1][12] == "1"
    assert order(workdir) == ["A", "Z"]


def test_removing_the_dag_still_runs_its_final_node(cell, workdir):
    node(workdir, "A", body=gate(workdir))
    node(workdir, "B")
    node(workdir, "Z")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nFINAL Z Z.sub\nPARENT A CHILD B\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, "A"), timeout=30)
    assert cell.run("condor_rm", str(dag)).returncode == 0
    wait_for(lambda: "EXITING WITH STATUS" in dagman_out(workdir), timeout=40)
    assert order(workdir) == ["A", "Z"]
    out = dagman_out(workdir)
    assert "Node A: its job was removed" in out and "Node Z completed successfully." in out
    # written before A's job was removed and Z ran, and kept: Z succeeded
    assert out.index("Writing Rescue DAG file") < out.index("Node A: its job was removed") \
        < out.index("Running the FINAL node Z")
    assert out.count("Writing Rescue DAG file") == 1
    assert "# Nodes that failed: 0\n#   <ENDLIST>" in open(os.path.join(workdir, "diamond.dag.rescue001")).read()
    dag_ended(cell, dag)


def test_a_final_node_that_fails_after_the_dag_was_removed_writes_the_rescue_dag_over(cell, workdir):
    """As HTCondor's DAGMan (one rescue DAG a run): the rescue DAG written at the removal is
    written over once the FINAL node failed, with the removed node and the FINAL node failed."""
    node(workdir, "A", body=gate(workdir))
    node(workdir, "B")
    node(workdir, "Z", body="exit 4")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nFINAL Z Z.sub\nPARENT A CHILD B\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, "A"), timeout=30)
    assert cell.run("condor_rm", str(dag)).returncode == 0
    wait_for(lambda: "EXITING WITH STATUS" in dagman_out(workdir), timeout=40)
    out = dagman_out(workdir)
    assert out.count("Writing Rescue DAG file") == 2 and "EXITING WITH STATUS 1" in out
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.rescue002"))
    rescue = open(os.path.join(workdir, "diamond.dag.rescue001")).read()
    assert "# Nodes that failed: 2\n#   A,Z,<ENDLIST>" in rescue and "DONE" not in rescue.split("<ENDLIST>")[1]
    dag_ended(cell, dag)


def test_node_submit_files_and_scripts_get_dagmans_macros(cell, workdir):
    """$(RETRY), $(DAG_STATUS), $(FAILED_COUNT), $(DAG_PARENT_NAMES) in submit files; in
    scripts only whole words are macros ($JOBID is the job's cluster.proc, out.$JOB stays;
    in a PRE script it is passed on as written, with DAGMAN_USE_STRICT 0: its warning is
    fatal at the default)."""
    node(workdir, "A", body="exit 3")
    write(workdir, "strict.conf", "DAGMAN_USE_STRICT = 0\n")
    write(workdir, "show.sh", f"#!/bin/sh\necho \"$@\" >> {workdir}/shown\n")
    write(workdir, "Z.sub", "executable = show.sh\narguments = \"Z r=$(RETRY) st=$(DAG_STATUS) "
                            "fc=$(FAILED_COUNT) p=$(DAG_PARENT_NAMES)\"\noutput = z.out\nerror = z.err\nqueue\n")
    write(workdir, "B.sub", "executable = show.sh\narguments = \"B r=$(RETRY) p=$(DAG_PARENT_NAMES)\"\n"
                            "output = b.out\nerror = b.err\nqueue\n")
    write(workdir, "C.sub", "executable = show.sh\narguments = \"C p=$(DAG_PARENT_NAMES)\"\n"
                            "output = c.out\nerror = c.err\nqueue\n")
    write(workdir, "diamond.dag",
          "JOB A A.sub\nJOB C C.sub\nJOB B B.sub\nPARENT C CHILD B\nFINAL Z Z.sub\n"
          "SCRIPT PRE B show.sh pre $NODE $RETRY $JOBID\n"
          "SCRIPT POST B show.sh post $JOB $RETURN $PRE_SCRIPT_RETURN $MAX_RETRIES out.$JOB\n"
          "SCRIPT POST Z show.sh post $JOB $DAG_STATUS $FAILED_COUNT $JOBID $CLUSTERID $RETURN\n"
          "RETRY B 1\nCONFIG strict.conf\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: "EXITING WITH STATUS" in dagman_out(workdir), timeout=60)
    shown = open(os.path.join(workdir, "shown")).read().splitlines()
    z = clusters_of(cell, "Z")[0]
    assert "C p=" in shown
    assert shown.index("pre B 0 $JOBID") < shown.index("B r=0 p=C") < shown.index("post B 0 0 1 out.$JOB")
    assert shown[-2:] == ["Z r=0 st=2 fc=1 p=", f"post Z 2 1 {z}.0 {z} 0"]
    dag_ended(cell, dag)


def test_noop_nodes_run_their_scripts_and_a_deferring_script_runs_again(cell, workdir):
    write(workdir, "log.sh", f"#!/bin/sh\necho \"$@\" >> {workdir}/shown\n")
    write(workdir, "defer.sh", f"#!/bin/sh\necho defer \"$@\" >> {workdir}/shown\n"
                               f"test -e {workdir}/deferred && exit 0\ntouch {workdir}/deferred\nexit 4\n")
    node(workdir, "A")
    write(workdir, "diamond.dag", "JOB N A.sub NOOP\nSCRIPT PRE N log.sh pre $JOB\n"
                                  "SCRIPT POST N log.sh post $JOB $RETURN\n"
                                  "JOB A A.sub\nSCRIPT DEFER 4 1 PRE A defer.sh $JOB\nPARENT N CHILD A\n")
    record = dag_ended(cell, dagman_id(submit_dag(cell, workdir)))
    assert record[-1][12] == "0"
    assert open(os.path.join(workdir, "shown")).read().splitlines() == [
        "pre N", "post N 0", "defer A", "defer A"]
    assert order(workdir) == ["A"]                       # the NOOP node's job never ran
    assert "exited with its DEFER status 4: running it again in 1 seconds" in dagman_out(workdir)


def test_a_pre_script_exiting_with_the_pre_skip_value_makes_the_node_done_without_its_job(cell, workdir):
    write(workdir, "skip.sh", f"#!/bin/sh\necho pre-$1 >> {workdir}/order\nexit 7\n")
    write(workdir, "post.sh", f"#!/bin/sh\necho post-$1 >> {workdir}/order\n")
    node(workdir, "A")
    node(workdir, "B")
    write(workdir, "diamond.dag", "JOB A A.sub\nSCRIPT PRE A skip.sh $JOB\nSCRIPT POST A post.sh $JOB\n"
                                  "PRE_SKIP A 7\nJOB B B.sub\nPARENT A CHILD B\n")
    record = dag_ended(cell, dagman_id(submit_dag(cell, workdir)))
    assert record[-1][12] == "0"
    assert order(workdir) == ["pre-A", "B"]               # neither A's job nor its POST script
    assert "PRE_SKIP return value 7 indicates we are done (successfully) with node A" in dagman_out(workdir)
    assert "PRE Script of Node A failed with status 7" in dagman_out(workdir)


def test_the_dags_scripts_see_the_submitters_pythonpath_as_htcondors_do(cell, workdir):
    """HTCondor's DAGMan job takes PATH, PYTHONPATH, HOME, LANG, PERL*, PEGASUS_* ... of the
    submitter's environment (condor_submit_dag's getenv), and its scripts see them."""
    write(workdir, "env.sh", f"#!/bin/sh\nenv > {workdir}/pre_env\n")
    node(workdir, "A")
    write(workdir, "diamond.dag", "JOB A A.sub\nSCRIPT PRE A env.sh\n")
    proc = cell.run("condor_submit_dag", "diamond.dag", cwd=workdir,
                    env={"PYTHONPATH": "/opt/mylib", "PEGASUS_HOME": "/opt/peg", "MYVAR": "1"})
    assert proc.returncode == 0, proc.stderr
    dag_ended(cell, dagman_id(proc))
    seen = dict(line.split("=", 1) for line in open(os.path.join(workdir, "pre_env")).read().splitlines()
                if "=" in line)
    assert seen["PYTHONPATH"].split(os.pathsep)[-1] == "/opt/mylib"
    assert seen["PEGASUS_HOME"] == "/opt/peg" and "MYVAR" not in seen


def test_a_subdag_external_node_runs_its_dag_in_a_manager_of_its_own(cell, workdir):
    """SUBDAG EXTERNAL S inner.dag: the node's job is a DAG manager for inner.dag (as
    condor_submit_dag -no_submit writes it); the outer DAG goes on when it succeeded."""
    for name in ("A", "X", "Y", "D"):
        node(workdir, name)
    write(workdir, "inner.dag", "JOB X X.sub\nJOB Y Y.sub\nPARENT X CHILD Y\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nSUBDAG EXTERNAL S inner.dag\nJOB D D.sub\n"
                                  "PARENT A CHILD S\nPARENT S CHILD D\n")
    outer = dagman_id(submit_dag(cell, workdir))
    record = dag_ended(cell, outer, timeout=120)
    assert record[-1][12] == "0"
    assert order(workdir) == ["A", "X", "Y", "D"]
    assert os.path.exists(os.path.join(workdir, "inner.dag.condor.sub"))
    outer_metrics = json.load(open(os.path.join(workdir, "diamond.dag.metrics")))
    inner_metrics = json.load(open(os.path.join(workdir, "inner.dag.metrics")))
    assert [outer_metrics[key] for key in ("jobs", "jobs_succeeded", "dag_jobs", "dag_jobs_succeeded")] == [2, 2, 1, 1]
    assert inner_metrics["parent_dagman_id"] == str(outer) and inner_metrics["jobs_succeeded"] == 2
    assert "EXITING WITH STATUS 0" in open(os.path.join(workdir, "inner.dag.dagman.out")).read()


def test_a_failing_subdag_fails_its_node(cell, workdir):
    node(workdir, "X", body="exit 4")
    node(workdir, "D")
    write(workdir, "inner.dag", "JOB X X.sub\n")
    write(workdir, "diamond.dag", "SUBDAG EXTERNAL S inner.dag\nJOB D D.sub\nPARENT S CHILD D\n")
    record = dag_ended(cell, dagman_id(submit_dag(cell, workdir)), timeout=120)
    assert record[-1][12] != "0"
    assert order(workdir) == ["X"]                    # D never ran
    assert os.path.exists(os.path.join(workdir, "diamond.dag.rescue001"))


def test_included_files_are_read_in_place_and_a_missing_one_is_refused(cell, workdir):
    for name in "ABC":
        node(workdir, name)
    os.makedirs(os.path.join(workdir, "parts"))
    write(workdir, "parts/nodes.inc", "JOB B B.sub\nINCLUDE parts/edges.inc\n")
    write(workdir, "parts/edges.inc", "PARENT A CHILD B\nPARENT B CHILD C\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nINCLUDE parts/nodes.inc\nJOB C C.sub\n")
    proc = submit_dag(cell, workdir)
    assert dag_ended(cell, dagman_id(proc))[0][12] == "0"
    assert order(workdir) == ["A", "B", "C"]
    write(workdir, "other.dag", "JOB A A.sub\nINCLUDE parts/gone.inc\n")
    refused = cell.run("condor_submit_dag", "other.dag", cwd=workdir)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr == ("ERROR: other.dag (line 2): Could not open INCLUDE file parts/gone.inc: "
                              "No such file or directory\n")
    assert not os.path.exists(os.path.join(workdir, "other.dag.condor.sub"))
    write(workdir, "parts/loop.inc", "INCLUDE loop.dag\n")
    write(workdir, "loop.dag", "JOB A A.sub\nINCLUDE parts/loop.inc\n")
    looped = cell.run("condor_submit_dag", "loop.dag", cwd=workdir)
    assert looped.returncode == 1 and looped.stderr.count("\n") == 1
    assert "makes a cycle of includes (loop.dag -> parts/loop.inc -> loop.dag)" in looped.stderr


def test_prepended_vars_come_before_the_submit_file_and_appended_ones_after(cell, workdir):
    """As HTCondor documents VARS PREPEND|APPEND: a prepended macro is set before the
    submit file is read, which may set it again; an appended one is set after the file is
    read, over the file's own value; one with neither is prepended, unless
    DAGMAN_DEFAULT_APPEND_VARS is true (HTCondor 24's default is false)."""
    write(workdir, "show.sh", f"#!/bin/sh\necho \"$@\" >> {workdir}/shown\n")
    write(workdir, "vars.sub", "executable = show.sh\nvar1 = file\nvar2 = file\n"
                               "arguments = \"$(JOB) $(var1) $(var2) $(var3)\"\n"
                               "output = $(JOB).out\nerror = $(JOB).err\nqueue\n")
    write(workdir, "diamond.dag", "JOB A vars.sub\nJOB B vars.sub\n"
                                  "VARS A PREPEND var1=\"dag\"\nVARS A APPEND var2=\"dag\"\n"
                                  "VARS B var1=\"dag\" var3=\"x\"\nVARS B PREPEND var2=\"dag\"\n")
    proc = submit_dag(cell, workdir)
    assert dag_ended(cell, dagman_id(proc))[0][12] == "0"
    shown = sorted(open(os.path.join(workdir, "shown")).read().splitlines())
    assert shown == ["A file dag", "B file file x"]
    assert "DAGMAN_DEFAULT_APPEND_VARS setting: False" in dagman_out(workdir)
    os.remove(os.path.join(workdir, "shown"))
    write(workdir, "append.config", "DAGMAN_DEFAULT_APPEND_VARS = True\n")
    proc = submit_dag(cell, workdir, "-f", "-config", "append.config")
    assert dag_ended(cell, dagman_id(proc))[0][12] == "0"
    shown = sorted(open(os.path.join(workdir, "shown")).read().splitlines())
    assert shown == ["A file dag", "B dag file x"]


def test_removing_a_held_dag_removes_its_node_jobs_as_other_job_remove_requirements_says(cell, workdir):
    """A held manager does not run, so it cannot remove its nodes itself: the queue removes
    the jobs its OtherJobRemoveRequirements (DAGManJobId =?= its cluster) matches, as
    HTCondor's schedd does, with HTCondor's reason."""
    dag = held_while_a_runs(cell, workdir)
    other = cell.run("condor_submit", "A.sub", cwd=workdir)              # no node of the DAG
    assert other.returncode == 0, other.stderr
    lone = int(re.search(r"submitted to cluster (\d+)\.", other.stdout).group(1))
    assert cell.run("condor_rm", str(dag)).returncode == 0
    wait_for(lambda: cell.task_states(dag + 1) == {1: "finished"}, timeout=30)
    dag_ended(cell, dag)
    in_history(cell, dag + 1)
    reason = cell.run("condor_history", str(dag + 1), "-af", "RemoveReason").stdout.strip()
    assert reason == (f"removed because <OtherJobRemoveRequirements = DAGManJobId =?= {dag}> "
                      f"fired when job ({dag}.0) was removed")
    assert cell.task_states(lone) == {1: "running"}                      # left alone
    assert cell.run("condor_rm", str(lone)).returncode == 0


def test_removing_a_running_dag_with_condor_rm_removes_its_node_jobs(cell, workdir):
    node(workdir, "A", body=gate(workdir))
    node(workdir, "B")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, "A"), timeout=30)
    assert cell.run("condor_rm", str(dag)).returncode == 0
    wait_for(lambda: cell.task_states(dag + 1) == {1: "finished"}, timeout=30)
    dag_ended(cell, dag)
    assert "Node A: its job was removed" in dagman_out(workdir)
    assert os.path.exists(os.path.join(workdir, "diamond.dag.rescue001"))
    assert clusters_of(cell, "B") == []


def test_recovery_does_not_run_a_post_script_again_that_had_finished(cell, workdir):
    """The manager notes each finished POST script in the nodes log (event 016, as
    HTCondor's DAGMan does); a manager that recovers the DAG takes such a node as ended
    by its POST script and does not run the script again."""
    node(workdir, "A")
    node(workdir, "B", body=gate(workdir))
    node(workdir, "C", body=gate(workdir))
    write(workdir, "post.sh", f"#!/bin/sh\necho post-$1-$2 >> {workdir}/order\nexit $3\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nJOB C C.sub\nJOB D A.sub\n"
                                  "SCRIPT POST A post.sh $JOB $RETURN 0\n"
                                  "SCRIPT POST B post.sh $JOB $RETURN 1\nRETRY B 1\n"
                                  "PARENT A CHILD B\nPARENT B CHILD C\nPARENT C CHILD D\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, "B"), timeout=30)
    wait_for(lambda: "Submitting HTCondor Node B" in dagman_out(workdir), timeout=30)
    nodes_log = open(os.path.join(workdir, "diamond.dag.nodes.log")).read()
    assert re.search(r"^016 \(%03d\.000\.000\) .* POST Script terminated\.\n"
                     r"\t\(1\) Normal termination \(return value 0\)\n    DAG Node: A\n\.\.\.$" % (dag + 1),
                     nodes_log, re.M)
    pid = int(open(os.path.join(workdir, "diamond.dag.lock")).read().split()[0])
    os.kill(pid, 9)                                  # a crash: on_exit_remove requeues the job
    wait_for(lambda: "Recovery mode: 1 node(s)" in dagman_out(workdir), timeout=60)
    assert "Recovery: node A's POST script already ran (status 0)" in dagman_out(workdir)
    write(workdir, "go", "")
    wait_for(lambda: "EXITING WITH STATUS" in dagman_out(workdir).partition("Recovery mode")[2],
             timeout=60)
    # B's POST fails it once, its retry runs it again; A's POST ran once
    assert order(workdir) == ["A", "post-A-0", "B", "post-B-0", "B", "post-B-0"]
    assert "EXITING WITH STATUS 1" in dagman_out(workdir).partition("Recovery mode")[2]
    dag_ended(cell, dag)


def hold_and_release_while_a_script_runs(cell, workdir, when):
    """Submit A -> B with a ``when`` (PRE or POST) script on A that notes each run in
    ``order`` and then waits for the file ``go``; hold the manager while the script runs,
    release it, let the scripts go on; the manager's id once the DAG ended."""
    node(workdir, "A")
    node(workdir, "B")
    write(workdir, "script.sh", f"#!/bin/sh\necho {when.lower()}-$1 >> {workdir}/order\n"
                                f"{gate(workdir)}\nexit 0\n")
    write(workdir, "diamond.dag", f"JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\n"
                                  f"SCRIPT {when} A script.sh $JOB\nJOBSTATE_LOG js.log\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, f"{when.lower()}-A"), timeout=30)
    assert cell.run("condor_hold", str(dag)).returncode == 0
    wait_for(lambda: "the next start recovers the DAG" in dagman_out(workdir), timeout=30)
    # a recovering manager leaves out a line its predecessor wrote in the same second (as
    # DAGMan does): the run again starts in a later second, so that its line is written
    last = max(int(line.split()[0]) for line in open(os.path.join(workdir, "js.log")))
    wait_for(lambda: time.time() >= last + 1, timeout=5)
    assert cell.run("condor_release", str(dag)).returncode == 0
    wait_for(lambda: order(workdir).count(f"{when.lower()}-A") == 2, timeout=30)  # run again
    write(workdir, "go", "")
    dag_ended(cell, dag)
    return dag


@pytest.mark.parametrize("when, runs", [("POST", ["A", "post-A", "post-A", "B"]),
                                        ("PRE", ["pre-A", "pre-A", "A", "B"])])
def test_a_script_cut_short_by_holding_the_dag_is_recorded_nowhere_and_runs_again(
        cell, workdir, when, runs):
    """As HTCondor's DAGMan, whose script reaper never runs when the manager is held: a
    PRE or POST script that the hold's signal ended is not the node's failure; no end
    of it in the nodes log (event 016) nor the job state log, and the recovering manager
    runs it again: the DAG succeeds."""
    hold_and_release_while_a_script_runs(cell, workdir, when)
    out = dagman_out(workdir)
    assert "EXITING WITH STATUS 0" in out, out
    assert order(workdir) == runs
    assert f"{when} Script of node A was cut short: the DAG manager is stopping" in out
    assert "failed with status -15" not in out and "Node A failed" not in out
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.rescue001"))
    nodes_log = open(os.path.join(workdir, "diamond.dag.nodes.log")).read()
    assert nodes_log.count("POST Script terminated.") == (when == "POST")
    assert "Abnormal termination" not in nodes_log
    events = [line.split()[1:3] for line in open(os.path.join(workdir, "js.log"))
              if line.split()[1] == "A"]
    ends = [e for n, e in events if e.startswith(when) and not e.endswith("_STARTED")]
    assert ends == ([f"{when}_SCRIPT_TERMINATED"] if when == "POST" else []) + [f"{when}_SCRIPT_SUCCESS"]
    assert [e for n, e in events if e.endswith("_STARTED")] == [f"{when}_SCRIPT_STARTED"] * 2


def test_a_post_script_cut_short_by_removing_the_dag_is_not_recorded(cell, workdir):
    """condor_rm of the manager while a POST script runs: the script ends with the
    manager, its end is written nowhere, the node is not done and the rescue DAG runs
    it again."""
    node(workdir, "A")
    node(workdir, "B")
    write(workdir, "post.sh", f"#!/bin/sh\necho post-$1 >> {workdir}/order\n{gate(workdir)}\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\n"
                                  "SCRIPT POST A post.sh $JOB\nJOBSTATE_LOG js.log\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, "post-A"), timeout=30)
    assert cell.run("condor_rm", str(dag)).returncode == 0
    dag_ended(cell, dag)
    out = dagman_out(workdir)
    assert "POST Script of node A was cut short: the DAG manager is being removed" in out
    assert "POST Script terminated." not in open(os.path.join(workdir, "diamond.dag.nodes.log")).read()
    assert "POST_SCRIPT_FAILURE" not in open(os.path.join(workdir, "js.log")).read()
    rescue = open(os.path.join(workdir, "diamond.dag.rescue001")).read()
    assert "DONE A" not in rescue
    assert order(workdir) == ["A", "post-A"]


def test_set_job_attr_is_in_the_managers_ad_and_env_reaches_scripts_and_node_jobs(cell, workdir):
    """SET_JOB_ATTR sets attributes of the manager job's ad only; ENV GET takes variables
    of the submitter's environment into the manager's, ENV SET sets others: its scripts
    see them, and node submit files read them (getenv, $ENV()), as HTCondor documents."""
    write(workdir, "show.sh", f"#!/bin/sh\necho \"$@\" \"$MYVAR\" \"$FOO\" \"$BAZ\" \"$NOTASKED\" "
                              f">> {workdir}/shown\n{gate(workdir)}\n")
    write(workdir, "pre.sh", f"#!/bin/sh\necho \"$@\" \"$MYVAR\" \"$FOO\" \"$BAZ\" \"$NOTASKED\" "
                             f">> {workdir}/shown\n")
    write(workdir, "A.sub", "executable = show.sh\narguments = \"job $ENV(FOO)\"\ngetenv = MYVAR,BAZ\n"
                            "output = a.out\nerror = a.err\nqueue\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nSCRIPT PRE A pre.sh pre\n"
                                  "SET_JOB_ATTR TestNumber = 17\nSET_JOB_ATTR Label = \"two words\"\n"
                                  "ENV GET MYVAR\nENV SET FOO=bar;BAZ=q r\n")
    proc = cell.run("condor_submit_dag", "diamond.dag", cwd=workdir,
                    env={"MYVAR": "hello", "NOTASKED": "no"})
    assert proc.returncode == 0, proc.stderr
    dag = dagman_id(proc)
    wait_for(lambda: os.path.exists(os.path.join(workdir, "shown")) and
             len(open(os.path.join(workdir, "shown")).read().splitlines()) == 2, timeout=30)
    ad = cell.run("condor_q", "-l", str(dag)).stdout.splitlines()
    assert "TestNumber = 17" in ad and 'Label = "two words"' in ad
    node_ad = cell.run("condor_q", "-l", str(dag + 1)).stdout
    assert "TestNumber" not in node_ad
    write(workdir, "go", "")
    dag_ended(cell, dag)
    assert open(os.path.join(workdir, "shown")).read().splitlines() == \
        ["pre hello bar q r ", "job bar hello  q r "]


def test_script_debug_appends_the_chosen_output_of_the_script_to_its_file(cell, workdir):
    """SCRIPT DEBUG file STDOUT|STDERR|ALL: each run of the script appends a line naming
    the node, the script and its status, then what it wrote on the chosen streams."""
    write(workdir, "talk.sh", "#!/bin/sh\necho out-$1\necho err-$1 >&2\nexit $2\n")
    node(workdir, "A")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B A.sub\nPARENT A CHILD B\n"
                                  "SCRIPT DEBUG both.txt ALL PRE A talk.sh preA 0\n"
                                  "SCRIPT DEBUG out.txt STDOUT POST A talk.sh postA 0\n"
                                  "SCRIPT DEBUG err.txt STDERR PRE B talk.sh preB 0\n"
                                  "SCRIPT DEBUG both.txt ALL POST B talk.sh postB 3\n")
    proc = submit_dag(cell, workdir)
    assert dag_ended(cell, dagman_id(proc))[0][12] == "1"           # B's POST failed it

    def read(name):
        return open(os.path.join(workdir, name)).read()
    head = r"\*\*\* Node=%s Type=%s Status=%d Completion=\d+ Cmd='\S*talk.sh %s %d'\n"
    assert re.fullmatch(head % ("A", "PRE", 0, "preA", 0) + "out-preA\nerr-preA\n" +
                        head % ("B", "POST", 3, "postB", 3) + "out-postB\nerr-postB\n", read("both.txt"))
    assert re.fullmatch(head % ("A", "POST", 0, "postA", 0) + "out-postA\n", read("out.txt"))
    assert re.fullmatch(head % ("B", "PRE", 0, "preB", 0) + "err-preB\n", read("err.txt"))
    lib_out = read("diamond.dag.lib.out")
    assert "out-preB" in lib_out and "out-preA" not in lib_out       # the rest goes where it went


def test_save_point_files_are_written_when_their_node_starts_and_load_save_resumes_there(cell, workdir):
    """SAVE_POINT_FILE: the first start of the node writes the DAG's progress in a partial
    rescue DAG's form (a bare name in save_files/ beside the DAG, a name with a folder
    relative to the DAG's folder; a file of that name becomes .old); condor_submit_dag
    -load_save runs the DAG from that progress."""
    node(workdir, "A")
    node(workdir, "B")
    node(workdir, "C", body=f"test -e {workdir}/fail && exit 1\nexit 0")
    write(workdir, "fail", "")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nJOB C C.sub\nPARENT A CHILD B\n"
                                  "PARENT B CHILD C\nSAVE_POINT_FILE B\nSAVE_POINT_FILE A ./prog.save\n"
                                  "SAVE_POINT_FILE C ./prog.save\nRETRY C 1\n")
    dag = dagman_id(submit_dag(cell, workdir))
    assert dag_ended(cell, dag)[0][12] == "1"
    assert order(workdir) == ["A", "B", "C", "C"]

    def done_in(path):
        return [line.split()[1] for line in open(os.path.join(workdir, path)) if line.startswith("DONE ")]
    assert done_in("save_files/B-diamond.dag.save") == ["A"]
    assert done_in("prog.save") == ["A", "B"] and done_in("prog.save.old") == []   # C's retry wrote none
    assert "# Rescue DAG version: 2.0.1 (partial)" in open(os.path.join(workdir, "prog.save")).read()
    os.unlink(os.path.join(workdir, "fail"))
    os.unlink(os.path.join(workdir, "order"))
    proc = submit_dag(cell, workdir, "-load_save", "B-diamond.dag.save")
    assert dag_ended(cell, dagman_id(proc))[0][12] == "0"
    assert order(workdir) == ["B", "C"]                       # A was done in the save file
    assert "Loading the save point file" in dagman_out(workdir)
    missing = cell.run("condor_submit_dag", "-load_save", "./nope.save", "diamond.dag", cwd=workdir)
    assert missing.returncode == 1
    assert missing.stderr == f"ERROR: save point file {workdir}/nope.save (-load_save ./nope.save) does not exist\n"


PROGRESS = ("DAG_NodesTotal", "DAG_NodesDone", "DAG_NodesPrerun", "DAG_NodesQueued", "DAG_NodesPostrun",
            "DAG_NodesReady", "DAG_NodesUnready", "DAG_NodesFailed", "DAG_NodesFutile", "DAG_Status",
            "DAG_InRecovery", "DAG_JobsSubmitted", "DAG_JobsCompleted", "DAG_JobsIdle", "DAG_JobsHeld",
            "DAG_JobsRunning")


def progress(cell, dag, command="condor_q"):
    """The manager's progress attributes (PROGRESS), as condor_q -af shows them."""
    return cell.run(command, str(dag), "-af", *PROGRESS).stdout.strip()


def waits_for(folder, name):
    """A script that waits for the file ``name`` to exist."""
    return write(folder, f"wait-{name}.sh", f"#!/bin/sh\nwhile [ ! -e {folder}/{name} ]; do sleep 0.05; done\n")


def test_the_managers_ad_shows_the_dags_progress_as_htcondors_dagman_publishes_it(cell, workdir):
    """DAG_Nodes* (every node in one of done, prerun, queued, postrun, ready, unready, failed,
    futile), DAG_Jobs*, DAG_Status and DAG_InRecovery follow the run in condor_q -l."""
    node(workdir, "A", body=gate(workdir) + "\nexit 1")
    node(workdir, "B")
    node(workdir, "C", body=f"while [ ! -e {workdir}/c-go ]; do sleep 0.05; done")
    waits_for(workdir, "pre-go")
    waits_for(workdir, "post-go")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nJOB C C.sub\nPARENT A CHILD B\n"
                                  "SCRIPT PRE A wait-pre-go.sh\nSCRIPT POST C wait-post-go.sh\n")
    dag = dagman_id(submit_dag(cell, workdir))
    # A's PRE script runs, C's job runs beside it (scripts run apart), B waits for A
    wait_for(lambda: progress(cell, dag) == "3 0 1 1 0 0 1 0 0 0 0 1 0 0 0 1", timeout=30)
    long = cell.run("condor_q", "-l", str(dag)).stdout
    assert "DAG_NodesPrerun = 1" in long
    assert abs(int(re.search(r"^DAG_AdUpdateTime = (\d+)$", long, re.M).group(1)) - time.time()) < 60
    write(workdir, "pre-go", "")
    wait_for(lambda: progress(cell, dag) == "3 0 0 2 0 0 1 0 0 0 0 2 0 0 0 2", timeout=30)
    write(workdir, "c-go", "")          # C's job ends: its POST script runs, A's job runs on
    wait_for(lambda: progress(cell, dag) == "3 0 0 1 1 0 1 0 0 0 0 2 1 0 0 1", timeout=30)
    write(workdir, "post-go", "")
    wait_for(lambda: progress(cell, dag) == "3 1 0 1 0 0 1 0 0 0 0 2 1 0 0 1", timeout=30)
    a = clusters_of(cell, "A")[0]
    assert cell.run("condor_hold", str(a)).returncode == 0
    wait_for(lambda: progress(cell, dag) == "3 1 0 1 0 0 1 0 0 0 0 2 1 0 1 0", timeout=30)
    write(workdir, "go", "")
    assert cell.run("condor_release", str(a)).returncode == 0
    assert dag_ended(cell, dag)[0][12] == "1"
    in_history(cell, dag)
    # A failed, so B can never run (futile); the DAG's status: a node failed
    assert progress(cell, dag, "condor_history") == "3 1 0 0 0 0 0 1 1 2 0 2 2 0 0 0"


def test_post_scripts_get_the_exit_codes_of_the_nodes_jobs_and_all_scripts_the_futile_count(cell, workdir):
    """$EXIT_CODES, $EXIT_CODE_COUNTS, $EXIT_CODE_LIST, $JOB_ABORT_COUNT of a cluster whose
    procs exit with 0, 3, 3 and one is removed; $JOBID names its last proc; $FUTILE_COUNT (the
    job's macros in the FINAL node's PRE script with DAGMAN_USE_STRICT 0: its warning is fatal
    at the default)."""
    write(workdir, "strict.conf", "DAGMAN_USE_STRICT = 0\n")
    write(workdir, "show.sh", f"#!/bin/sh\necho \"$@\" >> {workdir}/shown\n")
    write(workdir, "fail.sh", f"#!/bin/sh\necho \"$@\" >> {workdir}/shown\nexit 1\n")
    write(workdir, "many.sh", "#!/bin/sh\ncase $SGE_TASK_ID in\n1) exit 0;;\n2|3) exit 3;;\n"
                              f"*) touch {workdir}/last; while :; do sleep 0.05; done;;\nesac\n")
    write(workdir, "A.sub", "executable = many.sh\noutput = a.$(Process).out\nerror = a.err\nqueue 4\n")
    node(workdir, "B")
    node(workdir, "Z")
    write(workdir, "diamond.dag",
          "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\nFINAL Z Z.sub\n"
          "SCRIPT POST A fail.sh A $EXIT_CODES $EXIT_CODE_COUNTS $Exit_Code_List $JOB_ABORT_COUNT "
          "$JOBID $JOB_COUNT $FUTILE_COUNT\n"
          "SCRIPT PRE Z show.sh pre $FUTILE_COUNT $EXIT_CODES $JOB_ABORT_COUNT\n"
          "SCRIPT POST Z show.sh post $FUTILE_COUNT $EXIT_CODES $EXIT_CODE_LIST $JOB_ABORT_COUNT\n"
          "CONFIG strict.conf\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: os.path.exists(os.path.join(workdir, "last")), timeout=30)
    wait_for(lambda: cell.task_states(dag + 1).get(4) == "running", timeout=30)
    wait_for(lambda: all(cell.task_states(dag + 1).get(n) in (None, "finished") for n in (1, 2, 3)),
             timeout=30)
    assert cell.run("condor_rm", f"{dag + 1}.3").returncode == 0
    assert dag_ended(cell, dag)[0][12] == "0"             # the FINAL node's success
    z = clusters_of(cell, "Z")[0]
    assert open(os.path.join(workdir, "shown")).read().splitlines() == [
        f"A 0,3 0:1,3:2 0,3,3, 1 {dag + 1}.3 4 0",
        "pre 1 $EXIT_CODES $JOB_ABORT_COUNT",
        "post 1 0 0 0"]
    assert z > dag + 1 and not node_started(workdir, "B")       # A failed: B is futile


def test_a_halt_file_pauses_the_dag_and_a_halted_dag_ends_with_a_rescue_dag(cell, workdir):
    """As HTCondor's DAGMan: while DAGFILE.halt exists no node starts (running jobs and POST
    scripts go on); removing it resumes; halted with nothing left running, the DAG writes a
    rescue DAG and ends; condor_submit_dag removes an old halt file."""
    node(workdir, "A", body=gate(workdir))
    node(workdir, "B")
    node(workdir, "C")
    write(workdir, "post.sh", f"#!/bin/sh\necho post-$1 >> {workdir}/order\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nJOB C C.sub\nPARENT A CHILD B\n"
                                  "PARENT B CHILD C\nSCRIPT POST A post.sh A\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, "A"), timeout=30)
    halt = os.path.join(workdir, "diamond.dag.halt")
    status = lambda: cell.run("condor_q", str(dag), "-af", "DAG_Status").stdout.strip()  # noqa: E731
    write(workdir, "diamond.dag.halt", "")
    wait_for(lambda: "DAG halted" in dagman_out(workdir) and status() == "6", timeout=30)
    os.unlink(halt)
    wait_for(lambda: "DAG resumed" in dagman_out(workdir) and status() == "0", timeout=30)
    write(workdir, "diamond.dag.halt", "")
    wait_for(lambda: dagman_out(workdir).count("DAG halted") == 2, timeout=30)
    write(workdir, "go", "")
    assert dag_ended(cell, dag)[0][12] == "1"
    assert order(workdir) == ["A", "post-A"]             # A's POST script ran, B did not start
    assert "Exiting because DAG is halted" in dagman_out(workdir)
    in_history(cell, dag)
    assert cell.run("condor_history", str(dag), "-af", "DAG_Status").stdout == "6\n"
    rescue = open(os.path.join(workdir, "diamond.dag.rescue001")).read()
    assert rescue.splitlines()[-1] == "DONE A" and "DONE B" not in rescue
    again = dagman_id(submit_dag(cell, workdir))       # from the rescue DAG, unhalted
    assert not os.path.exists(halt)
    assert dag_ended(cell, again)[0][12] == "0"
    assert order(workdir) == ["A", "post-A", "B", "C"]


def test_config_outfile_dir_append_insert_sub_file_and_import_env(cell, workdir):
    """-config FILE's DAGMAN_MAX_JOBS_SUBMITTED limits the node jobs, -outfile_dir places
    the .dagman.out, -insert_sub_file and -append add commands to the manager's submit file,
    -import_env gives it (and its scripts) the whole environment."""
    node(workdir, "A", body=gate(workdir))
    node(workdir, "B", body=gate(workdir))
    write(workdir, "pre.sh", f"#!/bin/sh\necho \"$DAG_ONLY_VAR $PICKED $SET_A $SET_B\" >> {workdir}/seen\n")
    write(workdir, "dag.config", "DAGMAN_MAX_JOBS_SUBMITTED = 1\nDAGMAN_MAX_PRE_SCRIPTS = 4\n"
                                 "DAGMAN_SUPPRESS_JOB_LOGS = true\nOTHER = x\n")
    write(workdir, "extra.sub", "+Inserted = \"yes\"\n")
    os.mkdir(os.path.join(workdir, "logs"))
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nSCRIPT PRE A pre.sh\n")
    picked = cell.run("condor_submit_dag", "-no_submit", "-include_env", "PICKED,NOT_SET",
                      "-insert_env", "|SET_A=1|SET_B=x;y", "diamond.dag", cwd=workdir,
                      env={"DAG_ONLY_VAR": "imported", "PICKED": "p", "NOT_PICKED": "n"})
    assert picked.returncode == 0, picked.stderr
    env = [line for line in open(os.path.join(workdir, "diamond.dag.condor.sub")) if line.startswith("env")]
    assert "PICKED=p" in env[0] and "SET_A=1" in env[0] and "SET_B=x;y" in env[0]
    assert "DAG_ONLY_VAR" not in env[0] and "NOT_PICKED" not in env[0]
    proc = cell.run("condor_submit_dag", "-config", "dag.config", "-outfile_dir", "logs",
                    "-insert_sub_file", "extra.sub", "-append", "+Appended = 7", "-import_env",
                    "-include_env", "PICKED", "-insert_env", "SET_A=1;SET_B=2", "-f",
                    "diamond.dag", cwd=workdir, env={"DAG_ONLY_VAR": "imported", "PICKED": "p"})
    assert proc.returncode == 0, proc.stderr
    assert "Log of DAGMan debugging messages                   : logs/diamond.dag.dagman.out" \
        in proc.stdout
    dag = dagman_id(proc)
    assert cell.run("condor_q", str(dag), "-af", "Inserted", "Appended").stdout == "yes 7\n"
    # one node job at a time: B is ready, waiting for A's
    wait_for(lambda: cell.run("condor_q", str(dag), "-af", "DAG_NodesQueued", "DAG_NodesReady")
             .stdout == "1 1\n", timeout=30)
    write(workdir, "go", "")
    assert dag_ended(cell, dag)[0][12] == "0"
    out = open(os.path.join(workdir, "logs", "diamond.dag.dagman.out")).read()
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.dagman.out"))
    assert f"Using DAGMan config file {workdir}/dag.config" in out
    assert "DAGMAN_MAX_PRE_SCRIPTS setting: 4" in out and "DAGMAN_MAX_POST_SCRIPTS setting: 20" in out
    assert "Note: config setting DAGMAN_SUPPRESS_JOB_LOGS: not supported, ignored" in out
    assert open(os.path.join(workdir, "seen")).read() == "imported p 1 2\n"


@pytest.mark.parametrize("args, dag, message", [
    (("-config", "none.config"), "JOB A A.sub\n",
     "ERROR: DAGMan config file {w}/none.config: cannot read configuration file {w}/none.config: "
     "No such file or directory"),
    (("-config", "a.config"), "JOB A A.sub\nCONFIG b.config\n",
     "ERROR: Conflicting DAGMan config files specified: {w}/a.config and {w}/b.config"),
    ((), "JOB A A.sub\nCONFIG bad.config\n",
     "ERROR: {w}/bad.config: DAGMAN_MAX_JOBS_SUBMITTED must be a non-negative integer, not 'many'"),
    ((), "JOB A A.sub\nCONFIG prio.config\n",
     "ERROR: {w}/prio.config: DAGMAN_DEFAULT_PRIORITY must be an integer, not '-+5'"),
    (("-outfile_dir", "nowhere"), "JOB A A.sub\n", "ERROR: -outfile_dir nowhere is not a directory"),
    (("-insert_sub_file", "none.sub"), "JOB A A.sub\n", "ERROR: -insert_sub_file none.sub cannot be read"),
    (("-insert_env", "A=1;B"), "JOB A A.sub\n", "ERROR: -insert_env B is not key=value"),
])
def test_bad_dagman_options_are_refused_before_anything_is_written(cell, workdir, args, dag, message):
    node(workdir, "A")
    for name in ("a.config", "b.config"):
        write(workdir, name, "DAGMAN_MAX_JOBS_SUBMITTED = 2\n")
    write(workdir, "bad.config", "DAGMAN_MAX_JOBS_SUBMITTED = many\n")
    write(workdir, "prio.config", "DAGMAN_DEFAULT_PRIORITY = -+5\n")
    write(workdir, "diamond.dag", dag)
    proc = submit_dag(cell, workdir, *args, code=1)
    assert proc.stderr.splitlines() == [message.format(w=workdir)]
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.condor.sub"))


def test_several_dag_files_run_as_one_dag_named_after_the_first(cell, workdir):
    """condor_submit_dag -usedagdir one.dag sub/two.dag: one manager, two.dag's statements
    may name one.dag's nodes, its nodes run in its folder, the rescue DAG is
    one.dag_multi.rescueNNN and the same command resumes from it; a node name used twice is
    refused."""
    sub = os.path.join(workdir, "sub")
    os.mkdir(sub)
    node(workdir, "A")
    node(workdir, "B")
    write(sub, "C.sh", f"#!/bin/sh\necho C >> {workdir}/order\ntest -e {workdir}/flag && exit 0\n"
                       f"touch {workdir}/flag\nexit 1\n")
    write(sub, "C.sub", "executable = C.sh\noutput = C.out\nerror = C.err\nqueue\n")
    write(workdir, "one.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\n")
    write(sub, "two.dag", "JOB C C.sub\nPARENT A CHILD C\n")
    proc = cell.run("condor_submit_dag", "-usedagdir", "one.dag", "sub/two.dag", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("submitted to cluster") == 1
    assert "File for submitting this DAG to HTCondor           : one.dag.condor.sub" in proc.stdout
    assert dag_ended(cell, dagman_id(proc))[0][12] == "1"
    assert order(workdir)[0] == "A" and sorted(order(workdir)[1:]) == ["B", "C"]
    assert os.path.exists(os.path.join(sub, "C.out"))                   # C ran in its folder
    rescue = open(os.path.join(workdir, "one.dag_multi.rescue001")).read()
    assert "#   C,<ENDLIST>" in rescue and {"DONE A", "DONE B"} <= set(rescue.splitlines())
    assert not os.path.exists(os.path.join(workdir, "one.dag.rescue001"))
    again = cell.run("condor_submit_dag", "-usedagdir", "one.dag", "sub/two.dag", cwd=workdir)
    assert again.stdout.startswith("Running rescue DAG 1\n"), again.stderr
    assert dag_ended(cell, dagman_id(again))[0][12] == "0"
    assert order(workdir)[3:] == ["C"]                                   # only C ran again
    write(sub, "three.dag", "JOB B C.sub\n")
    twice = cell.run("condor_submit_dag", "-f", "-usedagdir", "one.dag", "sub/three.dag", cwd=workdir)
    assert twice.returncode == 1
    assert twice.stderr.splitlines() == ["ERROR: sub/three.dag (line 1): node name 'B' already exists in DAG"]


def test_a_dags_relative_paths_start_where_condor_submit_dag_ran_unless_usedagdir(cell, workdir):
    """As HTCondor's DAGMan: a DAG file's node submit files, scripts and the node jobs'
    folder are relative to the folder condor_submit_dag ran in; with -usedagdir to the
    DAG file's own folder. The files named after the DAG file stay beside it."""
    sub = os.path.join(workdir, "sub")
    os.mkdir(sub)
    write(workdir, "A.sh", f"#!/bin/sh\necho top-$(pwd) >> {workdir}/order\n")
    write(sub, "A.sh", f"#!/bin/sh\necho sub-$(pwd) >> {workdir}/order\n")
    for folder in (workdir, sub):
        write(folder, "A.sub", "executable = A.sh\noutput = A.out\nqueue\n")
    write(sub, "x.dag", "JOB A A.sub\n")
    proc = cell.run("condor_submit_dag", "sub/x.dag", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert dag_ended(cell, dagman_id(proc))[0][12] == "0"
    assert order(workdir) == [f"top-{workdir}"] and os.path.exists(os.path.join(workdir, "A.out"))
    assert os.path.exists(os.path.join(sub, "x.dag.dagman.out"))
    proc = cell.run("condor_submit_dag", "-f", "-usedagdir", "sub/x.dag", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert dag_ended(cell, dagman_id(proc))[0][12] == "0"
    assert order(workdir) == [f"top-{workdir}", f"sub-{sub}"] and os.path.exists(os.path.join(sub, "A.out"))


@pytest.fixture
def one_slot_cell():
    c = make_cell(slots=1)
    try:
        yield c
    finally:
        destroy_cell(c)


def test_the_dag_manager_holds_no_slot_so_its_nodes_run_on_a_one_slot_cell(one_slot_cell, workdir):
    cell = one_slot_cell
    node(workdir, "A", body=gate(workdir))
    node(workdir, "B")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, "A"), timeout=30)
    # the one slot is node A's: the manager, in the scheduler universe, claims none
    wait_for(lambda: cell.run("condor_status", "-af", "Name", "State", "JobId").stdout.split()
             == ["slot1@testhost", "Claimed", f"{dag + 1}.0"], timeout=10)
    with open(os.path.join(workdir, "go"), "w"):
        pass
    dag_ended(cell, dag)
    assert order(workdir) == ["A", "B"]
    # (the slot B's job held is given back in the status published after its end)
    wait_for(lambda: cell.run("condor_status", "-af", "State").stdout.split() == ["Unclaimed"])
    assert cell.run("condor_status", "-af", "State").stdout.split() == ["Unclaimed"]


def removed_node(cell, workdir, job_id, reason):
    """Node job ``job_id`` left the queue removed with RemoveReason ``reason`` (and the
    schedd's "(by user NAME)"), in condor_history and in its user log's event 009."""
    import pwd
    said = f"{reason} (by user {pwd.getpwuid(os.getuid()).pw_name})"
    wait_for(lambda: cell.run("condor_history", str(job_id), "-af", "JobStatus", "RemoveReason").stdout
             == f"3 {said}\n", timeout=20)
    log = open(os.path.join(workdir, "slow.log")).read()
    assert f"009 ({job_id:03d}.000.000)" in log and f"Job was aborted.\n\t{said}\n" in log


def test_node_jobs_of_a_removed_dag_carry_dagmans_remove_reason(cell, workdir):
    write(workdir, "slow.sh", "#!/bin/sh\nsleep 60\n")
    write(workdir, "slow.sub", "executable = slow.sh\nlog = slow.log\nqueue\n")
    write(workdir, "diamond.dag", "JOB A slow.sub\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: cell.task_states(dag + 1) == {1: "running"}, timeout=20)
    assert cell.run("condor_rm", str(dag)).returncode == 0
    dag_ended(cell, dag)
    removed_node(cell, workdir, dag + 1, "DAG Removed: User removed scheduler job from queue.")


def test_node_jobs_of_an_aborted_dag_carry_dagmans_remove_reason(cell, workdir):
    write(workdir, "slow.sh", "#!/bin/sh\nsleep 60\n")
    write(workdir, "slow.sub", "executable = slow.sh\nlog = slow.log\nqueue\n")
    node(workdir, "A", body=f"while [ ! -e {workdir}/slow.log ]; do sleep 0.05; done\nexit 3")
    write(workdir, "diamond.dag", "JOB S slow.sub\nJOB A A.sub\nABORT-DAG-ON A 3 RETURN 1\n")
    dag = dagman_id(submit_dag(cell, workdir))
    dag_ended(cell, dag)
    ids = [int(line.split()[0]) for line in cell.run("condor_history", "-af", "ClusterId", "Cmd").stdout
           .splitlines() if line.endswith("slow.sh")]
    assert len(ids) == 1
    removed_node(cell, workdir, ids[0], "DAG Abort: DAG is exiting and writing rescue file.")
    out = dagman_out(workdir)
    abort = out.index("Aborting DAG because we got the ABORT exit value from a job")
    assert abort < out.index("Aborting DAG...\n") < out.index("Removing submitted jobs...\n") \
        < out.index("Removing any/all submitted HTCondor jobs...\n") < out.index("Node S: its job was removed")
    assert out.count("Removing any/all submitted HTCondor jobs...") == 1


def test_a_failed_dag_writes_htcondors_shutdown_lines_and_a_successful_one_does_not(cell, workdir):
    """As HTCondor's DAGMan shuts a DAG down that does not succeed: "Aborting DAG...",
    the rescue DAG, then "Removing submitted jobs..." and "Removing any/all submitted
    HTCondor jobs..." (its condor_rm of the DAG's jobs, whether any are left or not)."""
    node(workdir, "A", body="exit 1")
    write(workdir, "diamond.dag", "JOB A A.sub\n")
    dag_ended(cell, dagman_id(submit_dag(cell, workdir)))
    out = dagman_out(workdir)
    assert out.index("Node A failed with status 1.") < out.index("Aborting DAG...\n") \
        < out.index("Writing Rescue DAG file") < out.index("Removing submitted jobs...\n") \
        < out.index("Removing any/all submitted HTCondor jobs...\n")
    node(workdir, "B")
    write(workdir, "good.dag", "JOB B B.sub\n")
    proc = cell.run("condor_submit_dag", "good.dag", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    dag_ended(cell, dagman_id(proc))
    good = open(os.path.join(workdir, "good.dag.dagman.out")).read()
    assert "All jobs Completed!" in good and "Removing any/all" not in good and "Aborting DAG" not in good


def test_script_arguments_are_split_at_blanks_and_quotes_are_kept(cell, workdir):
    """As HTCondor's DAGMan splits a script's command: at spaces and tabs, quotes being
    characters of their words (an unmatched one too); macros are whole words only,
    a job's macro in a PRE script is warned of and passed on as written (with
    DAGMAN_USE_STRICT 0: at its default, 1, the warning ends the DAG)."""
    node(workdir, "A")
    write(workdir, "strict.conf", "DAGMAN_USE_STRICT = 0\n")
    write(workdir, "args.sh", f"#!/bin/sh\nfor a in \"$@\"; do echo \"[$a]\"; done >> {workdir}/args\n"
                              f"echo -- >> {workdir}/args\n")
    write(workdir, "diamond.dag", "JOB A A.sub\n"
                                  "SCRIPT PRE A args.sh \"two words\" it's $RETURN $job\n"
                                  "SCRIPT POST A args.sh '$JOB' \"$RETURN\" $RETURN\t$Retry $NOPE\n"
                                  "CONFIG strict.conf\n")
    dag = dagman_id(submit_dag(cell, workdir))
    assert dag_ended(cell, dag)[0][12] == "0"
    assert open(os.path.join(workdir, "args")).read().split("--\n")[:2] == [
        '["two]\n[words"]\n[it\'s]\n[$RETURN]\n[A]\n', "['$JOB']\n[\"$RETURN\"]\n[0]\n[0]\n[$NOPE]\n"]
    out = dagman_out(workdir)
    assert "Warning: $RETURN macro should not be used as a PRE script argument!" in out
    assert "Warning: unrecognized macro $NOPE in node A POST script arguments" in out


def test_a_node_materialized_late_is_done_when_its_cluster_is_removed(cell, workdir):
    """max_materialize in a node's submit file makes its cluster a factory, as HTCondor 24's
    DAGMan submits it: one proc in the queue at a time here, and the child starts only
    after the cluster's ClusterRemove event, when all three ran."""
    write(workdir, "A.sh", f"#!/bin/sh\necho start$1 >> {workdir}/order\nsleep 0.5\necho end$1 >> {workdir}/order\n")
    write(workdir, "A.sub", "executable = A.sh\narguments = $(Process)\nmax_materialize = 1\nqueue 3\n")
    node(workdir, "B")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\n")
    assert dag_ended(cell, dagman_id(submit_dag(cell, workdir)))[0][12] == "0"
    assert order(workdir) == ["start0", "end0", "start1", "end1", "start2", "end2", "B"]
    nodes = open(os.path.join(workdir, "diamond.dag.nodes.log")).read()
    kinds = [line[:3] for line in nodes.splitlines() if re.match(r"\d{3} \(", line)]
    assert kinds[0] == "035" and kinds.count("035") == 1 and kinds.count("036") == 1
    assert kinds.index("036") < len(kinds) - kinds[::-1].index("000") - 1     # before B's submit
    assert "\tMaterialized 3 jobs from 0 items.\tComplete" in nodes


def test_a_manager_that_recovers_a_node_materialized_late_waits_for_the_procs_to_come(cell, workdir):
    """Recovered from the nodes log while only the first proc of a late cluster is in it,
    the node is not done when that proc ends: it waits for its cluster's ClusterRemove
    event, which says it made three. (Proc N waits for the file goN.)"""
    write(workdir, "A.sh", f"#!/bin/sh\necho start$1 >> {workdir}/order\n"
                           f"while [ ! -e {workdir}/go$1 ]; do sleep 0.05; done\necho end$1 >> {workdir}/order\n")
    write(workdir, "A.sub", "executable = A.sh\narguments = $(Process)\nmax_materialize = 1\nqueue 3\n")
    node(workdir, "B")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, "start0"), timeout=30)
    pid = int(open(os.path.join(workdir, "diamond.dag.lock")).read().split()[0])
    os.kill(pid, 9)                                  # a crash: on_exit_remove requeues the job
    wait_for(lambda: "Recovery mode: 1 node(s)" in dagman_out(workdir), timeout=60)
    for proc in (0, 1):
        write(workdir, f"go{proc}", "")
        wait_for(lambda: f"Event: ULOG_EXECUTE for HTCondor Node A ({dag + 1}.{proc + 1}.0)" in dagman_out(workdir),
                 timeout=30)
    assert "Node B" not in dagman_out(workdir)       # (the look that saw proc 0 end is over)
    write(workdir, "go2", "")
    wait_for(lambda: "EXITING WITH STATUS 0" in dagman_out(workdir), timeout=60)
    assert order(workdir) == ["start0", "end0", "start1", "end1", "start2", "end2", "B"]
    assert "Node A job proc (%d.2.0) completed successfully." % (dag + 1) in dagman_out(workdir)


def test_a_dag_in_a_shared_folder_follows_no_link_and_takes_no_log_another_user_planted(cell, users, workdir):
    import pwd
    alice, bob = (pwd.getpwnam(name) for name in users[:2])
    os.chmod(workdir, 0o1777)                             # (as /tmp: sticky, anyone may write)
    private = os.path.join(workdir, "alice")
    os.mkdir(private, 0o700)
    os.chown(private, alice.pw_uid, alice.pw_gid)
    precious = os.path.join(private, "precious.txt")
    for path in (precious, os.path.join(private, "thesis.txt")):
        with open(path, "w") as fh:
            fh.write("alice's own\n")
        os.chown(path, alice.pw_uid, alice.pw_gid)

    def own(name, text, user=alice):
        path = write(workdir, name, text)
        os.chown(path, user.pw_uid, user.pw_gid)
        return path

    def plant(name, target):                              # (gtbob's links)
        os.symlink(target, os.path.join(workdir, name))
        os.lchown(os.path.join(workdir, name), bob.pw_uid, bob.pw_gid)

    own("A.sh", f"#!/bin/sh\necho ran >> {workdir}/A.ran\n")
    own("A.sub", "executable = A.sh\nqueue\n")
    own("links.dag", "JOB A A.sub\nNODE_STATUS_FILE links.dag.status\n")
    plant("links.dag.dagman.out", precious)
    plant("links.dag.status.tmp", os.path.join(private, "thesis.txt"))
    proc = cell.run("condor_submit_dag", "links.dag", cwd=workdir, user=users[0])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    dag_ended(cell, dagman_id(proc))
    assert [open(os.path.join(private, n)).read() for n in ("precious.txt", "thesis.txt")] == ["alice's own\n"] * 2
    assert "DagStatus" in open(os.path.join(workdir, "links.dag.status")).read()
    assert open(os.path.join(workdir, "A.ran")).read() == "ran\n"
    # a submit file name that is a link another user planted: refused, nothing made through it
    own("made.dag", "JOB A A.sub\n")
    plant("made.dag.condor.sub", os.path.join(private, "made"))
    proc = cell.run("condor_submit_dag", "-no_submit", "made.dag", cwd=workdir, user=users[0])
    assert proc.returncode == 1 and "ERROR: unable to create submit file" in proc.stderr + proc.stdout
    assert not os.path.exists(os.path.join(private, "made"))
    # a nodes log another user made (who could write a node's end into it): the DAG does not run
    own("forged.dag", "JOB A A.sub\n")
    own("forged.dag.nodes.log", "", user=bob)
    os.chmod(os.path.join(workdir, "forged.dag.nodes.log"), 0o666)
    os.unlink(os.path.join(workdir, "A.ran"))
    proc = cell.run("condor_submit_dag", "forged.dag", cwd=workdir, user=users[0])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    manager = dagman_id(proc)
    dag_ended(cell, manager)
    assert "is not a file of yours: what it says is not taken" in open(os.path.join(workdir, "forged.dag.dagman.out")).read()
    assert not os.path.exists(os.path.join(workdir, "A.ran"))


#: a node's program that prints its arguments
SHOW_ARGS = "#!/bin/sh\necho \"$@\"\n"


# A DAG node's submission as HTCondor's DAGMan makes it: its VARS are macros defined
# before its submit file is read (its conditions see them), and its DIR is the folder
# condor_submit runs in (its includes are read and run there).

def test_a_node_s_vars_are_macros_its_conditions_see(cell, workdir):
    write(workdir, "show.sh", SHOW_ARGS)
    write(workdir, "m.sub", "executable = show.sh\nif defined MODE\n arguments = mode-$(MODE)\nelse\n"
                            " arguments = old\nendif\noutput = m.out\nqueue\n")
    write(workdir, "diamond.dag", "JOB B m.sub\nVARS B MODE=\"fast\"\n")
    proc = submit_dag(cell, workdir)
    assert dag_ended(cell, dagman_id(proc))[0][12] == "0"
    assert open(os.path.join(workdir, "m.out")).read() == "mode-fast\n"


def test_a_node_s_dir_is_where_its_includes_are_read_and_run(cell, workdir):
    write(workdir, "sub1/show.sh", SHOW_ARGS)
    write(workdir, "sub1/n.sub", "executable = show.sh\ninclude : part.inc\ninclude : ./cmd.sh |\n"
                                 "output = n.out\nqueue\n")
    write(workdir, "sub1/part.inc", "arguments = part $(WHERE)\n")
    write(workdir, "sub1/cmd.sh", "#!/bin/sh\necho \"WHERE = $(basename \"$(pwd)\")\"\n")
    write(workdir, "part.inc", "arguments = wrong $(WHERE)\n")      # (the DAG's folder's: not read)
    write(workdir, "cmd.sh", "#!/bin/sh\necho \"WHERE = top\"\n")
    write(workdir, "diamond.dag", "JOB A n.sub DIR sub1\n")
    proc = submit_dag(cell, workdir)
    assert dag_ended(cell, dagman_id(proc))[0][12] == "0"
    assert open(os.path.join(workdir, "sub1", "n.out")).read() == "part sub1\n"

"""DAGMan configuration settings that are no command-line option's against a running
daemon: DAGMAN_INSERT_SUB_FILE (the default of condor_submit_dag -insert_sub_file),
DAGMAN_GENERATE_SUBDAG_SUBMITS (whether the manager writes a nested DAG's submit file),
DAGMAN_DEFAULT_PRIORITY, DAGMAN_NODE_RECORD_INFO, DAGMAN_SUBMIT_DELAY,
DAGMAN_PROHIBIT_MULTI_JOBS, DAGMAN_PUT_FAILED_JOBS_ON_HOLD, DAGMAN_MAX_JOB_HOLDS and
DAGMAN_HOLD_CLAIM_TIME."""

import os
import pwd
import re

import pytest

from conftest import cell_fixture, wait_for
from test_condor_dag_live import dag_ended, dagman_id, dagman_out, history, node, order, submit_dag, write


cell = cell_fixture(slots=2)


def submit_file(workdir, dag="diamond.dag"):
    return open(os.path.join(workdir, dag + ".condor.sub")).read().splitlines()


def test_insert_sub_file_setting_is_the_default_of_the_option(cell, workdir):
    """DAGMAN_INSERT_SUB_FILE in the DAG's CONFIG file (else the cell's configuration, here a
    _CONDOR_ variable) names the submit commands written into DAGFILE.condor.sub before its
    queue statement and the -append commands, as -insert_sub_file does; the option wins;
    a file that cannot be read is refused before anything is written."""
    node(workdir, "A")
    write(workdir, "conf.sub", "+FromConfig = \"c\"\nqueue\n")
    write(workdir, "cell.sub", "+FromCell = \"e\"\n")
    write(workdir, "own.sub", "+FromOption = \"o\"\n")
    write(workdir, "plain.dag", "JOB A A.sub\n")
    from_cell = cell.run("condor_submit_dag", "-no_submit", "plain.dag", cwd=workdir,
                         env={"_CONDOR_DAGMAN_INSERT_SUB_FILE": "cell.sub"})
    assert from_cell.returncode == 0, from_cell.stderr
    assert submit_file(workdir, "plain.dag")[-2:] == ["+FromCell = \"e\"", "queue"]
    write(workdir, "dag.config", "DAGMAN_INSERT_SUB_FILE = conf.sub\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nCONFIG dag.config\n")
    option = cell.run("condor_submit_dag", "-no_submit", "-insert_sub_file", "own.sub", "diamond.dag",
                      cwd=workdir, env={"_CONDOR_DAGMAN_INSERT_SUB_FILE": "cell.sub"})
    assert option.returncode == 0, option.stderr
    lines = submit_file(workdir)
    assert "+FromOption = \"o\"" in lines and "+FromConfig = \"c\"" not in lines and "+FromCell = \"e\"" not in lines
    proc = submit_dag(cell, workdir, "-f", "-append", "+Appended = 7")
    lines = submit_file(workdir)
    assert lines[-3:] == ["+FromConfig = \"c\"", "+Appended = 7", "queue"]    # its queue left out
    dag = dagman_id(proc)
    assert cell.run("condor_q", str(dag), "-af", "FromConfig", "Appended").stdout == "c 7\n"
    assert dag_ended(cell, dag)[0][12] == "0"
    assert "DAGMAN_INSERT_SUB_FILE: not supported" not in dagman_out(workdir)
    write(workdir, "dag.config", "DAGMAN_INSERT_SUB_FILE = none.sub\n")
    os.unlink(os.path.join(workdir, "diamond.dag.condor.sub"))
    bad = cell.run("condor_submit_dag", "-f", "diamond.dag", cwd=workdir)
    assert bad.returncode == 1
    assert bad.stderr.splitlines() == ["ERROR: DAGMAN_INSERT_SUB_FILE none.sub cannot be read"]
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.condor.sub"))


def test_generate_subdag_submits_false_submits_the_nested_dags_submit_file_as_it_is(cell, workdir):
    """DAGMAN_GENERATE_SUBDAG_SUBMITS = False: the manager does not write the submit file of
    a SUBDAG EXTERNAL node's DAG; it submits the one condor_submit_dag -no_submit (or
    -do_recurse) wrote, as it is, and without one the node's submission fails."""
    node(workdir, "X")
    node(workdir, "D")
    write(workdir, "inner.dag", "JOB X X.sub\n")
    write(workdir, "dag.config", "DAGMAN_GENERATE_SUBDAG_SUBMITS = False\n")
    write(workdir, "diamond.dag", "SUBDAG EXTERNAL S inner.dag\nJOB D D.sub\nPARENT S CHILD D\n"
                                  "CONFIG dag.config\n")
    record = dag_ended(cell, dagman_id(submit_dag(cell, workdir)), timeout=120)
    assert record[-1][12] == "1"
    out = dagman_out(workdir)
    assert "DAGMAN_GENERATE_SUBDAG_SUBMITS setting: False" in out
    assert "ERROR: submitting the job of node S failed" in out
    assert not os.path.exists(os.path.join(workdir, "inner.dag.condor.sub"))
    assert not os.path.exists(os.path.join(workdir, "order"))
    made = cell.run("condor_submit_dag", "-no_submit", "-append", "+Marker = 5", "inner.dag", cwd=workdir)
    assert made.returncode == 0, made.stderr
    record = dag_ended(cell, dagman_id(submit_dag(cell, workdir, "-f")), timeout=120)
    assert record[-1][12] == "0"
    assert order(workdir) == ["X", "D"]
    assert "+Marker = 5" in submit_file(workdir, "inner.dag")               # not written again
    assert "5" in cell.run("condor_history", "-af", "Marker").stdout.split()


def test_a_dag_in_a_folder_the_user_cannot_write_is_refused_for_that(cell, workdir, users):
    alice, bob = users[0], users[1]
    folder = os.path.join(workdir, "alices")
    os.mkdir(folder)
    write(folder, "A.sub", "executable = /bin/true\nqueue\n")
    write(folder, "d.dag", "JOB A A.sub\n")
    os.chown(folder, pwd.getpwnam(alice).pw_uid, -1)
    os.chmod(folder, 0o755)
    done = cell.run("condor_submit_dag", "-no_submit", "d.dag", cwd=folder, user=alice)
    assert done.returncode == 0, done.stderr
    before = open(os.path.join(folder, "d.dag.condor.sub")).read()
    for args in (["-f"], ["-f", "-no_submit"]):
        bad = cell.run("condor_submit_dag", *args, os.path.join(folder, "d.dag"), cwd=workdir, user=bob)
        assert bad.returncode == 1
        assert bad.stderr == f"ERROR: unable to create submit file {folder}/d.dag.condor.sub\n"
    assert open(os.path.join(folder, "d.dag.condor.sub")).read() == before
    os.unlink(os.path.join(folder, "d.dag.condor.sub"))     # no earlier run: the same
    bad = cell.run("condor_submit_dag", os.path.join(folder, "d.dag"), cwd=workdir, user=bob)
    assert (bad.returncode, bad.stderr) == (1, f"ERROR: unable to create submit file {folder}/d.dag.condor.sub\n")


def test_node_job_settings_priority_retry_record_submit_delay_and_one_proc(cell, workdir):
    """DAGMAN_DEFAULT_PRIORITY is added to each node's PRIORITY (as -priority);
    DAGMAN_NODE_RECORD_INFO = RETRY puts a retried node's attempt in its job's
    DAGManNodeRetry; DAGMAN_SUBMIT_DELAY waits that many seconds before each submission;
    DAGMAN_PROHIBIT_MULTI_JOBS fails a node whose description queues more than one proc,
    with HTCondor's words. Each is in the manager's settings lines."""
    write(workdir, "flaky.sh", f"#!/bin/sh\ntest -e {workdir}/tried && exit 0\ntouch {workdir}/tried\nexit 3\n")
    write(workdir, "flaky.sub", "executable = flaky.sh\noutput = f.out\nerror = f.err\nqueue\n")
    node(workdir, "B")
    write(workdir, "two.sub", "executable = /bin/true\nqueue 2\n")
    write(workdir, "dag.config", "DAGMAN_DEFAULT_PRIORITY = 7\nDAGMAN_NODE_RECORD_INFO = Retry\n"
                                 "DAGMAN_SUBMIT_DELAY = 2\nDAGMAN_PROHIBIT_MULTI_JOBS = True\n")
    write(workdir, "diamond.dag", "CONFIG dag.config\nJOB F flaky.sub\nRETRY F 1\nJOB B B.sub\nPRIORITY B 9\n"
                                  "PARENT F CHILD B\nJOB T two.sub\n")
    proc = submit_dag(cell, workdir)
    assert dag_ended(cell, dagman_id(proc), timeout=90)[0][12] == "1"      # (T failed)
    out = dagman_out(workdir)
    for line in ("DAGMAN_DEFAULT_PRIORITY setting: 7", "DAGMAN_SUBMIT_DELAY setting: 2",
                 "DAGMAN_PROHIBIT_MULTI_JOBS setting: True", "DAGMAN_NODE_RECORD_INFO: Retry"):
        assert line in out, line
    assert "Submit generated multiple job procs; disallowed by DAGMAN_PROHIBIT_MULTI_JOBS setting" in out
    assert "Node submit failed after 1 try." in out and "Job submit try" not in out     # (not tried again)
    wait_for(lambda: len(history(cell, "DAGNodeName")) >= 2)
    shown = sorted(line for line in history(cell, "DAGNodeName", "JobPrio", "DAGManNodeRetry", "KeepClaimIdle")
                   if not line.startswith("undefined"))      # (not the manager's own job)
    # (DAGMAN_HOLD_CLAIM_TIME, 20 by default: the jobs of a node with children keep their claim)
    assert shown == ["B 16 undefined undefined", "F 7 1 20", "F 7 undefined 20"]
    assert order(workdir) == ["B"]
    from gridtools.formats.condor.userlog import EventType, parse_events
    with open(os.path.join(workdir, "diamond.dag.nodes.log")) as fh:
        submitted = [e.timestamp for e in parse_events(fh.read()) if e.type == EventType.SUBMIT]
    assert len(submitted) == 3 and all(b - a >= 1 for a, b in zip(submitted, submitted[1:]))


def test_put_failed_jobs_on_hold_submits_a_failed_nodes_job_again_on_hold(cell, workdir):
    """DAGMAN_PUT_FAILED_JOBS_ON_HOLD: a node whose job failed with no retry left (and no
    POST script) is not failed: its job is submitted again, on hold, for its owner to
    mend and release; released, it runs again and the DAG goes on."""
    write(workdir, "fix.sh", f"#!/bin/sh\necho ran >> {workdir}/order\ntest -e {workdir}/fixed\n")
    write(workdir, "fix.sub", "executable = fix.sh\noutput = x.out\nerror = x.err\nqueue\n")
    node(workdir, "B")
    write(workdir, "diamond.dag", "JOB X fix.sub\nJOB B B.sub\nPARENT X CHILD B\n")
    proc = cell.run("condor_submit_dag", "diamond.dag", cwd=workdir,
                    env={"_CONDOR_DAGMAN_PUT_FAILED_JOBS_ON_HOLD": "True"})
    assert proc.returncode == 0, proc.stderr
    dag = dagman_id(proc)

    def held_again():
        rows = [line.split() for line in cell.run("condor_q", "-af", "DAGNodeName", "JobStatus",
                                                    "ClusterId").stdout.splitlines()]
        return next((row[2] for row in rows if row[:2] == ["X", "5"]), None)
    cluster = wait_for(held_again, timeout=60)
    assert order(workdir) == ["ran"]
    assert "DAGMAN_PUT_FAILED_JOBS_ON_HOLD setting: True" in dagman_out(workdir)
    assert "its job is submitted again on hold" in dagman_out(workdir)
    open(os.path.join(workdir, "fixed"), "w").close()
    assert cell.run("condor_release", cluster).returncode == 0
    assert dag_ended(cell, dag, timeout=90)[0][12] == "0"
    assert order(workdir) == ["ran", "ran", "B"]


def test_a_node_job_held_max_job_holds_times_is_removed_and_its_node_fails(cell, workdir):
    """DAGMAN_MAX_JOB_HOLDS: once that many procs of a node's job are held, the manager
    removes the job with HTCondor's reason and the node fails (its sibling runs on);
    DAGMAN_HOLD_CLAIM_TIME = 0 gives no node job KeepClaimIdle."""
    write(workdir, "held.sub", "executable = /bin/true\nhold = true\nqueue\n")
    node(workdir, "B")
    node(workdir, "C")
    write(workdir, "dag.config", "DAGMAN_MAX_JOB_HOLDS = 1\nDAGMAN_HOLD_CLAIM_TIME = 0\n")
    write(workdir, "diamond.dag", "CONFIG dag.config\nJOB H held.sub\nJOB B B.sub\nJOB C C.sub\nPARENT B CHILD C\n")
    proc = submit_dag(cell, workdir)
    assert dag_ended(cell, dagman_id(proc), timeout=90)[0][12] == "1"
    out = dagman_out(workdir)
    assert "DAGMAN_MAX_JOB_HOLDS setting: 1" in out and "DAGMAN_HOLD_CLAIM_TIME setting: 0" in out
    assert re.search(r"Total hold count for job \d+ \(node H\) has reached DAGMAN_MAX_JOB_HOLDS \(1\); "
                     r"all job proc\(s\) for this node will now be removed", out)
    assert order(workdir) == ["B", "C"]
    wait_for(lambda: len([ln for ln in history(cell, "DAGNodeName") if ln != "undefined"]) == 3)
    shown = history(cell, "DAGNodeName", "KeepClaimIdle", "RemoveReason")
    assert "H undefined DAG Limit: Max number of held jobs was reached. (by user root)" in shown
    assert "B undefined undefined" in shown


@pytest.mark.parametrize("config, expected", [
    ("", ["A", "C", "R", "B", "D", "R"]),                                        # breadth first
    ("DAGMAN_SUBMIT_DEPTH_FIRST = True\n", ["R", "R", "C", "D", "A", "B"]),     # the newly ready first
])
def test_the_order_jobs_are_submitted_in_under_maxjobs(cell, workdir, config, expected):
    """With -maxjobs 1 the queue of ready nodes decides the order: nodes are queued as they
    become ready, a retried one too (HTCondor's default), or at its head with
    DAGMAN_SUBMIT_DEPTH_FIRST (the first nodes of the file then last)."""
    for name in "ABCD":
        node(workdir, name)
    write(workdir, "r.sh", f"#!/bin/sh\necho R >> {workdir}/order\ntest -e {workdir}/tried && exit 0\n"
                           f"touch {workdir}/tried\nexit 4\n")
    write(workdir, "r.sub", "executable = r.sh\noutput = r.out\nerror = r.err\nqueue\n")
    write(workdir, "dag.config", config or "DAGMAN_SUBMIT_DELAY = 0\n")
    write(workdir, "diamond.dag", "CONFIG dag.config\nJOB A A.sub\nJOB B B.sub\nJOB C C.sub\nJOB D D.sub\n"
                                  "JOB R r.sub\nRETRY R 1\nPARENT A CHILD B\nPARENT C CHILD D\n")
    proc = submit_dag(cell, workdir, "-maxjobs", "1")
    assert dag_ended(cell, dagman_id(proc), timeout=120)[0][12] == "0"
    assert order(workdir) == expected


def test_a_retried_node_goes_first_with_retry_node_first(cell, workdir):
    """DAGMAN_RETRY_NODE_FIRST: a node that failed and is retried is submitted before the
    nodes that were waiting; without it, after them."""
    write(workdir, "r.sh", f"#!/bin/sh\necho R >> {workdir}/order\ntest -e {workdir}/tried && exit 0\n"
                           f"touch {workdir}/tried\nexit 4\n")
    write(workdir, "r.sub", "executable = r.sh\noutput = r.out\nerror = r.err\nqueue\n")
    for name in "XY":
        node(workdir, name)
    for config, expected in (("DAGMAN_RETRY_NODE_FIRST = False\n", ["R", "X", "Y", "R"]),
                             ("DAGMAN_RETRY_NODE_FIRST = True\n", ["R", "R", "X", "Y"])):
        for stale in ("order", "tried"):
            if os.path.exists(os.path.join(workdir, stale)):
                os.remove(os.path.join(workdir, stale))
        write(workdir, "dag.config", config)
        write(workdir, "diamond.dag", "CONFIG dag.config\nJOB R r.sub\nRETRY R 1\nJOB X X.sub\nJOB Y Y.sub\n")
        proc = submit_dag(cell, workdir, "-maxjobs", "1", "-f")
        assert dag_ended(cell, dagman_id(proc), timeout=120)[0][12] == "0"
        assert order(workdir) == expected, config


def _refuse_until(cell, rule):
    """Submit requirement NotYet of the cell: a node job (not the manager's, of the
    scheduler universe) must meet ``rule``, else the daemon refuses it."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(f"SUBMIT_REQUIREMENT_NAMES = NotYet\nSUBMIT_REQUIREMENT_NotYet = JobUniverse == 7 || {rule}\n"
                 "SUBMIT_REQUIREMENT_NotYet_REASON = \"not yet\"\n")
    assert cell.run("condor_reconfig").returncode == 0


def test_a_submission_the_daemon_refuses_is_tried_again_up_to_max_submit_attempts(cell, workdir):
    """DAGMAN_MAX_SUBMIT_ATTEMPTS: a node job the daemon does not take in is submitted
    again after 1 s, 2 s ..., as often as that says in all; then the node fails without
    using its RETRY, its POST script run with $RETURN -1001, while the other nodes run."""
    _refuse_until(cell, 'DAGNodeName =!= "A"')
    node(workdir, "A")
    node(workdir, "B")
    write(workdir, "post.sh", f"#!/bin/sh\necho $1 >> {workdir}/post\nexit 1\n")
    write(workdir, "dag.config", "DAGMAN_MAX_SUBMIT_ATTEMPTS = 3\n")
    write(workdir, "diamond.dag", "CONFIG dag.config\nJOB A A.sub\nRETRY A 2\nSCRIPT POST A post.sh $RETURN\n"
                                  "JOB B B.sub\n")
    proc = submit_dag(cell, workdir)
    assert dag_ended(cell, dagman_id(proc), timeout=90)[0][12] == "1"
    out = dagman_out(workdir)
    lines = [line.split(" ", 2)[2] for line in out.splitlines() if line.count(" ") >= 2]
    tried = [line for line in lines if line.startswith(("Job submit try", "Node submit failed", "Shortcutting"))]
    assert tried == ["Job submit try 1/3 failed, will try again in >= 1 second.",
                     "Job submit try 2/3 failed, will try again in >= 2 seconds.",
                     "Node submit failed after 3 tries.",
                     "Shortcutting node A retries because of submit failure(s)"]
    assert "DAGMAN_MAX_SUBMIT_ATTEMPTS setting: 3" in out and "DAGMAN_RETRY_SUBMIT_FIRST setting: True" in out
    assert open(os.path.join(workdir, "post")).read() == "-1001\n"
    assert order(workdir) == ["B"]
    assert "retrying" not in out


def test_a_submission_refused_for_a_while_goes_through_on_a_later_try(cell, workdir):
    """A node job the daemon refuses for a few seconds is submitted once it takes it."""
    import time
    _refuse_until(cell, f'DAGNodeName =!= "A" || time() >= {int(time.time()) + 6}')
    node(workdir, "A")
    write(workdir, "diamond.dag", "JOB A A.sub\n")
    proc = submit_dag(cell, workdir)
    assert dag_ended(cell, dagman_id(proc), timeout=90)[0][12] == "0"
    out = dagman_out(workdir)
    assert "Job submit try 1/6 failed, will try again in >= 1 second." in out
    assert "Node submit failed" not in out and order(workdir) == ["A"]

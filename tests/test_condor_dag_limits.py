"""DAGMan's throttles and script options against a running daemon: -maxpre and -maxpost
(DAGMAN_MAX_PRE_SCRIPTS, DAGMAN_MAX_POST_SCRIPTS) bound the scripts that run at once,
-maxidle (DAGMAN_MAX_JOBS_IDLE) holds back submissions while the DAG has that many idle
procs, -AlwaysRunPost runs a POST script after a failed PRE script, -priority is added to
the JobPrio of the node jobs."""

import os
import re

import pytest

from conftest import wait_for
from test_condor_dag_live import (dag_ended, dagman_id, dagman_out, gate, node, node_started, order,
                                  submit_dag, write)


def most_at_once(lines, kind):
    """The most ``kind`` scripts that ran together, by the "+ KIND NODE" and "- KIND NODE"
    lines the scripts wrote as they began and ended."""
    now = most = 0
    for sign, what, _name in (line.split() for line in lines):
        if what == kind:
            now += 1 if sign == "+" else -1
            most = max(most, now)
    return most


def test_maxpre_and_maxpost_bound_the_scripts_running_at_once_and_all_run(cell, workdir):
    """-maxpre 2 on the command line, DAGMAN_MAX_POST_SCRIPTS = 1 in the configuration
    (here a _CONDOR_ variable): of six nodes ready together, never more than two PRE scripts
    and one POST script run at once, the others wait their turn; every script runs once."""
    write(workdir, "script.sh", f"#!/bin/sh\necho + $1 $2 >> {workdir}/spans\nsleep 0.6\n"
                                f"echo - $1 $2 >> {workdir}/spans\n")
    names = "ABCDEF"
    write(workdir, "diamond.dag", "".join(f"JOB {n} none.sub NOOP\nSCRIPT PRE {n} script.sh PRE $JOB\n"
                                          f"SCRIPT POST {n} script.sh POST $JOB\n" for n in names))
    proc = cell.run("condor_submit_dag", "-maxpre", "2", "diamond.dag", cwd=workdir,
                    env={"_CONDOR_DAGMAN_MAX_POST_SCRIPTS": "1"})
    assert proc.returncode == 0, proc.stderr
    assert dag_ended(cell, dagman_id(proc))[0][12] == "0"
    spans = open(os.path.join(workdir, "spans")).read().splitlines()
    assert most_at_once(spans, "PRE") == 2
    assert most_at_once(spans, "POST") == 1
    for kind in ("PRE", "POST"):
        assert sorted(line.split()[2] for line in spans if line.startswith(f"+ {kind}")) == list(names)
    out = dagman_out(workdir)
    assert "DAGMAN_MAX_PRE_SCRIPTS setting: 2" in out and "DAGMAN_MAX_POST_SCRIPTS setting: 1" in out


def test_scripts_run_together_up_to_the_default_limit(cell, workdir):
    """Without a limit given, HTCondor's default (20) lets the PRE scripts of ready nodes
    run together: three scripts that each wait for all three to have begun all end."""
    write(workdir, "pre.sh", f"#!/bin/sh\necho $1 >> {workdir}/began\n"
                             f"while [ $(wc -l < {workdir}/began) -lt 3 ]; do sleep 0.05; done\n")
    write(workdir, "diamond.dag", "".join(f"JOB {n} none.sub NOOP\nSCRIPT PRE {n} pre.sh $JOB\n"
                                          for n in "ABC"))
    dag = dagman_id(submit_dag(cell, workdir))
    assert dag_ended(cell, dag)[0][12] == "0"
    assert "DAGMAN_MAX_PRE_SCRIPTS setting: 20" in dagman_out(workdir), dagman_out(workdir)


def test_maxidle_holds_back_submissions_while_the_dag_has_that_many_idle_procs(cell, workdir):
    """-maxidle 1: A queues three procs on two slots (one stays idle). X's PRE script runs
    meanwhile (a throttle holds back submissions, not scripts), but X (a NOOP node, which
    goes through the submit queue too) and so B after it wait while that proc is idle;
    once A's procs ran, X and then B go."""
    write(workdir, "A.sh", f"#!/bin/sh\n{gate(workdir)}\n")
    write(workdir, "A.sub", "executable = A.sh\noutput = A.$(Process).out\nerror = A.err\nqueue 3\n")
    node(workdir, "B")
    write(workdir, "wait.sh", "#!/bin/sh\nsleep 2\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB X none.sub NOOP\nSCRIPT PRE X wait.sh\n"
                                  "JOB B B.sub\nPARENT X CHILD B\n")
    dag = dagman_id(submit_dag(cell, workdir, "-maxidle", "1"))
    wait_for(lambda: "PRE Script of node X completed successfully." in dagman_out(workdir)
             and cell.run("condor_q", str(dag), "-af", "DAG_NodesDone", "DAG_NodesReady",
                          "DAG_JobsIdle").stdout == "0 1 1\n", timeout=60)
    assert "Node X: NOOP" not in dagman_out(workdir)
    assert "Submitting HTCondor Node B" not in dagman_out(workdir)
    write(workdir, "go", "")
    assert dag_ended(cell, dag)[0][12] == "0"
    assert order(workdir) == ["B"]
    out = dagman_out(workdir)
    assert out.index("Node X: NOOP") < out.index("Submitting HTCondor Node B")
    assert "DAGMAN_MAX_JOBS_IDLE setting: 1" in out


def throttle_scripts(workdir):
    """pre.sh NODE: notes NODE in ``began`` and waits until three nodes began (else
    notes ``alone-NODE``); job.sh NODE: notes its span in ``spans``."""
    write(workdir, "pre.sh", f"#!/bin/sh\necho $1 >> {workdir}/began\nfor i in $(seq 300); do\n"
                             f"  [ $(wc -l < {workdir}/began) -ge 3 ] && exit 0; sleep 0.05\ndone\n"
                             f"echo alone-$1 >> {workdir}/began\n")
    write(workdir, "job.sh", f"#!/bin/sh\necho + JOB $1 >> {workdir}/spans\nsleep 0.5\n"
                             f"echo - JOB $1 >> {workdir}/spans\n")


def test_maxjobs_throttles_job_submissions_not_pre_scripts(cell, workdir):
    """-maxjobs 1, as HTCondor's DAGMan: the PRE scripts of three ready nodes run together
    (each waits until all three have begun), and then their jobs go to the queue one
    node at a time, every one of them."""
    throttle_scripts(workdir)
    dag = ""
    for name in "ABC":
        write(workdir, f"{name}.sub", f"executable = job.sh\narguments = {name}\nqueue\n")
        dag += f"JOB {name} {name}.sub\nSCRIPT PRE {name} pre.sh $JOB\n"
    write(workdir, "diamond.dag", dag)
    dag_id = dagman_id(submit_dag(cell, workdir, "-maxjobs", "1"))
    assert dag_ended(cell, dag_id)[0][12] == "0", dagman_out(workdir)
    assert sorted(open(os.path.join(workdir, "began")).read().split()) == ["A", "B", "C"]
    spans = open(os.path.join(workdir, "spans")).read().splitlines()
    assert most_at_once(spans, "JOB") == 1
    assert sorted(line.split()[2] for line in spans if line.startswith("+")) == ["A", "B", "C"]
    assert "DAGMAN_MAX_JOBS_SUBMITTED setting: 1" in dagman_out(workdir)


def test_a_maxjobs_category_throttles_its_job_submissions_not_its_pre_scripts(cell, workdir):
    """MAXJOBS heavy 1, as HTCondor's DAGMan: the PRE scripts of the category's three ready
    nodes run together, then their jobs go to the queue one at a time; a node of no
    category is not held back by them."""
    throttle_scripts(workdir)
    dag = ""
    for name in "ABCD":
        write(workdir, f"{name}.sub", f"executable = job.sh\narguments = {name}\nqueue\n")
        dag += f"JOB {name} {name}.sub\n"
    for name in "ABC":
        dag += f"SCRIPT PRE {name} pre.sh $JOB\nCATEGORY {name} heavy\n"
    write(workdir, "diamond.dag", dag + "MAXJOBS heavy 1\n")
    dag_id = dagman_id(submit_dag(cell, workdir))
    assert dag_ended(cell, dag_id)[0][12] == "0", dagman_out(workdir)
    assert sorted(open(os.path.join(workdir, "began")).read().split()) == ["A", "B", "C"]
    spans = open(os.path.join(workdir, "spans")).read().splitlines()
    heavy = [line for line in spans if line.split()[2] in "ABC"]
    assert most_at_once(heavy, "JOB") == 1
    assert sorted(line.split()[2] for line in spans if line.startswith("+")) == ["A", "B", "C", "D"]


@pytest.mark.parametrize("args, code, ran", [((), "1", []),
                                             (("-AlwaysRunPost",), "0", ["post-A--1004-1"]),
                                             (("-AlwaysRunPost", "-DontAlwaysRunPost"), "1", [])])
def test_always_run_post_runs_the_post_script_after_a_failed_pre_script(cell, workdir, args, code, ran):
    """HTCondor's default (-DontAlwaysRunPost): a failed PRE script fails its node, its POST
    script does not run. -AlwaysRunPost: the POST script runs, given $RETURN -1004 and
    $PRE_SCRIPT_RETURN, and its success is the node's. The last option given wins."""
    write(workdir, "pre.sh", "#!/bin/sh\nexit 1\n")
    write(workdir, "post.sh", f"#!/bin/sh\necho post-$1-$2-$3 >> {workdir}/order\n")
    node(workdir, "A")
    write(workdir, "diamond.dag", "JOB A A.sub\nSCRIPT PRE A pre.sh\n"
                                  "SCRIPT POST A post.sh $JOB $RETURN $PRE_SCRIPT_RETURN\n")
    dag = dagman_id(submit_dag(cell, workdir, *args))
    assert dag_ended(cell, dag)[0][12] == code, dagman_out(workdir)
    assert (order(workdir) if os.path.exists(os.path.join(workdir, "order")) else []) == ran


def test_priority_is_added_to_the_jobprio_of_the_node_jobs(cell, workdir):
    """-priority 5: a node without PRIORITY gets JobPrio 5, one with PRIORITY 10 gets 15,
    one with PRIORITY 2 gets 7 (HTCondor's DAGMan adds the DAG's priority)."""
    for name in "ABC":
        node(workdir, name)
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nJOB C C.sub\nPRIORITY B 10\nPRIORITY C 2\n")
    dag = dagman_id(submit_dag(cell, workdir, "-priority", "5"))
    assert dag_ended(cell, dag)[0][12] == "0"
    shown = set(cell.run("condor_history", "-af", "DAGNodeName", "JobPrio").stdout.splitlines())
    assert {"A 5", "B 15", "C 7"} <= shown


def test_recovery_takes_a_noop_node_that_ran_as_done_and_runs_a_failed_pre_script_again(cell, workdir):
    """As HTCondor's DAGMan: a NOOP node's run leaves a submit and a termination event of a
    fake job (000.2147483647.N, "DAG Node: NAME") in the nodes log, so a manager that
    recovers the DAG does not run it again (only its POST script, when that had not
    ended); a PRE script's failure leaves no event, so that node runs again. The rescue
    DAG marks DONE only the nodes that succeeded."""
    write(workdir, "note.sh", f"#!/bin/sh\necho $1 >> {workdir}/order\nexit $2\n")
    write(workdir, "hold.sh", f"#!/bin/sh\necho $1 >> {workdir}/order\n{gate(workdir)}\n")
    node(workdir, "A")
    write(workdir, "diamond.dag", "JOB P none.sub NOOP\nSCRIPT PRE P note.sh pre-P 0\n"
                                  "SCRIPT POST P note.sh post-P 0\n"
                                  "JOB Q none.sub NOOP\nSCRIPT POST Q hold.sh post-Q\n"
                                  "JOB F none.sub NOOP\nSCRIPT PRE F note.sh pre-F 1\n"
                                  "JOB A A.sub\nPARENT P Q CHILD A\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: os.path.exists(os.path.join(workdir, "order"))
             and {"post-P", "post-Q", "pre-F"} <= set(order(workdir))
             and "Node F failed" in dagman_out(workdir) and "Node P completed" in dagman_out(workdir),
             timeout=30)
    nodes_log = open(os.path.join(workdir, "diamond.dag.nodes.log")).read()
    assert re.search(r"^000 \(000\.2147483647\.\d{3}\) .* Job submitted from host: "
                     r"<dummy-submit-for-noop-job>\n    DAG Node: P\n\.\.\.$", nodes_log, re.M)
    assert len(re.findall(r"^005 \(000\.2147483647\.\d{3}\) .* Job terminated\.\n"
                          r"\t\(1\) Normal termination \(return value 0\)$", nodes_log, re.M)) == 2
    pid = int(open(os.path.join(workdir, "diamond.dag.lock")).read().split()[0])
    os.kill(pid, 9)                                  # a crash: on_exit_remove requeues the job
    wait_for(lambda: "Recovery mode:" in dagman_out(workdir), timeout=60)
    out = dagman_out(workdir)
    assert "Recovery: node P's POST script already ran (status 0); it is not run again" in out
    assert "Recovery: NOOP node Q ran; it is not run again" in out
    write(workdir, "go", "")
    wait_for(lambda: "EXITING WITH STATUS" in dagman_out(workdir).partition("Recovery mode")[2],
             timeout=60)
    assert "EXITING WITH STATUS 1" in dagman_out(workdir).partition("Recovery mode")[2]
    ran = order(workdir)
    assert [ran.count(n) for n in ("pre-P", "post-P", "post-Q", "pre-F", "A")] == [1, 1, 2, 2, 1]
    rescue = open(os.path.join(workdir, "diamond.dag.rescue001")).read().splitlines()
    assert {"DONE P", "DONE Q", "DONE A"} <= set(rescue) and "DONE F" not in rescue
    dag_ended(cell, dag)


def test_recovery_takes_a_node_its_pre_script_skipped_as_done(cell, workdir):
    """As HTCondor's DAGMan: a PRE script that exits with its node's PRE_SKIP value leaves a
    PRE_SKIP event (034, "DAG Node: NAME") in the nodes log, numbered as a NOOP node's fake
    job, so a manager that recovers the DAG takes the node as done: neither its PRE script
    nor its job runs again. condor_wait reads the log with the event in it."""
    write(workdir, "skip.sh", f"#!/bin/sh\necho pre-$1 >> {workdir}/order\nexit 7\n")
    node(workdir, "A", body=gate(workdir))
    node(workdir, "B")
    node(workdir, "C")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nSCRIPT PRE B skip.sh $JOB\nPRE_SKIP B 7\n"
                                  "JOB C C.sub\nPARENT A B CHILD C\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: "PRE_SKIP return value 7 indicates we are done (successfully) with node B"
             in dagman_out(workdir) and "Submitting HTCondor Node A" in dagman_out(workdir), timeout=30)
    nodes_log = open(os.path.join(workdir, "diamond.dag.nodes.log")).read()
    assert re.search(r"^034 \(000\.2147483647\.001\) \d{4}-\d\d-\d\d \d\d:\d\d:\d\d "
                     r"PRE script return value is PRE_SKIP value\n    DAG Node: B\n\.\.\.$", nodes_log, re.M)
    pid = int(open(os.path.join(workdir, "diamond.dag.lock")).read().split()[0])
    os.kill(pid, 9)                                  # a crash: on_exit_remove requeues the job
    wait_for(lambda: "Recovery mode:" in dagman_out(workdir), timeout=60)
    assert "Recovery: node B's PRE script exited with its PRE_SKIP value; the node is done" \
        in dagman_out(workdir)
    write(workdir, "go", "")
    wait_for(lambda: "EXITING WITH STATUS" in dagman_out(workdir).partition("Recovery mode")[2],
             timeout=60)
    assert "EXITING WITH STATUS 0" in dagman_out(workdir).partition("Recovery mode")[2]
    ran = order(workdir)
    assert ran.count("pre-B") == 1 and "B" not in ran and ran[-1] == "C" and ran.count("A") == 1
    dag_ended(cell, dag)
    waited = cell.run("condor_wait", "-echo", "-wait", "5", "diamond.dag.nodes.log", cwd=workdir)
    assert waited.returncode == 0, waited.stderr
    assert "PRE script return value is PRE_SKIP value\n    DAG Node: B\n" in waited.stdout
    assert waited.stdout.splitlines()[-1] == "All jobs done."


@pytest.mark.parametrize("args, config, shown", [
    ((), "", "A 2"),
    (("-suppress_notification",), "", "A 0"),
    (("-suppress_notification", "-dont_suppress_notification"), "", "A 2"),
    ((), "DAGMAN_SUPPRESS_NOTIFICATION = True\n", "A 0")])
def test_node_jobs_send_mail_unless_notification_is_suppressed(cell, workdir, args, config, shown):
    """HTCondor's DAGMAN_SUPPRESS_NOTIFICATION defaults to False since 23.0: the node jobs
    keep their submit files' notification; -suppress_notification (or the setting True)
    makes it never; the last of the two options wins."""
    write(workdir, "A.sh", "#!/bin/sh\nexit 0\n")
    write(workdir, "A.sub", "executable = A.sh\nnotification = Complete\nqueue\n")
    write(workdir, "dag.config", config)
    write(workdir, "diamond.dag", "JOB A A.sub\n" + ("CONFIG dag.config\n" if config else ""))
    dag = dagman_id(submit_dag(cell, workdir, *args))
    assert dag_ended(cell, dag)[0][12] == "0"
    assert shown in cell.run("condor_history", "-af", "DAGNodeName", "JobNotification").stdout.splitlines()


def test_dump_rescue_writes_the_rescue_dag_at_once_and_runs_nothing(cell, workdir):
    """-DumpRescue: the manager writes the DAG's rescue DAG (its DONE nodes) and ends with
    status 0, submitting no node job."""
    node(workdir, "A")
    node(workdir, "B")
    write(workdir, "diamond.dag", "JOB A A.sub DONE\nJOB B B.sub\nPARENT A CHILD B\n")
    dag = dagman_id(submit_dag(cell, workdir, "-DumpRescue"))
    assert dag_ended(cell, dag)[0][12] == "0"
    rescue = open(os.path.join(workdir, "diamond.dag.rescue001")).read().splitlines()
    assert "DONE A" in rescue and "DONE B" not in rescue
    assert not os.path.exists(os.path.join(workdir, "order"))
    assert "Dumping rescue DAG and exiting because of -DumpRescue flag" in dagman_out(workdir)


def test_dagman_and_debug_are_accepted_and_a_bad_debug_level_is_refused(cell, workdir):
    """-dagman PATH names HTCondor's DAGMan executable: accepted, not used (the manager is
    gridtools'); -debug LEVEL is accepted; a level that is not a number is refused."""
    node(workdir, "A")
    write(workdir, "diamond.dag", "JOB A A.sub\n")
    dag = dagman_id(submit_dag(cell, workdir, "-dagman", "/no/such/condor_dagman", "-debug", "4"))
    assert dag_ended(cell, dag)[0][12] == "0"
    assert order(workdir) == ["A"]
    bad = cell.run("condor_submit_dag", "-f", "-debug", "loud", "diamond.dag", cwd=workdir)
    assert (bad.returncode, bad.stderr) == (1, "Error: -debug (-Debug) additional argument required to be a integer\n")
    assert bad.stdout.startswith("Usage: condor_submit_dag [options]")          # (HTCondor prints it there)
    # (condor_submit_dag.cpp, DagmanOptions::AutoParse: HTCondor 24's words)
    for argv, said in ((["-bogus", "diamond.dag"], "Error: Unknown flag '-bogus' provided\n"),
                       (["-maxidle"], "Error: Option -MaxIdle (-maxidle) requires an additional argument\n"),
                       (["-MaxIdle", "many", "diamond.dag"],
                        "Error: -maxidle (-MaxIdle) additional argument required to be a integer\n")):
        bad = cell.run("condor_submit_dag", *argv, cwd=workdir)
        assert (bad.returncode, bad.stderr) == (1, said), argv
    late = cell.run("condor_submit_dag", "diamond.dag", "-f", cwd=workdir)
    assert (late.returncode, late.stderr) == (1, "")
    assert late.stdout.startswith("ERROR: no arguments allowed after DAG file name(s)\nUsage: condor_submit_dag")


def test_do_recurse_writes_and_checks_the_nested_dags_submit_files_at_once(cell, workdir):
    """-do_recurse: condor_submit_dag checks each SUBDAG EXTERNAL node's DAG, and the DAGs
    those name, and writes their submit files before submitting; by default (-no_recurse)
    the manager writes them when it starts those nodes. A nested DAG with an error is
    then refused before anything is submitted."""
    write(workdir, "inner.dag", "SUBDAG EXTERNAL T innermost.dag\n")
    write(workdir, "innermost.dag", "JOB X X.sub\n")
    write(workdir, "diamond.dag", "SUBDAG EXTERNAL S inner.dag\n")
    plain = cell.run("condor_submit_dag", "-no_submit", "diamond.dag", cwd=workdir)
    assert plain.returncode == 0, plain.stderr
    assert not os.path.exists(os.path.join(workdir, "inner.dag.condor.sub"))
    deep = cell.run("condor_submit_dag", "-no_submit", "-f", "-do_recurse", "diamond.dag", cwd=workdir)
    assert deep.returncode == 0, deep.stderr
    for name in ("inner.dag", "innermost.dag"):
        assert "universe\t= scheduler" in open(os.path.join(workdir, name + ".condor.sub")).read()
    write(workdir, "innermost.dag", "JOB X X.sub\nPARENT X CHILD Y\n")
    bad = cell.run("condor_submit_dag", "-f", "-do_recurse", "diamond.dag", cwd=workdir)
    assert bad.returncode == 1 and "innermost.dag" in bad.stderr
    assert "submitted to cluster" not in bad.stdout


def test_while_the_dag_is_halted_no_pre_script_starts_and_no_job_is_submitted(cell, workdir):
    """-maxpre 1: B's PRE script waits while A's runs; the DAG is halted meanwhile (C's job
    keeps it going): A's PRE script ends but A's job is not submitted (the node is ready),
    and B's PRE script does not start, until the halt file is removed; then the DAG
    resumes and succeeds, as HTCondor's DAGMan does."""
    write(workdir, "note.sh", f"#!/bin/sh\necho $1 >> {workdir}/order\n")
    write(workdir, "hold.sh", f"#!/bin/sh\necho $1 >> {workdir}/order\n{gate(workdir)}\n")
    node(workdir, "A")
    node(workdir, "C", body=f"while [ ! -e {workdir}/go2 ]; do sleep 0.05; done")
    write(workdir, "diamond.dag", "JOB A A.sub\nSCRIPT PRE A hold.sh pre-A\n"
                                  "JOB B none.sub NOOP\nSCRIPT PRE B note.sh pre-B\nJOB C C.sub\n")
    dag = dagman_id(submit_dag(cell, workdir, "-maxpre", "1"))
    wait_for(lambda: os.path.exists(os.path.join(workdir, "order")) and set(order(workdir)) == {"pre-A", "C"},
             timeout=30)
    write(workdir, "diamond.dag.halt", "")
    wait_for(lambda: "DAG halted" in dagman_out(workdir), timeout=30)
    write(workdir, "go", "")
    # halted: A ready (its PRE script done, its job not submitted), B waits for its PRE script
    wait_for(lambda: cell.run("condor_q", str(dag), "-af", "DAG_Status", "DAG_NodesDone", "DAG_NodesPrerun",
                              "DAG_NodesQueued", "DAG_NodesReady").stdout == "6 0 1 1 1\n", timeout=30)
    assert "Node A: its job waits: the DAG is halted" in dagman_out(workdir)
    assert "Submitting HTCondor Node A" not in dagman_out(workdir)
    assert sorted(order(workdir)) == ["C", "pre-A"]
    os.unlink(os.path.join(workdir, "diamond.dag.halt"))
    wait_for(lambda: {"pre-B", "A"} <= set(order(workdir)), timeout=30)
    write(workdir, "go2", "")
    assert dag_ended(cell, dag)[0][12] == "0"
    assert "DAG resumed" in dagman_out(workdir)


def test_removing_a_dag_whose_node_waits_for_its_category_still_runs_the_final_node(cell, workdir):
    """MAXJOBS c 1: A's job runs, B waits for its category's turn; condor_rm of the DAG
    removes A's job, B is never submitted, and the FINAL node runs."""
    node(workdir, "A", body=gate(workdir))
    node(workdir, "B")
    node(workdir, "Z")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nCATEGORY A c\nCATEGORY B c\nMAXJOBS c 1\n"
                                  "FINAL Z Z.sub\n")
    dag = dagman_id(submit_dag(cell, workdir))
    wait_for(lambda: node_started(workdir, "A"), timeout=30)
    assert cell.run("condor_rm", str(dag)).returncode == 0
    wait_for(lambda: "EXITING WITH STATUS" in dagman_out(workdir), timeout=40)
    assert order(workdir) == ["A", "Z"]
    assert "Node Z completed successfully." in dagman_out(workdir)
    dag_ended(cell, dag)

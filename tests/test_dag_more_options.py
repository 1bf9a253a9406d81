"""condor_submit_dag and DAGMan as HTCondor 24's: -DoRecovery (and the accepted
-MaxHold and -SubmitMethod); what a SUBDAG EXTERNAL node's DAG gets of the DAG it is
in (-AutoRescue, -outfile_dir, the node's priority, but not -maxjobs); a negative
RETRY count refused; -DoRescueFrom in HTCondor's words, the manager renaming the
later rescue DAGs when it starts."""

import os
import re

from conftest import cell_fixture, wait_for
from gridtools.formats.condor.dag import DagError, parse_dag
from test_condor_dag_live import dag_ended, dagman_id, history, write

import pytest

cell = cell_fixture(slots=2)

TRUE_SUB = "executable = /bin/true\nlog = n.log\nqueue\n"


def arguments(folder, dag):
    """The arguments line of DAGFILE.condor.sub."""
    text = open(os.path.join(folder, dag + ".condor.sub")).read()
    return re.search(r"^arguments\s*=\s*(.*)$", text, re.M).group(1).strip('"')


def submits(folder, dag):
    """How many submit events the DAG's nodes log holds."""
    path = os.path.join(folder, dag + ".nodes.log")
    return sum(1 for line in open(path) if line.startswith("000 ("))


def test_do_recovery_max_hold_and_submit_method_are_accepted(cell, workdir):
    write(workdir, "n.sub", TRUE_SUB)
    write(workdir, "m.dag", "JOB A n.sub\n")
    proc = cell.run("condor_submit_dag", "-DoRecovery", "-MaxHold", "2", "-SubmitMethod", "0",
                    "-no_submit", "m.dag", cwd=workdir)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "-DoRecov" in arguments(workdir, "m.dag").split()
    bad = cell.run("condor_submit_dag", "-f", "-MaxHold", "x", "-no_submit", "m.dag", cwd=workdir)
    assert bad.returncode == 1 and "-maxhold (-MaxHold) additional argument required to be a integer" in bad.stderr


def test_do_recovery_takes_what_the_nodes_log_says_of_the_nodes(cell, workdir):
    """A second run with -DoRecovery finds A and B done in the nodes log the first run left:
    no node job is submitted again, and the DAG succeeds."""
    write(workdir, "n.sub", TRUE_SUB)
    write(workdir, "m.dag", "JOB A n.sub\nJOB B n.sub\nPARENT A CHILD B\n")
    first = cell.run("condor_submit_dag", "m.dag", cwd=workdir)
    assert first.returncode == 0, first.stderr
    assert dag_ended(cell, dagman_id(first))[-1][12] == "0"
    assert submits(workdir, "m.dag") == 2
    again = cell.run("condor_submit_dag", "-f", "-DoRecovery", "m.dag", cwd=workdir)
    assert again.returncode == 0, again.stderr + again.stdout
    assert dag_ended(cell, dagman_id(again))[-1][12] == "0"
    out = open(os.path.join(workdir, "m.dag.dagman.out")).read()
    assert "Running in recovery mode because -DoRecovery flag was specified" in out
    assert submits(workdir, "m.dag") == 2


def test_a_subdag_gets_the_deep_options_and_its_nodes_priority_but_not_maxjobs(cell, workdir):
    os.makedirs(os.path.join(workdir, "od"))
    write(workdir, "n.sub", TRUE_SUB)
    write(workdir, "in.dag", "JOB A n.sub\n")
    write(workdir, "top.dag", "SUBDAG EXTERNAL S in.dag\nPRIORITY S 7\n")
    proc = cell.run("condor_submit_dag", "-maxjobs", "1", "-outfile_dir", "od", "-AutoRescue", "0",
                    "top.dag", cwd=workdir)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert dag_ended(cell, dagman_id(proc), timeout=120)[-1][12] == "0"
    words = arguments(workdir, "in.dag").split()
    assert words[words.index("-AutoRescue") + 1] == "0"
    assert words[words.index("-MaxJobs") + 1] == "0"
    assert words[words.index("-Priority") + 1] == "7"
    assert words[words.index("-outfile_dir") + 1] == os.path.join(workdir, "od")
    assert os.path.exists(os.path.join(workdir, "od", "in.dag.dagman.out"))
    assert not os.path.exists(os.path.join(workdir, "in.dag.dagman.out"))
    wait_for(lambda: "7 A" in history(cell, "JobPrio", "DAGNodeName"), timeout=20)


def test_do_recurse_passes_the_deep_options_and_the_priority_but_not_maxjobs(cell, workdir):
    write(workdir, "in.dag", "JOB A n.sub\n")
    write(workdir, "top.dag", "SUBDAG EXTERNAL S in.dag\n")
    proc = cell.run("condor_submit_dag", "-no_submit", "-do_recurse", "-maxjobs", "2", "-AutoRescue", "0",
                    "-priority", "3", "top.dag", cwd=workdir)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    words = arguments(workdir, "in.dag").split()
    assert words[words.index("-AutoRescue") + 1] == "0"
    assert words[words.index("-MaxJobs") + 1] == "0"
    assert words[words.index("-Priority") + 1] == "3"


def test_a_negative_retry_count_is_refused(cell, workdir):
    with pytest.raises(DagError) as caught:
        parse_dag("JOB A n.sub\nRETRY A -1\n", source="z.dag")
    assert str(caught.value) == 'ERROR: z.dag (line 2): Invalid Retry value "-1" (cannot be negative)'
    write(workdir, "n.sub", TRUE_SUB)
    write(workdir, "z.dag", "JOB A n.sub\nRETRY A -1\n")
    proc = cell.run("condor_submit_dag", "-no_submit", "z.dag", cwd=workdir)
    assert proc.returncode == 1 and 'Invalid Retry value "-1" (cannot be negative)' in proc.stderr


def test_do_rescue_from_a_missing_rescue_dag_is_refused_in_htcondors_words(cell, workdir):
    write(workdir, "n.sub", TRUE_SUB)
    write(workdir, "b.dag", "JOB A n.sub\n")
    proc = cell.run("condor_submit_dag", "-DoRescueFrom", "5", "b.dag", cwd=workdir)
    assert proc.returncode == 1
    assert "-dorescuefrom 5 specified, but rescue DAG file b.dag.rescue005 does not exist!\n" in proc.stderr
    assert "ERROR: -dorescuefrom" not in proc.stderr


def test_do_rescue_from_leaves_the_later_rescue_dags_to_the_manager(cell, workdir):
    """condor_submit_dag says the newest rescue DAG and renames nothing; the manager renames
    the ones numbered above -DoRescueFrom's when it starts and runs from that one."""
    write(workdir, "job.sh", f"#!/bin/sh\necho $1 >> {workdir}/order\n")
    write(workdir, "n.sub", "executable = job.sh\narguments = $(JOB)\nlog = n.log\nqueue\n")
    write(workdir, "m.dag", "JOB A n.sub\nJOB B n.sub\n")
    write(workdir, "m.dag.rescue001", "DONE A\n")
    for number in ("002", "003"):
        write(workdir, "m.dag.rescue" + number, "DONE A\nDONE B\n")
    dry = cell.run("condor_submit_dag", "-no_submit", "-DoRescueFrom", "1", "m.dag", cwd=workdir)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines()[0] == "Running rescue DAG 3"
    assert all(os.path.exists(os.path.join(workdir, f"m.dag.rescue00{n}")) for n in "123")
    proc = cell.run("condor_submit_dag", "-DoRescueFrom", "1", "m.dag", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert dag_ended(cell, dagman_id(proc))[-1][12] == "0"
    assert open(os.path.join(workdir, "order")).read().split() == ["B"]
    names = set(os.listdir(workdir))
    assert {"m.dag.rescue001", "m.dag.rescue002.old", "m.dag.rescue003.old"} <= names
    assert "Renaming rescue DAGs newer than number 1" in open(os.path.join(workdir, "m.dag.dagman.out")).read()

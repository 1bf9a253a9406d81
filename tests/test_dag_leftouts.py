"""DAGMan as HTCondor 24.0's in what was left out before: a node's JobPrio is its PRIORITY
plus the DAG's priority (-priority, and a nested DAG's the priority of the node that runs
it, added again to its own nodes'); a start not in recovery mode empties the nodes log,
so -DoRecovery reads that run's events only; DAGMAN_RESET_RETRIES_UPON_RESCUE = False
keeps the retries a node used in the rescue DAG; RETRY and PRIORITY values read as
strtol reads them, cut to a C int."""

import os

import pytest
from conftest import cell_fixture, wait_for
from gridtools.formats.condor.dag import DagError, parse_dag
from test_condor_dag_live import dag_ended, dagman_id, history, write

cell = cell_fixture(slots=2)

TRUE_SUB = "executable = /bin/true\nqueue\n"


def submits(folder, dag):
    """How many submit events the DAG's nodes log holds."""
    with open(os.path.join(folder, dag + ".nodes.log")) as fh:
        return sum(1 for line in fh if line.startswith("000 ("))


def test_node_priority_is_its_own_plus_the_dags_nested_dags_too(cell, workdir):
    """-priority 5: A (PRIORITY 10) gets 15, B (none) 5; the SUBDAG node S (PRIORITY 3)
    passes 8 to its DAG, whose node I (PRIORITY 2) gets 10 and J (none) 8."""
    write(workdir, "n.sub", TRUE_SUB)
    write(workdir, "in.dag", "JOB I n.sub\nJOB J n.sub\nPRIORITY I 2\n")
    write(workdir, "top.dag", "JOB A n.sub\nJOB B n.sub\nSUBDAG EXTERNAL S in.dag\n"
                              "PRIORITY A 10\nPRIORITY S 3\n")
    proc = cell.run("condor_submit_dag", "-priority", "5", "top.dag", cwd=workdir)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert dag_ended(cell, dagman_id(proc), timeout=120)[-1][12] == "0"
    wait_for(lambda: {"A 15", "B 5", "I 10", "J 8"} <= history(cell, "DAGNodeName", "JobPrio"), timeout=30)


def test_a_fresh_start_empties_the_nodes_log_and_recovery_reads_this_run_only(cell, workdir):
    """A second run (not in recovery mode) starts with an empty nodes log, as HTCondor's
    DAGMan truncates it: it holds that run's submits only, and a -DoRecovery run after it
    finds them there (nothing submitted again)."""
    write(workdir, "n.sub", TRUE_SUB)
    write(workdir, "m.dag", "JOB A n.sub\nJOB B n.sub\n")
    first = cell.run("condor_submit_dag", "m.dag", cwd=workdir)
    assert first.returncode == 0, first.stderr
    assert dag_ended(cell, dagman_id(first))[-1][12] == "0"
    assert submits(workdir, "m.dag") == 2
    second = cell.run("condor_submit_dag", "-f", "m.dag", cwd=workdir)
    assert second.returncode == 0, second.stderr
    assert dag_ended(cell, dagman_id(second))[-1][12] == "0"
    assert submits(workdir, "m.dag") == 2
    out = open(os.path.join(workdir, "m.dag.dagman.out")).read()
    assert f"MultiLogFiles: truncating log file {os.path.join(workdir, 'm.dag.nodes.log')}" in out
    again = cell.run("condor_submit_dag", "-f", "-DoRecovery", "m.dag", cwd=workdir)
    assert again.returncode == 0, again.stderr
    assert dag_ended(cell, dagman_id(again))[-1][12] == "0"
    assert submits(workdir, "m.dag") == 2


@pytest.mark.parametrize("reset", [False, True])
def test_reset_retries_upon_rescue(cell, workdir, reset):
    """F fails 3 times (RETRY 2: all used); G fails once and is not retried (UNLESS-EXIT),
    H is never run (its parent failed). With DAGMAN_RESET_RETRIES_UPON_RESCUE = False the
    rescue DAG keeps what is left (RETRY F 0, after a comment saying so), else the full
    counts, as HTCondor's DAGMan writes them."""
    write(workdir, "fail.sub", "executable = /bin/false\nqueue\n")
    write(workdir, "n.sub", TRUE_SUB)
    write(workdir, "r.config", f"DAGMAN_RESET_RETRIES_UPON_RESCUE = {reset}\n")
    write(workdir, "r.dag", "CONFIG r.config\nJOB F fail.sub\nRETRY F 2\nJOB G fail.sub\n"
                            "RETRY G 4 UNLESS-EXIT 1\nJOB H n.sub\nRETRY H 3\nPARENT F CHILD H\n")
    proc = cell.run("condor_submit_dag", "r.dag", cwd=workdir)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert dag_ended(cell, dagman_id(proc), timeout=90)[-1][12] == "1"
    rescue = [line for line in open(os.path.join(workdir, "r.dag.rescue001")).read().splitlines()
              if line and not line.startswith("#   ") and "Created" not in line][-6:]
    if reset:
        assert rescue[-4:] == ["RETRY F 2", "# 0 of 4 retries performed; remaining attempts aborted "
                               "after node returned 1", "RETRY G 4 UNLESS-EXIT 1", "RETRY H 3"]
    else:
        assert rescue == ["# 2 of 2 retries already performed; 0 remaining", "RETRY F 0",
                          "# 0 of 4 retries performed; remaining attempts aborted after node returned 1",
                          "RETRY G 4 UNLESS-EXIT 1",
                          "# 0 of 3 retries already performed; 3 remaining", "RETRY H 3"]
    out = open(os.path.join(workdir, "r.dag.dagman.out")).read()
    assert f"DAGMAN_RESET_RETRIES_UPON_RESCUE setting: {reset}" in out


@pytest.mark.parametrize("value, expected", [
    ("99999999999999999999999", -1),       # beyond 64 bits: LONG_MAX, cut to an int
    ("-99999999999999999999999", 0),       # LONG_MIN, cut to an int
    ("4294967297", 1),                     # beyond 32 bits: its low 32 bits
    ("2147483648", -2147483648),
    ("12abc", 12),                         # strtol: what follows the number is not looked at
])
def test_priority_values_are_read_as_htcondors_parser_reads_them(value, expected):
    assert parse_dag(f"JOB A a.sub\nPRIORITY A {value}\n", source="p.dag").nodes["A"].priority == expected


def test_retry_counts_are_read_as_htcondors_parser_reads_them():
    """A count beyond 64 bits is -1 once cut to an int: refused as negative; 4294967298
    is 2; a count with no number at its start is refused in HTCondor's words."""
    with pytest.raises(DagError) as caught:
        parse_dag("JOB A a.sub\nRETRY A 99999999999999999999999\n", source="r.dag")
    assert str(caught.value) == 'ERROR: r.dag (line 2): Invalid Retry value "-1" (cannot be negative)'
    assert parse_dag("JOB A a.sub\nRETRY A 4294967298\n", source="r.dag").nodes["A"].retry == 2
    with pytest.raises(DagError) as caught:
        parse_dag("JOB A a.sub\nRETRY A x3\n", source="r.dag")
    assert str(caught.value) == 'ERROR: r.dag (line 2): Invalid Retry value "x3"'

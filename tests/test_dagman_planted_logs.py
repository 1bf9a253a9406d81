"""A DAG run from a sticky folder anyone may write (as /tmp) where another user (gtbob)
left links at the names of its DAGMan log (``DAGFILE.dagman.out``) and its nodes log
(``DAGFILE.nodes.log``) before the DAG's owner (gtalice) submitted it.

Neither link is followed, and neither is silent: a DAGMan log that cannot be opened
sends DAGMan's lines to its standard error (``DAGFILE.lib.err``) after a first line
saying why; a nodes log that is refused ends the DAG before any node runs with
DAGMan's "Unable to monitor log file" error, in the DAGMan log (or ``lib.err``) and in
``lib.err``, and the exit status the DAGMan log names is the one condor_history shows.
"""

import os

from attack_tools import run_dag, sticky_folder, two_node_dag, user_py, victim_file

SECRET = "alice's own words\n"


def _plant(cell, user, folder, names, target):
    for name in names:
        user_py(cell, user, f"import os; os.symlink({target!r}, {os.path.join(folder, name)!r})", check=True)


def _read(path):
    with open(path) as fh:
        return fh.read()


def test_a_planted_dagman_out_link_sends_dagman_s_lines_to_lib_err(cell, workdir, users):
    """bob's link at d.dag.dagman.out is not written through; the DAG runs all its nodes
    and every line of the DAGMan log, the last one with its exit status, is in lib.err
    after one line saying the DAGMan log could not be opened and why."""
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    two_node_dag(shared, alice)
    secret = victim_file(workdir, alice, SECRET)
    _plant(cell, bob, shared, ["d.dag.dagman.out"], secret)
    code = run_dag(cell, shared, alice)
    assert code == 0
    assert _read(os.path.join(shared, "order")) == "A\nB\n"
    assert _read(secret) == SECRET
    assert os.path.islink(os.path.join(shared, "d.dag.dagman.out"))
    lines = _read(os.path.join(shared, "d.dag.lib.err")).splitlines()
    assert lines, "lib.err is empty"
    first = lines[0]
    assert "d.dag.dagman.out" in first and "Can't open" in first, lines
    assert "Permission denied" in first, first
    assert any("(CONDOR_DAGMAN) STARTING UP" in line for line in lines[1:]), lines
    assert "EXITING WITH STATUS 0" in lines[-1], lines


def test_a_planted_nodes_log_link_ends_the_dag_saying_so_in_dagman_s_words(cell, workdir, users):
    """bob's link at d.dag.nodes.log is not followed: the DAG ends before any node runs,
    its DAGMan log and lib.err say that the nodes log cannot be monitored and why, and
    the exit status the DAGMan log ends with is condor_history's ExitCode."""
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    two_node_dag(shared, alice)
    secret = victim_file(workdir, alice, SECRET)
    _plant(cell, bob, shared, ["d.dag.nodes.log"], secret)
    code = run_dag(cell, shared, alice)
    assert code == 1
    assert not os.path.exists(os.path.join(shared, "order"))        # no node ran
    assert _read(secret) == SECRET
    nodes_log = os.path.join(shared, "d.dag.nodes.log")
    said = _read(os.path.join(shared, "d.dag.dagman.out"))
    assert f"ERROR: Unable to monitor log file <{nodes_log}>" in said, said
    assert f"opening file {nodes_log} for creation or truncation" in said, said
    assert said.splitlines()[-1].endswith(f"EXITING WITH STATUS {code}"), said
    err = _read(os.path.join(shared, "d.dag.lib.err"))
    assert f"ERROR: Unable to monitor log file <{nodes_log}>" in err, err


def test_both_planted_links_leave_the_whole_story_in_lib_err(cell, workdir, users):
    """With links at both names, lib.err tells all of it: the DAGMan log could not be
    opened, the nodes log cannot be monitored, and the exit status, which is
    condor_history's ExitCode."""
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    two_node_dag(shared, alice)
    secret = victim_file(workdir, alice, SECRET)
    _plant(cell, bob, shared, ["d.dag.dagman.out", "d.dag.nodes.log"], secret)
    code = run_dag(cell, shared, alice)
    assert code == 1
    assert not os.path.exists(os.path.join(shared, "order"))
    assert _read(secret) == SECRET
    lines = _read(os.path.join(shared, "d.dag.lib.err")).splitlines()
    assert lines and "Can't open" in lines[0] and "d.dag.dagman.out" in lines[0], lines
    nodes_log = os.path.join(shared, "d.dag.nodes.log")
    assert any(f"ERROR: Unable to monitor log file <{nodes_log}>" in line for line in lines), lines
    assert any(line.endswith(f"EXITING WITH STATUS {code}") for line in lines), lines

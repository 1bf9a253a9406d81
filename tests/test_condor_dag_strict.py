"""DAGMAN_USE_STRICT against a running daemon: a warning of each level goes on below
the setting (the DAG completes, the warning in DAGFILE.dagman.out) and is fatal at it
or above, as HTCondor's DAGMan: "ERROR: Warning is fatal error because of
DAGMAN_USE_STRICT setting", exit status 1 and a rescue DAG (or, for a file that is
refused, nothing run and no rescue DAG)."""

import os

from gridtools.formats.condor.dag import Effect, check_categories, parse_dag
from test_condor_dag_live import dag_ended, dagman_id, dagman_out, node, order, submit_dag, write

FATAL = "ERROR: Warning is fatal error because of DAGMAN_USE_STRICT setting"


def run_dag(cell, workdir, env=None):
    """(exit status of the DAG's manager, its DAGFILE.dagman.out) of a fresh run."""
    proc = cell.run("condor_submit_dag", "diamond.dag", cwd=workdir, env=env)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    code = dag_ended(cell, dagman_id(proc))[0][12]
    return code, dagman_out(workdir)


def rescue(workdir, number=1):
    path = os.path.join(workdir, f"diamond.dag.rescue{number:03d}")
    return open(path).read() if os.path.exists(path) else None


def clean(workdir, keep_rescue=False):
    """Leave the DAG's folder as before its first run."""
    for name in os.listdir(workdir):
        if keep_rescue and ".rescue" in name:
            continue
        if name.startswith("diamond.dag.") or name in ("order", "pre-ran"):
            os.unlink(os.path.join(workdir, name))


def test_each_warning_has_htcondors_level_and_wording():
    files = {"s.dag": "JOB X x.sub\nJOB Y y.sub\nCATEGORY X +wide\nCATEGORY Y own\nMAXJOBS +wide 5\n"
                      "MAXJOBS own 2\n"}
    dag = parse_dag("JOB A a.sub\nJOB B b.sub\nSERVICE S s.sub DONE\nSPLICE S1 s.dag\n"
                    "PARENT A CHILD B\nPARENT A CHILD B\nVARS A x=\"1\"\nVARS A APPEND x=\"2\"\n"
                    "PRIORITY A 3\nPRIORITY A 4\nPRE_SKIP A 2\nPRE_SKIP A 3\nCATEGORY A c\nCATEGORY A d\n"
                    "MAXJOBS d 1\nMAXJOBS d 2\nMAXJOBS +wide 3\nMAXJOBS empty 4\nCATEGORY B loose\n"
                    "NODE_STATUS_FILE a\nNODE_STATUS_FILE b\nJOBSTATE_LOG a\nJOBSTATE_LOG b\n",
                    source="t.dag", read=files.__getitem__)
    check_categories(dag)
    said = [(str(n), n.level, n.effect) for n in dag.notes if getattr(n, "level", None) is not None]
    assert said == [
        ("t.dag (line 3): WARNING: SERVICE node S can not be marked as DONE", 1, Effect.GO_ON),
        ("Warning: parent A already has child B", 3, Effect.STOP),
        ('Warning: VAR "x" is already defined in node "A" (Discovered at file "t.dag", line 8)', 3, Effect.STOP),
        ("Warning: new priority 4 for node A overrides old value 3", 2, Effect.STOP),
        ("Warning: new PRE_SKIP value  3 for node A overrides old value 2", 3, Effect.STOP),
        ("Warning: new category d for node A overrides old value c", 3, Effect.STOP),
        ("Warning: new maxjobs value 2 for category d overrides old value 1", 3, Effect.STOP),
        ("t.dag (line 21): Warning: Attempt to set NODE_STATUS_FILE to b does not override existing "
         "value of a", 3, Effect.STOP),
        ("t.dag (line 23): Warning: Attempt to set JOBSTATE_LOG to b does not override existing value of a",
         3, Effect.STOP),
        ("Warning: higher-level (root) maxjobs value of 3 for category +wide overrides splice S1 value of 5",
         2, Effect.STOP),
        ("Warning: category empty has no assigned nodes, so the throttle setting (4) will have no effect",
         2, Effect.STOP),
        ("Warning: category loose has no throttle value set", 2, Effect.STOP)]
    assert 'Warning: Setting VAR "x" = "2"' in dag.notes
    assert (dag.nodes["S1+Y"].category, dag.nodes["S1+X"].category) == ("S1+own", "+wide")
    assert dag.maxjobs == {"d": 2, "+wide": 3, "empty": 4, "S1+own": 2}
    refused = parse_dag("JOB A a.sub\nFINAL F f.sub\nDONE F\nDONE Z\nSAVE_POINT_FILE Z\n", source="t.dag")
    assert [(str(n), n.level, n.effect) for n in refused.notes] == [
        ("t.dag (line 3): WARNING: FINAL node(s) can not be referenced by the DONE command", 1, Effect.REFUSE),
        ("Warning: t.dag (line 4): Unknown Node Z", 1, Effect.REFUSE),
        ("Warning: t.dag (line 5): Unknown Node Z", 1, Effect.REFUSE)]
    assert not refused.nodes["F"].done


def test_level_1_a_job_macro_in_a_pre_script_ends_the_dag_by_default(cell, workdir):
    """HTCondor's default, 1: B's PRE script names $RETURN, the warning is fatal, the
    script never runs, B's job is never submitted; the rescue DAG says A is done. With
    DAGMAN_USE_STRICT 0 (the cell's configuration) the DAG completes."""
    node(workdir, "A")
    node(workdir, "B")
    write(workdir, "pre.sh", f"#!/bin/sh\ntouch {workdir}/pre-ran\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\nSCRIPT PRE B pre.sh $RETURN\n")
    warning = "Warning: $RETURN macro should not be used as a PRE script argument!"
    code, out = run_dag(cell, workdir)
    assert code == "1"
    assert "DAGMAN_USE_STRICT setting: 1\n" in out
    assert out.index(warning) < out.index(FATAL) < out.index("Aborting DAG...") \
        < out.index("Writing Rescue DAG file")
    assert order(workdir) == ["A"] and not os.path.exists(os.path.join(workdir, "pre-ran"))
    assert [ln for ln in rescue(workdir).splitlines() if not ln.startswith("#") and ln] == ["DONE A"]
    assert "EXITING WITH STATUS 1" in out.splitlines()[-1]
    clean(workdir)
    code, out = run_dag(cell, workdir, env={"_CONDOR_DAGMAN_USE_STRICT": "0"})
    assert code == "0"
    assert "DAGMAN_USE_STRICT setting: 0\n" in out and warning in out and FATAL not in out
    assert order(workdir) == ["A", "B"] and os.path.exists(os.path.join(workdir, "pre-ran"))
    assert rescue(workdir) is None


def test_level_1_a_rescue_dag_naming_a_node_the_dag_lost_is_refused(cell, workdir):
    """A DONE line of the rescue DAG names a node no longer in the DAG: at the default
    the manager refuses it (exit status 1, nothing run, no new rescue DAG); with
    DAGMAN_USE_STRICT 0 (the DAG's CONFIG file) the line is passed over and the rest
    of the rescue DAG counts."""
    node(workdir, "A")
    node(workdir, "B")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\n")
    write(workdir, "diamond.dag.rescue001", "# Rescue DAG file\nDONE Gone\nDONE A\n")
    proc = submit_dag(cell, workdir)
    assert proc.stdout.startswith("Running rescue DAG 1\n")
    assert dag_ended(cell, dagman_id(proc))[0][12] == "1"
    out = dagman_out(workdir)
    assert out.index("Warning: diamond.dag.rescue001 (line 2): Unknown Node Gone") < out.index(FATAL) \
        < out.index("Failed to parse diamond.dag")
    assert not os.path.exists(os.path.join(workdir, "order")) and rescue(workdir, 2) is None
    assert not os.path.exists(os.path.join(workdir, "diamond.dag.lock"))
    write(workdir, "strict.conf", "DAGMAN_USE_STRICT = 0\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nPARENT A CHILD B\nCONFIG strict.conf\n")
    clean(workdir, keep_rescue=True)
    proc = submit_dag(cell, workdir)
    assert proc.stdout.startswith("Running rescue DAG 1\n")
    assert dag_ended(cell, dagman_id(proc))[0][12] == "0"
    out = dagman_out(workdir)
    assert "Unknown Node Gone" in out and FATAL not in out
    assert order(workdir) == ["B"]                  # A was done


def test_level_2_a_category_without_a_throttle(cell, workdir):
    """CATEGORY with no MAXJOBS: a warning of level 2, which goes on at 1 and ends
    the DAG before any node runs at 2 (exit status 1, a rescue DAG marking nothing)."""
    node(workdir, "A")
    node(workdir, "B")
    write(workdir, "diamond.dag", "JOB A A.sub\nJOB B B.sub\nCATEGORY A heavy\nCATEGORY B heavy\n"
                                  "CONFIG strict.conf\n")
    warning = "Warning: category heavy has no throttle value set"
    write(workdir, "strict.conf", "DAGMAN_USE_STRICT = 1\n")
    code, out = run_dag(cell, workdir)
    assert code == "0" and warning in out and FATAL not in out
    assert sorted(order(workdir)) == ["A", "B"] and rescue(workdir) is None
    clean(workdir)
    write(workdir, "strict.conf", "DAGMAN_USE_STRICT = 2\n")
    code, out = run_dag(cell, workdir)
    assert code == "1"
    assert out.index(warning) < out.index(FATAL) < out.index("Aborting DAG...")
    assert not os.path.exists(os.path.join(workdir, "order"))
    assert "# Nodes premarked DONE: 0" in rescue(workdir)


def test_level_3_a_redefined_var_and_the_final_node(cell, workdir):
    """VARS of a node given twice: level 3, which goes on at 2 (the last value is used)
    and ends the DAG at 3: the rescue DAG is written, then the FINAL node runs, seeing
    the DAG's status 1 (DAG_STATUS_ERROR); it fails, and so does the DAG."""
    node(workdir, "A", args="$(x)")
    write(workdir, "A.sh", f"#!/bin/sh\necho A$1 >> {workdir}/order\n")
    write(workdir, "F.sh", f"#!/bin/sh\necho F$1 >> {workdir}/order\nexit 1\n")
    write(workdir, "F.sub", "executable = F.sh\narguments = $(DAG_STATUS)\nqueue\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nVARS A x=\"1\"\nVARS A x=\"2\"\nFINAL F F.sub\n"
                                  "CONFIG strict.conf\n")
    warning = 'Warning: VAR "x" is already defined in node "A" (Discovered at file "diamond.dag", line 3)'
    write(workdir, "strict.conf", "DAGMAN_USE_STRICT = 2\n")
    code, out = run_dag(cell, workdir)
    assert code == "1"                      # (the FINAL node failed)
    assert warning in out and 'Warning: Setting VAR "x" = "2"' in out and FATAL not in out
    assert order(workdir) == ["A2", "F0"]
    clean(workdir)
    write(workdir, "strict.conf", "DAGMAN_USE_STRICT = 3\n")
    code, out = run_dag(cell, workdir)
    assert code == "1"
    assert out.index(warning) < out.index(FATAL) < out.index("Aborting DAG...") \
        < out.index("Writing Rescue DAG file") < out.index("Running the FINAL node F")
    assert order(workdir) == ["F1"]
    assert rescue(workdir) is not None


def test_an_out_of_range_setting_is_refused(cell, workdir):
    node(workdir, "A")
    write(workdir, "strict.conf", "DAGMAN_USE_STRICT = 4\n")
    write(workdir, "diamond.dag", "JOB A A.sub\nCONFIG strict.conf\n")
    proc = cell.run("condor_submit_dag", "diamond.dag", cwd=workdir)
    assert proc.returncode != 0
    assert "DAGMAN_USE_STRICT in the condor configuration is too high (4).  Please set it to an integer " \
           "in the range 0 to 3 (default 1)." in proc.stderr + proc.stdout

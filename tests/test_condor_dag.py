"""DAG input files, rescue DAGs and the choice of nodes to run."""

import os

import pytest

from gridtools.formats.condor.dag import (
    DagError, Effect, NodeKind, ScriptWhen, find_cycle, parse_dag)
from gridtools.formats.condor.dagrender import render_dag
from gridtools.formats.condor.dagstate import (
    abort_status, apply_rescue, latest_rescue, ready_nodes, render_rescue,
    rescue_name, should_retry, unreachable)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "condor_dag")


def read(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


@pytest.fixture
def diamond():
    return parse_dag(read("diamond.dag"), source="diamond.dag")


def test_every_statement_is_read(diamond):
    a, b, c, d, f = (diamond.nodes[n] for n in "ABCDF")
    assert list(diamond.nodes) == ["A", "B", "C", "D", "F"]
    assert diamond.edges == {("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")}
    assert b.directory == "sub" and c.noop and f.kind is NodeKind.FINAL
    assert (b.retry, b.retry_unless_exit) == (3, 2)
    assert a.vars == {"x": "1", "y": 'a "q" b'}
    pre = a.scripts[ScriptWhen.PRE]
    assert (pre.command, pre.defer_status, pre.defer_time) == ("pre.sh $JOB arg", 4, 60)
    assert c.scripts[ScriptWhen.POST].command == "post.sh $RETURN"
    assert d.priority == 5 and (c.abort_on, c.abort_return) == (3, 1)
    assert {n.category for n in (a, b, c, d)} == {"cat"} and f.category == ""
    assert diamond.maxjobs == {"cat": 2} and diamond.config == "dag.config"
    assert diamond.notes == []
    assert (diamond.dot.path, diamond.dot.update, diamond.dot.overwrite) == ("x.dot", True, True)


def test_render_is_committed_and_round_trips(diamond):
    text = render_dag(diamond)
    assert text == read("diamond.rendered")
    assert render_dag(parse_dag(text)) == text


@pytest.mark.parametrize("text, message", [
    ("JOB A a.sub\nPARENT A CHILD B\n", "ERROR: t.dag (line 2): Unknown Node B"),
    ("JOB A a.sub\nRETRY Z 2\n", "ERROR: t.dag (line 2): Unknown Node Z"),
    ("JOB A a.sub\nJOB A b.sub\n", "ERROR: t.dag (line 2): node name 'A' already exists in DAG"),
    ("JOB PARENT a.sub\n", "ERROR: t.dag (line 1): token (PARENT) is a reserved word"),
    ("JOB A\n", "ERROR: t.dag (line 1): expected JOB name file"),
    ("JOB A a.sub BOGUS\n", 'ERROR: t.dag (line 1): invalid parameter "BOGUS"'),
    ("JOB A a.sub\nRETRY A many\n", 'ERROR: t.dag (line 2): Invalid Retry value "many"'),
    ("JOB A a.sub\nFROB A\n", "ERROR: t.dag (line 2): expected JOB"),
    ("JOB A a.sub\nPARENT A B\n", "ERROR: t.dag (line 2): Expected CHILD token"),
    ("JOB A a.sub\nVARS A x=1\n", "ERROR: t.dag (line 2): Unexpected characters in VARS"),
    ("JOB A a.sub\nJOB B b.sub\nPARENT A CHILD B\nPARENT B CHILD A\n",
     "ERROR: a cycle exists in the dag, please check input"),
    ("JOB A a.sub\nPARENT A CHILD A\n", "ERROR: t.dag (line 2): node A is its own parent"),
    ("FINAL F f.sub\nJOB A a.sub\nPARENT A CHILD F\n",
     "ERROR: t.dag (line 1): FINAL node F cannot have parents or children"),
    ("JOB A a.sub\nSPLICE S s.dag\n", "ERROR: t.dag (line 2): SPLICE needs the spliced file"),
    ("JOB A a.sub\nABORT-DAG-ON A 1 RETURN 300\n", "must be between 0 and 255"),
    ("JOB A {\n", "ERROR: t.dag (line 1): Missing inline description closing token: }"),
])
def test_errors_in_dagman_words(text, message):
    with pytest.raises(DagError) as info:
        parse_dag(text, source="t.dag")
    assert message in str(info.value)


def test_cycle_is_named():
    dag = parse_dag("JOB A a\nJOB B b\nJOB C c\nPARENT A CHILD B\n")
    dag.edges |= {("B", "C"), ("C", "A")}
    assert find_cycle(dag) == ["A", "B", "C", "A"]


def test_splice_joins_initial_and_final_nodes():
    inner = "JOB X x.sub\nJOB Y y.sub\nJOB Z z.sub\nPARENT X CHILD Y Z\n"
    dag = parse_dag("JOB A a.sub\nJOB B b.sub\nSPLICE S inner.dag DIR in\n"
                    "PARENT A CHILD S\nPARENT S CHILD B\n",
                    read=lambda path: {"in/inner.dag": inner}[path])
    assert set(dag.nodes) == {"A", "B", "S+X", "S+Y", "S+Z"}
    assert dag.nodes["S+Y"].directory == "in"
    assert dag.edges == {("A", "S+X"), ("S+X", "S+Y"), ("S+X", "S+Z"),
                         ("S+Y", "B"), ("S+Z", "B")}


def test_ready_nodes_follow_dependencies_priority_and_maxjobs(diamond):
    assert ready_nodes(diamond) == ["A"]
    assert ready_nodes(diamond, done={"A"}) == ["B", "C"]
    diamond.maxjobs["cat"] = 1
    assert ready_nodes(diamond, done={"A"}) == ["B"]
    assert ready_nodes(diamond, done={"A"}, running={"B"}) == []
    diamond.nodes["C"].priority = 9
    assert ready_nodes(diamond, done={"A"}) == ["C"]


def test_final_node_runs_when_nothing_else_can(diamond):
    assert ready_nodes(diamond, done={"A", "C"}, failed={"B"}) == ["F"]
    assert unreachable(diamond, {"B"}) == {"D"}
    assert ready_nodes(diamond, done={"A", "B", "C"}, running={"D"}) == []
    assert ready_nodes(diamond, done=set("ABCD")) == ["F"]
    assert ready_nodes(diamond, done=set("ABCDF")) == []


def test_retry_and_abort(diamond):
    b, c = diamond.nodes["B"], diamond.nodes["C"]
    assert should_retry(b, 1, 1) and should_retry(b, 3, 1)
    assert not should_retry(b, 4, 1) and not should_retry(b, 1, 2)
    assert abort_status(c, 3) == 1 and abort_status(c, 0) is None
    assert abort_status(b, 3) is None


def test_rescue_dag_is_written_as_committed_and_resumes(diamond):
    text = render_rescue("diamond.dag", diamond, done={"A", "C"}, failed={"B"},
                         created="12/01/2026 10:00:00")
    assert text == read("diamond.dag.rescue001")
    again = parse_dag(read("diamond.dag"), source="diamond.dag")
    apply_rescue(again, text)
    assert ready_nodes(again) == ["B"]


def test_done_in_the_dag_file_counts_as_done():
    dag = parse_dag("JOB A a.sub DONE\nJOB B b.sub\nPARENT A CHILD B\n")
    assert ready_nodes(dag) == ["B"]
    assert render_dag(dag).startswith("JOB A a.sub DONE\n")


def test_rescue_errors():
    with pytest.raises(DagError, match="node name 'A' already exists in DAG"):
        apply_rescue(parse_dag("JOB A a.sub\n"), "JOB A a.sub\n")
    dag = parse_dag("JOB A a.sub\nFINAL F f.sub\n")
    apply_rescue(dag, "\n" * 6 + "DONE Q\nDONE F\nDONE A\n", "r.dag.rescue001")
    assert dag.nodes["A"].done and not dag.nodes["F"].done
    assert dag.notes == ["Warning: r.dag.rescue001 (line 7): Unknown Node Q",
                         "r.dag.rescue001 (line 8): WARNING: FINAL node(s) can not be referenced by the DONE command"]
    assert [(n.level, n.effect) for n in dag.notes] == [(1, Effect.REFUSE)] * 2


def test_rescue_file_names():
    assert rescue_name("my.dag", 1) == "my.dag.rescue001"
    names = ["my.dag", "my.dag.rescue001", "my.dag.rescue012", "other.dag.rescue099",
             "my.dag.rescue7"]
    assert latest_rescue("my.dag", names) == ("my.dag.rescue012", 12)
    assert latest_rescue("x.dag", names) == (None, 0)


def test_pre_skip_node_status_file_and_jobstate_log_are_read():
    dag = parse_dag("JOB A a.sub\nJOB B b.sub\nPRE_SKIP A 7\nPRE_SKIP ALL_NODES 9\nPRE_SKIP B 8\n"
                    "NODE_STATUS_FILE status.txt 30\nJOBSTATE_LOG js.log\n", source="t.dag")
    assert (dag.nodes["A"].pre_skip, dag.nodes["B"].pre_skip) == (9, 8)
    assert dag.notes == ["Warning: new PRE_SKIP value  9 for node A overrides old value 7",
                         "Warning: new PRE_SKIP value  8 for node B overrides old value 9"]
    assert dag.jobstate_log == "js.log" and dag.status_file.path == "status.txt"
    for text, error in (("PRE_SKIP A x\n", 'Invalid exit code "x"'), ("PRE_SKIP A\n", "Missing exit code"),
                        ("PRE_SKIP A 1 2\n", 'invalid parameter "2"'), ("PRE_SKIP Z 1\n", "Unknown Node Z")):
        with pytest.raises(DagError) as caught:
            parse_dag("JOB A a.sub\n" + text, source="t.dag")
        assert str(caught.value) == f"ERROR: t.dag (line 2): {error}"


def test_do_rescue_from_sets_the_later_rescue_dags_aside(tmp_path):
    """condor_submit_dag -DoRescueFrom 1 with rescue001 and rescue002 renames nothing
    (-usedagdir and -allowversionmismatch are accepted); the manager then renames
    rescue002 to rescue002.old when it starts, as DAGMan's RenameRescueDagsAfter (the
    run's own rescue DAG is then rescue002)."""
    import io
    from gridtools.cli.condor import dagman, submit_dag
    dag = str(tmp_path / "a.dag")
    (tmp_path / "a.dag").write_text("JOB A a.sub\n")
    for name in ("a.dag.rescue001", "a.dag.rescue002"):
        (tmp_path / name).write_text("DONE A\n")
    opts = submit_dag.parse_args(["-DoRescueFrom", "1", "-usedagdir", "-allowversionmismatch", dag])
    assert submit_dag.prepare(opts, dag, io.StringIO())
    assert sorted(os.listdir(tmp_path)) == ["a.dag", "a.dag.rescue001", "a.dag.rescue002"]
    lines = []
    dagman.load(dag, dagman.parse_args(["-Dag", dag, "-DoRescueFrom", "1", "-UseDagDir"]), lines.append)
    assert sorted(os.listdir(tmp_path)) == ["a.dag", "a.dag.rescue001", "a.dag.rescue002.old"]
    assert "Renaming rescue DAGs newer than number 1" in lines


def include_reader(files):
    def read(path):
        if path not in files:
            raise FileNotFoundError(2, "No such file or directory", path)
        return files[path]
    return read


def test_include_reads_a_files_statements_in_its_place_nested_too():
    files = {"nodes.inc": "JOB B b.sub\nINCLUDE more/deps.inc\n",
             "more/deps.inc": "# the edges\nPARENT A CHILD B\nVARS B x=\"1\"\n"}
    dag = parse_dag("JOB A a.sub\nINCLUDE nodes.inc\nRETRY B 2\n", source="top.dag",
                    read=include_reader(files))
    assert list(dag.nodes) == ["A", "B"]
    assert dag.edges == {("A", "B")}
    assert dag.nodes["B"].retry == 2 and dag.nodes["B"].submit_file == "b.sub"
    assert dag.nodes["B"].vars == {"x": "1"}


@pytest.mark.parametrize("files, message", [
    ({}, "ERROR: top.dag (line 2): Could not open INCLUDE file nodes.inc: No such file or directory"),
    ({"nodes.inc": "INCLUDE top.dag\n"},
     "ERROR: nodes.inc (line 1): INCLUDE of top.dag makes a cycle of includes (top.dag -> nodes.inc -> top.dag)"),
    ({"nodes.inc": "INCLUDE ./nodes.inc\n"}, "ERROR: nodes.inc (line 1): INCLUDE of ./nodes.inc makes a cycle"),
    ({"nodes.inc": "JOB B b.sub\nPARENT B CHILD Z\n"}, "ERROR: nodes.inc (line 2): Unknown Node Z"),
    ({"nodes.inc": "JOB A other.sub\n"}, "ERROR: nodes.inc (line 1): node name 'A' already exists in DAG"),
    ({"nodes.inc": "INCLUDE\n"}, "ERROR: nodes.inc (line 1): expected INCLUDE filename"),
])
def test_include_errors_name_the_file_and_line(files, message):
    with pytest.raises(DagError) as info:
        parse_dag("JOB A a.sub\nINCLUDE nodes.inc\n", source="top.dag", read=include_reader(files))
    assert str(info.value).startswith(message)


@pytest.mark.parametrize("spliced, files, message", [
    ("top.dag", {"top.dag": ""}, "ERROR: top.dag (line 2): Splice S: recursive splice (top.dag -> top.dag)"),
    ("b.dag", {"b.dag": "SPLICE T top.dag\n", "top.dag": "SPLICE S b.dag\n"},
     "ERROR: b.dag (line 1): Splice T: recursive splice (top.dag -> b.dag -> top.dag)"),
    ("b.dag", {"b.dag": "SPLICE T ./sub/../b.dag\n"}, "ERROR: b.dag (line 1): Splice T: recursive splice"),
])
def test_a_dag_that_splices_itself_is_refused_in_one_line(spliced, files, message):
    """At any depth (a RecursionError and its traceback, before)."""
    with pytest.raises(DagError) as info:
        parse_dag(f"JOB A a.sub\nSPLICE S {spliced}\n", source="top.dag", read=include_reader(files))
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


def test_include_needs_a_reader():
    with pytest.raises(DagError, match="INCLUDE needs the included file"):
        parse_dag("INCLUDE x.inc\n", source="t.dag")


def test_vars_prepend_and_append_are_kept_apart_and_round_trip():
    dag = parse_dag('JOB A a.sub\nVARS A PREPEND p="1" both="early"\nVARS A APPEND q="2"\n'
                    'VARS A r="3" both="late"\nVARS ALL_NODES prepend s="4"\n')
    node = dag.nodes["A"]
    assert node.prepend_vars == {"p": "1", "s": "4"} and node.append_vars == {"q": "2"}
    assert node.vars == {"r": "3", "both": "late"}     # the last definition is used; placed by the
    text = render_dag(dag)                              # configuration (DAGMAN_DEFAULT_APPEND_VARS)
    assert 'VARS A PREPEND p="1" s="4"\nVARS A APPEND q="2"\nVARS A r="3" both="late"\n' in text
    again = parse_dag(text).nodes["A"]
    assert (again.prepend_vars, again.append_vars, again.vars) == (node.prepend_vars, node.append_vars, node.vars)
    with pytest.raises(DagError, match="line 2"):
        parse_dag("JOB A a.sub\nVARS A PREPEND\n")


def test_set_job_attr_and_env_are_read_and_round_trip():
    dag = parse_dag('JOB A a.sub\nSET_JOB_ATTR TestNumber = 17\nSET_JOB_ATTR Label = "a b"\n'
                    'SET_JOB_ATTR TestNumber = 18\nENV GET HOME, MYVAR LANG\n'
                    'ENV SET FOO=bar;BAZ=q r; \n')
    assert dag.job_attrs == {"TestNumber": "18", "Label": '"a b"'}
    assert dag.env_get == ["HOME", "MYVAR", "LANG"]
    assert dag.env_set == {"FOO": "bar", "BAZ": "q r"}
    again = parse_dag(render_dag(dag))
    assert (again.job_attrs, again.env_get, again.env_set) == (dag.job_attrs, dag.env_get, dag.env_set)


@pytest.mark.parametrize("line, message", [
    ("SET_JOB_ATTR TestNumber 17", "expected SET_JOB_ATTR name = value"),
    ("SET_JOB_ATTR = 17", "expected SET_JOB_ATTR name = value"),
    ("SET_JOB_ATTR A = a b", "invalid value of attribute A: a b"),
    ("SET_JOB_ATTR 1x = 2", 'invalid attribute name "1x"'),
    ("ENV PUT X", "expected ENV GET name ... or ENV SET name=value;..."),
    ("ENV SET FOO", 'invalid ENV SET setting "FOO" (expected name=value)'),
    ("ENV GET A-B", 'invalid environment variable name "A-B"'),
])
def test_set_job_attr_and_env_errors(line, message):
    with pytest.raises(DagError) as info:
        parse_dag(f"JOB A a.sub\n{line}\n", source="t.dag")
    assert str(info.value) == f"ERROR: t.dag (line 2): {message}"


def test_script_debug_is_read_after_defer_and_round_trips():
    dag = parse_dag("JOB A a.sub\nSCRIPT DEBUG dbg.txt ALL PRE A pre.sh $JOB x\n"
                    "SCRIPT DEFER 4 60 DEBUG out.txt stdout POST A post.sh $RETURN\n")
    pre, post = dag.nodes["A"].scripts[ScriptWhen.PRE], dag.nodes["A"].scripts[ScriptWhen.POST]
    assert (pre.command, pre.debug_file, pre.debug_streams, pre.defer_status) == \
        ("pre.sh $JOB x", "dbg.txt", "ALL", None)
    assert (post.command, post.debug_file, post.debug_streams, post.defer_status, post.defer_time) == \
        ("post.sh $RETURN", "out.txt", "STDOUT", 4, 60)
    text = render_dag(dag)
    assert "SCRIPT DEFER 4 60 DEBUG out.txt STDOUT POST A post.sh $RETURN\n" in text
    assert render_dag(parse_dag(text)) == text
    with pytest.raises(DagError, match=r'line 2\): invalid DEBUG output type "BOTH"'):
        parse_dag("JOB A a.sub\nSCRIPT DEBUG f BOTH PRE A x\n")


def test_save_point_files_are_named_and_placed_as_dagman_does(tmp_path):
    from gridtools.formats.condor.dagstate import load_save_path, save_path
    dag = parse_dag("JOB A a.sub\nJOB B b.sub\nSAVE_POINT_FILE A\nSAVE_POINT_FILE B sub/b.save\n",
                    source="run/x.dag")
    assert dag.nodes["A"].save_file == "A-x.dag.save" and dag.nodes["B"].save_file == "sub/b.save"
    assert "SAVE_POINT_FILE B sub/b.save\n" in render_dag(dag)
    top = str(tmp_path / "x.dag")
    assert save_path(top, "A-x.dag.save") == str(tmp_path / "save_files" / "A-x.dag.save")
    assert save_path(top, "./d.save") == str(tmp_path / "d.save")
    assert save_path(top, "../e/f.save") == str(tmp_path.parent / "e" / "f.save")
    assert load_save_path(top, "A-x.dag.save", "/elsewhere") == str(tmp_path / "save_files" / "A-x.dag.save")
    assert load_save_path(top, "./d.save", "/elsewhere") == "/elsewhere/d.save"
    unknown = parse_dag("JOB A a.sub\nSAVE_POINT_FILE Z\n", source="t.dag")
    assert unknown.notes == ["Warning: t.dag (line 2): Unknown Node Z"] and unknown.notes[0].level == 1


def test_progress_puts_every_node_in_one_state_as_dagman_counts_them():
    from gridtools.formats.condor.dagprogress import Progress, node_counts, progress_attrs
    dag = parse_dag("JOB A a\nJOB B b\nJOB C c\nJOB D d\nJOB E e\nFINAL F f\n"
                    "PARENT A CHILD B\nPARENT B CHILD C\nPARENT D CHILD E\n", source="p.dag")
    counts = node_counts(dag, Progress(done={"A"}, prerun={"B"}, queued={"D"}))
    assert counts == {"Total": 6, "Done": 1, "Failed": 0, "Prerun": 1, "Queued": 1, "Postrun": 0,
                      "Ready": 0, "Unready": 3, "Futile": 0}
    # B failed: C can never run; D's POST script runs; the FINAL node waits for it
    later = Progress(done={"A"}, failed={"B"}, postrun={"D"}, status=2, jobs_submitted=3,
                     jobs_completed=2, jobs_idle=1)
    attrs = progress_attrs(dag, later)
    assert {k: attrs[k] for k in ("DAG_NodesFutile", "DAG_NodesFailed", "DAG_NodesPostrun",
                                  "DAG_NodesUnready", "DAG_NodesReady", "DAG_Status",
                                  "DAG_JobsSubmitted", "DAG_JobsCompleted", "DAG_JobsIdle")} == {
        "DAG_NodesFutile": "1", "DAG_NodesFailed": "1", "DAG_NodesPostrun": "1",
        "DAG_NodesUnready": "2", "DAG_NodesReady": "0", "DAG_Status": "2",
        "DAG_JobsSubmitted": "3", "DAG_JobsCompleted": "2", "DAG_JobsIdle": "1"}
    # with D and E done, only the FINAL node is left, and ready
    assert node_counts(dag, Progress(done={"A", "D", "E"}, failed={"B"}))["Ready"] == 1


def test_exit_code_macros_as_dagman_gives_them_to_post_scripts():
    from gridtools.formats.condor.dagstate import exit_code_macros
    assert exit_code_macros([3, 0, None, 3, -9]) == {
        "$EXIT_CODES": "-9,0,3", "$EXIT_CODE_COUNTS": "-9:1,0:1,3:2",
        "$EXIT_CODE_LIST": "3,0,,3,-9", "$JOB_ABORT_COUNT": "1"}
    assert exit_code_macros([]) == {"$EXIT_CODES": "", "$EXIT_CODE_COUNTS": "",
                                    "$EXIT_CODE_LIST": "", "$JOB_ABORT_COUNT": "0"}


def test_a_dags_config_file_gives_the_dagman_settings_gridtools_follows(tmp_path):
    from gridtools.cli.condor.dagman import read_config
    from gridtools.errors import GridError
    path = tmp_path / "dag.config"
    path.write_text("N = 3\nDAGMAN_MAX_JOBS_SUBMITTED = $(N)\ndagman_max_rescue_num = 0\n"
                    "DAGMAN_MAX_POST_SCRIPTS = 2\nDAGMAN_ALWAYS_RUN_POST = true\nOTHER = 1\n")
    assert read_config(str(path)) == ({"maxjobs": 3, "max_rescue": 0, "maxpost": 2,
                                       "always_run_post": True}, [])
    path.write_text("DAGMAN_MAX_PRE_SCRIPTS = 1\nDAGMAN_MAX_JOBS_IDLE = 5\nDAGMAN_SUPPRESS_JOB_LOGS = 1\n")
    assert read_config(str(path)) == ({"maxpre": 1, "maxidle": 5}, ["DAGMAN_SUPPRESS_JOB_LOGS"])
    path.write_text("DAGMAN_MAX_RESCUE_NUM = -1\n")
    with pytest.raises(GridError, match="DAGMAN_MAX_RESCUE_NUM must be a non-negative integer"):
        read_config(str(path))
    path.write_text("DAGMAN_ALWAYS_RUN_POST = maybe\n")
    with pytest.raises(GridError, match="DAGMAN_ALWAYS_RUN_POST must be True or False, not 'maybe'"):
        read_config(str(path))


def test_script_commands_are_split_at_blanks_only_as_dagman_splits_them():
    from gridtools.cli.condor.dagscripts import script_words
    assert script_words('post.sh "two words" \'x y\'\t$JOB  it\'s') == \
        ["post.sh", '"two', 'words"', "'x", "y'", "$JOB", "it's"]
    assert script_words(' a\\ b  "" \r') == ["a\\", "b", '""']
    assert script_words("   ") == []

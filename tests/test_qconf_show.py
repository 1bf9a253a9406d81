"""qconf -s… against Grid Engine's captured output: texts, lists, templates, errors."""

import os

import pytest

from conftest import wait_for

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "reference", "sge")


def reference(name):
    """(stdout, stderr, exit code) of a captured Grid Engine command."""
    path = os.path.join(REFERENCE, name)
    if not os.path.exists(path):
        pytest.skip(f"reference {name} not available")
    with open(path) as fh:
        text = fh.read()
    code = int(text.split("# exit_code: ", 1)[1].split("\n", 1)[0])
    out = text.split("# ---- stdout ----\n", 1)[1].split("# ---- stderr ----\n", 1)[0]
    err = text.split("# ---- stderr ----\n", 1)[1]
    return out, err, code


def editor_template(name):
    path = os.path.join(REFERENCE, name)
    if not os.path.exists(path):
        pytest.skip(f"reference {name} not available")
    with open(path) as fh:
        return fh.read().split("# ---- editor file ----\n", 1)[1]


def test_help_is_grid_engines(cell):
    out, _, code = reference("qconf-help.txt")
    proc = cell.run("qconf", "-help")
    assert (proc.stdout, proc.returncode) == (out, code)


@pytest.mark.parametrize("args,name", [
    (("-sq",), "qconf-sq.template.txt"),
    (("-sp", "smp"), "qconf-sp-smp.txt"),
    (("-sp", "mpi"), "qconf-sp-mpi.txt"),
    (("-sp", "make"), "qconf-sp-make.txt"),
    (("-su", "arusers"), "qconf-su-arusers.txt"),
    (("-su", "defaultdepartment"), "qconf-su-defaultdepartment.txt"),
    (("-sc",), "qconf-sc.txt"),
    (("-se", "global"), "qconf-se-global.pristine.txt"),
    (("-sul",), "qconf-sul.pristine.txt"),
    (("-spl",), "qconf-spl.txt"),
    (("-sql",), "qconf-sql.txt"),
])
def test_shown_text_matches_reference(cell, args, name):
    out, err, code = reference(name)
    proc = cell.run("qconf", *args)
    shown = proc.stdout
    if args == ("-sc",):
        # the shipped cell adds the resources pipelines request (complex(5)) to Grid Engine's
        lines = shown.splitlines(keepends=True)
        assert [l.split()[:6] for l in lines if l.split()[:1] in (["gpu"], ["tmem"], ["tscratch"])] == [
            ["gpu", "gpu", "INT", "<=", "YES", "YES"], ["tmem", "tmem", "MEMORY", "<=", "YES", "NO"],
            ["tscratch", "tscr", "MEMORY", "<=", "YES", "NO"]]
        shown = "".join(l for l in lines if l.split()[:1] not in (["gpu"], ["tmem"], ["tscratch"]))
    assert (shown, proc.stderr, proc.returncode) == (out, err, code)


@pytest.mark.parametrize("args,name", [
    (("-scall",), "qconf-scall.pristine.txt"),
    (("-sckptl",), "qconf-sckptl.pristine.txt"),
    (("-sconfl",), "qconf-sconfl.pristine.txt"),
    (("-sprjl",), "qconf-sprjl.pristine.txt"),
    (("-suserl",), "qconf-suserl.pristine.txt"),
    (("-srqsl",), "qconf-srqsl.pristine.txt"),
    (("-so",), "qconf-so.pristine.txt"),
    (("-sstree",), "qconf-sstree.pristine.txt"),
    (("-sp", "nosuchpe"), "qconf-sp-nonexistent.txt"),
    (("-sq", "nosuch.q"), "qconf-sq-nonexistent.txt"),
    (("-sp",), "qconf-sp.template.txt"),
])
def test_empty_lists_and_errors_match_reference(cell, args, name):
    out, err, code = reference(name)
    proc = cell.run("qconf", *args)
    assert (proc.stdout, proc.stderr, proc.returncode) == (out, err, code)


def test_global_configuration_matches_reference_but_for_the_spool_path(cell):
    out, _, _ = reference("qconf-sconf-global.txt")
    proc = cell.run("qconf", "-sconf")
    assert proc.returncode == 0
    assert cell.run("qconf", "-sconf", "global").stdout == proc.stdout
    mine = [line for line in proc.stdout.splitlines() if not line.startswith("execd_spool_dir")]
    theirs = [line for line in out.splitlines() if not line.startswith("execd_spool_dir")]
    assert mine == theirs
    assert f"execd_spool_dir              {cell.root}/spool/execd\n" in proc.stdout


def test_scheduler_configuration_has_grid_engines_fields(cell):
    out, _, _ = reference("qconf-ssconf.pristine.txt")
    proc = cell.run("qconf", "-ssconf")
    assert [line[:34] for line in proc.stdout.splitlines()] == [line[:34] for line in out.splitlines()]


def test_host_lists_and_groups(cell):
    assert cell.run("qconf", "-sel").stdout == "testhost\n"
    assert cell.run("qconf", "-sh").stdout == "testhost\n"
    assert cell.run("qconf", "-ss").stdout == "testhost\n"
    assert cell.run("qconf", "-shgrpl").stdout == "@allhosts\n"
    assert cell.run("qconf", "-shgrp", "@allhosts").stdout == "group_name @allhosts\nhostlist testhost\n"
    assert cell.run("qconf", "-shgrp_tree", "@allhosts").stdout == "@allhosts\n   testhost\n"
    assert cell.run("qconf", "-shgrp_resolved", "@allhosts").stdout == "testhost\n"
    proc = cell.run("qconf", "-sconf", "testhost")
    assert (proc.stderr, proc.returncode) == ("configuration testhost not defined\n", 1)
    assert "root" in cell.run("qconf", "-sm").stdout.split()


def test_execution_host_shows_its_load(cell):
    proc = wait_for(lambda: (lambda p: p if "num_proc=" in p.stdout else None)(
        cell.run("qconf", "-se", "testhost")))
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0] == "hostname              testhost"
    assert [line.split()[0] for line in lines if not line.startswith(" ")] == [
        "hostname", "load_scaling", "complex_values", "load_values", "processors", "user_lists",
        "xuser_lists", "projects", "xprojects", "usage_scaling", "report_variables"]
    assert "num_proc=" in proc.stdout
    proc = cell.run("qconf", "-se", "nohost")
    assert (proc.stderr, proc.returncode) == ("nohost is not an execution host\n", 1)


def _load_names(text):
    """The names of the load values in ``qconf -se`` output, continuation lines joined."""
    joined = text.replace("\\\n", "")
    line = next(line for line in joined.splitlines() if line.startswith("load_values"))
    return [item.split("=", 1)[0] for item in line.split(None, 1)[1].replace(" ", "").split(",")]


def test_execution_host_load_values_are_those_an_execution_daemon_reports(cell):
    real = _load_names(reference("qconf-se-localhost.txt")[0])
    proc = wait_for(lambda: (lambda p: p if "num_proc=" in p.stdout else None)(
        cell.run("qconf", "-se", "testhost")))
    assert _load_names(proc.stdout) == real


def test_queue_instance_shows_resolved_values(cell):
    cell.run("qconf", "-mattr", "queue", "slots", "5", "all.q@testhost", check=True)
    whole = cell.run("qconf", "-sq", "all.q").stdout
    assert "slots                 2,[testhost=5]\n" in whole
    proc = cell.run("qconf", "-sq", "all.q@testhost")
    assert "hostlist              testhost\n" in proc.stdout
    assert "slots                 5\n" in proc.stdout
    assert proc.stdout.startswith("qname                 all.q\n")
    assert cell.run("qconf", "-sq", "all.q@nohost").returncode == 1
    assert cell.run("qconf", "-sq", "a*").stdout == whole


def test_sobjl_finds_queues_by_value(cell):
    out, _, _ = reference("qconf-sobjl-queue-slots-2.txt")
    assert cell.run("qconf", "-sobjl", "queue", "slots", "2").stdout == out
    assert cell.run("qconf", "-sobjl", "queue", "slots", "7").stdout == ""
    cell.run("qconf", "-mattr", "queue", "slots", "7", "all.q@testhost", check=True)
    assert cell.run("qconf", "-sobjl", "queue_instance", "slots", "7").stdout == "all.q@testhost\n"
    assert cell.run("qconf", "-sobjl", "queue", "pe_*", "mpi").stdout == "all.q\n"
    assert cell.run("qconf", "-sobjl", "exechost", "hostname", "test*").stdout == "testhost\n"


def test_sobjl_finds_exechosts_by_reported_values(cell):
    """An execution host's load values and processors, as qconf -se shows them, are
    values -sobjl looks at, as Grid Engine's qconf looks at them; the global host
    reports nothing."""
    from conftest import wait_for

    def listed(attr, value):
        proc = cell.run("qconf", "-sobjl", "exechost", attr, value)
        assert (proc.returncode, proc.stderr) == (0, "")
        return proc.stdout.splitlines()
    assert wait_for(lambda: "num_proc=" in cell.run("qconf", "-se", "testhost").stdout)
    shown = cell.run("qconf", "-se", "testhost").stdout
    processors = shown.split("\nprocessors", 1)[1].split()[0]
    assert processors != "0"
    assert listed("processors", processors) == ["testhost"]
    assert listed("processors", "0") == ["global"]
    assert listed("proc*", "*") == ["global", "testhost"]
    assert listed("load_values", "*num_proc=*") == ["testhost"]
    assert listed("load_values", "NONE") == ["global"]
    assert listed("load_*", f"num_proc={processors}") == ["testhost"]
    assert listed("load_values", "num_proc=9999") == []
    refused = cell.run("qconf", "-sobjl", "hostgroup", "hostlist", "*")
    assert refused.returncode == 1 and refused.stdout == "" and "hostgroup" in refused.stderr


def test_unknown_option_and_missing_argument(cell):
    proc = cell.run("qconf", "-bogus")
    assert proc.returncode == 1
    assert proc.stderr.startswith('error: invalid option argument "-bogus"\nSGE 8.1.9\nusage: qconf')
    proc = cell.run("qconf")
    assert proc.returncode == 1 and "usage: qconf" in proc.stderr


def test_showing_needs_no_daemon(idle_cell):
    assert idle_cell.run("qconf", "-sql").stdout == "all.q\n"
    assert idle_cell.run("qconf", "-sp", "smp").returncode == 0


def test_plain_user_may_show(cell, users):
    proc = cell.run("qconf", "-sql", user="gtalice")
    assert (proc.stdout, proc.returncode) == ("all.q\n", 0)
    assert cell.run("qconf", "-sq", "all.q", user="gtalice").returncode == 0


def test_editor_templates_match_reference(cell, workdir):
    copy = os.path.join(workdir, "tpl")
    editor = f"sh -c 'cp \"$0\" {copy}; exit 1'"
    for args, name in ((("-aq", "all2.q"), None), (("-ae",), "qconf-ae.editor-template.txt"),
                       (("-ap", "mpi"), "qconf-ap.editor-template.txt"),
                       (("-ackpt", "ckpt_test"), "qconf-ackpt.editor-template.txt"),
                       (("-acal", "night"), "qconf-acal.editor-template.txt"),
                       (("-auser",), "qconf-auser.editor-template.txt"),
                       (("-aprj",), "qconf-aprj.editor-template.txt"),
                       (("-arqs", "max_slots_per_user"), "qconf-arqs.editor-template.txt")):
        proc = cell.run("qconf", *args, env={"EDITOR": editor})
        assert proc.returncode != 0
        with open(copy) as fh:
            got = fh.read()
        if name is None:
            expected = editor_template("qconf-aq.editor-template.txt").replace("all.q", "all2.q")
        else:
            expected = editor_template(name)
        assert got == expected.rstrip("\n") + "\n", args


def test_sge_single_line_leaves_long_values_whole(cell):
    folded = wait_for(lambda: (lambda p: p if "num_proc=" in p.stdout else None)(
        cell.run("qconf", "-se", "testhost")))
    assert "\\\n" in folded.stdout
    single = {"SGE_SINGLE_LINE": "1"}
    proc = cell.run("qconf", "-se", "testhost", env=single)
    assert "\\" not in proc.stdout
    assert _load_names(proc.stdout) == _load_names(folded.stdout)
    conf = cell.run("qconf", "-sconf", check=True).stdout
    assert "reporting_params             accounting=true reporting=false \\\n" in conf
    for args in (("-sconf",), ("-sconf", "global")):
        text = cell.run("qconf", *args, env={"SGE_SINGLE_LINE": ""}, check=True).stdout
        assert text == conf.replace(" \\\n                             ", " ")
    # the editor gets the unbroken text, and an unchanged file changes nothing
    proc = cell.run("qconf", "-mconf", env={**single, "EDITOR": "true"})
    assert (proc.returncode, proc.stderr) == (1, "configuration unchanged\n")
    proc = cell.run("qconf", "-mconf", env={**single, "EDITOR": "grep -q 'false flush_time'"})
    assert (proc.returncode, proc.stderr) == (1, "configuration unchanged\n")

"""condor_config_val, run as a command against a cell in a temporary
directory: file order, comments, continuations, expansion, -v, -config,
-dump, -raw, -macro, undefined names and recursion errors."""

import os
import subprocess
import sys

import pytest

from condortools import ConfigFolder

BIN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin")


@pytest.fixture
def cell(tmp_path):
    """A cell whose etc/condor_config the test writes with cell.write()."""
    return ConfigFolder(tmp_path)


def run(cell, *args, env=None, cmd="condor_config_val"):
    environ = {k: v for k, v in os.environ.items()
               if k != "CONDOR_CONFIG" and not k.startswith("_CONDOR_")}
    environ["GRIDTOOLS_ROOT"] = str(cell.root)
    environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + environ.get("PATH", "")
    environ.update(env or {})
    return subprocess.run([os.path.join(BIN, cmd), *args], capture_output=True, text=True,
                          env=environ, cwd=str(cell.root), timeout=60)


def test_prints_expanded_values(cell):
    cell.write("MINUTE = 60\nHOUR = (60 * $(MINUTE))\n")
    result = run(cell, "HOUR", "minute")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "(60 * 60)\n60\n"
    assert result.stderr == ""


def test_later_redefinition_wins(cell):
    cell.write("A=1\nB=$(A)\nA=2\n")
    assert run(cell, "B").stdout == "2\n"


def test_undefined_name_exits_1_with_htcondor_message(cell):
    cell.write("A = 1\n")
    result = run(cell, "A", "NOT_THERE", "A", "ALSO_NOT", "OPSYS")
    assert result.returncode == 1
    assert result.stdout == "1\n1\nLINUX\n"
    assert result.stderr == "Not defined: NOT_THERE\nNot defined: ALSO_NOT\n"


def test_verbose_says_file_and_line(cell, tmp_path):
    local = tmp_path / "hosts.local"
    local.write_text("# hosts\n\n\n\n\nCONDOR_HOST = condor.cs.wisc.edu\n")
    path = cell.write(f"A = 1\nLOCAL_CONFIG_FILE = {local}\n")
    result = run(cell, "-v", "CONDOR_HOST", "a")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (                   # HTCondor 24's layout
        "CONDOR_HOST = condor.cs.wisc.edu\n"
        f" # at: {local}, line 6\n"
        " # raw: CONDOR_HOST = condor.cs.wisc.edu\n\n"
        "A = 1\n"
        f" # at: {path}, line 1\n"
        " # raw: A = 1\n\n")


def test_verbose_line_of_a_continued_definition(cell):
    path = cell.write("# one\nLONG = a \\\n  b \\\n  c\nNEXT = x\n")
    result = run(cell, "-verbose", "LONG", "NEXT")
    assert result.stdout == (f"LONG = a b c\n # at: {path}, line 2\n # raw: LONG = a b c\n\n"
                             f"NEXT = x\n # at: {path}, line 5\n # raw: NEXT = x\n\n")


def test_config_lists_files_in_use(cell, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.write_text("X = 1\n")
    two.write_text("X = 2\n")
    path = cell.write(f"LOCAL_CONFIG_FILE = {one},{two}\n")
    result = run(cell, "-config")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"\t{path}\n\t{one}\n\t{two}\n"     # (the words go to stderr)
    assert result.stderr == "Configuration source:\nLocal configuration sources:\n\n"
    assert run(cell, "X").stdout == "2\n"


def test_condor_config_variable_overrides_the_cell(cell, tmp_path):
    cell.write("WHO = cell\n")
    other = tmp_path / "elsewhere"
    other.write_text("WHO = elsewhere\n")
    result = run(cell, "-config", "WHO", env={"CONDOR_CONFIG": str(other)})
    assert result.stdout == f"\t{other}\nelsewhere\n"
    assert run(cell, "WHO").stdout == "cell\n"


def test_local_files_in_order_comma_or_space(cell, tmp_path):
    for name, text in (("a", "V = a\nONLY_A = 1\n"), ("b", "V = b\n"), ("c", "V = $(V)+c\n")):
        (tmp_path / name).write_text(text)
    cell.write(f"V = global\nLOCAL_CONFIG_FILE = {tmp_path}/a, {tmp_path}/b {tmp_path}/c\n")
    assert run(cell, "V", "ONLY_A").stdout == "b+c\n1\n"


def test_missing_local_file_is_reported(cell, tmp_path):
    cell.write(f"LOCAL_CONFIG_FILE = {tmp_path}/absent\n")
    result = run(cell, "X")
    assert result.returncode == 1
    assert "absent" in result.stderr and len(result.stderr.splitlines()) == 1


def test_missing_global_file_is_reported(cell):
    result = run(cell, "X")
    assert result.returncode == 1
    assert result.stderr.startswith("condor_config_val: cannot read configuration file ")
    assert len(result.stderr.splitlines()) == 1


def test_comments_continue_with_backslash(cell):
    cell.write("# This comment eats the next line \\\nEXAMPLE_SETTING=TRUE\nOTHER = 1\n")
    result = run(cell, "EXAMPLE_SETTING")
    assert result.returncode == 1 and result.stderr == "Not defined: EXAMPLE_SETTING\n"
    assert run(cell, "OTHER").stdout == "1\n"


def test_continuation_joins_lines(cell):
    cell.write("SHADOW_DEBUG= \\\n D_FULLDEBUG D_COMMAND\n")
    assert run(cell, "SHADOW_DEBUG").stdout == "D_FULLDEBUG D_COMMAND\n"


def test_names_case_insensitive_values_case_sensitive(cell):
    cell.write("MyMacro = MixedCase Value\n")
    assert run(cell, "MYMACRO", "mymacro").stdout == "MixedCase Value\nMixedCase Value\n"


def test_append(cell):
    cell.write("A=abc\nA=$(A),def\n")
    assert run(cell, "A").stdout == "abc,def\n"
    assert run(cell, "-raw", "A").stdout == "abc,def\n"


def test_raw_prints_unexpanded(cell):
    cell.write("TEN=5+5\nHUNDRED=$(TEN)*$(TEN)\n")
    assert run(cell, "-raw", "HUNDRED").stdout == "$(TEN)*$(TEN)\n"
    assert run(cell, "HUNDRED").stdout == "5+5*5+5\n"


def test_macro_gotcha_evaluates_to_35(cell):
    cell.write("TEN=5+5\nHUNDRED=$(TEN)*$(TEN)\nTEN2=(5+5)\nHUNDRED2=($(TEN2)*$(TEN2))\n")
    text = run(cell, "HUNDRED").stdout.strip()
    assert run(cell, "classad", "eval", text, cmd="gridtools").stdout == "35\n"
    text = run(cell, "HUNDRED2").stdout.strip()
    assert text == "((5+5)*(5+5))"
    assert run(cell, "classad", "eval", text, cmd="gridtools").stdout == "100\n"


@pytest.mark.parametrize("text,name", [
    ("A=$(B)\nB=$(A)\n", "A"),
    ("A=$(A)\nB=$(B)x\nC=$(D)\nD=$(E)\nE=$(C)\n", "C"),
])
def test_recursive_macros_are_an_error(cell, text, name):
    cell.write(text)
    result = run(cell, name)
    assert result.returncode == 1
    assert "defined in terms of itself" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_self_reference_is_not_recursion(cell):
    cell.write("A=$(A)\nB=$(B)x\n")
    result = run(cell, "A", "B")
    assert result.returncode == 0 and result.stdout == "\nx\n"


def test_defaults_and_environment(cell):
    cell.write("A = $(NOPE:fallback)\nB = $ENV(GT_TEST_VAR)\n")
    result = run(cell, "A", "B", env={"GT_TEST_VAR": "from-env"})
    assert result.stdout == "fallback\nfrom-env\n"


def test_condor_environment_overrides(cell):
    cell.write("A = file\n")
    result = run(cell, "-v", "A", env={"_CONDOR_A": "env"})
    assert result.stdout == "A = env\n # at: <Environment>\n # raw: A = env\n\n"


def test_dump(cell):
    # (config_val.cpp: a header naming the machine, one per pattern, defaults included)
    path = cell.write("BEE = $(A)\nA = 1\nOTHER_BEE = x\n")
    head = f"# Configuration from machine: {os.uname().nodename}\n"
    result = run(cell, "-dump", "bee")
    assert result.returncode == 0, result.stderr
    foot = f"# Contributing configuration file(s):\n#\t{path}\n"
    assert result.stdout == head + "\n# Parameters with names that match bee:\nBEE = $(A)\nOTHER_BEE = x\n" + foot
    assert run(cell, "-dump", "-expand", "^Bee").stdout == \
        head + "\n# Parameters with names that match ^Bee:\nBEE = 1\n" + foot
    verbose = run(cell, "-dump", "-v", "OTHER").stdout
    assert verbose == head + f"\n# Parameters with names that match OTHER:\nOTHER_BEE = x\n # at: {path}, line 3\n" \
        " # expanded: x\n"
    verbose = run(cell, "-dump", "-v", "-expand", "BEE", "^UPDATE_INTERVAL$").stdout
    assert verbose == head + (f"\n# Parameters with names that match BEE:\nBEE = 1\n # at: {path}, line 1\n # raw: $(A)\n"
                              f"OTHER_BEE = x\n # at: {path}, line 3\n # raw: x\n"
                              "\n# Parameters with names that match ^UPDATE_INTERVAL$:\n"
                              "UPDATE_INTERVAL = 300\n # at: <Default>\n # raw: 300\n")
    everything = run(cell, "-dump").stdout.splitlines()
    assert everything[0] == head.rstrip("\n")
    assert {"A = 1", "BEE = $(A)", "OTHER_BEE = x", "DOLLAR = $", "UPDATE_INTERVAL = 300"} <= set(everything)
    assert everything[-2:] == foot.splitlines()
    assert everything[1:-2] == sorted(everything[1:-2], key=str.lower)


def test_macro_option_expands_text(cell):
    cell.write("TEN=5+5\n")
    assert run(cell, "-macro", "$(TEN)*$(TEN)", "-$(NOPE:x)").stdout == "5+5*5+5\n-x\n"


def test_syntax_error_in_file(cell):
    path = cell.write("A = 1\nnot a definition\n")
    result = run(cell, "A")
    assert result.returncode == 1
    assert result.stderr == (f"condor_config_val: {path}, line 2: "
                             "expected NAME = value, found 'not a definition'\n")


def test_bad_options(cell):
    cell.write("A = 1\n")
    for args in (["-bogus", "A"], [], ["-raw", "-expand", "A"]):
        result = run(cell, *args)
        assert result.returncode == 1
        assert result.stdout == ""
        assert len(result.stderr.splitlines()) == 1, result.stderr
    assert run(cell, "--verb", "A").stdout.startswith("A = 1\n # at: ")


def test_help(cell):
    result = run(cell, "-help")
    assert result.returncode == 0 and "-dump" in result.stdout


def test_shipped_configuration(cell):
    shipped = os.path.join(os.path.dirname(BIN), "etc", "condor_config")
    cell.write(open(shipped).read())
    result = run(cell, "MINUTE", "HOUR", "START")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "60\n(60 * 60)\nTrue\n"


def test_a_knob_no_file_sets_has_its_default(cell):
    path = cell.write("PRIORITY_HALFLIFE = 600\n")
    assert run(cell, "-dump", "-v", "PRIORITY_HALFLIFE").stdout.split("\n", 3)[3] == (
        f"PRIORITY_HALFLIFE = 600\n # at: {path}, line 1\n # expanded: 600\n # default: 86400\n")
    result = run(cell, "PRIORITY_HALFLIFE", "periodic_expr_interval", "UID_DOMAIN", "START")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["600", "60", os.uname().nodename, "true"]
    assert run(cell, "MAIL").stdout == "/usr/bin/mail\n"          # (the mailer job mail uses)
    verbose = run(cell, "-v", "MATCH_TIMEOUT")
    assert verbose.stdout == "MATCH_TIMEOUT = 120\n # at: <Default>\n # raw: MATCH_TIMEOUT = 120\n\n"
    assert run(cell, "-raw", "FILESYSTEM_DOMAIN").stdout == "$(FULL_HOSTNAME)\n"


def test_where_the_cell_and_gridtools_keep_their_files(cell):
    """HTCondor's LOCAL_DIR, SPOOL, LOG ... name the cell's folders; COLLECTOR_HOST and
    DAEMON_LIST are defined; a file's macros may use them."""
    cell.write("MYLOG = $(LOG)/mine\nSPOOL = $(SPOOL)/sub\n")
    root, release = str(cell.root), os.path.dirname(BIN)
    result = run(cell, "LOCAL_DIR", "ETC", "LOG", "HISTORY", "RELEASE_DIR", "BIN",
                 "DAEMON_LIST", "COLLECTOR_HOST", "FULL_HOSTNAME", "MYLOG", "SPOOL")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        root, f"{root}/etc", f"{root}/spool/sub", f"{root}/spool/sub/history", release, BIN,
        "MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD", os.uname().nodename,
        os.uname().nodename, f"{root}/spool/sub/mine", f"{root}/spool/sub"]
    verbose = run(cell, "-v", "-raw", "COLLECTOR_HOST", "LOCAL_DIR")
    assert verbose.stdout == ("COLLECTOR_HOST = $(CONDOR_HOST)\n # at: <Default>\n\n"
                              f"LOCAL_DIR = {root}\n # at: <Default>\n\n")
    assert run(cell, "-macro", "$(SPOOL:x)").stdout == f"{root}/spool/sub\n"
    dump = run(cell, "-dump").stdout.splitlines()
    assert "SPOOL = $(LOCAL_DIR)/spool/sub" in dump and f"LOCAL_DIR = {root}" in dump


def test_every_default_is_the_one_the_code_uses(monkeypatch, tmp_path):
    """condor_config_val's defaults say what the daemon does when a knob is not set."""
    from gridtools.accounting.userprio import Settings
    from gridtools.ads import PUBLISHED_POLICY
    from gridtools.daemon.condorpolicy import interval
    from gridtools.formats.condor_params import DEFAULTS
    from gridtools.sched import groups, negotiator, startd

    def none(_name):
        return None
    prio, neg, grp = Settings(), negotiator.NegotiatorConfig(), groups.GroupsConfig.from_config({})
    pol = startd.Policy()
    from gridtools.formats.condor import jobad, jobattrs
    from gridtools.daemon import condor, condorjob, condorreq, confset, jobmail, jobside, machines, master, preen
    from gridtools.exec import poolplugins
    from gridtools.cli.condor import submit_more
    code = {
        "PRIORITY_HALFLIFE": prio.halflife, "DEFAULT_PRIO_FACTOR": prio.default_factor,
        "NICE_USER_PRIO_FACTOR": prio.nice_factor, "REMOTE_PRIO_FACTOR": prio.remote_factor,
        "PREEMPTION_REQUIREMENTS": neg.preemption_requirements, "PREEMPTION_RANK": neg.preemption_rank,
        "NEGOTIATOR_CONSIDER_PREEMPTION": neg.consider_preemption, "NEGOTIATOR_INTERVAL": neg.interval,
        "GROUP_QUOTA_MAX_ALLOCATION_ROUNDS": grp.max_rounds, "GROUP_SORT_EXPR": grp.sort_expr,
        "NEGOTIATOR_STRICT_ENFORCE_QUOTA": grp.strict, "GROUP_ACCEPT_SURPLUS": False,
        "GROUP_AUTOREGROUP": False,
        "MATCH_TIMEOUT": pol.match_timeout, "KILLING_TIMEOUT": pol.killing_timeout,
        "POLLING_INTERVAL": pol.polling_interval, "UPDATE_INTERVAL": pol.update_interval,
        "ALLOW_TRANSFER_REMAP_TO_MKDIR": condorjob.remap_mkdir(None),
        "QUEUE_SUPER_USERS": condorreq.SUPER_USERS, "ENABLE_URL_TRANSFERS": poolplugins.URL_TRANSFERS, "ENABLE_MULTIFILE_TRANSFER_PLUGINS":
        poolplugins.MULTIFILE_PLUGINS, "FILETRANSFER_PLUGIN_CLASSAD_TIMEOUT": poolplugins.CLASSAD_TIMEOUT,
        "STARTER_INITIAL_UPDATE_INTERVAL": condorjob.INITIAL_UPDATE, "STARTER_UPDATE_INTERVAL": condorjob.UPDATE_EVERY,
        **{"MODIFY_REQUEST_EXPR_" + attr.upper(): text for attr, text in machines.MODIFY_REQUEST},
        "CGROUP_MEMORY_LIMIT_POLICY": jobside.MEMORY_POLICY, "STARTER_ALWAYS_HOLD_ON_OOM": jobside.HOLD_AT_LIMIT,
        "LOCAL_UNIVERSE_CGROUP_ENFORCEMENT": jobside.LOCAL_ENFORCEMENT, "BASE_CGROUP": jobside.BASE_CGROUP,
        "DISABLE_SWAP_FOR_JOB": jobside.NO_SWAP, "USE_CGROUPS_FOR_LOCAL_UNIVERSE": jobside.LOCAL_CGROUPS,
        "PERIODIC_EXPR_INTERVAL": interval(none), "RANK": {k: d for k, _a, d in PUBLISHED_POLICY}["RANK"],
        "UID_DOMAIN": "$(FULL_HOSTNAME)", "FILESYSTEM_DOMAIN": "$(FULL_HOSTNAME)",
        "MAX_JOBS_PER_SUBMISSION": jobad.MAX_JOBS_PER_SUBMISSION,
        "MAX_JOBS_SUBMITTED": jobad.MAX_JOBS_SUBMITTED, "MAX_JOBS_PER_OWNER": jobad.MAX_JOBS_PER_OWNER,
        # (condor_submit's knob_on: False when not set)
        "SUBMIT_FACTORY_JOBS_BY_DEFAULT": False, "SUBMIT_PREVENT_MULTI_QUEUE": False,
        "SUBMIT_ALLOW_GETENV": jobattrs.GETENV_ALLOWED,
        "INTERACTIVE_SUBMIT_CMD_OVERRIDE": submit_more.INTERACTIVE_COMMAND,
        "INTERACTIVE_SUBMIT_ARGS_OVERRIDE": submit_more.INTERACTIVE_ARGS,
        # (read from the configuration as an expression: test_condor_max_running)
        "MAX_JOBS_RUNNING": "MIN({$(DETECTED_MEMORY), 10000})",
        "PREEN_INTERVAL": preen.DEFAULT_INTERVAL, "PREEN_ADMIN": "$(CONDOR_ADMIN)",
        "ENABLE_PERSISTENT_CONFIG": confset.PERSISTENT_DEFAULT, "ENABLE_RUNTIME_CONFIG": confset.RUNTIME_DEFAULT,
        "MAIL": jobmail.DEFAULT_MAILER,
        "GRACEFULLY_REMOVE_JOBS": condorjob.graceful_removal(None),
        "MACHINEMAXVACATETIME": condorjob.MACHINE_MAX_VACATE_TIME,
        "MAX_NEXT_JOB_START_DELAY": condor.MAX_NEXT_JOB_START_DELAY,
        **master.DEFAULTS,
    }
    from gridtools.jobads import parsed_ad
    assert condorjob.vacate_time(parsed_ad('Cmd = "x"')) == 600       # (MaxVacateTime, 10 minutes)
    from gridtools.daemon import condorpolicy, history, startdcron
    from gridtools.formats.condor import deferral
    from gridtools.formats.condor_config import Config
    assert condorpolicy.system_policy(none).max_releases is None is condorpolicy.system_policy(
        lambda name: "-1").max_releases
    limits, cron = history._limits(Config(), print), startdcron.Params("host", "job", {})
    code.update({"SYSTEM_MAX_RELEASES": -1, "SCHEDD_INTERVAL": deferral.DEFAULT_SCHEDD_INTERVAL,
                 "MAX_HISTORY_LOG": limits[False][0], "MAX_HISTORY_ROTATIONS": limits[False][1],
                 "ENABLE_HISTORY_ROTATION": limits[False][0] is not None,
                 "ROTATE_HISTORY_DAILY": limits[False][2], "ROTATE_HISTORY_MONTHLY": limits[False][3],
                 "MAX_EPOCH_HISTORY_LOG": limits[True][0], "MAX_EPOCH_HISTORY_ROTATIONS": limits[True][1],
                 "STARTD_CRON_MAX_JOB_LOAD": cron.max_load, "STARTD_CRON_LOG_NON_ZERO_EXIT": cron.log_exit})
    from gridtools.cli.condor import dagman, dagrun
    said = {**dagman.DEFAULTS, **dagman.CONFIG_DEFAULTS, "maxjobs": 0, "max_rescue": dagrun.MAX_RESCUE,
            "generate_subdag_submits": True, "default_priority": 0}
    code.update({name: said[option] for table in (dagman.CONFIG_KNOBS, dagman.CONFIG_FLAGS, dagman.CONFIG_INTS)
                 for name, option in table.items()})
    from gridtools.sched.local import KNOBS
    from gridtools.sched.snapshot import SchedConfig
    code.update({KNOBS[u]: text for u, text in SchedConfig().slotless_start})
    code.update({k: v for k, v in startd.DEFAULTS.items() if v is not None})
    from gridtools import cell
    from gridtools.binpath import binary_path
    from gridtools.formats import condor_config, condor_params
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    config = condor_config.Config(condor_config.builtin_defaults(), {}, condor_params.default)
    from gridtools.daemon import history
    paths = {"ETC": cell.etc(), "SPOOL": cell.spool(), "HISTORY": cell.spool("history"),
             "JOB_EPOCH_HISTORY": history.epoch_path(),
             "LOG": os.path.dirname(cell.spool("messages")), "BIN": binary_path(),
             **{f"{sub}_LOG": cell.spool("messages") for sub in ("MASTER", "SCHEDD", "STARTD", "STARTER",
                                                                 "SHADOW", "COLLECTOR", "NEGOTIATOR")}}
    for name, path in paths.items():
        assert condor_config.expand(DEFAULTS[name], config.raw, {}, name) == path, name
    assert condor_params.default("local_dir") == cell.root() == str(tmp_path)
    # what the cell says of itself only (no code reads these knobs)
    code.update({"DAEMON_LIST": "MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD",
                 "CONDOR_HOST": "$(FULL_HOSTNAME)", "COLLECTOR_HOST": "$(CONDOR_HOST)",
                 "MAX_PERIODIC_EXPR_INTERVAL": 1200, "PERIODIC_EXPR_TIMESLICE": 0.01})
    assert set(code) | set(paths) == set(DEFAULTS)
    for name, value in code.items():
        text = DEFAULTS[name]
        if isinstance(value, bool):
            assert text == str(value).lower(), name
        elif isinstance(value, (int, float)):
            assert float(text) == value, name
        else:
            assert text == value, name
    configured = groups.GroupsConfig.from_config({"GROUP_NAMES": "g"}).groups[0]
    assert (configured.accept_surplus, configured.autoregroup) == (False, False)


def test_a_fifo_named_as_the_configuration_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "config"
    os.mkfifo(fifo)
    (tmp_path / "cell" / "spool").mkdir(parents=True)      # (condor_q looks for the cell first)
    env = dict(os.environ, CONDOR_CONFIG=str(fifo), GRIDTOOLS_ROOT=str(tmp_path / "cell"))
    bin_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin")
    for command in (["condor_config_val", "HOUR"], ["condor_q"]):
        proc = subprocess.run([os.path.join(bin_dir, command[0])] + command[1:], env=env,
                              capture_output=True, text=True, timeout=20)
        assert proc.returncode == 1
        assert f"cannot read configuration file {fifo}: not a regular file" in proc.stderr


def test_summary_lists_what_the_files_change_by_file(cell, tmp_path):
    """-summary: the version line, then per file read (in order; the environment last)
    "# from FILE" and the macros it sets to other than their default, raw, by line, each
    name once with the value that won; a default left as it is, and the detected
    values (unless -summary:detected), are not listed."""
    local = tmp_path / "local"
    local.write_text("NUM_SLOTS = 4\nPRIORITY_HALFLIFE = 86400\nMY_KNOB = $(NUM_SLOTS)\n")
    path = cell.write(f"LOCAL_CONFIG_FILE = {local}\nNUM_SLOTS = 2\nNEGOTIATOR_INTERVAL = 30\n"
                      "MAX_JOBS_RUNNING = 7\n")
    result = run(cell, "-summary", env={"_CONDOR_START": "False"})
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == ("# condor_config_val $CondorVersion: 24.0.0 gridtools $\n"
                             f"\n#\n# from {path}\n#\nLOCAL_CONFIG_FILE = {local}\nNEGOTIATOR_INTERVAL = 30\n"
                             "MAX_JOBS_RUNNING = 7\n"
                             f"\n#\n# from {local}\n#\nNUM_SLOTS = 4\nMY_KNOB = $(NUM_SLOTS)\n"
                             "\n#\n# from <Environment>\n#\nSTART = False\n")
    detected = run(cell, "-sum:detected").stdout
    assert "\n#\n# from <Detected>\n#\n" in detected and "\nDETECTED_CPUS = " in detected
    assert detected.index("<Detected>") < detected.index(path)

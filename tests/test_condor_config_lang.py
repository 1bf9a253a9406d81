"""The statements of the configuration language beyond definitions: if/elif/else/endif
blocks and their conditions, use statements and the templates they read (arguments
substituted), error and warning; the policy templates give HTCondor's expressions."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from gridtools.classad import ClassAd, parse
from gridtools.errors import ConfigError
from gridtools.formats import condor_metaknobs, condor_params
from gridtools.formats.condor_config import Config, ConfigSyntaxError, builtin_defaults, load

import test_condor_config_val
from test_condor_config_val import run

cell = test_condor_config_val.cell      # (the fixture: a cell whose condor_config a test writes)


def config_of(text, fallback=None):
    config = Config({}, {}, fallback)
    config.read_text(text, "test.conf")
    return config


def values(config, *names):
    return [config.get(name) for name in names]


# ------------------------------------------------------------- conditionals

def test_if_else_and_nesting():
    config = config_of("if true\n  A = 1\n  if false\n    B = 1\n  else\n    B = 2\n  endif\n"
                       "else\n  A = 2\nendif\nC = 3\n")
    assert values(config, "A", "B", "C") == ["1", "2", "3"]


def test_elif_chain_takes_the_first_true_branch_only():
    text = "if {}\n X = if\nelif {}\n X = elif1\nelif {}\n X = elif2\nelse\n X = else\nendif\n"
    assert config_of(text.format("0", "1", "1")).get("X") == "elif1"
    assert config_of(text.format("1", "1", "1")).get("X") == "if"
    assert config_of(text.format("0", "0", "yes")).get("X") == "elif2"
    assert config_of(text.format("no", "f", "false")).get("X") == "else"


def test_a_block_inside_a_branch_not_taken_is_not_read():
    config = config_of("if false\n if true\n  A = 1\n else\n  A = 2\n endif\n"
                       " include : /no/such/file\n use ROLE : NoSuchRole\n error : never\n"
                       "elif true\n B = 1\nendif\n")
    assert "A" not in config and config.get("B") == "1"


def test_a_multi_line_value_in_a_branch_not_taken_is_skipped_whole():
    config = config_of("if false\nSCRIPT @=end\nendif\nelse\n@end\nendif\nAFTER = 1\n")
    assert "SCRIPT" not in config and config.get("AFTER") == "1"


@pytest.mark.parametrize("condition,expected", [
    ("1", True), ("0", False), ("-2.5", True), ("0.0", False), ("TRUE", True), ("False", False),
    ("yes", True), ("No", False), ("t", True), ("F", False), ("! true", False), ("!0", True),
    ("version >= 9.0", True), ("version < 24.0", False), ("version == 24.0.0", True),
    ("version == 24.0", True), ("version != 24.0.0", False), ("version > 23.99.1", True),
    ("version <= 8.9.9", False), ("! version > 25.0", True),
    ("defined A", True), ("defined EMPTY", False), ("defined NOPE", False), ("! defined NOPE", True),
    ("defined 12", True), ("defined true", True), ("defined yes", True),
    ("defined use ROLE", True), ("defined use role:personal", True), ("defined use ROLE:Nope", False),
    ("defined use NOPE", False), ("defined use POLICY:HOLD_IF_MEMORY_EXCEEDED", True),
    ("$(ONE)", True), ("$(ZERO)", False), ("$(NOPE)", False), ("! $(NOPE)", True),
    ("$(NOPE:1)", True), ("defined $(NAME)", True),
])
def test_conditions(condition, expected):
    config = config_of(f"A = x\nEMPTY =\nZERO = 0\nONE = 1\nNAME = A\nif {condition}\n R = yes\nelse\n R = no\nendif\n")
    assert config.get("R") == ("yes" if expected else "no")


def test_defined_sees_a_knob_default_through_the_fallback():
    text = "if defined PRIORITY_HALFLIFE\n R = yes\nendif\n"
    assert config_of(text, condor_params.default).get("R") == "yes"
    assert "R" not in config_of(text)


@pytest.mark.parametrize("text,line,message", [
    ("A = 1\nif A > 3\nendif\n", 2, "A > 3 is not a valid if condition because complex conditionals "
                                    "are not supported"),
    ("if false\nelif $(X) && 1\nendif\n", 2, "is not a valid elif condition"),
    ("if bogus\nendif\n", 1, "bogus is not a valid if condition because expression is not a conditional"),
    ("if version >= 5.1\nendif\n", 1, "the version literal is invalid"),
    ("if defined A-B\nendif\n", 1, "defined argument must be param name, boolean, or number"),
    ("if defined use ROLE: Personal\nendif\n", 1, "internal spaces will never match"),
    ("A = 1\nelse\n", 2, "else without matching if"),
    ("A = 1\n\nelif true\n", 3, "elif without matching if"),
    ("if true\nelse\nelse\nendif\n", 3, "else is not allowed after else"),
    ("if true\nelse\nelif 1\nendif\n", 3, "elif is not allowed after else"),
    ("endif\n", 1, "endif without matching if"),
    ("A = 1\nif true\n if false\n endif\nB = 2\n", 2, "endif(s) not found before end-of-file"),
])
def test_block_errors_name_file_and_line(text, line, message):
    with pytest.raises(ConfigSyntaxError) as info:
        config_of(text)
    assert info.value.line == line
    assert str(info.value).startswith(f"test.conf, line {line}: ")
    assert message in str(info.value)


def test_a_condition_not_tested_where_no_branch_can_be_taken():
    config = config_of("if false\n if A > 3\n endif\nendif\nif true\nelif A > 3\nendif\nOK = 1\n")
    assert config.get("OK") == "1"


def test_definitions_in_blocks_keep_their_file_and_line():
    config = config_of("if true\n\n  A = 1\nendif\n")
    assert (config.definition("A").source, config.definition("A").line) == ("test.conf", 3)


# ------------------------------------------------------------- error, warning

def test_error_stops_reading_with_the_expanded_text():
    with pytest.raises(ConfigError) as info:
        config_of("A = 2\nerror : bad $(A) thing\nB = 1\n")
    assert str(info.value) == 'Error "test.conf", Line 2: bad 2 thing'


def test_warning_is_kept_and_reading_goes_on():
    config = config_of("A = 2\nwarning : careful $(A)\nB = 3\nWARNING_LEVEL = 1\n")
    assert config.warnings == ['Warning "test.conf", Line 2: careful 2']
    assert values(config, "B", "WARNING_LEVEL") == ["3", "1"]


def test_error_inside_a_template_names_the_use_statement():
    with pytest.raises(ConfigError) as info:
        config_of("\nuse POLICY : PREEMPT_IF\n")
    assert str(info.value).startswith('Error "test.conf", Line 2: use POLICY : PREEMPT_IF requires')


# ------------------------------------------------------------- use, arguments

@pytest.mark.parametrize("body,args,expected", [
    ("$(0)|$(0#)|$(0?)", "a, , c", "a, , c|2|1"),
    ("$(0)|$(0#)|$(0?)", "", "|0|0"),
    ("$(1)|$(2)|$(3)", " a ,b,  c ", "a|b|c"),
    ("$(1)|$(2)", "a, , c", "a|c"),
    ("$(1?)$(2?)$(3?)", "a,b", "110"),
    ("$(1+)|$(2+)|$(3+)", "a, b ,c", "a, b ,c|b ,c|c"),
    ("$(2+)", "a, , c", ", c"),
    ("$(4+)", "a,b", ""),
    ("$(1:x)|$(2:y)|$(3:z)", "a", "a|y|z"),
    ("$(2+:none)", "a", "none"),
    ("$(3+:1/$(N_$(1:1)))", "", "1/$(N_1)"),
    ("$($(1))", "MEMORY_EXCEEDED", "$(MEMORY_EXCEEDED)"),
    ("$(NAME) $$(1) $ENV(1)", "a", "$(NAME) $$(1) $ENV(1)"),
    ("$(1)$(1)", "$(1)", "$(1)$(1)"),
])
def test_arguments_are_substituted(body, args, expected):
    assert condor_metaknobs.substitute(body, args) == expected


def test_split_names_and_arguments():
    assert condor_metaknobs.split(" Execute Submit,CentralManager ") == [
        ("Execute", ""), ("Submit", ""), ("CentralManager", "")]
    assert condor_metaknobs.split("A(x, f(1, 2), [a, b]) B (y),C") == [
        ("A", "x, f(1, 2), [a, b]"), ("B", "y"), ("C", "")]


def test_use_reads_a_template_with_the_use_statement_as_its_place():
    config = config_of("\nuse role : personal\n")
    assert values(config, "CONDOR_HOST", "COLLECTOR_HOST", "DAEMON_LIST") == [
        "127.0.0.1", "127.0.0.1:0", "MASTER COLLECTOR NEGOTIATOR STARTD SCHEDD"]
    assert (config.definition("CONDOR_HOST").source, config.definition("CONDOR_HOST").line) == ("test.conf", 2)


def test_several_templates_on_one_line():
    config = config_of("DAEMON_LIST = MASTER\nuse ROLE : Submit, Execute CentralManager\n")
    assert config.get("DAEMON_LIST") == "MASTER SCHEDD STARTD COLLECTOR NEGOTIATOR"


def test_partitionable_slot():
    config = config_of("use FEATURE : PartitionableSlot\nuse FEATURE : PartitionableSlot(2, cpus=50%, memory=50%)\n")
    assert values(config, "NUM_SLOTS_TYPE_1", "SLOT_TYPE_1", "SLOT_TYPE_1_PARTITIONABLE") == ["1", "100%", "true"]
    assert values(config, "NUM_SLOTS_TYPE_2", "SLOT_TYPE_2", "SLOT_TYPE_2_PARTITIONABLE") == [
        "1", "cpus=50%, memory=50%", "true"]


def test_cron_templates_use_the_cron_hooks():
    config = config_of("STARTD_CRON_JOBLIST = old\nuse FEATURE : StartdCronPeriodic(probe, 5m, /bin/probe, -v x)\n"
                       "use FEATURE : ScheddCronOneShot(once, /bin/once)\n")
    assert values(config, "STARTD_CRON_JOBLIST", "STARTD_CRON_probe_MODE", "STARTD_CRON_probe_PERIOD",
                  "STARTD_CRON_probe_EXECUTABLE", "STARTD_CRON_probe_ARGS") == [
        "old probe", "Periodic", "5m", "/bin/probe", "-v x"]
    assert values(config, "SCHEDD_CRON_once_MODE", "SCHEDD_CRON_once_KILL", "SCHEDD_CRON_once_EXECUTABLE") == [
        "OneShot", "true", "/bin/once"]
    assert "SCHEDD_CRON_once_ARGS" not in config
    with pytest.raises(ConfigError, match="ContinuousCronHook requires at least 3 arguments"):
        config_of("use FEATURE : StartdCronContinuous(tag)\n")


def test_always_run_jobs():
    config = config_of("use POLICY : ALWAYS_RUN_JOBS\n")
    assert values(config, "START", "PREEMPT", "SUSPEND", "WANT_SUSPEND", "MaxJobRetirementTime",
                  "CLAIM_WORKLIFE", "NEGOTIATOR_CONSIDER_PREEMPTION") == [
        "True", "False", "False", "False", "2147483647", "1200", "False"]


def _slot_and_job(usage):
    return ClassAd({"Memory": 100, "Cpus": 1}), ClassAd({"MemoryUsage": usage, "JobUniverse": 5})


def test_hold_if_memory_exceeded_gives_htcondors_policy():
    config = config_of("use POLICY : HOLD_IF_MEMORY_EXCEEDED\n")
    names = ("PREEMPT", "WANT_HOLD", "WANT_HOLD_REASON", "WANT_HOLD_SUBCODE", "MAXJOBRETIREMENTTIME")
    slot, job = _slot_and_job(200)
    assert [parse(config.get(n)).eval(slot, job) for n in names] == [
        True, True, "memory usage exceeded request_memory", 102, -1]
    slot, job = _slot_and_job(50)
    assert [parse(config.get(n)).eval(slot, job) for n in ("PREEMPT", "WANT_HOLD", "MAXJOBRETIREMENTTIME")] == [
        False, False, 0]


def test_policy_templates_add_to_what_is_defined():
    config = config_of("PREEMPT = KeyboardIdle < 60\nWANT_HOLD_SUBCODE = 7\n"
                       "use POLICY : HOLD_IF_MEMORY_EXCEEDED, HOLD_IF_DISK_EXCEEDED\n")
    slot = ClassAd({"Memory": 100, "Disk": 10, "KeyboardIdle": 1000})
    job = ClassAd({"MemoryUsage": 50, "DiskUsage": 20, "JobUniverse": 5})
    assert [parse(config.get(n)).eval(slot, job) for n in ("PREEMPT", "WANT_HOLD_SUBCODE", "WANT_HOLD_REASON")] == [
        True, 104, "disk usage exceeded allocated disk"]
    job = ClassAd({"MemoryUsage": 50, "DiskUsage": 5, "JobUniverse": 5})
    assert [parse(config.get(n)).eval(slot, job) for n in ("PREEMPT", "WANT_HOLD_SUBCODE")] == [False, 7]


def test_desktop_policy_expands_with_the_default_macros():
    config = load("ONLY_ENV", {}, {})
    config.read_text("use POLICY : DESKTOP\n", "test.conf")
    assert config.get("START") == ('((KeyboardIdle > 15 * 60) && (((LoadAvg - CondorLoadAvg) <= 0.3) || '
                                   '(State != "Unclaimed" && State != "Owner")))')
    slot = ClassAd({"KeyboardIdle": 1000, "LoadAvg": 0.1, "CondorLoadAvg": 0.0, "State": "Unclaimed"})
    assert parse(config.get("START")).eval(slot) is True
    assert "(TARGET.JobUniverse == 5)" in config.get("WANT_SUSPEND")


def test_desktop_hours_reads_int_of_its_fragments():
    config = config_of("use POLICY : DESKTOP_HOURS(7)\n")
    assert config.get("START") == "(ClockMin < 390 || ClockMin > 1020)"


def test_the_function_macros_of_a_configuration():
    """$RANDOM_INTEGER (as UWCS_PERIODIC_CHECKPOINT uses it), $RANDOM_CHOICE, $CHOICE,
    $SUBSTR, $BASENAME and $DIRNAME expand in a configuration as in HTCondor's."""
    config = config_of("R = $RANDOM_INTEGER(-30, 30, 10)\nL = a, b, c\nC = $CHOICE(1, L)\n"
                       "P = $RANDOM_CHOICE(x, y)\nABC = abcdef\nS = $SUBSTR(ABC, 2, 3)\nB = $BASENAME(/a/b/c.txt)\n"
                       "D = $DIRNAME(/a/b/c.txt)\nK = $UNKNOWN(1)\n")
    assert {config.get("R") for _ in range(60)} == {"-30", "-20", "-10", "0", "10", "20", "30"}
    assert values(config, "C", "S", "B", "D", "K") == ["b", "cde", "c.txt", "/a/b/", "$UNKNOWN(1)"]
    assert config.get("P") in ("x", "y")
    checkpoint = config_of("use FEATURE : UWCS_DESKTOP_POLICY_VALUES\n",
                           condor_params.macro).get("UWCS_PERIODIC_CHECKPOINT")
    assert "RANDOM" not in checkpoint and parse(checkpoint) is not None


def test_nested_use_and_use_inside_an_if():
    config = config_of("PolicyExprFragments = mine\nuse POLICY : UWCS_DESKTOP\n")
    assert "KeyboardBusy" not in config and config.get("START") == config.get("UWCS_START")
    config = config_of("use POLICY : UWCS_DESKTOP\n")
    assert config.get("KeyboardBusy") == "(KeyboardIdle < )"       # (MINUTE: not in a bare Config)


def test_host_based_security_names_this_machine_s_addresses():
    """IPV4_ADDRESS and IPV6_ADDRESS are this machine's (found when first asked for), as
    SECURITY : HOST_BASED reads them."""
    import socket
    found = condor_params.addresses()
    socket.inet_pton(socket.AF_INET, found["IPV4_ADDRESS"])
    assert found["IP_ADDRESS"] == found["IPV4_ADDRESS"]
    config = config_of("FULL_HOSTNAME = here.example\nuse SECURITY : HOST_BASED\n", condor_params.macro)
    assert config.get("ALLOW_WRITE").split() == ["here.example", found["IPV4_ADDRESS"]] + \
        ([found["IPV6_ADDRESS"]] if found["IPV6_ADDRESS"] else [])
    assert condor_params.default("ipv4_address") == found["IPV4_ADDRESS"]


def test_security_templates():
    config = config_of("use SECURITY : recommended_v9_0(svc, admin@x)\n")
    assert values(config, "SECURITY_MODEL", "SEC_DEFAULT_ENCRYPTION", "ALLOW_ADMINISTRATOR", "ALLOW_DAEMON") == [
        "9.0", "required", "svc@* condor_pool@* admin@x", "svc@* condor_pool@*"]
    config = Config(dict(builtin_defaults(), USERNAME="alice", CondorIsAdmin="false", UID_DOMAIN="d"), {})
    config.read_text("use SECURITY : USER_BASED\n", "test.conf")
    assert values(config, "SECURITY_MODEL", "ALLOW_WRITE", "ALLOW_ADMINISTRATOR") == [
        "24.0", "alice@d", "alice@* condor@password root@*"]


@pytest.mark.parametrize("text,message", [
    ("use ROLE : Personal, Nope\n", "use ROLE: does not recognise Nope"),
    ("use NOPE : Personal\n", "use NOPE: does not recognise Personal"),
    ("use : Personal\n", "use needs a keyword before : Personal"),
])
def test_unknown_templates_are_errors(text, message):
    with pytest.raises(ConfigSyntaxError) as info:
        config_of("A = 1\n" + text)
    assert str(info.value) == f"test.conf, line 2: {message}"


def test_use_and_use_like_names_are_still_definitions():
    config = config_of("USE_X = 1\nuser = 2\nuse = 3\nerrors = 4\nif_x = 5\nelse_y = 6\n")
    assert values(config, "USE_X", "user", "use", "errors", "if_x", "else_y") == ["1", "2", "3", "4", "5", "6"]


def test_the_template_module_is_loaded_only_for_a_use_statement():
    code = ("import sys\nfrom gridtools.formats.condor_config import Config\n"
            "c = Config({}, {})\nc.read_text('if version > 9.0\\nA = 1\\nendif\\n')\n"
            "print('gridtools.formats.condor_metaknobs' in sys.modules)\n"
            "c.read_text('use ROLE : Execute\\n')\n"
            "print('gridtools.formats.condor_metaknobs' in sys.modules)\n")
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=src), check=True)
    assert out.stdout == "False\nTrue\n"


# ------------------------------------------------------------- the commands' first look

@pytest.mark.parametrize("text, used", [
    ("use ROLE : Personal\n", True),
    ("  @USE\tSECURITY : HOST_BASED\n", True),
    ("A = 1\n# use POLICY : DESKTOP\nQUEUE_SUPER_USERS = root\nuser = 1\nUSE_X = 1\n", False),
])
def test_a_use_statement_may_set_any_knob(tmp_path, monkeypatch, text, used):
    """A use statement sets knobs the global file does not name: the commands' first
    look at the file then reads its language (the shipped file has none)."""
    from gridtools import cell as cells
    from gridtools.cli.condor import access
    from test_condor_units import _only_this_config
    _only_this_config(tmp_path, monkeypatch, text)
    assert access.may_set("MAX_JOBS_PER_SUBMISSION") is used
    assert access.open_to_all("WRITE") is not used
    with open(os.path.join(cells.shipped_etc(), "condor_config")) as shipped:
        assert not access._uses_templates(shipped.read().lower())


# ------------------------------------------------------------- condor_config_val

def test_condor_config_val_shows_knobs_set_by_use_and_in_if(cell):
    path = cell.write("use ROLE : Personal\nif defined use POLICY:DESKTOP\n  IN_IF = yes\nelse\n  IN_IF = no\n"
                      "endif\nuse POLICY : HOLD_IF_MEMORY_EXCEEDED\nwarning : look at $(CONDOR_HOST)\n")
    result = run(cell, "-v", "CONDOR_HOST", "IN_IF")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (f"CONDOR_HOST = 127.0.0.1\n # at: {path}, line 1, use ROLE:Personal+0\n # raw: CONDOR_HOST = 127.0.0.1\n\n"
                             f"IN_IF = yes\n # at: {path}, line 3\n # raw: IN_IF = yes\n\n")
    assert result.stderr == f'Warning "{path}", Line 8: look at 127.0.0.1\n'
    assert run(cell, "WANT_HOLD_SUBCODE").stdout == (
        "ifThenElse((JobUniverse != 13 && MemoryUsage =!= UNDEFINED && MemoryUsage > Memory), 102, UNDEFINED)\n")
    assert run(cell, "StartIdleTime").stdout == "15 * 60\n"


def test_condor_config_val_lists_and_prints_templates(cell):
    cell.write("A = 1\n")
    result = run(cell, "use", "role", "use", "ROLE:submit", "use", "FEATURE:PartitionableSlot(2, 50%)",
                 "use", "ROLE:Nope")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("use ROLE accepts\n  CentralManager\n  Execute\n  get_htcondor_central_manager\n"
                             "  get_htcondor_execute\n  get_htcondor_submit\n  Personal\n  Submit\n"
                             "use ROLE:Submit is\nDAEMON_LIST = $(DAEMON_LIST) SCHEDD\n"
                             "use FEATURE:PartitionableSlot(2, 50%) is\nNUM_SLOTS_TYPE_2 = 1\n"
                             "SLOT_TYPE_2_PARTITIONABLE = true\nSLOT_TYPE_2 = 50%\n\n"
                             "Not defined: use ROLE:NOPE\n")


def test_condor_config_val_expands_the_use_statements_of_a_template(cell):
    """-expand prints what the templates a template uses say, in their place (their use
    lines left out); -verbose keeps them, each expansion between its marks."""
    cell.write("A = 1\n")
    result = run(cell, "use", "FEATURE:AssignProjectName(projects)", "-expand")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "use FEATURE:AssignProjectName(projects) expands to" and lines[-1] == ""
    assert not any(line.startswith("use ") for line in lines[1:])
    # (AssignProjectName uses SetJobAttrFromUsermap, which uses ScheddUsermapFile in an if)
    assert lines[lines.index("if 0") + 4:lines.index("if 0") + 7] == [
        "SCHEDD_CLASSAD_USER_MAP_NAMES = $(SCHEDD_CLASSAD_USER_MAP_NAMES) projects",
        "CLASSAD_USER_MAPFILE_projects = ", "endif"]
    assert "JOB_TRANSFORM_SetProjectName = EVALSET ProjectName usermap(\"projects\",Owner,ProjectName)" in lines
    verbose = run(cell, "-v", "use", "POLICY:HOLD_IF_MEMORY_EXCEEDED", "-expand").stdout.splitlines()
    outer = "use POLICY : WANT_HOLD_IF(MEMORY_EXCEEDED, $(HOLD_SUBCODE_MEMORY_EXCEEDED:102), $(HOLD_REASON_MEMORY_EXCEEDED))"
    inner = "use POLICY : PREEMPT_IF(MEMORY_EXCEEDED)"
    at = verbose.index(outer)
    assert verbose[at + 1] == " #begin-expanding# " + outer
    assert verbose[at + 2] == inner and verbose[at + 3] == " #begin-expanding# " + inner
    assert verbose[at + 4:at + 6] == ["if ! 1", "  error : use POLICY : PREEMPT_IF requires an argument: the name of "
                                      "a configuration variable holding the trigger expression."]
    assert " #end-expanding# " + inner in verbose and verbose[-2] == " #end-expanding# " + outer
    assert "  PREEMPT = $(MEMORY_EXCEEDED)" in verbose
    plain = run(cell, "use", "POLICY:HOLD_IF_MEMORY_EXCEEDED").stdout.splitlines()
    assert plain[-1] == outer and "  PREEMPT = $(MEMORY_EXCEEDED)" not in plain


def test_condor_config_val_reports_an_error_statement(cell):
    path = cell.write("A = 1\nif version >= 24.0\n  error : not yet\nendif\n")
    result = run(cell, "A")
    assert result.returncode == 1
    assert result.stderr == f'condor_config_val: Error "{path}", Line 3: not yet\n'


# ------------------------------------------------------------- HTCondor itself

def _htcondor_param(tmp_path, text, names):
    """What HTCondor's Python bindings give for ``names`` of configuration ``text``."""
    if importlib.util.find_spec("htcondor2") is None:      # (not imported here: it sets CONDOR_CONFIG)
        pytest.skip("HTCondor's Python bindings are not installed")
    path = tmp_path / "htcondor_config"
    path.write_text(text)
    code = ("import json, sys, htcondor2\n"
            "print(json.dumps([htcondor2.param.get(n) for n in sys.argv[1:]]))\n")
    out = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True,
                         env=dict(os.environ, CONDOR_CONFIG=str(path)), timeout=60)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("text", [
    "use POLICY : HOLD_IF_MEMORY_EXCEEDED\n",
    "use POLICY : DESKTOP_IDLE(9, 17, 2, 4)\n",
    "use FEATURE : PartitionableSlot(2, cpus=25%)\nuse SECURITY : recommended_v9_0(svc, a@b, c)\n"
    "if version >= 9.0\n V = new\nelif true\n V = old\nendif\nif defined use ROLE:nope\n D = y\nelse\n D = n\nendif\n",
])
def test_expansions_agree_with_htcondor(tmp_path, text):
    names = ["PREEMPT", "WANT_HOLD", "WANT_HOLD_REASON", "WANT_HOLD_SUBCODE", "MAXJOBRETIREMENTTIME", "START",
             "SLOT_TYPE_2", "ALLOW_ADMINISTRATOR", "V", "D"]
    theirs = _htcondor_param(tmp_path, text, names)
    config = load("ONLY_ENV", {}, {}, condor_params.default)
    config.read_text(text, "test.conf")
    for name, their in zip(names, theirs):
        if config.definition(name) is None:
            continue
        ours = config.get(name)
        if "".join(ours.split()).lower() == "".join(str(their).split()).lower():
            continue
        for usage in (200, 50):     # (a knob default of gridtools' own may be or-ed in)
            slot, job = _slot_and_job(usage)
            assert parse(ours).eval(slot, job) == parse(str(their)).eval(slot, job), (name, ours, their)


def test_htcondor_s_other_templates_read_as_htcondor_s_or_set_nothing():
    """The templates of HTCondor's table the cell has no use for still read: a
    configuration written for HTCondor does not fail on them."""
    config = config_of("use FEATURE : GPUs\nuse ROLE : get_htcondor_execute\nuse SECURITY : FIPS\n"
                       "use FEATURE : AssignProjectName(projects, /etc/projects.map)\n"
                       "use UPGRADE : DISCARD\nuse EXPERIMENTAL : HAD\nuse FEATURE : PelicanCache\n",
                       condor_params.macro)
    assert config.get("STARTD_CRON_JOBLIST").split() == ["GPUs_MONITOR"]
    assert config.get("STARTD_CRON_GPUs_MONITOR_METRICS") == "SUM:GPUs, PEAK:GPUsMemory"
    assert config.get("DAEMON_LIST").split() == ["STARTD"] and config.get("TRUST_DOMAIN") is not None
    assert config.get("SEC_DEFAULT_CRYPTO_METHODS") == "AES,3DES"
    assert config.get("JOB_TRANSFORM_SetProjectName") == 'EVALSET ProjectName usermap("projects",Owner,ProjectName)'
    assert config.get("CLASSAD_USER_MAPFILE_projects") == "/etc/projects.map"
    with pytest.raises(ConfigError, match="requires a map_file argument"):
        config_of("use FEATURE : AssignAccountingGroup\n")

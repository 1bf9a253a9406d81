"""The configuration language: lines, comments, continuations, macro
expansion when used, appends, defaults, cycles, includes and loading."""

import os

import pytest

from gridtools.errors import ConfigError
from gridtools.formats.condor_config import (
    Config, ConfigSyntaxError, MacroError, boolean, expand, integer, load, locate, logical_lines,
    parse_lines, render,
)


def config_of(text, environ=None):
    config = Config({}, environ if environ is not None else {})
    config.read_text(text, "test.conf")
    return config


def test_later_definitions_win_and_references_expand_when_used():
    config = config_of("A=1\nB=$(A)\nA=2\n")
    assert config.get("B") == "2"
    assert config.raw("B") == "$(A)"


def test_names_are_case_insensitive_values_are_not():
    config = config_of("Mixed_Case = Value With CASE\n")
    assert config.get("MIXED_CASE") == config.get("mixed_case") == "Value With CASE"
    assert config_of("a = 1\nA = 2\n").get("a") == "2"
    assert config_of("X = $(y)\nY = yes\n").get("x") == "yes"


def test_appending_to_a_macro():
    config = config_of("A=abc\nA=$(A),def\nA = $(a), ghi\n")
    assert config.get("A") == "abc,def, ghi"
    assert config_of("LIST = $(LIST:start),more\n").get("LIST") == "start,more"


def test_self_reference_without_a_previous_value_is_empty():
    assert config_of("A = $(A)x\n").get("A") == "x"


@pytest.mark.parametrize("text,cycle", [
    ("A=$(B)\nB=$(A)\n", "A -> B -> A"),
    ("A=$(B)\nB=$(C)\nC=$(A)\n", "A -> B -> C -> A"),
    ("A=x$(B)y\nB=$(D:$(A))\n", "A -> B -> A"),
])
def test_recursive_macros_are_an_error_not_a_hang(text, cycle):
    config = config_of(text)
    with pytest.raises(MacroError) as info:
        config.get("A")
    assert cycle in str(info.value)
    assert isinstance(info.value, ConfigError)


def test_runaway_expansion_is_an_error():
    lines = ["M0 = xxxxxxxxxxxxxxxx"] + [f"M{i} = $(M{i - 1})$(M{i - 1})" for i in range(1, 40)]
    config = config_of("\n".join(lines) + "\n")
    assert len(config.get("M10")) == 16 * 1024
    with pytest.raises(ConfigError, match="too long"):
        config.get("M39")


def test_seed_macro_gotcha():
    config = config_of("TEN=5+5\nHUNDRED=$(TEN)*$(TEN)\n")
    assert config.get("HUNDRED") == "5+5*5+5"
    fixed = config_of("TEN=(5+5)\nHUNDRED=($(TEN)*$(TEN))\n")
    assert fixed.get("HUNDRED") == "((5+5)*(5+5))"


def test_defaults_environment_and_nesting():
    config = config_of("A = $(UNSET:fallback)\nB = $(UNSET)\nC = $ENV(HOME_DIR)\n"
                       "D = $ENV(NOPE:none)\nE = $(K_$(N))\nN = 2\nK_2 = two\n"
                       "F = $(SET:ignored)\nSET = used\nG = $$(Memory) $$([Cpus*2])\n"
                       "H = cost: $5\nI = $(DOLLAR)(X)\nDOLLAR = $\n",
                       environ={"HOME_DIR": "/home/x"})
    assert config.get("A") == "fallback"
    assert config.get("B") == ""
    assert config.get("C") == "/home/x"
    assert config.get("D") == "none"
    assert config.get("E") == "two"
    assert config.get("F") == "used"
    assert config.get("G") == "$$(Memory) $$([Cpus*2])"
    assert config.get("H") == "cost: $5"
    assert config.get("I") == "$(X)"
    assert config.get("UNKNOWN") is None


def test_comments_and_continuations():
    text = ("# This comment eats the next line \\\n"
            "EXAMPLE_SETTING=TRUE\n"
            "SHADOW_DEBUG= \\\n"
            "    D_FULLDEBUG D_COMMAND\n"
            "   # indented comment\n"
            "URL = http://example.org/#fragment\n"
            "JOINED = abc\\\n"
            "   def\n")
    config = config_of(text)
    assert "EXAMPLE_SETTING" not in config
    assert config.get("SHADOW_DEBUG") == "D_FULLDEBUG D_COMMAND"
    assert config.get("URL") == "http://example.org/#fragment"
    assert config.get("JOINED") == "abcdef"


def test_logical_lines_keep_the_first_line_number():
    lines = list(logical_lines("A = 1\nB = 2 \\\n  3 \\\n  4\nC = 5\n"))
    assert lines == [(1, "A = 1"), (2, "B = 2 3 4"), (5, "C = 5")]


def test_definitions_remember_file_and_line():
    config = config_of("\n# comment\nA = 1\n\nB = \\\n  2\n")
    a, b = config.definition("a"), config.definition("b")
    assert (a.source, a.line, a.name) == ("test.conf", 3, "A")
    assert (b.line, b.raw) == (5, "2")


def test_multi_line_values():
    config = config_of("SCRIPT @=end\n  line one\n  $(X)\n@end\nX = two\nAFTER = 1\n")
    assert config.get("SCRIPT") == "  line one\n  two"
    assert config.get("AFTER") == "1"
    with pytest.raises(ConfigSyntaxError, match="@end"):
        config_of("S @=end\nnever closed\n")


@pytest.mark.parametrize("text,line", [
    ("A = 1\nthis is not a definition\n", 2),
    ("A = 1\n= 5\n", 2),
    ("\n\nuse ROLE : NoSuchRole\n", 3),
    ("if defined A\n", 1),
    ("A = 1\nendif\n", 2),
    ("A = 1\n1ABC = 2\n", 2),
])
def test_syntax_errors_name_file_and_line(text, line):
    with pytest.raises(ConfigSyntaxError) as info:
        config_of(text)
    assert info.value.line == line
    assert str(info.value).startswith(f"test.conf, line {line}: ")


def test_empty_values_and_spacing():
    config = config_of("RANK =\nA=b\n  SPACED   =   value with  spaces   \n")
    assert config.get("RANK") == ""
    assert config.get("A") == "b"
    assert config.get("SPACED") == "value with  spaces"


def test_names_with_dots_and_dashes():
    config = config_of("GROUP_QUOTA_group-cms = 10\nSCHEDD.MAX_JOBS = 5\n")
    assert config.get("group_quota_GROUP-CMS") == "10"
    assert config.get("schedd.max_jobs") == "5"


def test_include(tmp_path):
    (tmp_path / "policy").write_text("START = $(BASE) && Memory > 10\n")
    main = tmp_path / "main"
    main.write_text("BASE = True\ninclude : policy\ninclude ifexist : missing\nLAST = 1\n")
    config = Config({}, {})
    config.read_file(str(main))
    assert config.get("START") == "True && Memory > 10"
    assert config.definition("START").source == str(tmp_path / "policy")
    main.write_text("include : missing\n")
    with pytest.raises(ConfigError, match="missing"):
        Config({}, {}).read_file(str(main))
    (tmp_path / "loop").write_text("include : loop\n")
    with pytest.raises(ConfigError, match="nested"):
        Config({}, {}).read_file(str(tmp_path / "loop"))


def test_render_round_trip():
    config = config_of("A = 1\nB = $(A) x\nM @=end\nl1\nl2\n@end\nC = tail \\\n")
    again = config_of(render(config))
    assert [(d.name, d.raw) for d in again.definitions()] == \
        [(d.name, d.raw) for d in config.definitions()]
    assert render(again) == render(config)


def test_expand_serves_any_lookup():
    # Submit description files reuse the same expansion with their own names.
    values = {"process": "3", "cluster": "17", "out": "job.$(Cluster).$(Process).out"}
    lookup = lambda name: values.get(name.lower())  # noqa: E731
    assert expand("$(out)", lookup) == "job.17.3.out"
    assert expand("$(missing:dflt) $$(Memory)", lookup) == "dflt $$(Memory)"
    values["loop"] = "$(loop)"
    with pytest.raises(MacroError):
        expand("$(loop)", lookup)
    with pytest.raises(MacroError):
        expand("$(x)", lambda n: "$(x)", name="x")
    assert expand("no macros", lookup) == "no macros"
    assert expand("$(unclosed", lookup) == "$(unclosed"


def test_parse_lines_yields_statements():
    statements = list(parse_lines("A = 1\ninclude : other\n# c\nB=2\n", "f"))
    assert statements == [("define", "A", "1", 1), ("include", "", "other", 2),
                          ("define", "B", "2", 4)]


# ---------------------------------------------------------------- loading

def write(path, text):
    path.write_text(text)
    return str(path)


def test_load_reads_local_files_in_order(tmp_path):
    one = write(tmp_path / "one", "A = one\nB = one\n")
    two = write(tmp_path / "two", "B = two\nC = $(A)-$(B)\n")
    main = write(tmp_path / "condor_config",
                 f"A = global\nLOCAL_CONFIG_FILE = {one}, {two}\nD = $(C)\n")
    config = load(main, environ={}, defaults={})
    assert config.global_file == main
    assert config.local_files == [one, two]
    assert config.get("B") == "two"
    assert config.get("D") == "one-two"
    assert config.definition("B").source == two


def test_local_files_may_be_space_separated_and_use_macros(tmp_path):
    write(tmp_path / "host.local", "WHERE = host\n")
    write(tmp_path / "extra", "EXTRA = 1\n")
    main = write(tmp_path / "condor_config",
                 f"DIR = {tmp_path}\nLOCAL_CONFIG_FILE = $(DIR)/host.local $(DIR)/extra\n")
    config = load(main, environ={}, defaults={})
    assert [os.path.basename(p) for p in config.local_files] == ["host.local", "extra"]
    assert config.get("WHERE") == "host"


def test_missing_local_file_is_an_error_unless_not_required(tmp_path):
    main = write(tmp_path / "condor_config", f"LOCAL_CONFIG_FILE = {tmp_path}/nope\n")
    with pytest.raises(ConfigError, match="nope"):
        load(main, environ={}, defaults={})
    with open(main, "a") as handle:
        handle.write("REQUIRE_LOCAL_CONFIG_FILE = false\n")
    assert load(main, environ={}, defaults={}).local_files == []


def test_local_config_dir(tmp_path):
    conf_d = tmp_path / "config.d"
    conf_d.mkdir()
    write(conf_d / "20-b", "X = b\n")
    write(conf_d / "10-a", "X = a\nY = a\n")
    write(conf_d / "30-c~", "X = backup\n")
    write(conf_d / ".hidden", "X = hidden\n")
    main = write(tmp_path / "condor_config", f"LOCAL_CONFIG_DIR = {conf_d}\n")
    config = load(main, environ={}, defaults={})
    assert [os.path.basename(p) for p in config.local_files] == ["10-a", "20-b"]
    assert config.get("X") == "b"


def test_environment_overrides(tmp_path):
    main = write(tmp_path / "condor_config", "A = file\nB = $(A)\n")
    config = load(main, environ={"_CONDOR_A": "env", "_CONDOR_NEW": "1"}, defaults={})
    assert config.get("B") == "env"
    assert config.get("new") == "1"
    assert config.definition("A").source == "<Environment>"


def test_missing_global_file_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read configuration file"):
        load(str(tmp_path / "absent"), environ={})


def test_builtin_macros():
    config = load("ONLY_ENV", environ={})
    assert config.get("DOLLAR") == "$"
    assert config.get("HOSTNAME")
    assert int(config.get("DETECTED_CPUS")) >= 1
    # as HTCondor names their sources: found out about the host, or a plain default
    assert config.definition("HOSTNAME").source == config.definition("ARCH").source == "<Detected>"
    assert config.definition("DOLLAR").source == "<Default>"


def test_locate_prefers_condor_config():
    assert locate("/cell/etc/condor_config", {"CONDOR_CONFIG": "/x"}) == "/x"
    assert locate("/cell/etc/condor_config", {}) == "/cell/etc/condor_config"


def test_shipped_default_configuration_is_valid():
    shipped = os.path.join(os.path.dirname(__file__), "..", "etc", "condor_config")
    config = load(shipped, environ={})
    from gridtools.classad import parse
    assert config.get("MINUTE") == "60"
    assert parse(config.get("HOUR")).eval() == 3600
    for name in ("START", "RANK", "SUSPEND", "CONTINUE", "PREEMPT", "KILL", "MachineBusy"):
        parse(config.get(name))
    assert config.local_files == []


def test_integer_knobs_are_read_as_htcondor_reads_them():
    """A whole number, else an expression whose value is one (a real cut, a boolean 0 or
    1), macros expanded first; the default when undefined or empty; HTCondor's words
    for what is none of these or too low."""
    config = config_of("A = 12\nB = 2 * 1024\nC = $(B) + 1\nD = 7.9\nE = true\nF =\n"
                       "G = \"ten\"\nH = 1 +\nI = 0\n")
    assert [integer(config, n, 5) for n in "ABCDEF"] == [12, 2048, 2049, 7, 1, 5]
    assert integer(config, "UNSET", 5) == 5
    with pytest.raises(ConfigError) as exc:
        integer(config, "G", 5)
    assert str(exc.value) == ('Invalid result (not an integer) for G ("ten") in condor configuration.  Please '
                              "set it to an integer expression in the range -9223372036854775808 to "
                              "9223372036854775807 (default 5).")
    with pytest.raises(ConfigError, match=r"^Invalid expression for H \(1 \+\) in condor configuration"):
        integer(config, "H", 5)
    with pytest.raises(ConfigError, match=r"^I in the condor configuration is too low \(0\)\.  Please set it "
                                          r"to an integer expression in the range 1 to "):
        integer(config, "I", 2, 1)
    assert integer(config, "A", 2, 1) == 12


def test_boolean_knobs_are_read_as_htcondor_reads_them():
    config = config_of("A = TRUE\nB = false\nC = 1 > 2\nD = 3\nE = 0\nF = maybe\nG =\n")
    assert [boolean(config, n, None) for n in "ABCDEG"] == [True, False, False, True, False, None]
    with pytest.raises(ConfigError, match=r"^F in the condor configuration is not a boolean \(maybe\)"):
        boolean(config, "F", True)

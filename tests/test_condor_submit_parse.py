"""Submit descriptions: statements, queue forms, macros, quoting, errors."""

import os
import random
import re

import pytest

from gridtools.errors import InputError
from gridtools.formats.condor import args, argsenv
from gridtools.formats.condor.fsview import LocalFiles
from gridtools.formats.condor.jobad import SubmitContext
from gridtools.formats.condor.macros import Expander, MacroProblem, filename_part
from gridtools.formats.condor.queue import MatchKind, Mode, parse_queue, split_item
from gridtools.formats.condor.submit import ATTRIBUTE, COMMAND, Assignment, QueueStatement, parse_submit


@pytest.fixture
def ctx(tmp_path):
    (tmp_path / "run.sh").write_text("#!/bin/sh\n")
    return SubmitContext(cwd=str(tmp_path), owner="alice", now=1700000000,
                         files=LocalFiles(str(tmp_path)), environ={"HOME": "/home/alice"})


def ads(text, ctx, cluster=3, **kwargs):
    return parse_submit(text, **kwargs).job_ads(cluster, ctx)


# ----------------------------------------------------------------- statements

def test_statements_and_render_round_trip():
    text = ("a = 1\n+B = \"x\"\nMY.C = 3 \\\n  + 4\n# note\nqueue x,y from (\n 1 2\n 3 4\n)\n"
            "queue 2\n")
    desc = parse_submit(text)
    assert desc.statements[:3] == [Assignment("a", "1", COMMAND, 1),
                                   Assignment("B", '"x"', ATTRIBUTE, 2),
                                   Assignment("C", "3   + 4", ATTRIBUTE, 3)]
    assert desc.statements[3] == QueueStatement("x,y from (", [" 1 2", " 3 4"], 6)
    again = parse_submit(desc.render())
    assert again.render() == desc.render()
    assert [s.render() for s in again.statements] == [s.render() for s in desc.statements]


def test_syntax_error_names_the_line():
    with pytest.raises(InputError, match=r"^ERROR: on Line 2 of submit file: .*this is junk"):
        parse_submit("executable = /bin/true\nthis is junk\nqueue\n")


def test_unclosed_item_list():
    with pytest.raises(InputError, match=r"closing brace '\)' for Queue command on line 2"):
        parse_submit("executable = x\nqueue x from (\n a\n")


def test_append_goes_before_the_queue_statement(ctx):
    got = ads("executable = run.sh\narguments = a\nqueue\n", ctx, append=["arguments = b"])
    assert got[0].eval("Args") == "b"
    got = ads("executable = run.sh\n", ctx, append=["arguments = c", "queue 2"])
    assert [ad.eval("Args") for ad in got] == ["c", "c"]


def test_queue_override(ctx):
    got = ads("executable = run.sh\narguments = $(Item)\n", ctx, queue_override="in a b c")
    assert [ad.eval("Args") for ad in got] == ["a", "b", "c"]
    with pytest.raises(InputError) as err:
        parse_submit("executable = run.sh\nqueue\n", queue_override="2", source="a.sub")
    assert str(err.value) == "ERROR: on Line 2 of a.sub: -queue argument conflicts with queue statement in submit file"


def test_command_line_variables_and_batch_name(ctx):
    ctx.variables = {"WHO": "world"}
    ctx.batch_name = "nightly"
    got = ads("executable = run.sh\narguments = hello $(who)\nqueue\n", ctx)
    assert got[0].eval("Args") == "hello world"
    assert got[0].eval("JobBatchName") == "nightly"


def test_no_queue_statement_makes_no_jobs(ctx):
    assert ads("executable = run.sh\n", ctx) == []


def test_queue_zero_makes_no_jobs(ctx):
    assert ads("executable = run.sh\nqueue 0\n", ctx) == []


def test_several_queue_statements_and_new_cluster_on_new_executable(ctx, tmp_path):
    (tmp_path / "other.sh").write_text("x")
    got = ads("executable = run.sh\nqueue 2\narguments = later\nqueue\n"
              "executable = other.sh\nqueue\n", ctx)
    assert [(ad.eval("ClusterId"), ad.eval("ProcId")) for ad in got] == \
        [(3, 0), (3, 1), (3, 2), (4, 0)]
    assert got[2].eval("Args") == "later"


def test_owner_and_ids(ctx):
    got = ads("executable = run.sh\nqueue\n", ctx, cluster=41)
    assert (got[0].eval("Owner"), got[0].eval("ClusterId"), got[0].eval("QDate")) == \
        ("alice", 41, 1700000000)


# --------------------------------------------------------------------- errors

@pytest.mark.parametrize("text, message", [
    ("universe = vanilla\nqueue\n", "ERROR: No 'executable' parameter was provided"),
    ("executable = run.sh\nuniverse = bogus\nqueue\n", "I don't know about the 'bogus' universe."),
    ("executable = run.sh\nnotification = sometimes\nqueue\n",
     "Notification must be 'Never', 'Always', 'Complete', 'Start', or 'Error'"),
    ("executable = run.sh\nrequest_memory = abc def\nqueue\n",
     "ERROR: Parse error in expression: RequestMemory = abc def"),
    ("executable = run.sh\nrequirements = a &&\nqueue\n", "Parse error in expression: Requirements"),
    ("executable = run.sh\n+Foo = (\nqueue\n", "Parse error in expression: Foo = ("),
    # a keyword after a dot, adjacent strings (the old syntax): HTCondor's parse errors
    ("executable = run.sh\nrequirements = MY.true\nqueue\n", "ERROR: Parse error in expression: Requirements = (MY.true)"),
    ("executable = run.sh\n+Foo = TARGET.error\nqueue\n", "ERROR: Parse error in expression: Foo = TARGET.error"),
    ("executable = run.sh\nrank = x.isnt + 1\nqueue\n", "ERROR: Parse error in expression: Rank = x.isnt + 1"),
    ("executable = run.sh\n+Foo = \"a\" \"b\"\nqueue\n", 'ERROR: Parse error in expression: Foo = "a" "b"'),
    ("executable = run.sh\n+Foo = \"a\\\\\" \"b\"\nqueue\n", "ERROR: Parse error in expression: Foo = "),
    ("executable = run.sh\nrequirements = TARGET.Requirements\nqueue\n",
     "ERROR: Requirements = (TARGET.Requirements)\nIs Circular. Did you intend to use $(Requirements) ?"),
    ("executable = run.sh\nrequirements = (Requirements && MY.x)\nqueue\n", "Is Circular."),
    ("executable = run.sh\narguments = a \"b c\"\nqueue\n", "Found illegal unescaped double-quote"),
    # a lone double quote ends a new-syntax value, single quotes or not (HTCondor 24's words)
    ("executable = run.sh\narguments = \"-c 'echo \\\"hi\\\"'\"\nqueue\n",
     "ERROR: Unexpected characters following double-quote.  Did you forget to escape the double-quote by "
     "repeating it?  Here is the quote and trailing characters: \"hi\\\"'\"\n\n"
     "The full arguments you specified were: \"-c 'echo \\\"hi\\\"'\""),
    ("executable = run.sh\nenvironment = \"A='x\"y'\"\nqueue\n",
     "Here is the quote and trailing characters: \"y'\"\n\nThe environment you specified was: '\"A='x\"y'\"'"),
    # a value that starts with a double quote is in the new syntax, whatever follows its end
    ("executable = run.sh\nenvironment = \"a=b c\"d\nqueue\n",
     "ERROR: Unexpected characters following double-quote.  Did you forget to escape the double-quote by "
     "repeating it?  Here is the quote and trailing characters: \"d\n\n"
     "The environment you specified was: '\"a=b c\"d'"),
    ("executable = run.sh\narguments = \"a \"\"x\"\" b\"c d\nqueue\n",
     "Here is the quote and trailing characters: \"c d\n\nThe full arguments you specified were: \"a \"\"x\"\" b\"c d"),
    ("executable = run.sh\narguments = \"a b\nqueue\n",
     "ERROR: Unterminated double-quote.\nThe full arguments you specified were: \"a b"),
    ("executable = nothere.sh\nqueue\n", "/nothere.sh: No such file or directory"),
    ("executable = run.sh\ninitialdir = nodir\nqueue\n", "No such directory"),
    ("executable = run.sh\nqueue -1\n", "Queue count out of range"),
    ("executable = run.sh\nqueue 3000000000\n", "ERROR: on Line 2 of submit file: Queue count out of range"),
    ("executable = run.sh\nqueue 2147483647\n", "Queue count out of range"),
    ("executable = run.sh\nqueue 9223372036854775808\n", "Queue count out of range"),   # strtoll's
    ("executable = run.sh\nqueue 99999999999999999999 x in (a)\n", "Queue count out of range"),
    ("executable = run.sh\nqueue 20001\n",
     "ERROR: Failed to create proc\nNumber of submitted jobs would exceed MAX_JOBS_PER_SUBMISSION"),
    ("executable = run.sh\nqueue 10000\nqueue 10001 x in (a)\n", "exceed MAX_JOBS_PER_SUBMISSION"),
    ("executable = run.sh\nqueue nosuch words\n", "Invalid Queue count expression"),
    ("executable = run.sh\nqueue x matching files dirs *\n", "Queue keyword conflict"),
    ("executable = run.sh\nqueue from nolist.txt\n", "can't open file nolist.txt"),
    ("executable = run.sh\nX = $INT(Y)\nY = abc\narguments = $(X)\nqueue\n",
     "ERROR at Queue statement on Line 5: $INT() macro: abc does not evaluate to an integer!\n"
     "\t at Step 0, ItemIndex 0"),
    # (the macro functions' refusals, in HTCondor 24's words)
    ("executable = run.sh\narguments = $INT(5,%s)\nqueue\n", "$INT() macro: '%s' is not a valid format specifier!"),
    ("executable = run.sh\narguments = $INT(5,%d %d)\nqueue\n", "$INT() macro: '%d %d' is not a valid format"),
    ("executable = run.sh\narguments = $INT(5,%*d)\nqueue\n", "$INT() macro: '%*d' is not a valid format"),
    ("executable = run.sh\narguments = $INT(5,abc)\nqueue\n", "$INT() macro: 'abc' is not a valid format"),
    ("executable = run.sh\narguments = $REAL(5,%d)\nqueue\n", "$REAL() macro: '%d' is not a valid format specifier!"),
    ("executable = run.sh\narguments = $STRING(5,%d)\nqueue\n", "$STRING macro: '%d' is not a valid format specifier!"),
    ("executable = run.sh\narguments = $CHOICE(z, a, b)\nqueue\n", "$CHOICE() macro: z is invalid index!"),
    ("executable = run.sh\narguments = $CHOICE(2, a, b)\nqueue\n",
     "$CHOICE() config macro: index 2 is out of range!"),
    ("executable = run.sh\narguments = $CHOICE(0, nolist)\nqueue\n", '$CHOICE() macro: no list named "nolist"!'),
    ("executable = run.sh\nkill_sig = SIGNOPE\nqueue\n", "invalid signal SIGNOPE"),
    ("executable = run.sh\nA = $(B)\nB = $(A)\narguments = $(A)\nqueue\n", "circular"),
    ("executable = run.sh\nuniverse = parallel\nqueue\n", "ERROR: No machine_count specified!"),
    ("executable = run.sh\nhold = yes\nqueue\n", "ERROR: hold=yes is invalid, must eval to a boolean."),
    ("executable = run.sh\nnice_user = t\nqueue\n", "nice_user=t is invalid, must eval to a boolean."),
    ("executable = run.sh\nstream_output = junk\nqueue\n", "stream_output=junk is invalid, must eval to a boolean."),
    ("executable = run.sh\nlog_xml = on\nqueue\n", "log_xml=on is invalid, must eval to a boolean."),
    ("executable = run.sh\nmax_retries = abc\nqueue\n", "ERROR: max_retries=abc is invalid, must eval to an integer."),
    ("executable = run.sh\nsuccess_exit_code = 1.5x\nqueue\n", "success_exit_code=1.5x is invalid, must eval to an integer."),
    ("executable = run.sh\ncoresize = abc\nqueue\n", "ERROR: core_size=abc is invalid, must eval to an integer."),
    ("executable = run.sh\npriority = 99999999999999999999\nqueue\n",      # (beyond 64 bits: not wrapped)
     "ERROR: priority=99999999999999999999 is invalid, must eval to an integer."),
    ("executable = run.sh\nmax_retries = 1e30\nqueue\n", "ERROR: max_retries=1e30 is invalid, must eval to an integer."),
    ("executable = run.sh\nretry_until = abc def\nqueue\n",
     "ERROR: retry_until=abc def is invalid, it must be an integer or boolean expression."),
    ("executable = run.sh\nimage_size = 0\nqueue\n", "ERROR: Image Size must be positive"),
    ("executable = run.sh\nhold_kill_sig = BOGUS\nqueue\n", "ERROR: invalid signal BOGUS"),
    ("executable = run.sh\nshould_transfer_files = sometimes\nqueue\n",
     "ERROR: invalid value (sometimes) for ShouldTransferFiles. Please either specify YES, NO, or IF_NEEDED"),
    ("executable = run.sh\nwhen_to_transfer_output = later\nqueue\n",
     "ERROR: invalid value (later) for WhenToTransferOutput. Please either specify ON_EXIT, or ON_EXIT_OR_EVICT"),
    ("executable = run.sh\nshould_transfer_files = NO\nwhen_to_transfer_output = ON_EXIT\nqueue\n",
     "ERROR: WhenToTransferOutput specified as ON_EXIT yet ShouldTransferFiles defined as NO."),
    ("executable = run.sh\nshould_transfer_files = IF_NEEDED\nwhen_to_transfer_output = ON_EXIT_OR_EVICT\nqueue\n",
     '"when_to_transfer_output = ON_EXIT_OR_EVICT" and "should_transfer_files = IF_NEEDED" are incompatible.'),
    ("executable = run.sh\naccounting_group = a b\nqueue\n", "ERROR: Invalid accounting_group: a b"),
    ("executable = run.sh\naccounting_group_user = u v\nqueue\n", "ERROR: Invalid accounting_group_user: u v"),
    # (a bad value is refused before the next command is read: here one whose macros loop; a
    # name assigned in terms of itself takes its earlier value, so the loop goes through two)
    ("executable = run.sh\nshould_transfer_files = sometimes\nwhen_to_transfer_output = $(L)\nL = $(M)\nM = $(L)\nqueue\n",
     "ERROR: invalid value (sometimes) for ShouldTransferFiles."),
    ("executable = run.sh\naccounting_group = a b\nnice_user = $(L)\nL = $(M)\nM = $(L)\nqueue\n",
     "ERROR: Invalid accounting_group: a b"),
    ("executable = run.sh\nnice_user = $(L)\nL = $(M)\nM = $(L)\nqueue\n", "macro expansion nested too deeply"),
    ("executable = run.sh\nwhen_to_transfer_output = $(L)\nL = $(M)\nM = $(L)\nqueue\n", "macro expansion nested too deeply"),
    ("executable = run.sh\nrequirements = (Memory > 1\nqueue\n", "Parse error in expression: Requirements"),
    ("executable = run.sh\npriority = high\nqueue\n", "ERROR: priority=high is invalid, must eval to an integer."),
    ("executable = run.sh\nprio = x\nqueue\n", "ERROR: prio=x is invalid, must eval to an integer."),
    ("executable = run.sh\nconcurrency_limits = db, 5\nqueue\n", "ERROR: Invalid concurrency limit '5'"),
    ("executable = run.sh\nkill_sig = 99\nqueue\n", "ERROR: invalid signal 99"),
    ("executable = run.sh\narguments2 = a b\nqueue\n",
     "ERROR: Expecting double-quoted input string (V2 format).\nThe full arguments you specified were: a b"),
    ("executable = run.sh\narguments = x\narguments2 = \"y\"\nqueue\n",
     "ERROR: If you wish to specify both 'arguments' and 'arguments2' for maximal compatibility with different "
     "versions of Condor, then you must also specify allow_arguments_v1=true."),
    ("executable = run.sh\nenvironment2 = A=1\nqueue\n",
     "ERROR: Expecting a double-quoted environment string (V2 format).\nThe environment you specified was: 'A=1'"),
    ("executable = run.sh\nenvironment = A=1\nenvironment2 = \"B=2\"\nqueue\n",
     "ERROR: If you wish to specify both 'environment' and\n'environment2' for maximal compatibility with "
     "different\nversions of Condor, then you must also specify\nallow_environment_v1=true."),
    ("executable = run.sh\nkill_sig = SIGBOGUS\nqueue\n", "ERROR: invalid signal SIGBOGUS"),
    ("executable = run.sh\nshould_transfer_files = NO\ntransfer_input_files = a\nqueue\n",
     'ERROR: you specified files you want Condor to transfer via "transfer_input_files", but you disabled '
     "should_transfer_files."),
])
def test_errors_in_htcondor_words(text, message, ctx):
    with pytest.raises(InputError) as info:
        ads(text, ctx)
    assert message in str(info.value)
    assert "\n" not in str(info.value).strip() or "full arguments" in str(info.value) or \
        "environment you specified" in str(info.value) or "MAX_JOBS_PER_SUBMISSION" in str(info.value) or \
        "Is Circular" in str(info.value) or "allow_environment_v1" in str(info.value) or \
        "\n\t at Step 0, ItemIndex 0" in str(info.value)


# ---------------------------------------------------------------------- queue

@pytest.mark.parametrize("text, count, variables, mode, source", [
    ("", 1, [], Mode.COUNT, ""),
    ("5", 5, [], Mode.COUNT, ""),
    ("2*3", 6, [], Mode.COUNT, ""),
    ("2 x in a b", 2, ["x"], Mode.IN, "a b"),
    ("x,y from items.txt", 1, ["x", "y"], Mode.FROM, "items.txt"),
    ("x y from items.txt", 1, ["x", "y"], Mode.FROM, "items.txt"),
    ("matching *.dat", 1, [], Mode.MATCHING, "*.dat"),
    ("3 f matching dirs [1:] d*", 3, ["f"], Mode.MATCHING, "d*"),
])
def test_queue_forms(text, count, variables, mode, source):
    spec, is_open = parse_queue(text)
    assert (spec.count, spec.variables, spec.mode, spec.source, is_open) == \
        (count, variables, mode, source, False)


def test_queue_slices_and_open_lists():
    spec, is_open = parse_queue("x in [::2] (a b c d e)")
    assert spec.slice.render() == "[::2]" and spec.inline == ["a b c d e"] and not is_open
    assert [row for _, row in spec.rows()] == ["a", "c", "e"]
    spec, is_open = parse_queue("x from (")
    assert is_open and spec.inline == []
    spec, _ = parse_queue("matching dirs [1] *")
    assert spec.match_kind is MatchKind.DIRS and (spec.slice.start, spec.slice.stop) == (1, None)


def test_item_splitting():
    assert split_item(" 4,5 6 ", ["x", "y"]) == {"x": "4", "y": "5 6"}
    assert split_item("1 2", ["x", "y", "z"]) == {"x": "1", "y": "2", "z": ""}
    assert split_item("a, b c", ["x"]) == {"x": "a, b c"}


def test_queue_render_round_trip():
    for text in ("", "5", "2 x,y from items.txt", "x in [1:3] a b c", "matching files *.c"):
        spec, _ = parse_queue(text)
        again, _ = parse_queue(spec.render())
        assert again == spec


# --------------------------------------------------------------------- macros

def expander(values, environ=None, seed=0):
    values = {k.lower(): v for k, v in values.items()}
    return Expander(lambda name: values.get(name.lower()), environ or {}, random.Random(seed))


@pytest.mark.parametrize("text, result", [
    ("$(A)", "5"), ("$(a)", "5"), ("$(nope)", ""), ("$(nope:dflt)", "dflt"),
    ("$(nope:$(A)x)", "5x"), ("$$(A)", "$$(A)"), ("$(A", "$(A"), ("$(  A )", "$(  A )"),
    ("$INT(A,%03d)", "005"), ("$INT(R)", "2"), ("$REAL(R)", "2.7"), ("$REAL(2.5,%.2f)", "2.50"),
    ("$INT(1+2)", "3"), ("$ENV(HOME)", "/home/a"), ("$ENV(NOPE)", "UNDEFINED"),
    ("$ENV(NOPE:d)", "d"), ("$SUBSTR(F,2,3)", "/b/"), ("$SUBSTR(F,-3)", ".gz"),
    ("<$SUBSTR(abcdef,2,3)>", "<>"), ("<$SUBSTR(nope,1)>", "<>"),     # (a name, not a text)
    ("$CHOICE(1,a,b,c)", "b"), ("$RANDOM_CHOICE(x)", "x"), ("$RANDOM_INTEGER(4,4)", "4"),
    ("$UNKNOWN(A)", "$UNKNOWN(A)"),
    ("$(E:dflt)", "dflt"), ("<$F(E)>", "<>"), ("<$Fq(E)>", '<"">'), ("<$Fqa(E)>", "<''>"),
    ("<$Fqd(E)>", '<">'), ("<$Fqx(E)>", '<">'), ("$Fn(nosuch.txt)", "nosuch"),
])
def test_macro_expansion(text, result):
    """(as HTCondor 24 expands them; E is defined and empty: a default stands for it,
    and $F quotes its nothing oddly)"""
    exp = expander({"A": "5", "R": "2.7", "F": "/a/b/c.tar.gz", "E": ""}, {"HOME": "/home/a"})
    assert exp.expand(text) == result


def test_random_macros_follow_the_seed():
    first = [expander({}, seed=7).expand("$RANDOM_INTEGER(1,100) $RANDOM_CHOICE(a,b,c)")
             for _ in range(2)]
    assert first[0] == first[1]
    values = {expander({}, seed=s).expand("$RANDOM_INTEGER(0,10,5)") for s in range(30)}
    assert values <= {"0", "5", "10"} and len(values) > 1


@pytest.mark.parametrize("letters, result", [
    ("p", "/a/b/"), ("d", "b/"), ("dd", "a/b/"), ("db", "b"), ("n", "c.tar"), ("x", ".gz"),
    ("nx", "c.tar.gz"), ("pn", "/a/b/c.tar"), ("q", '"/a/b/c.tar.gz"'),
    ("qa", "'/a/b/c.tar.gz'"), ("w", "\\a\\b\\c.tar.gz"), ("", "/a/b/c.tar.gz"),
])
def test_file_name_parts(letters, result):
    assert filename_part("/a/b/c.tar.gz", letters) == result


@pytest.mark.parametrize("path, letters, result", [
    ("/a/b/c.txt", "dx", "b/c.txt"), ("/a/b/c.txt", "px", "/a/b/c.txt"), ("c.txt", "dx", ".txt"),
    ("g/sub1.dat/", "b", "g/sub1.dat/"), ("g/sub1.dat/", "pb", "g/sub1.dat"), ("a/b/", "pnb", "a/b/"),
])
def test_file_name_parts_as_htcondor_joins_them(path, letters, result):
    """A directory part with x brings the name along (when there is a directory), and b
    drops the slash only of a result that ends with a directory part."""
    assert filename_part(path, letters) == result


def test_circular_macros_are_an_error():
    with pytest.raises(MacroProblem):
        expander({"A": "$(B)", "B": "$(A)"}).expand("$(A)")


# ---------------------------------------------------------- arguments, env

@pytest.mark.parametrize("value, attr, text, items", [
    ("a b  c", "Args", "a b c", ["a", "b", "c"]),
    ('a\\"b c', "Args", 'a"b c', ['a"b', "c"]),
    ('"one \'two three\' four"', "Arguments", "one two' 'three four",
     ["one", "two three", "four"]),
    ("\" x\ty\r\nz  '' w''v a'b c'd 'it''s''' \"", "Arguments", "x y z '' wv ab' 'cd it''''s''''",
     ["x", "y", "z", "", "wv", "ab cd", "it's'"]),
    ("\"-c '/bin/p -m  w\t--n 1'\"", "Arguments", "-c /bin/p' '-m'  'w'\t'--n' '1", ["-c", "/bin/p -m  w\t--n 1"]),
    ("\"''\"", "Arguments", "''", [""]),
    ('"a ""q"" \'it\'\'s\' \'\'"', "Arguments", "a \"q\" it''''s ''", ["a", '"q"', "it's", ""]),
])
def test_arguments(value, attr, text, items):
    assert args.parse_arguments(value) == (attr, text)
    if attr == "Arguments":
        assert args.split_v2_args(text) == items
    else:
        assert args.split_old_args(value) == items


@pytest.mark.parametrize("text, items", [
    ("a'  'b 'c d'", ["a  b", "c d"]), ("  x  ", ["x"]), ("'it''s' \"q\"", ["it's", '"q"']), ("", []),
    ("one two' 'three four", ["one", "two three", "four"]),
])
def test_v2_arguments_are_read_back_whoever_wrote_them(text, items):
    """An Arguments value read from an ad (the daemon's, a hand-written one) gives its
    items, as one condor_submit has just written does."""
    assert args.split_v2_args(text) == items
    assert args.split_v2_args(args.join_v2(items)) == items


@pytest.mark.parametrize("value", ["\"a 'b c\"", "\"'\"", "\"x ''' y\""])
def test_an_unterminated_single_quote_is_an_error(value):
    with pytest.raises(InputError, match="^ERROR: Unbalanced quote starting here: '"):
        args.parse_arguments(value)


def test_environment_both_syntaxes_round_trip():
    old = argsenv.parse_environment("A=1;B=2 3;C=")
    new = argsenv.parse_environment('"Z=1 A=\'x y\' M=3"')
    assert old == {"A": "1", "B": "2 3", "C": ""}
    assert argsenv.render_environment(new) == "A=x' 'y M=3 Z=1"
    assert argsenv.parse_environment_v2(argsenv.render_environment(new)) == new
    with pytest.raises(InputError, match="Missing .=. after environment variable"):
        argsenv.parse_environment("novalue")


def test_env_macros_read_the_submitter_s_environment_once(ctx, monkeypatch):
    """$ENV() reads the environment condor_submit runs in (copied once, when first read:
    a description that never reads it does not copy it); getenv takes the same copy."""
    ctx.environ = None
    monkeypatch.setenv("GT_SUBMIT_VAR", "v1")
    got = ads("executable = run.sh\narguments = $ENV(GT_SUBMIT_VAR) $(Process)\nMY.E = \"$ENV(GT_SUBMIT_VAR)\"\n"
              "getenv = GT_SUBMIT_*\nqueue 2\n", ctx)
    assert [(ad.eval("Args"), ad.eval("E"), ad.eval("Environment")) for ad in got] == \
        [("v1 0", "v1", "GT_SUBMIT_VAR=v1"), ("v1 1", "v1", "GT_SUBMIT_VAR=v1")]
    monkeypatch.setenv("GT_SUBMIT_VAR", "v2")
    assert ads("executable = run.sh\narguments = $ENV(GT_SUBMIT_VAR)\nqueue\n", ctx)[0].eval("Args") == "v1"
    ctx.environ = None
    assert ads("executable = run.sh\narguments = $(Cluster)\nqueue\n", ctx)[0].eval("Args") == "3"
    assert ctx.environ is None


def test_random_macros_of_a_submission_draw_one_sequence_from_its_seed(ctx):
    """Every expansion of a submission draws from one generator seeded with the context's
    seed (the procs in turn); an expander given none draws from one seeded with 0."""
    ctx.seed = 12345
    got = ads("executable = run.sh\narguments = $RANDOM_INTEGER(1,1000000) $RANDOM_CHOICE(a,b,c,d)\nqueue 3\n", ctx)
    draws = random.Random(12345)
    assert [ad.eval("Args") for ad in got] == \
        [f"{1 + draws.randint(0, 999999)} {draws.choice(['a', 'b', 'c', 'd'])}" for _ in range(3)]
    zero = random.Random(0)
    assert Expander(lambda name: None).expand("$RANDOM_INTEGER(0,99) $RANDOM_INTEGER(0,99)") == \
        f"{zero.randint(0, 99)} {zero.randint(0, 99)}"


def test_getenv_patterns(ctx):
    ctx.environ = {"GT_A": "1", "GT_B": "2", "HOME": "/h", "PATH": "/bin"}
    got = ads("executable = run.sh\ngetenv = GT_*, HOME\nqueue\n", ctx)
    assert got[0].eval("Environment") == "GT_A=1 GT_B=2 HOME=/h"


def test_getenv_leaves_out_values_of_several_lines(ctx):
    """As HTCondor's condor_submit: an exported bash function (its value has several
    lines) is not taken; a name with a dot or %% is."""
    ctx.environ = {"BASH_FUNC_greet%%": "() {  echo hi\n}", "MY.DOTTED": "d", "PCT%%": "v",
                   "GT_NL": "a\nb", "GT_OK": "1"}
    got = ads("executable = run.sh\ngetenv = true\nqueue\n", ctx)
    assert got[0].eval("Environment") == "GT_OK=1 MY.DOTTED=d PCT%%=v"
    got = ads("executable = run.sh\ngetenv = GT_*, BASH_FUNC_*\nqueue\n", ctx)
    assert got[0].eval("Environment") == "GT_OK=1"


def test_matching_relative_and_absolute(ctx, tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f1").write_text("")
    (tmp_path / "d" / "sub").mkdir()
    got = ads("executable = run.sh\narguments = $(Item)\nqueue matching d/*\n", ctx)
    assert [ad.eval("Args") for ad in got] == ["d/f1", "d/sub/"]
    got = ads(f"executable = run.sh\narguments = $(Item)\nqueue matching files {tmp_path}/d/*\n", ctx)
    assert [ad.eval("Args") for ad in got] == [os.path.join(str(tmp_path), "d", "f1")]


def test_without_file_access_nothing_is_looked_up():
    ctx = SubmitContext(cwd="/nowhere", owner="bob", now=5)
    got = ads("executable = prog\ninitialdir = sub\nqueue\n", ctx)
    assert (got[0].eval("Cmd"), got[0].eval("Iwd"), got[0].eval("ImageSize")) == \
        ("/nowhere/prog", "/nowhere/sub", 0)
    with pytest.raises(InputError, match="need files"):
        ads("executable = prog\nqueue from items.txt\n", ctx)


# ----------------------------------------------------------- readers by hand

#: the patterns the readers of statements and macro references follow (written by hand:
#: compiling patterns would cost a plain condor_submit more than its own work)
ASSIGN = re.compile(r"(\+|MY\.)?([A-Za-z_][A-Za-z0-9_.]*)\s*=(.*)$", re.DOTALL | re.IGNORECASE)
QUEUE = re.compile(r"queue(?=\s|$)(.*)$", re.IGNORECASE | re.DOTALL)
REFERENCE = re.compile(r"\$(\$?)([A-Za-z_]*)\(")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*$")


def _texts(alphabet, longest, count=20000, seed=7):
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))) for _ in range(count)]


def _by_pattern(line):
    m = QUEUE.match(line)
    if m:
        return ("queue", m.group(1))
    m = ASSIGN.match(line)
    if m:
        return (ATTRIBUTE if m.group(1) else COMMAND, m.group(2), m.group(3))
    return None


def _by_reader(line):
    from gridtools.formats.condor.submit import assignment, queue_arguments
    args = queue_arguments(line)
    return ("queue", args) if args is not None else assignment(line)


def test_statements_are_read_as_their_patterns_read_them():
    # the letters that match ASCII ones when case is ignored (Kelvin sign, long s, dotted and
    # dotless i) and other letters
    alphabet = list("+MmYy.=qQuUeE _a1\t") + ["\u212a", "\u0130", "\u0131", "\u017f", "é"]
    lines = ["queue", "QUEUE 5", "queue=1", "queuex = 2", "+Foo = 1", "MY.Foo=2", "my.=3", "my.1x = 4",
             "\u212aelvin = 1", "a.b.c = x", "queue a"] + _texts(alphabet, 9)
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#"):
            assert _by_reader(line) == _by_pattern(line), repr(line)


def test_macro_references_and_names_are_read_as_their_patterns_read_them():
    from gridtools.formats.condor.macros import is_name, reference_head
    for text in _texts(list("$(aZ_1.\n )") + ["é", "\u212a"], 7):
        text = "$" + text
        m = REFERENCE.match(text)
        assert reference_head(text, 0) == (None if m is None else (m.end(), bool(m.group(1)), m.group(2)))
        assert is_name(text[1:]) == bool(NAME.match(text[1:])), repr(text)


@pytest.mark.parametrize("args", ["", " ", "0", "1", "7", "42 ", "2147483646", "123456789012345678",
                                  "1234567890123456789",
                                  "007", "2*3", "+5", "-1", "\u0663", "1e3", "x in a", "5 from f"])
def test_plain_counts_are_what_parse_queue_reads(args):
    from gridtools.formats.condor.submit import plain_count
    count = plain_count(args)
    if count is not None:
        spec, is_open = parse_queue(args)
        assert (spec.count, spec.mode, is_open) == (count, Mode.COUNT, False)
    else:
        assert args.strip() and not (args.strip().isascii() and args.strip().isdigit()
                                     and int(args) < 2 ** 31 - 1 and args.strip()[0] != "0")


def test_descriptions_without_macro_references_need_no_macro_module(ctx):
    """A description that refers to no macro builds the same ads without the macros module
    (its texts are taken as they are: short enough for any expansion), and one without
    expressions of the user's builds them without the expression modules."""
    from gridtools.formats.condor import jobad, macros
    assert jobad.VERBATIM_MAX < macros.MAX_LENGTH
    text = "executable = run.sh\narguments = a b\noutput = out.txt\nrequest_memory = 1G\nqueue 2\n"
    plain = ads(text, ctx)
    with_reference = ads(text.replace("out.txt", "$(Nothing)out.txt"), ctx)
    assert [str(ad) for ad in plain] == [str(ad) for ad in with_reference]
    out = _built_in_a_fresh_interpreter(
        text, "ad = ads[0]\nstr(ad), ad.eval('RequestMemory'), ad.lookup('Requirements').unparse()\n"
              "print(sorted(m for m in ('gridtools.formats.condor.macros', 'gridtools.formats.condor.queue', 're',"
              " 'gridtools.classad.parser', 'gridtools.classad.nodes', 'gridtools.classad.operators',"
              " 'gridtools.classad.ad') if m in sys.modules))")
    assert out.stdout == "[]\n", out.stderr


def _built_in_a_fresh_interpreter(text, then):
    """Run ``then`` in a new interpreter without the site module, once the description
    ``text`` is built there into ``ads`` (drafts); its CompletedProcess."""
    from conftest import run_bare
    return run_bare("from gridtools.formats.condor.submit import parse_submit\n"
                    "from gridtools.formats.condor.jobad import SubmitContext\n"
                    "ads = parse_submit(sys.argv[1]).job_drafts(1, SubmitContext(cwd='/', owner='a', now=1))\n"
                    + then, text)


def test_a_description_with_expressions_and_functions_is_built_without_re(tmp_path):
    """dask-jobqueue's description (expressions with functions, custom attributes, macros)
    and a user's requirements are built, and their requests evaluated, without ``re``
    (importing it costs a submission a third of its time)."""
    text = ('MY.DaskWorkerName = "htcondor--$F(MY.JobId)--"\nRequestCpus = MY.DaskWorkerCores\n'
            "RequestMemory = floor(MY.DaskWorkerMemory / 1048576)\nRequestDisk = floor(MY.DaskWorkerDisk / 1024)\n"
            'MY.JobId = "$(ClusterId).$(ProcId)"\nMY.DaskWorkerCores = 1\nMY.DaskWorkerMemory = 1073741824\n'
            "MY.DaskWorkerDisk = 1073741824\nOutput = L/worker-$F(MY.JobId).out\n"
            "requirements = (Memory > 100) && regexp(\"x\", Name) =!= error\n"
            "transfer_input_files = a, b c\nArguments = \"-c 'echo hi'\"\nExecutable = /bin/sh\nQueue\n")
    out = _built_in_a_fresh_interpreter(
        text, "from gridtools.formats.condor.spec import cluster_spec\n"
              "spec = cluster_spec(ads, {'submit_host': 'h'})\n"
              "print(spec['resources']['hard'], ads[0].eval('DaskWorkerName'),"
              " sorted(m for m in ('re', 'lark') if m in sys.modules))")
    assert out.stdout == "{'mem_free': '1024M'} htcondor--1.0-- []\n", out.stderr


def test_a_name_before_equals_is_read_as_the_character_scan_reads_it():
    """``_name_equals`` agrees with the plain scan (name characters, then blanks, then
    ``=``) on random texts of names, blanks, odd letters and equals signs."""
    import random
    from gridtools.formats.condor.submit import NAME_REST, NAME_START, _name_equals

    def scan(text, start):
        size = len(text)
        if start >= size or text[start] not in NAME_START:
            return None
        end = start + 1
        while end < size and text[end] in NAME_REST:
            end += 1
        at = end
        while at < size and text[at].isspace():
            at += 1
        if at == size or text[at] != "=":
            return None
        return text[start:end], text[at + 1:]

    rng = random.Random(11)
    pieces = ["a", "Z", "_", "1", ".", " ", "\t", "\u00a0", "\u212a", "\u0131", "=", "+", "é", "x y", "\u2028"]
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        for start in (0, 1, 3):
            assert _name_equals(text, start) == scan(text, start), (text, start)


def test_the_hot_module_knows_every_command_moreattrs_sets():
    """jobattrs names the commands of moreattrs, so that a description without any of
    them does not load it."""
    from gridtools.formats.condor import jobattrs, moreattrs
    assert jobattrs.MORE_COMMANDS == set(moreattrs.COMMANDS) | moreattrs.READ_ALSO


@pytest.mark.parametrize("value, name", [('"quoted batch"', "quoted batch"), ('1""', '1""'), ('"ab', '"ab'),
                                         ('""ab""', '"ab"'), ('"a"b"', 'a"b'), ('"', "")])
def test_a_batch_name_loses_one_pair_of_quotes_around_it(value, name, ctx):
    assert ads(f"executable = run.sh\nbatch_name = {value}\nqueue\n", ctx)[0].eval("JobBatchName") == name


def test_a_queue_of_a_count_hides_a_macro_named_item(ctx):
    """HTCondor binds Item to nothing for ``queue N`` (a default then stands for it), and
    leaves it alone for a queue with other variables."""
    text = "executable = run.sh\nItem = foo\nbatch_name = <$(Item)|$(Item:none)>\n"
    assert ads(text + "queue 2\n", ctx)[0].eval("JobBatchName") == "<|none>"
    assert ads(text + "queue a from (x y)\n", ctx)[0].eval("JobBatchName") == "<foo|foo>"


def test_a_later_proc_takes_from_proc_0_what_it_does_not_set(ctx):
    """As HTCondor chains a proc's ad to its cluster's: proc 1's empty batch name leaves
    it proc 0's."""
    found = ads("executable = run.sh\nbatch_name = $(b)\nqueue a,b from (\n  x y\n  z\n)\n", ctx)
    assert [ad.eval("JobBatchName") for ad in found] == ["y", "y"]


# ----------------------------------------------------------------- stream command aliases

def test_stream_commands_take_htcondors_other_names(ctx):
    """stdin/stdout/stderr stand for input/output/error, StreamIn/StreamOut/StreamErr for
    stream_input/... and TransferIn/... for transfer_input/..., as condor_submit reads them
    (submit_utils.cpp SetStdin/SetStdout/SetStderr); the first name wins over the other."""
    (ad,) = ads("executable = run.sh\nstdin = run.sh\nstdout = so.txt\nstderr = se.txt\n"
                "StreamOut = true\nStreamErr = true\nqueue\n", ctx)
    assert (ad.eval("In"), ad.eval("Out"), ad.eval("Err")) == ("run.sh", "so.txt", "se.txt")
    assert (ad.eval("StreamIn"), ad.eval("StreamOut"), ad.eval("StreamErr")) == (False, True, True)
    (ad,) = ads("executable = run.sh\noutput = o.txt\nstdout = so.txt\nstream_output = false\n"
                "StreamOut = true\nerror = e.txt\ntransfer_error = false\nstream_error = true\n"
                "queue\n", ctx)
    assert (ad.eval("Out"), ad.eval("StreamOut")) == ("o.txt", False)
    assert ad.eval("Err") == "e.txt" and ad.eval("TransferErr") is False and "StreamErr" not in ad
    (ad,) = ads("executable = run.sh\nstdout = o.txt\nTransferOut = false\nStreamOut = true\nqueue\n", ctx)
    assert (ad.eval("Out"), ad.eval("TransferOut")) == ("o.txt", False) and "StreamOut" not in ad
    (ad,) = ads("executable = run.sh\ntransfer_output = true\noutput = o.txt\nqueue\n", ctx)
    assert "TransferOut" not in ad and ad.eval("StreamOut") is False


def test_the_function_forms_load_only_when_a_description_uses_one():
    """``$(name)`` and ``$F(name)`` expand without the module of the other function forms;
    ``$INT``, ``$ENV`` and the rest load it and expand as before."""
    import subprocess
    import sys
    program = (
        "import sys\n"
        "from gridtools.formats.condor.macros import Expander\n"
        "values = {'x': '/a/b.txt', 'n': '6'}\n"
        "exp = Expander(values.get, environ={'HOME': '/h'})\n"
        "print(exp.expand('$(x) $Fn(x) $(y:none)'))\n"
        "print('gridtools.formats.condor.macrofuncs' in sys.modules)\n"
        "print(exp.expand('$INT(n,%03d) $ENV(HOME) $SUBSTR(x,-3) $CHOICE(1,p,q)'))\n"
        "print('gridtools.formats.condor.macrofuncs' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "src")))
    assert out.stdout.splitlines() == ["/a/b.txt b none", "False", "006 /h txt q", "True"]


@pytest.mark.parametrize("forced", ["+Requirements", "MY.Requirements"])
def test_forced_requirements_are_taken_as_they_are(ctx, forced):
    """MY.Requirements (or +Requirements) stands for the Requirements HTCondor's
    condor_submit would make: the requirements command is neither checked (no "Is
    Circular", no parse error) nor given terms, and a warning says it is overridden."""
    got = ads(f"executable = run.sh\nrequirements = TARGET.Requirements\n{forced} = (Requirements && x > 1)\n"
              "rank = Memory\nqueue 2\n", ctx)
    assert [ad.lookup("Requirements").unparse() for ad in got] == ["(Requirements && x > 1)"] * 2
    assert got[0].lookup("Rank").unparse() == "Memory"
    assert ctx.warnings == ["Use of MY.Requirements or +Requirements  overrides requirements. "
                            "You should remove one of these statements from your submit file."] * 2
    ctx.warnings.clear()
    got = ads(f"executable = run.sh\nrequirements = a &&\n{forced} = x > 1\nqueue\n", ctx)
    assert got[0].lookup("Requirements").unparse() == "x > 1"
    ctx.warnings.clear()
    got = ads(f"executable = run.sh\n{forced} = Requirements\nqueue\n", ctx)
    assert got[0].lookup("Requirements").unparse() == "Requirements" and ctx.warnings == []
    # an empty one forces nothing: the requirements are made (and checked) as ever
    with pytest.raises(InputError, match="Is Circular"):
        ads(f"executable = run.sh\nrequirements = TARGET.Requirements\n{forced} =\nqueue\n", ctx)

"""ClassAd conformance with HTCondor: -af/-format expressions in the old syntax, relative
times (string literals, fractions), infinities, anyCompare/allCompare, PCRE patterns, and
the clock and reference functions (currentTime, timeZoneOffset, dayTime, unresolved)."""

import json
import time
import warnings

import pytest

from condortools import submit
from gridtools.classad import ClassAd, parse, unparse
from gridtools.classad.values import unparse_value


def value_of(text, my=None):
    return unparse(parse(text).eval(my))


def long_value(text, my=None):
    """As -af and -l print the value (the old unparser)."""
    return unparse_value(parse(text).eval(my), True)


def check(cases):
    return pytest.mark.parametrize("text,expected", cases, ids=[c[0] for c in cases])


# ---------------------------------------------------- 1: -af / -format in the old syntax

def _job():
    return ClassAd({"ClusterId": 3, "ProcId": 0, "Cmd": "/bin/sleep"})


@pytest.mark.parametrize("expr,expected", [
    ('size("a\\nb")', "4"),
    ('"x\\ty"', "x\\ty"),
    ('"a" "b"', "undefined"),
    ('strcat("c:\\dir", "x")', "c:\\dirx"),
])
def test_autoformat_reads_expressions_in_the_old_syntax(expr, expected):
    from gridtools.cli.condor import formatting
    assert formatting.autoformat([_job()], [expr]) == expected + "\n"


def test_format_reads_expressions_in_the_old_syntax():
    from gridtools.cli.condor import formatting
    assert formatting.format_ads([_job()], [("%d\\n", 'size("a\\nb")')]) == "4\n"
    assert formatting.format_ads([_job()], [("%s|", '"x\\ty"')]) == "x\\ty|"


def test_raw_autoformat_of_an_expression_keeps_its_backslashes():
    from gridtools.cli.condor import formatting
    assert formatting.autoformat([_job()], ['size("a\\nb")'], "r") == 'size("a\\nb")\n'


def test_condor_status_autoformat_reads_the_old_syntax_too():
    from gridtools.cli.condor.adformat import Formatter
    fmt = Formatter()
    fmt.add_autoformat("", ['size("a\\nb")', '"x\\ty"'])
    fmt.add_format("%d\\n", 'size("a\\nb")')
    assert fmt.render([ClassAd({"Name": "slot1@h"})]) == "4 x\\ty\n4\n"


def test_condor_q_af_and_constraint_agree(cell, workdir):
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n", cwd=workdir)
    out = cell.run("condor_q", str(cluster), "-af", 'size("a\\nb")', '"x\\ty"').stdout
    assert out == "4 x\\ty\n"
    fmt = cell.run("condor_q", str(cluster), "-format", "%d\\n", 'size("a\\nb")').stdout
    assert fmt == "4\n"
    sel = cell.run("condor_q", str(cluster), "-constraint", 'size("a\\nb") == 4', "-af", "ClusterId").stdout
    assert sel == f"{cluster}\n"
    joined = cell.run("condor_q", str(cluster), "-af", '"a" "b"').stdout
    assert joined != "ab\n"


# ---------------------------------------------------- 2, 3: relative times

@check([
    # a string literal is read when parsed; HTCondor's literal evaluates to a real
    ('relTime("1d")', "86400.0"),
    ('isReltime(relTime("1d"))', "false"),
    ('relTime("1+00:02:00")', "86520.0"),
    ('relTime("01:30.5")', "90.5"),
    ('relTime("01:30") + relTime(1)', "error"),
    # a string computed at run time is a relative time of 0
    ('relTime(strcat("1", "d"))', 'relTime("00")'),
    ('isReltime(relTime(strcat("1", "d")))', "true"),
    ('absTime(strcat("1", "d"))', '"1d"'),
])
def test_reltime_of_strings(text, expected):
    assert long_value(text) == expected


@check([
    ("relTime(1.5)", 'relTime("1.5")'),
    ("relTime(90.5)", 'relTime("01:30.5")'),
    ("relTime(86400.25)", 'relTime("1+00:00:0.25")'),
    ("relTime(3661.75)", 'relTime("01:01:1.75")'),
    ("relTime(-0.5)", 'relTime("-0.5")'),
    ("relTime(-90.5)", 'relTime("-01:30.5")'),
    ("relTime(15.5)", 'relTime("15.5")'),
    ("relTime(1.5) * 3", 'relTime("4.5")'),
    ("relTime(7) / 2", 'relTime("3.5")'),
    ("relTime(90)", 'relTime("01:30")'),
    ("relTime(-3661)", 'relTime("-01:01:01")'),
    ("relTime(-2147483648)", 'relTime("--24855+-3:-14:-8")'),
    ("relTime(1e10)", 'relTime("-24855+-3:-14:-8")'),
    ("relTime(-1e10)", 'relTime("--24855+-3:-14:-8")'),
    ('string(relTime(1.5))', '"01"'),
    ('string(relTime(90.5))', '"01:30"'),
    ('strcat(relTime(-0.5))', '"00"'),
])
def test_reltime_prints_its_fraction_as_htcondor(text, expected):
    assert long_value(text) == expected
    assert value_of(text) == expected


def test_reltime_fraction_in_an_ad_and_in_autoformat():
    from gridtools.cli.condor import formatting
    ad = ClassAd({"ClusterId": 1, "ProcId": 0, "R": parse("relTime(90.5)")})
    assert ad.eval("R").unparse() == 'relTime("01:30.5")'
    assert formatting.autoformat([ad], ["R", "relTime(1.5)", "string(R)"]) == 'relTime("01:30.5") relTime("1.5") 01:30\n'


# ---------------------------------------------------- 4: infinities

@check([
    ('real("INF")', 'real("INF")'),
    ('real("-INF")', 'real("-INF")'),
    ("pow(0, -1)", 'real("INF")'),
    ('-real("INF")', 'real("-INF")'),
    ('real("NaN")', 'real("NaN")'),
    ("-0.0", "-0.0"),
    ("1e20", "1E+20"),
    ("3.0", "3.0"),
])
def test_old_syntax_prints_infinities_as_htcondor(text, expected):
    assert long_value(text) == expected


def test_autoformat_and_json_of_infinities():
    from gridtools.cli.condor import formatting
    from gridtools.cli.condor.adformat import json_form
    job = ClassAd({"ClusterId": 1, "ProcId": 0, "Big": float("inf"), "Small": float("-inf")})
    assert formatting.autoformat([job], ['real("INF")', "Big", "Small"]) == 'real("INF") real("INF") real("-INF")\n'
    assert formatting.autoformat([job], ['real("-INF")'], "V") == 'real("-INF")\n'
    loaded = json.loads(json_form([job]))[0]
    assert loaded["Big"] == '\\/Expr(real("INF"))\\/'.replace("\\/", "/")
    assert loaded["Small"] == '/Expr(real("-INF"))/'


# ---------------------------------------------------- 5: anyCompare / allCompare

@check([
    ('anyCompare("<", {undefined, 1}, 2)', "false"),
    ('anyCompare("<", {1, undefined}, 2)', "true"),
    ('allCompare("<", {1, undefined}, 2)', "false"),
    ('allCompare("<", {undefined}, 2)', "false"),
    ('anyCompare("==", {3, undefined, 2}, 2)', "false"),
    ('anyCompare("is", {undefined}, undefined)', "true"),
    ('allCompare("isnt", {1, undefined}, undefined)', "false"),
    ('anyCompare("=?=", {undefined}, undefined)', "error"),
    ('allCompare("=!=", {1}, 2)', "error"),
    ('anyCompare("=", {1}, 1)', "error"),
    ('anyCompare("IS", {1}, 1)', "error"),
    ('anyCompare("<", {"a"}, 1)', "error"),
    ('anyCompare(">=", {1, 5}, 3)', "true"),
    ('allCompare("!=", {1, 5}, 3)', "true"),
    ('anyCompare(undefined, {1}, 1)', "undefined"),
    ('anyCompare("<", undefined, 1)', "undefined"),
    ('anyCompare("<", 1, 1)', "error"),
    ("anyCompare(\"<\", {}, 1)", "false"),
    ("allCompare(\"<\", {}, 1)", "true"),
])
def test_list_compare_as_htcondor(text, expected):
    assert value_of(text) == expected


# ---------------------------------------------------- 6: PCRE patterns

PCRE = [
    # pattern, target, matches (None: not a valid expression, regexp() is ERROR)
    ("[[:digit:]]", "a1", True), ("[[:digit:]]", "ab", False),
    ("^[[:alpha:]]+$", "abc", True), ("^[[:alpha:]]+$", "ab1", False),
    ("[[:space:]]", "a\tb", True), ("[[:space:]]", "ab", False),
    ("[[:upper:]]", "abc", False), ("[[:upper:]]", "aBc", True),
    ("[[:lower:]]", "ABC", False), ("[[:lower:]]", "ABc", True),
    ("^[[:alnum:]]+$", "a1B2", True), ("[[:alnum:]]", "-+", False),
    ("[[:punct:]]", "a!", True), ("[[:punct:]]", "ab", False),
    ("^[[:xdigit:]]+$", "0fA9", True), ("^[[:xdigit:]]+$", "fz", False),
    ("[[:word:]]", "-_", True), ("[[:word:]]", "-+", False),
    ("[[:^digit:]]", "123", False), ("[[:^digit:]]", "12a", True),
    ("^[[:^alpha:]x]+$", "1x2", True), ("^[[:^alpha:]x]+$", "1y", False),
    ("[^[:^alpha:]]", "12a", True), ("[^[:^alpha:]]", "12", False),
    ("^[a[:digit:]-]+$", "a-1", True), ("[[:nosuch:]]", "a", None),
    ("(?<x>a)", "a", True), ("(?<x>a)\\k<x>", "aa", True), ("(?<x>a)\\k<x>", "ab", False),
    ("(?P<x>a)(?P=x)", "aa", True), ("(?'x'a)\\k'x'", "aa", True), ("(?<x>a)\\k{x}", "aa", True),
    ("(a)\\g{1}", "aa", True), ("(a)\\g1", "ab", False),
    ("(?<=a)b", "ab", True), ("(?<!a)b", "ab", False),
    ("\\Qa.b\\E", "axb", False), ("\\Qa.b\\E", "a.b", True), ("x\\Q(*)", "x(*)", True),
    ("a\\z", "a\n", False), ("a\\z", "a", True),
    ("a\\Z", "a\n", True), ("a\\Z", "a", True), ("a\\Z", "a\nb", False),
    ("\\Aab", "ab", True), ("\\Aab", "cab", False),
    ("a\\hb", "a b", True), ("a\\hb", "a\nb", False), ("a\\Hb", "a b", False), ("a\\Hb", "axb", True),
    ("\\x{41}", "A", True), ("\\x{41}", "a", False), ("[\\x{41}-\\x{43}]", "B", True), ("\\x41", "A", True),
    ("a(?>bc|b)c", "abc", False), ("a(?>bc|b)c", "abcc", True),
    ("^a++$", "aaa", True), ("a++a", "aa", False), ("a?+a", "a", False), ("a*+b", "aab", True),
    ("a(?i)b", "aB", True), ("a(?i)b", "AB", False), ("a(?i)b|c", "C", True), ("(a(?i)b)c", "aBC", False),
    ("\\d", "\u0663", False), ("\\w", "\u00e9", False),
    ("[]a]", "]", True), ("[^]a]", "]", False),
    ("[a", "a", None), ("(?<x>a)(?<x>b)", "ab", None),
]


@pytest.mark.parametrize("pattern,target,matches", PCRE, ids=[f"{p}~{t!r}" for p, t, _ in PCRE])
def test_pcre_syntax_is_translated(pattern, target, matches):
    from gridtools.classad.regexfuncs import compile_regex
    regex = compile_regex(pattern)
    assert (None if regex is None else bool(regex.search(target))) is matches
    expected = "error" if matches is None else ("true" if matches else "false")
    quoted = unparse_value(pattern)
    assert value_of(f"regexp({quoted}, {unparse_value(target)})") == expected


def test_pcre_patterns_in_the_other_functions():
    assert value_of('regexps("(?<y>[[:digit:]]+)", "ab12cd", "[\\\\1]")') == '"[12]"'
    assert value_of('replaceAll("[[:space:]]+", "a  b\tc", "_")') == '"a_b_c"'
    assert value_of('regexpMember("^[[:upper:]]", {"ab", "Cd"})') == "true"
    assert value_of('stringList_regexpMember("^\\\\Qx.y\\\\E$", "a, x.y")') == "true"
    assert value_of('regexp("[[:digit:]]", "A", "i")') == "false"
    assert value_of('regexp("[[:upper:]]", "a", "i")') == "true"


def test_compiling_a_pattern_warns_nothing():
    from gridtools.classad import regexfuncs
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for pattern in ("[[:digit:]]x", "[[a]]", "[a--b]", "[a&&b]", "[a||b]", "[a~~b]"):
            regexfuncs._REGEXES.clear()
            regexfuncs.compile_regex(pattern)
    assert [str(w.message) for w in seen] == []


def test_compiled_patterns_are_kept():
    from gridtools.classad import regexfuncs
    first = regexfuncs.compile_regex("(?<k>[[:alpha:]])")
    assert regexfuncs.compile_regex("(?<k>[[:alpha:]])") is first


def test_regexp_without_a_warning_on_stderr(cell, workdir):
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n", cwd=workdir)
    proc = cell.run("condor_q", str(cluster), "-af", 'regexp("[[:digit:]]", "a1")', 'regexp("(?<x>a)", "a")')
    assert (proc.stdout, proc.stderr) == ("true true\n", "")


# ---------------------------------------------------- 7: currentTime, timeZoneOffset, dayTime, unresolved

def test_current_time_is_an_abstime_of_now():
    before = int(time.time())
    value = parse("currentTime()").eval()
    after = int(time.time())
    assert value_of("isAbsTime(currentTime())") == "true"
    assert before <= value.secs <= after
    assert value.offset == time.localtime(value.secs).tm_gmtoff
    assert value_of("currentTime(1)") == "error"
    assert value_of("int(currentTime()) - time()") in ("0", "-1", "1")


@pytest.fixture
def zone(monkeypatch):
    """Asia/Kolkata (+05:30, no summer time) for the evaluation, then back."""
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_time_zone_offset_is_a_reltime_of_the_local_offset(zone):
    assert value_of("timeZoneOffset()") == 'relTime("05:30:00")'
    assert value_of("isReltime(timeZoneOffset())") == "true"
    assert value_of("int(timeZoneOffset())") == "19800"
    assert value_of("timeZoneOffset(0)") == "error"


def test_day_time_is_the_reltime_since_local_midnight(zone):
    before = time.localtime()
    secs = int(parse("int(dayTime())").eval())
    after = time.localtime()
    lows = before.tm_hour * 3600 + before.tm_min * 60 + before.tm_sec
    highs = after.tm_hour * 3600 + after.tm_min * 60 + after.tm_sec
    assert lows <= secs <= highs or highs < lows     # (unless midnight passed meanwhile)
    assert value_of("isReltime(dayTime())") == "true"
    assert value_of("dayTime(1)") == "error"


def _refs_ad():
    return ClassAd({
        "Args": parse("Foo + Cmd + TARGET.Memory + MY.Bar + x.y + Cmd2 + foo + FOO"),
        "Cmd": parse('"a"'), "Cmd2": parse("Zed * 2"), "Lit": parse("1"),
        "Nested": parse("[a = b].a + c"), "Loop": parse("Loop2 + 1"), "Loop2": parse("Loop"),
        "Fn": parse('strcat(P1, {P2}, [q = P3].q)'),
    })


@check([
    ("unresolved(Args)", '"Bar,Foo,Memory,x.y,Zed"'),
    ('unresolved(Args, "^f")', "true"),
    ('unresolved(Args, "^ZED$")', "true"),
    ('unresolved(Args, "^q")', "false"),
    ('unresolved(Args, "")', "false"),
    ('unresolved(Args, "[")', "error"),
    ("unresolved(Args, 1)", "error"),
    ("unresolved(Cmd)", '""'),
    ("unresolved(Lit)", '""'),
    ("unresolved(Fn)", '"P1,P2,P3"'),
    ("unresolved(Loop)", '""'),
    ("unresolved(Nope)", "undefined"),
    ('unresolved(Nope, "x")', "undefined"),
    ("unresolved(1)", "error"),
    ('unresolved("Args")', "error"),
    ("unresolved()", "error"),
    ("unresolved(MY.Args)", '"Bar,Foo,Memory,x.y,Zed"'),
    ("UNRESOLVED(Cmd2)", '"Zed"'),
])
def test_unresolved_lists_external_references(text, expected):
    assert value_of(text, _refs_ad()) == expected


def test_unresolved_follows_the_target_in_a_match():
    """The names sort with their ``TARGET.`` (left off after): HTCondor's order."""
    job = ClassAd({"Requirements": parse("TARGET.Memory > RequestMemory && TARGET.Disk > 0")})
    slot = ClassAd({"Memory": parse("TotalMemory / 2"), "Owner": "x"})
    assert unparse(parse("unresolved(Requirements)").eval(job, slot)) == '"Disk,RequestMemory,TotalMemory"'
    assert unparse(parse("unresolved(Requirements)").eval(job)) == '"RequestMemory,Disk,Memory"'


def test_new_functions_are_known():
    from gridtools.classad.functions import lookup
    assert all(lookup(n) is not None for n in ("currentTime", "timeZoneOffset", "dayTime", "unresolved"))

"""More ClassAd behaviour held to HTCondor's (each case with the answer HTCondor's
classad library gives): the Elvis operator's precedence, scoped lookups in nested
ads, octal escapes, lists converted to strings, the unparse() function, the depth
of nesting the parser allows, list subscripts, envV1ToV2() and some parsing and
printing details."""

import os

import pytest

from gridtools.classad import ClassAd, ClassAdSyntaxError, parse, unparse
from gridtools.classad.parser import MAX_DEPTH, MAX_NESTING


def value_of(text, my=None):
    return unparse(parse(text).eval(my))


def check(cases):
    return pytest.mark.parametrize("text,expected", cases, ids=[c[0] for c in cases])


# ------------------------------------------------- the Elvis operator binds as a postfix

@check([
    ("0 ?: 1 + 5", "5"),
    ("3 ?: 2 * 3", "9"),
    ("1 + undefined ?: 5", "6"),
    ("2 * undefined ?: 3", "6"),
    ("-undefined ?: 3", "-3"),
    ("!undefined ?: 3", "false"),
    ("undefined ?: undefined ?: 3", "3"),
    ("0 ? : 1", "0"),
    ("0 ?: -1", "0"),
    ("undefined ?: [x = 1].x", "1"),
    ("undefined ?: {1}[0]", "1"),
    ("(undefined + 1) ?: 2", "2"),
    ("undefined ? 1 : undefined ?: 4", "undefined"),
    ("false ? 1 : undefined ?: 4", "4"),
])
def test_elvis_binds_tighter_than_the_other_operators(text, expected):
    assert value_of(text) == expected


@pytest.mark.parametrize("text", ["0 ?: +1", "(1 ?: ~1)", "(1 ?: !1)", "0 ?: - 1"])
def test_the_right_operand_of_elvis_is_a_postfix_expression(text):
    with pytest.raises(ClassAdSyntaxError):
        parse(text)


@check([
    ("(0 ?: 1) + 5", "(0 ?: 1) + 5"),
    ("1 + (a ?: b)", "1 + (a ?: b)"),
    ("(a ?: b) ?: c", "(a ?: b) ?: c"),
    ("a ?: b ?: c", "a ?: b ?: c"),
    ("a.b ?: c.d[1]", "a.b ?: c.d[1]"),
    ("-a ?: 3", " -a ?: 3"),
])
def test_elvis_prints_as_htcondor_prints_it(text, expected):
    assert parse(text).unparse() == expected
    assert parse(parse(text).unparse()).unparse() == expected


# -------------------------------------------- scoped lookups continue up the enclosing ads

@check([
    ("[x=1; y=[w=my.x]].y.w", "1"),
    ("[x=1; y=[w=self.x]].y.w", "1"),
    ("[x=1; y=[w=MY.parent.x]].y.w", "1"),
    ("[x=1; y=[z=[w=parent.x]]].y.z.w", "1"),
    ("[x=1; y=[z=[w=parent.parent.x]]].y.z.w", "1"),
    ("[x=1; y=[z=[w=my.x]]].y.z.w", "1"),
    ("[x=1; y=[w=[q=1].x]].y.w", "1"),
    ("[x=1; y=[w=2]].y.x", "1"),
    ("[x=1; y=[w=2]].y.parent.x", "1"),
    ("[x=1; y=[w=2]].y.self.w", "2"),
    ("[x=1; y=[x=2; z=[w=parent.parent.x]]].y.z.w", "1"),
    ("[x=1; y=[w=2]].y[\"x\"]", "undefined"),
    ("[x=1; y=[w=target.x]].y.w", "undefined"),
    ("[x=1; y=[w=my.nothing]].y.w", "undefined"),
])
def test_scoped_lookups_search_the_enclosing_ads(text, expected):
    assert value_of(text) == expected


# ------------------------------------------------------------------------ octal escapes

@check([
    (r'"\400"', '" 0"'),
    (r'"\777"', '"?7"'),
    (r'"\01"', r'"\001"'),
    (r'"\101\102"', '"AB"'),
    (r'"\1010"', '"A0"'),
    (r'size("\400")', "2"),
    (r'size("\037")', "1"),
    (r'size("\0377")', "2"),
])
def test_octal_escapes_read_a_third_digit_only_below_0x20(text, expected):
    assert value_of(text) == expected


@pytest.mark.parametrize("text", [r'"\0"', r'"a\0b"', r'"\0001"', r'"\08"', r"'a\0b'", r'"\000"'])
def test_an_escape_making_the_character_0_is_a_syntax_error(text):
    with pytest.raises(ClassAdSyntaxError):
        parse(text)


# -------------------------------------------------- lists converted to strings as written

@check([
    ("string({1+1})", r'"{ 1 + 1 }"'),
    ('toUpper({1+1,"a"})', r'"{ 1 + 1,\"A\" }"'),
    ('toUpper({size("abc"), "a"})', r'"{ SIZE(\"ABC\"),\"A\" }"'),
    ('strcat({1+1}, "x")', r'"{ 1 + 1 }x"'),
    ("string({{1+1},x})", r'"{ { 1 + 1 },x }"'),
    ('[x=3; y=string({x, 1.5, "a"})].y', r'"{ x,1.500000000000000E+00,\"a\" }"'),
    ("[a={1+1}; b=string(a)].b", r'"{ 1 + 1 }"'),
    ("string({1, 2})", r'"{ 1,2 }"'),
    ('string(split("a b"))', r'"{ \"a\",\"b\" }"'),
    ("string([a=1+1])", r'"[ a = 1 + 1 ]"'),
])
def test_lists_convert_to_strings_with_their_items_as_written(text, expected):
    assert value_of(text) == expected


# ------------------------------------------------------------------- the unparse() function

@check([
    ("[x = [a=1;b={1,2}]; y = unparse(x)].y",
     r'"\n    [\n        a = 1; \n        b = \n           {\n              1,\n              2\n           }\n    ]"'),
    ("[x = {}; y = unparse(x)].y", r'"\n   {\n   }"'),
    ("[x = []; y = unparse(x)].y", r'"\n    [\n    ]"'),
    ("[x = {[a=1],{}}; y = unparse(x)].y",
     r'"\n   {\n      \n          [\n              a = 1\n          ],\n      \n         {\n         }\n   }"'),
    ("[x = f([a=1]) + {2}; y = unparse(x)].y",
     r'"f(\n    [\n        a = 1\n    ]) + \n   {\n      2\n   }"'),
    ("[x = 1 + 2 * 3; y = unparse(x)].y", '"1 + 2 * 3"'),
    ("[x = (1 + 2) ? a : b; y = unparse(x)].y", '"(1 + 2) ? a : b"'),
    ("[a=1; b=unparse(my.a)].b", '""'),
    ("[a=1; b=[c=unparse(a)]].b.c", '""'),
    ("[a=1; b=unparse(1)].b", "error"),
])
def test_unparse_lays_out_as_htcondor_prettyprint(text, expected):
    assert value_of(text) == expected


# ------------------------------------------------- the depth of nesting the parser allows

def _nested(depth):
    return "{" * depth + "1" + "}" * depth


def test_the_deepest_expression_the_parser_takes_prints_and_evaluates():
    text = _nested(MAX_NESTING - 1)
    expr = parse(text)
    assert expr.unparse().count("{") == MAX_NESTING - 1
    assert expr.unparse(True).count("{") == MAX_NESTING - 1
    assert unparse(expr.eval()).count("{") == MAX_NESTING - 1
    assert value_of("member(1, %s) =?= false" % _nested(MAX_NESTING - 3)) == "true"


def test_a_long_chain_of_operators_is_no_deep_nesting():
    """A Requirements of a few hundred alternatives (a generated list of machines) is
    read, printed and evaluated: operators nest up to MAX_DEPTH, brackets up to
    MAX_NESTING."""
    chain = " || ".join(f"Memory < {-i}" for i in range(MAX_DEPTH - 2)) + " || Memory > 0"
    expr = parse(chain)
    assert expr.unparse().count("||") == MAX_DEPTH - 2
    assert expr.eval(ClassAd({"Memory": 1})) is True
    shorter = " || ".join(f"Memory < {-i}" for i in range(MAX_DEPTH - MAX_NESTING)) + " || Memory > 0"
    inside = parse("member(1, %s) =?= false || (%s)" % (_nested(MAX_NESTING - 3), shorter))
    assert inside.eval(ClassAd({"Memory": 1})) is True and inside.unparse().count("{") == MAX_NESTING - 3
    with pytest.raises(ClassAdSyntaxError, match="nested more than 300"):
        parse(" || ".join(["Memory > 0"] * (MAX_DEPTH + 2)))


@pytest.mark.parametrize("depth", [250, 300, 1000])
def test_deeper_expressions_are_a_syntax_error(depth):
    with pytest.raises(ClassAdSyntaxError, match="nested"):
        parse(_nested(depth))


def test_condor_submit_refuses_a_deep_expression_with_one_line(cell, workdir):
    deep = "member(1, %s) =?= false" % _nested(250)
    with open(os.path.join(workdir, "deep.sub"), "w") as fh:
        fh.write(f"executable = /bin/true\nhold = true\nrequirements = {deep}\nqueue\n")
    result = cell.run("condor_submit", "-dry-run", "-", "deep.sub", cwd=workdir)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Parse error" in result.stderr
    fine = "member(1, %s) =?= false" % _nested(100)
    with open(os.path.join(workdir, "fine.sub"), "w") as fh:
        fh.write(f"executable = /bin/true\nhold = true\nrequirements = {fine}\nqueue\n")
    result = cell.run("condor_submit", "-dry-run", "-", "fine.sub", cwd=workdir)
    assert result.returncode == 0, result.stderr
    assert "{ " * 100 + "1" + " }" * 100 in result.stdout, result.stdout[:3000]


# --------------------------------------------------------------- list subscripts, envV1ToV2

@check([
    ("{1,2,3}[4294967297]", "2"),
    ("{10,20}[-9223372036854775808]", "10"),
    ("{10,20}[4294967296]", "10"),
    ("{10,20}[-1]", "error"),
    ("{10,20}[2147483649]", "error"),
    ("{10,20}[true]", "error"),
    ("{10,20}[1.0]", "error"),
    ('envV1ToV2("=1")', "error"),
    ('envV1ToV2("a=1;=2")', "error"),
    ('envV1ToV2(" =1")', "error"),
    ('envV1ToV2("a=1;b=2")', '"a=1 b=2"'),
    ('envV1ToV2("")', '""'),
])
def test_subscripts_and_envv1tov2(text, expected):
    assert value_of(text) == expected


# ---------------------------------------------------------- parsing and printing details

@check([
    ("[a=1;;b=2]", "[ a = 1; b = 2 ]"),
    ("[;a=1]", "[ a = 1 ]"),
    ("[a=1;;]", "[ a = 1 ]"),
    ("a..b", "a.b"),
    ('absTime("2023-11-14T00:00:00Z")', 'absTime("2023-11-14T00:00:00-00:00")'),
    ('absTime("2023-11-14T10:30:00+01:00")', 'absTime("2023-11-14T10:30:00+01:00")'),
    ('relTime("2d3h")', 'relTime("2+03:00:00")'),
    ('relTime("90")', 'relTime("01:30")'),
    ('relTime("1.5")', 'relTime("1.5")'),
    ("absTime(1700000000)", "absTime(1700000000)"),
    ("[a=1; a=2]", "[ a = 2 ]"),
    ("[a=1; b=3; A=2]", "[ a = 2; b = 3 ]"),
    ("[a=1; b=3; A=2; b=4]", "[ a = 2; b = 4 ]"),
])
def test_parsing_and_printing_as_htcondor(text, expected):
    assert parse(text).unparse() == expected


@check([
    ("a..b", "undefined"),
    ("[a=1;b=2].a..b", "error"),
    ("[a=1; b=3; A=2].a", "2"),
    ('absTime("2023-11-14T00:00:00Z") + 1', "error"),
    ('relTime("2d3h") + 0', "1.836000000000000E+05"),
])
def test_values_of_those_details(text, expected):
    assert value_of(text) == expected


@pytest.mark.parametrize("text", ["[;]", "{1,,2}", "a...b", 'absTime("garbage")'])
def test_still_syntax_errors(text):
    with pytest.raises(ClassAdSyntaxError):
        parse(text)


def test_a_bracketed_ad_with_a_name_twice_keeps_the_last_value_in_the_first_spelling():
    from gridtools.classad import parse_ad
    ad = parse_ad("[ Memory = 1; Disk = 3; MEMORY = 2 ]")
    assert isinstance(ad, ClassAd)
    assert sorted(ad) == ["Disk", "Memory"] and ad.eval("memory") == 2

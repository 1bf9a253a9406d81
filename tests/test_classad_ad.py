"""The ClassAd mapping: construction, case-insensitive names, evaluation,
long and bracketed forms."""

import pytest

from gridtools.classad import (
    ERROR, UNDEFINED, ClassAd, ClassAdSyntaxError, Expr, parse, parse_ad, unparse,
)
from gridtools.classad.parser import parse_ads


def test_built_from_python_values():
    ad = ClassAd({"Owner": "alice", "Cpus": 2, "Load": 0.5, "Ok": True, "L": [1, "a"],
                  "Sub": {"x": 1}, "Nothing": None})
    assert ad.eval("Owner") == "alice"
    assert ad.eval("cpus") == 2
    assert ad.eval("LOAD") == 0.5
    assert ad.eval("ok") is True
    assert ad.eval("l") == [1, "a"]
    assert ad.eval("sub").eval("X") == 1
    assert ad.eval("Nothing") is UNDEFINED
    assert ad.eval("Missing") is UNDEFINED


def test_names_are_case_insensitive_and_keep_their_spelling():
    ad = ClassAd()
    ad["RequestMemory"] = 100
    assert "requestmemory" in ad and "REQUESTMEMORY" in ad
    assert list(ad) == ["RequestMemory"]
    ad["REQUESTMEMORY"] = 200
    assert len(ad) == 1 and ad.eval("RequestMemory") == 200
    assert list(ad) == ["REQUESTMEMORY"]
    del ad["requestMemory"]
    assert "RequestMemory" not in ad and len(ad) == 0
    assert 5 not in ad


def test_items_are_expressions():
    ad = ClassAd({"A": 1})
    ad["B"] = parse("A + 1")
    ad.set_expr("C", "B * 10")
    assert isinstance(ad["b"], Expr) and unparse(ad["b"]) == "A + 1"
    assert ad.lookup("c") == parse("B * 10")
    assert ad.lookup("missing") is None
    assert ad.eval("C") == 20
    with pytest.raises(KeyError):
        ad["missing"]
    assert dict(ad.items())["A"] == parse("1")


def test_bad_names_and_values_are_rejected():
    ad = ClassAd()
    with pytest.raises(TypeError):
        ad[""] = 1
    with pytest.raises(TypeError):
        ad["x"] = object()
    with pytest.raises(ClassAdSyntaxError):
        ad.set_expr("x", "1 +")


def test_eval_against_a_target():
    job = ClassAd({"Owner": "alice", "Requirements": parse("TARGET.Memory >= 1024")})
    assert job.eval("Requirements", ClassAd({"Memory": 2048})) is True
    assert job.eval("Requirements", {"Memory": 512}) is False
    assert job.eval("Requirements") is UNDEFINED
    assert parse("Memory").eval({"Memory": 3}) == 3


def test_long_form_printing_and_parsing():
    ad = ClassAd({"Owner": "alice", "Cpus": 2})
    ad.set_expr("Requirements", 'TARGET.Arch == "X86_64" && Memory > 0')
    text = str(ad)
    assert text == ('Owner = "alice"\nCpus = 2\n'
                    'Requirements = TARGET.Arch == "X86_64" && Memory > 0\n')
    assert parse_ad(text) == ad


def test_bracketed_form():
    ad = parse_ad('[ a = 1; b = "x"; c = a + 1 ]')
    assert ad.eval("c") == 2 and ad.eval("B") == "x"
    assert ad.unparse() == '[ a = 1; b = "x"; c = a + 1 ]'
    assert parse_ad(ad.unparse()) == ad
    assert repr(ad) == 'ClassAd([ a = 1; b = "x"; c = a + 1 ])'
    assert unparse(ad.eval("c")) == "2"
    multi = parse_ad("[\n  a = 1;\n  b = 2;\n]\n")
    assert list(multi) == ["a", "b"]


def test_long_form_as_condor_q_prints_it():
    text = """
# a job
MyType = "Job"
ClusterId = 17
ProcId = 0
Owner = "alice"
RemoteUserCpu = 0.0
Requirements = (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && (TARGET.Memory >= RequestMemory)
RequestMemory = ifthenelse(MemoryUsage =!= undefined,MemoryUsage,(ImageSize + 1023) / 1024)
ImageSize = 2048
Environment = ""
"""
    ad = parse_ad(text)
    assert ad.eval("ClusterId") == 17
    assert ad.eval("RequestMemory") == 2
    assert ad.eval("Requirements", {"Arch": "x86_64", "OpSys": "LINUX", "Memory": 4}) is True
    assert type(ad.eval("RemoteUserCpu")) is float


@pytest.mark.parametrize("text,line", [
    ("A = 1\nB = 1 +\n", 2),
    ("A = 1\njust words\n", 2),
    ("A = 1\n\n\nB = )\n", 4),
    ("A ==\n", 1),
    ("[ a = 1; b = ]", 1),
    ("[ a = 1;\n b = 2\n c = 3 ]", 3),
])
def test_bad_ads_report_their_line(text, line):
    with pytest.raises(ClassAdSyntaxError) as info:
        parse_ad(text)
    assert info.value.line == line


def test_empty_ads_are_errors():
    for text in ("", "\n\n", "# only a comment\n"):
        with pytest.raises(ClassAdSyntaxError):
            parse_ad(text)
    assert len(parse_ad("[]")) == 0


def test_several_ads():
    ads = parse_ads("A = 1\nB = 2\n\nA = 3\n\n\n[ A = 4 ]\n")
    assert [ad.eval("A") for ad in ads] == [1, 3, 4]


def test_equality_and_copy():
    a = ClassAd({"x": 1, "y": "s"})
    b = parse_ad('X = 1\nY = "s"')
    assert a == b
    c = a.copy()
    c["x"] = 2
    assert a.eval("x") == 1 and c != a
    assert a != ClassAd({"x": 1})


def test_nested_ads_see_their_enclosing_ad():
    ad = parse_ad("[ limit = 10; inner = [ wanted = limit * 2 ] ]")
    assert parse("inner.wanted").eval(ad) == 20
    assert ad.eval("inner").eval("wanted") == 20


ABSOLUTE = ('[Arch = "X86"; a = 1; c = [a = 2; b = .a; d = a; u = unparse(.a)]; e = .Arch; '
            'f = c.b; g = c.d; h = .c.a; i = .nope; j = c.u; k = [m = .a].m; l = {[n = .a]}[0].n]')


def test_absolute_references_read_the_outermost_ad():
    """``.name`` is the outermost ad's attribute, whichever nested ad the reference sits
    in (HTCondor's answers, asked of its own library where it is installed)."""
    ad = parse_ad(ABSOLUTE)
    want = {"e": '"X86"', "f": "1", "g": "2", "h": "2", "i": "undefined", "j": '""',
            "k": "1", "l": "1"}
    assert {name: unparse(ad.eval(name)) for name in want} == want
    assert parse(".a").eval() is ERROR            # in no ad at all: HTCondor's evaluation fails
    # an ad written in an expression evaluated in no ad is no outermost ad: HTCondor's
    # evaluation fails there too, however deep the reference sits
    for text in ("[a = 1; b = .a].b", "[a = 1; b = [c = .a]].b.c", "([a = 1; b = .a]).b",
                 "{[a = 1; b = .a]}[0].b", "[a = 5; x = [a = 1; b = .a].b].x"):
        assert parse(text).eval() is ERROR, text
    # evaluated in an ad (even an empty one), the outermost ad is that one
    assert parse("[a = 1; b = .a].b").eval(parse_ad("[a = 3]")) == 3
    assert parse("[a = 1; b = .a].b").eval(parse_ad("[]")) is UNDEFINED
    assert parse("[a = 1; b = .a]").eval().eval("b") == 1     # an ad value read on its own
    import sys
    sys.path.insert(0, __file__.rpartition("/")[0])
    import classad_oracle
    classad2 = classad_oracle.htcondor()
    if classad2 is not None:
        theirs = classad2.ClassAd(ABSOLUTE)
        assert {name: repr(classad2.ExprTree(name).simplify(theirs)) for name in want} == want
        for text in ("[a = 1; b = .a].b", "[a = 5; x = [a = 1; b = .a].b].x"):
            with pytest.raises(Exception):    # noqa: B017 - "failed to evaluate expression"
                classad2.ExprTree(text).eval()
        assert repr(classad2.ExprTree("[a = 1; b = .a].b").eval(classad2.ClassAd("[a = 3]"))) == "3"


def test_error_and_undefined_are_values():
    ad = ClassAd({"e": parse("1/0"), "u": parse("nothing")})
    assert ad.eval("e") is ERROR
    assert ad.eval("u") is UNDEFINED
    assert repr(ERROR) == "ERROR" and repr(UNDEFINED) == "UNDEFINED"
    with pytest.raises(TypeError):
        bool(UNDEFINED)


def test_evaluation_leaves_ads_unchanged():
    ad = ClassAd({"L": [1, 2], "N": {"a": 1}})
    value = ad.eval("L")
    value.append(3)
    assert ad.eval("L") == [1, 2]
    ad.eval("N")["a"] = 5
    assert ad.eval("N").eval("a") == 1

"""Parsing and unparsing: canonical spelling, round trips, and malformed
input (always ClassAdSyntaxError with a position, never another exception)."""

import json
import os
import random

import pytest

from conftest import REPO
from gridtools.classad import ClassAdSyntaxError, parse, unparse
from gridtools.classad.nodes import BINARY, UNARY, Binary, Literal, Paren, Unary
from gridtools.errors import InputError, SyntaxProblem

CANONICAL = [
    ("a&&b", "a && b"),
    ("a  ||  b", "a || b"),
    ("x==1", "x == 1"),
    ("x is undefined", "x is undefined"),
    ("x ISNT undefined", "x isnt undefined"),
    ("(a)", "(a)"),
    ("-x", " -x"),
    ("! x", " !x"),
    ("~ 1", " ~1"),
    ("f( 1 , 2 )", "f(1,2)"),
    ("{ 1 , 2 }", "{ 1,2 }"),
    ("[ a=1 ; b=2 ; ]", "[ a = 1; b = 2 ]"),
    ("a?b:c", "a ? b : c"),
    ("a ?: c", "a ?: c"),
    ("my.x", "my.x"),
    ("TARGET.Memory", "TARGET.Memory"),
    ("a.b.c", "a.b.c"),
    ("a[1][2]", "a[1][2]"),
    ("TRUE", "true"),
    ("Undefined", "undefined"),
    ("1.50", "1.500000000000000E+00"),
    
    ("'odd name' + 1", "'odd name' + 1"),
    ("'true'", "'true'"),
    ('"a" "b"', '"ab"'),
    ("5+5*5+5", "5 + 5 * 5 + 5"),
    ("a // comment\n + 1", "a + 1"),
    ("a /* block */ + 1", "a + 1"),
    ("KeyboardIdle > 15 * 60 || Owner == \"coltrane\"",
     'KeyboardIdle > 15 * 60 || Owner == "coltrane"'),
    # as HTCondor's lexer: a minus sign right before digits belongs to the number
    ("-2", "-2"), ("- 2", " -2"), ("-(2)", " -(2)"), ("--2", " --2"), ("- - 2", " - -2"),
    ("3-2", "3 - 2"), ("3 -2", "3 - 2"), ("3--2", "3 - -2"), ("2*-3", "2 * -3"), ("!-2", " !-2"),
    ("-0", "0"), ("-0.0", "-0.0"), ("-2.5", "-2.500000000000000E+00"), ("-.5", "-5.000000000000000E-01"),
    ("x[-1]", "x[-1]"), ("-/**/2", " -2"), ("-9223372036854775808", "-9223372036854775808"),
    ("- 9223372036854775808", " -0"), ("-9223372036854775809", "0"), ("x is -2", "x is -2"),
]


@pytest.mark.parametrize("text,expected", CANONICAL, ids=[c[0] for c in CANONICAL])
def test_canonical_spelling(text, expected):
    assert unparse(parse(text)) == expected


ROUND_TRIP = [
    "1", "1.5", "1e30", "-2.5e-10", '"with \\"quotes\\" and \\\\ and \\n"', "true && false",
    "a + b * c - d / e % f", "(a + b) * (c - d)", "a < b == c >= d", "a << 2 >> 1 >>> 3",
    "a & b | c ^ d", "!a || ~b && -c", "a ? b : c ? d : e", "(a ? b : c) ? d : e",
    "x ?: y ?: z", "{ 1,{ 2,3 },[ a = { 4 } ] }", "[ a = 1; 'b c' = a + 1 ].'b c'",
    "MY.a + TARGET.b", "strcat(\"x\", y, 3.0)", "l[0].name[\"k\"]", "a =?= undefined",
    "a =!= error", "- -x", "- -1", "!!x", "(((x)))", "ifThenElse(a, b, c) + 1",
    "regexp(\"^a\\\\.b$\", Name, \"i\")", "x * -1", "2 - -2",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_round_trip(text):
    expr = parse(text)
    again = parse(unparse(expr))
    assert again == expr
    assert unparse(again) == unparse(expr)  # unparse is stable
    assert unparse(again.eval()) == unparse(expr.eval())


def test_unparse_adds_parentheses_to_built_trees():
    # Trees built in code (not parsed) still print as the same expression.
    add, mul, sub = BINARY["+"], BINARY["*"], BINARY["-"]
    a, b, c = Literal(1), Literal(2), Literal(3)
    tree = Binary(mul, Binary(add, a, b), c)
    assert unparse(tree) == "(1 + 2) * 3"
    assert parse(unparse(tree)).eval() == 9
    right = Binary(sub, a, Binary(sub, b, c))
    assert unparse(right) == "1 - (2 - 3)"
    assert parse(unparse(right)).eval() == 2
    assert unparse(Unary(UNARY["-"], Binary(add, a, b))) == " -(1 + 2)"
    assert unparse(Binary(mul, Paren(Binary(add, a, b)), c)) == "(1 + 2) * 3"


def test_parse_is_cached_by_text():
    assert parse("a + 1 + 2") is parse("a + 1 + 2")


def test_equal_expressions_hash_alike():
    assert parse("a&&b") == parse("a  &&  b")
    assert hash(parse("a&&b")) == hash(parse("a && b"))
    assert parse("a") != parse("b")


MALFORMED = [
    "", "   ", "1 +", "(1", "1)", "[a=1", "{1,", "a ==", '"abc', "'abc", "1.", "1..2", "a.", "a[",
    "f(", "f(1,", "? 1", "1 ? 2", "1 ? :", "=?=", "a =? b", "a === b", "@", "#", "$x", "1e", "0x",
    "a b", "true false", "[a]", "[=1]", "[a=]", "{,}", "is", "a is", "x ! y", "\x00", '"\\', "f(,)",
    ")", "]", "}", "1 2", "[;]", "MY.", "a = 1", "f(1)(2)", "{1}{2}", "1 ?? 2", "a.1",
    "/* unterminated", "a && && b", "++", "-", "a[1", "a[]", "[a = 1] [b]x",
]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_input_raises_syntax_error(text):
    with pytest.raises(ClassAdSyntaxError) as info:
        parse(text)
    assert str(info.value)


def test_syntax_error_is_a_gridtools_input_error_with_position():
    with pytest.raises(ClassAdSyntaxError) as info:
        parse("a + * b")
    err = info.value
    assert isinstance(err, SyntaxProblem) and isinstance(err, InputError)
    assert (err.line, err.column) == (1, 5)
    assert str(err).startswith("line 1, column 5:")
    with pytest.raises(ClassAdSyntaxError) as info:
        parse("a +\n  (b")
    assert info.value.line == 2


def test_non_text_input_is_a_syntax_error():
    for value in (None, 5, ["a"], b"a"):
        with pytest.raises(ClassAdSyntaxError):
            parse(value)


def test_too_deep_nesting_is_a_syntax_error():
    with pytest.raises(ClassAdSyntaxError, match="nested"):
        parse("(" * 2000 + "1" + ")" * 2000)
    with pytest.raises(ClassAdSyntaxError, match="nested"):
        parse(" + ".join(["1"] * 5000))
    assert parse(" + ".join(["1"] * 200)).eval() == 200


def test_random_text_never_raises_anything_else():
    alphabet = "ab1 .()[]{}\"'+-*/%<>=!?:,;&|^~\\\n0x9eE_\t#$@"
    rng = random.Random(7)
    accepted = 0
    for _ in range(20000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
        try:
            expr = parse(text)
        except ClassAdSyntaxError:
            continue
        accepted += 1
        # stable from the second reading on: the first may read a negation printed
        # before digits (`` -9``) as the negative literal (``-9``), as HTCondor does
        again = unparse(parse(unparse(expr)))
        assert unparse(parse(again)) == again
        assert unparse(parse(again).eval()) == unparse(expr.eval())
    assert accepted > 100


def test_importing_the_package_does_not_load_lark():
    import subprocess
    import sys
    code = ("import sys, gridtools.classad, gridtools.formats.condor_config; "
            "print('lark' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout == "False\n", result.stderr


def test_evaluation_never_calls_the_parser(monkeypatch):
    from gridtools.classad import ClassAd, parser
    expr = parse('TARGET.Memory >= 1024 && strcat("a", Owner) == "abob" && {1, 2}[1] == 2')
    parser._parser()  # built already; from now on any use of it fails

    def refuse(*args, **kwargs):
        raise AssertionError("the parser was called during evaluation")
    monkeypatch.setattr(parser, "_parser", refuse)
    machine = ClassAd({"Memory": 2048})
    assert expr.eval(ClassAd({"Owner": "bob"}), machine) is True


def test_typical_requirements_evaluate_quickly():
    import time
    from gridtools.classad import ClassAd
    expr = parse('(TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") && '
                 "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && "
                 "(TARGET.Cpus >= RequestCpus) && (TARGET.LoadAvg < 0.5) && "
                 '(TARGET.KeyboardIdle > 15 * 60) && (Owner =!= "rival")')
    job = ClassAd({"Owner": "alice", "RequestMemory": 1024, "RequestCpus": 2, "RequestDisk": 10})
    machine = ClassAd({"Arch": "X86_64", "OpSys": "LINUX", "Memory": 4096, "Cpus": 8,
                       "Disk": 100000, "LoadAvg": 0.1, "KeyboardIdle": 1000})
    assert expr.eval(job, machine) is True
    rounds = 2000
    start = time.perf_counter()
    for _ in range(rounds):
        expr.eval(job, machine)
    per_eval = (time.perf_counter() - start) / rounds
    assert per_eval < 200e-6  # typically under 10 microseconds; this catches regressions


def test_lone_literals_and_names_read_by_hand_are_what_the_grammar_reads():
    """A lone number, escape-free string or name is read without the grammar; it is the
    node the grammar makes of the same text, and anything else goes to the grammar."""
    from gridtools.classad import grammar, parser
    texts = ["0", "00", "007", "42", " 42 ", "123456789012345678", "1234567890123456789", "1.5", "01.5", "0.",
             ".5", "1e5", '"a b"', '""', '"a\\"b"', '"a\\\\b"', "x", " Foo_1 ", "true", "FALSE", "Undefined",
             "error", "is", "isnt", "1x", "é", "\u20035\u2003", "5\n"]
    rng = random.Random(11)
    texts += ["".join(rng.choice('019."\\ \tazZ_é-') for _ in range(rng.randint(1, 5))) for _ in range(3000)]
    for text in texts:
        simple = parser._simple(text)
        if simple is None:
            continue
        made = grammar.run(text, "start_expr")
        assert (type(simple), simple.unparse()) == (type(made), made.unparse()), repr(text)


def test_parsing_a_lone_literal_loads_no_grammar_nor_re():
    import subprocess
    import sys
    code = ("import sys; from gridtools.classad import parse; parse('42'); parse('\"x\"'); parse('Name')\n"
            "print(sorted(m for m in ('lark', 're', 'gridtools.classad.grammar') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-I", "-S", "-c", "import sys; sys.path.insert(0, sys.argv[1])\n"
                             + code, os.path.join(REPO, "src")], capture_output=True, text=True)
    assert result.stdout == "[]\n", result.stderr


# ---------------------------------------------------------------- the reader against grammar.lark

def _lark_shape(tree):
    """A comparable shape of lark's parse tree of grammar.lark (rule aliases kept)."""
    from lark import Token
    from gridtools.classad import grammar
    from gridtools.classad.parser import KEYWORDS
    if isinstance(tree, Token):
        return str(tree)
    kids = [c for c in tree.children if c is not None]
    if tree.data == "name":
        token = kids[0]
        return grammar.unescape(token[1:-1]) if token.type == "QNAME" else str(token)
    if tree.data == "attr":
        token = tree.children[0].children[0]
        if token.type == "NAME" and token.lower() in KEYWORDS:
            return ("lit", repr(KEYWORDS[token.lower()]))
        return ("attr", _lark_shape(tree.children[0]))
    if tree.data == "absolute":          # (ours: a scoped reference whose scope is "")
        return ("select", ("attr", ""), _lark_shape(kids[0]))
    if tree.data == "integer":           # (decimal digits, as C's strtoll base 10: 0x1F is 0)
        digits = str(kids[0]).lower().split("x")[0]
        return ("lit", repr(int(digits) if digits not in ("-0", "0") else 0))
    if tree.data == "real":
        return ("lit", repr(float(kids[0])))
    if tree.data == "string":
        return ("lit", repr("".join(grammar.unescape(t[1:-1]) for t in kids)))
    if tree.data in ("args", "attrdefs"):
        return tuple(_lark_shape(c) for c in kids)
    if tree.data in ("call", "listexpr", "adexpr"):
        head = [_lark_shape(kids[0])] if tree.data == "call" else []
        rest = kids[1:] if tree.data == "call" else kids
        return (tree.data, *head, *(_lark_shape(rest[0]) if rest else ()))
    return (tree.data, *(_lark_shape(c) for c in kids))


def _our_shape(node):
    from gridtools.classad import compound, nodes
    kind = type(node)
    if kind is nodes.Literal:
        return ("lit", repr(node.value))
    if kind is nodes.Attr:
        return ("attr", node.name)
    if kind is nodes.Scoped:
        return ("select", ("attr", node.scope), node.name)
    if kind in (nodes.Binary, compound.Unary):
        return (node.op.alias, *(_our_shape(c) for c in node.children()))
    if kind is nodes.Call:
        return ("call", node.name, *(_our_shape(a) for a in node.args))
    if kind is compound.ListExpr:
        return ("listexpr", *(_our_shape(a) for a in node.items))
    if kind is compound.AdExpr:
        return ("adexpr", *((name, _our_shape(e)) for name, e in node.pairs))
    if kind is compound.Select:
        return ("select", _our_shape(node.base), node.name)
    names = {nodes.Paren: "paren", compound.Cond: "cond", compound.Elvis: "elvis",
             compound.Subscript: "subscript"}
    return (names[kind], *(_our_shape(c) for c in node.children()))


def _attrdef_shape(shape):
    """lark's adexpr holds (name, expr) pairs as attrdef trees; ours as pairs."""
    if isinstance(shape, tuple):
        if shape and shape[0] == "attrdef":
            return (shape[1], _attrdef_shape(shape[2]))
        return tuple(_attrdef_shape(s) for s in shape)
    return shape


def _random_expression(rng, depth=0):
    if depth > 4 or rng.random() < 0.3:
        return rng.choice(["1", "0", "2.5", ".5", "1e3", '"s"', '"a" "b"', "x", "Y_1", "'q n'", "true",
                           "UNDEFINED", "my", "target", "is", "f()", "{}", "[]", "7", "1.e5"])
    pick = rng.randrange(9)
    sub = lambda: _random_expression(rng, depth + 1)  # noqa: E731
    if pick < 3:
        op = rng.choice(["||", "&&", "|", "^", "&", "==", "!=", "=?=", "=!=", " is ", " ISNT ", "<", "<=",
                         ">", ">=", "<<", ">>", ">>>", "+", "-", "*", "/", "%"])
        return f"{sub()}{op}{sub()}"
    if pick == 3:
        return rng.choice(["-", "+", "!", "~", "- "]) + sub()
    if pick == 4:
        return rng.choice([f"{sub()} ? {sub()} : {sub()}", f"{sub()} ?: {sub()}", f"({sub()})"])
    if pick == 5:
        return f"{sub()}.{rng.choice(['a', 'B', 'true', 'is', chr(39) + 'z z' + chr(39)])}"
    if pick == 6:
        return f"{sub()}[{sub()}]"
    if pick == 7:
        return rng.choice(["f", "strcat", "size"]) + "(" + ", ".join(sub() for _ in range(rng.randrange(3))) + ")"
    return rng.choice(["{" + ",".join(sub() for _ in range(rng.randrange(3))) + "}",
                       "[" + "; ".join(f"n{i} = {sub()}" for i in range(rng.randrange(3))) + rng.choice(["", ";"]) + "]"])


def _mutated(rng, text):
    chars = list(text)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(chars) + 1)
        action = rng.randrange(3)
        if action == 0 and chars and at < len(chars):
            del chars[at]
        else:
            chars.insert(at, rng.choice("ab1 .()[]{}\"'+-*/%<>=!?:,;&|^~\n_/#"))
    return "".join(chars)


def test_the_reader_reads_what_grammar_lark_describes():
    """The hand-written reader accepts the texts lark accepts with grammar.lark, and
    reads each into the tree lark reads (beside what the grammar's own checks refuse:
    ``is`` or ``isnt`` as a name)."""
    from lark import Lark
    from lark.exceptions import LarkError
    from gridtools.classad import grammar
    with open(os.path.join(REPO, "src", "gridtools", "classad", "grammar.lark"), encoding="utf-8") as fh:
        lark = Lark(fh.read(), parser="lalr", lexer="contextual", start=["start_expr", "start_ad"],
                    maybe_placeholders=False)
    rng = random.Random(5)
    texts = [_random_expression(rng) for _ in range(3000)]
    texts += [_mutated(rng, text) for text in texts[:3000]]
    texts += ["a // note\n + 1", "a /* x */ + /**/ 1", "/* open", "0.5e-3 + 12E+2", "007", "1..2",
              "017 + 0x1F", "-0X1f", "08", "08.5", "0x", "0x1F.5", "2.x", "2 .x", "1.e3", "5e", "5e+", "1.5.x",
              "a.b", "(2).x", "019", "07e1", ".x", ". 'y z'.w", ".true", ".5.x", "[a = .b]"]
    agreed = 0
    for text in texts:
        try:
            theirs = _attrdef_shape(_lark_shape(lark.parse(text, start="start_expr").children[0]))
        except LarkError:
            theirs = None
        try:
            ours = _our_shape(grammar.run(text, "start_expr"))
        except ClassAdSyntaxError as exc:
            assert theirs is None or exc.reason.lower() in ("unexpected 'is'", "unexpected 'isnt'"), (text, theirs)
            continue
        assert ours == theirs, text
        agreed += 1
    assert agreed > 2000
    ad = "[ a = 1; 'b c' = { x, 2 }; ]"
    assert _our_shape(grammar.run(ad, "start_ad")) == _attrdef_shape(_lark_shape(lark.parse(ad, start="start_ad")
                                                                                   .children[0]))


def test_parsing_an_expression_loads_neither_lark_nor_re():
    from conftest import run_bare
    result = run_bare("from gridtools.classad import parse, parse_ad\n"
                      "parse('(TARGET.Memory >= 1024) && regexp(\"^a\", Owner) ? {1, 2}[0] : [a = 1].a')\n"
                      "parse_ad('[ x = 1; y = x + 1 ]')\n"
                      "print(sorted(m for m in ('lark', 're') if m in sys.modules))")
    assert result.stdout == "[]\n", result.stderr


#: what only evaluating needs: the evaluator, the operators' functions, the budget, the
#: built-in functions and the time values
EVALUATION_MODULES = ("gridtools.classad.evaluator", "gridtools.classad.operators", "gridtools.classad.budget",
                      "gridtools.classad.functions", "gridtools.classad.timevals")


def test_parsing_and_printing_load_nothing_of_the_evaluator_and_evaluating_then_works():
    """In a fresh interpreter, expressions of every kind of node and ads are parsed and
    printed (canonical and long forms) without the evaluation modules; evaluating them
    afterwards loads those and gives what it gives in a process that had them all along."""
    from conftest import run_bare
    from gridtools.classad import parse_ad
    texts = ["floor(MY.DaskWorkerMemory / 1048576)", "MY.DaskWorkerCores", "-x + 2.5 * y",
             "x =?= undefined || !(y >= 3 && z isnt 1)", "{1, y}[1] ?: TARGET.Memory", "x > 1 ? 'a b' : x",
             "[a = x; b = a << 2].b", "strcat(\"v\", 1) == \"V1\"", "size({1, 2}) + int(\"3.5\")"]
    ad_text = "X = 4\nY = 1.5\nZ = X + Y\nMemory = 7\nName = \"q\"\nDaskWorkerMemory = 3145728\nDaskWorkerCores = 2\n"
    code = ("import json\nfrom gridtools.classad.parser import parse, parse_ad\ntexts = json.loads(sys.argv[1])\n"
            "exprs = [parse(t) for t in texts]\nad = parse_ad(sys.argv[2])\n"
            "printed = [(e.unparse(), e.unparse(True)) for e in exprs] + [str(ad), ad.unparse(), ad.unparse(True)]\n"
            f"loaded = sorted(m for m in {EVALUATION_MODULES!r} if m in sys.modules)\n"
            "values = [repr(e.eval(ad, ad)) for e in exprs] + [repr(ad.eval('Z'))]\n"
            f"print(json.dumps([printed, loaded, values, [m in sys.modules for m in {EVALUATION_MODULES[:4]!r}]]))")
    result = run_bare(code, json.dumps(texts), ad_text)
    assert result.returncode == 0, result.stderr
    printed, loaded, values, after = json.loads(result.stdout)
    ad = parse_ad(ad_text)
    exprs = [parse(t) for t in texts]
    assert printed == [[e.unparse(), e.unparse(True)] for e in exprs] + [str(ad), ad.unparse(), ad.unparse(True)]
    assert loaded == []
    assert values == [repr(e.eval(ad, ad)) for e in exprs] + [repr(ad.eval("Z"))]
    assert values[:2] == ["3", "2"] and after == [True] * 4

"""``draft.read_text``: the canonical texts of the commonest expressions, read without
the parser, are the parser's own (or it leaves the text to the parser)."""

import random

import pytest

from classad_oracle import load, random_expr
from gridtools.classad import parse
from gridtools.classad.draft import read_text
from gridtools.classad.parser import ClassAdSyntaxError

#: pieces of ClassAd text, the odd ones included, for token soups
PIECES = ["a", "MY", "TARGET", "my", "Target", ".", "x", "Memory", "_n1", "floor", "f", "(", ")", ",",
          "(", ")", "1", "0", "07", "42", "123456789012345678", "1234567890123456789", "9999999999999999999", "1.5", "1e3",
          "0x1F", '"s"', '"a b"', '""', '"q\\"', "'n'", "true", "FALSE", "undefined", "Error", "is",
          "isnt", "IS", "parent", "+", "-", "*", "/", "%", "==", "!=", "=?=", "=!=", "<", "<=", ">",
          ">=", "<<", ">>", ">>>", "&&", "||", "&", "|", "^", "!", "~", "?", ":", "=", "[", "]", "{",
          "}", ";", "//", "/*", "*/", "absTime", "relTime", "\t", "\n", " ", "  ", "\u00e9", "\x0b"]


def _agrees(text):
    """Whether read_text's answer for ``text`` is the parser's; True when it leaves the
    text to the parser. Returns (agrees, read)."""
    found = read_text(text)
    if found is None:
        return True, False
    try:
        node = parse(text)
    except ClassAdSyntaxError:
        return False, True
    return (found.new, found.old) == (node.unparse(), node.unparse(True)), True


#: fewer pieces, so that soups of them are often near-expressions
STRUCTURE = ["a", "f", "(", ")", ",", "+", "==", "MY", ".", "x", "1", '"s"', "is", "true", " "]


def _soup(rng, pieces=PIECES):
    glue = rng.choice(("", " "))
    return glue.join(rng.choice(pieces) for _ in range(rng.randint(1, 9)))


def test_read_text_agrees_with_the_parser_on_the_oracle_table_and_random_texts():
    rng = random.Random(20261203)
    texts = [text for text, _answer in load()]
    texts += [random_expr(rng) for _ in range(3000)]
    texts += [_soup(rng) for _ in range(30000)]
    texts += [_soup(rng, STRUCTURE) for _ in range(30000)]
    differ, read = [], 0
    for text in texts:
        agrees, was_read = _agrees(text)
        read += was_read
        if not agrees:
            differ.append(text)
    assert not differ, differ[:10]
    assert read > 2000                  # (not a reader that leaves everything to the parser)


@pytest.mark.parametrize("text, new, old", [
    ("MY.DaskWorkerCores", "MY.DaskWorkerCores", None),
    ("floor(MY.DaskWorkerMemory / 1048576)", None, None),
    ("(OpSys==\"LINUX\")&&(Arch == \"X86_64\")", '(OpSys == "LINUX") && (Arch == "X86_64")', None),
    ("TARGET . Memory>=1024 && MY.x =?= undefined", "TARGET.Memory >= 1024 && MY.x is undefined",
     "TARGET.Memory >= 1024 && MY.x =?= undefined"),
    ("a isnt TRUE", "a isnt true", "a =!= true"),
    ("regexp( \"x\" , Name )", 'regexp("x",Name)', None),
    ("f( )", "f()", None),
    ("MY.parent && TARGET.Parent", "MY.parent && TARGET.Parent", None),   # (HTCondor prints them bare)
    ("x>>>2|y", "x >>> 2 | y", None),
])
def test_read_text_reads_what_submit_files_write(text, new, old):
    found = read_text(text)
    node = parse(text)
    assert found is not None
    assert found.new == (new or text) == node.unparse()
    assert found.old == (old or new or text) == node.unparse(True)


@pytest.mark.parametrize("text", [
    "1.5 * Memory", "-Memory", "Memory - -1", "!a", "a ? b : c", "a.b", "MY.a.b", "a[0]", "{1, 2}",
    "[a = 1]", "a // note", "a /* c */ + b", "\"a\" \"b\"", "'odd name'", "absTime(\"2020-01-01\")",
    "07", "0x10", "12345678901234567890", "parent.x", "is", "a is", "(a", "a)", "f(a,)", "()", "a b",
    "f(a) (b)", "(a, b)", "f((a), b", "\"a\\\"b\"", "a\u00a0== 1", "MY.1", "true(1)", "+a",
    "MY.true", "TARGET.error", "MY.Is", "target.ISNT", "my.False", "MY.undefined",
    " + ".join(["a"] * 200),
    "(" * 40 + "a" + ")" * 40,
])
def test_read_text_leaves_the_rest_to_the_parser(text):
    assert read_text(text) is None


@pytest.mark.parametrize("text", ["MY.true", "TARGET.error", "MY.Is", "target.ISNT", "x.false", "MY . undefined"])
def test_a_keyword_after_a_dot_is_a_parse_error(text):
    """HTCondor's parser refuses a keyword where a name is selected (classad2 and
    condor_submit alike); quoted, it is a name."""
    with pytest.raises(ClassAdSyntaxError):
        parse(text)
    assert parse(text.replace(".", ".'").replace(" ", "") + "'").unparse().count("'") == 2


def test_names_gives_the_references_read():
    names = []
    found = read_text('(TARGET.OpSysName == "Arch") && MY.Cpus > Memory && f(my.x, Disk)', names)
    assert found is not None
    assert names == [("target", "OpSysName"), ("my", "Cpus"), ("", "Memory"), ("my", "x"), ("", "Disk")]


def test_read_texts_operator_table_is_the_parsers():
    """The operators read_text knows are the parser's binary operators, longest first at
    each first character, spelled as the unparser spells them."""
    from gridtools.classad import nodes
    from gridtools.classad.draft import _BINARY_AT
    rows = [row for at in _BINARY_AT.values() for row in at]
    assert sorted(sym for sym, _new, _old in rows) == sorted(nodes.BINARY)
    for first, at in _BINARY_AT.items():
        assert all(sym[0] == first for sym, _new, _old in at)
        assert [len(sym) for sym, _new, _old in at] == sorted((len(sym) for sym, _n, _o in at), reverse=True)
    for sym, new, old in rows:
        assert (new, old) == (f" {nodes.NEW_SPELLING.get(sym, sym)} ", f" {sym} ")

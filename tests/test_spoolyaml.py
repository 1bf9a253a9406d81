"""The spool's YAML subset: what dump writes, load and any YAML reader read back alike."""

import random

import pytest
import yaml

from gridtools.formats import spoolyaml

#: characters from every class the writer treats apart: plain, quote, backslash, the
#: escapes with a letter, other control characters, DEL, printable and unprintable
#: non-ASCII (no-break space, line separator), lone surrogates (bytes that were not UTF-8)
ALPHABET = ['a', ' ', '/', '"', '\\', '\n', '\t', '\r', '\x00', '\x1b', '\x7f', 'é', '\xa0',
            '\u2028', '\ud800', '\udcff', '€']


def _escaped(text):
    """The quoted form written one character at a time (the definition the writer keeps)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7f or "\ud800" <= ch <= "\udfff":
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def test_strings_are_quoted_character_by_character_whatever_path_writes_them():
    rng = random.Random(7)
    texts = ["", "plain", 'MyType = "Job"\nCmd = "/bin/true"\n', "a\\b", "tab\there"]
    texts += ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 12))) for _ in range(20000)]
    for text in texts:
        assert spoolyaml.dump({"s": text}) == f"s: {_escaped(text)}\n", repr(text)


def test_a_job_ad_text_reads_back_with_this_reader_and_with_yaml():
    ad = ('MyType = "Job"\nCmd = "/bin/echo"\nArguments = "a \'b c\' \\\\d"\n'
          'Environment = "X=1 Y=\\"two\\""\nHoldReason = "submitted on hold at user\'s request"\n')
    doc = {"id": 12, "condor_ad": ad, "env": {"PATH": "/usr/bin"}, "args": ["x\ty", "é\u2028"]}
    text = spoolyaml.dump(doc)
    assert spoolyaml.load(text) == doc
    assert yaml.safe_load(text) == doc


@pytest.mark.parametrize("text", ["\ud800", "x\udcffy", 'q"\ud83d\n'])
def test_lone_surrogates_are_escaped_and_read_back(text):
    written = spoolyaml.dump({"s": text})
    assert written.encode("utf-8")          # writable as UTF-8
    assert spoolyaml.load(written) == {"s": text}


def test_every_quoted_text_reads_back_as_written():
    rng = random.Random(11)
    for _ in range(20000):
        text = "".join(rng.choice(ALPHABET + ["u", "\\u", "n"]) for _ in range(rng.randint(1, 12)))
        assert spoolyaml.load(spoolyaml.dump({"s": text})) == {"s": text}, repr(text)


@pytest.mark.parametrize("quoted", ['"a\\q"', '"a\\"', '"\\\\\\"', '"x\\\\\\y"', '"\\u12"', '"\\uzzzz"'])
def test_a_bad_escape_is_a_format_error(quoted):
    with pytest.raises(spoolyaml.SpoolFormatError, match="escape|unterminated"):
        spoolyaml.load(f"s: {quoted}\n")

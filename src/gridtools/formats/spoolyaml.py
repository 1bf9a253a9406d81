"""The YAML subset gridtools writes into its spool, with a fast reader and writer.

Spool files (job descriptions, job state, requests, task results) are YAML
documents that any YAML reader understands, written in a small, regular
subset so that the commands on the hot path (qsub, qdel, qstat -j) read and
write them without importing a YAML library:

- block mappings (``key: value``) and block sequences (``- item``), nested by
  two spaces per level; empty ones are written ``{}`` and ``[]``;
- scalars: ``null``, ``true``/``false``, integers, floats (``.inf``), and
  double-quoted strings with JSON-style escapes.

``load`` reads exactly what ``dump`` writes (and raises ``SpoolFormatError``
on anything else); every document written by ``dump`` also loads with
``yaml.safe_load`` to the same value, which the tests check.
"""

from gridtools.errors import SpoolError


class SpoolFormatError(SpoolError):
    """A spool file is not in the expected format."""


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_UNESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "/": "/", "0": "\0",
              "b": "\b", "f": "\f"}


#: str.translate table of the control characters, quote and backslash (a lone surrogate,
#: a byte that was not UTF-8, is escaped by ``_surrogates``: a table of all 2,048 of them
#: would cost a qsub more time at import than its whole request takes to write)
_ESCAPE_TABLE = {ord(ch): esc for ch, esc in _ESCAPES.items()}
_ESCAPE_TABLE.update({code: "\\u%04x" % code for code in (*range(0x20), 0x7f) if code not in _ESCAPE_TABLE})


def _surrogates(text):
    return "".join("\\u%04x" % ord(ch) if "\ud800" <= ch <= "\udfff" else ch for ch in text)


def _quote(text):
    if '"' not in text and "\\" not in text and text.isprintable():
        return f'"{text}"'
    # a ClassAd's text: quotes and lines, which three replacements escape faster than the
    # table (a lookup per character) when nothing else needs it
    plain = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    if plain.isprintable():
        return '"' + plain + '"'
    text = text.translate(_ESCAPE_TABLE)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = _surrogates(text)
    return '"' + text + '"'


def _scalar(value):
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value != value:
            return ".nan"
        if value in (float("inf"), float("-inf")):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        return text if ("." in text or "e" in text or "n" in text) else text + ".0"
    if isinstance(value, str):
        return _quote(value)
    raise TypeError(f"cannot write {type(value).__name__} into a spool file")


def _emit(value, indent, out):
    pad = " " * indent
    if isinstance(value, dict):
        for key, item in value.items():
            head = f"{pad}{_quote(str(key)) if _needs_quote(key) else key}:"
            _emit_item(head, item, indent, out)
    else:
        for item in value:
            _emit_item(pad + "-", item, indent, out)


def _emit_item(head, item, indent, out):
    if isinstance(item, (dict, list, tuple)):
        if not item:
            out.append(head + (" {}" if isinstance(item, dict) else " []"))
        else:
            out.append(head)
            _emit(item, indent + 2, out)
    else:
        out.append(head + " " + _scalar(item))


#: keys a YAML reader would take for another value than the word
_RESERVED = frozenset(("null", "true", "false", "yes", "no", "on", "off", "y", "n"))


def _needs_quote(key):
    key = str(key)
    if key.isascii() and key.isidentifier():
        return key in _RESERVED
    if not key or not (key[0].isalpha() or key[0] == "_"):
        return True
    return any(not (c.isalnum() or c in "_-.") for c in key) or key in _RESERVED


def dump(value):
    """The spool text of a dict (the document root must be a mapping)."""
    if not isinstance(value, dict):
        raise TypeError("a spool document is a mapping")
    if not value:
        return "{}\n"
    out = []
    _emit(value, 0, out)
    out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------- reading

def _unquote(text, lineno):
    if len(text) < 2 or text[-1] != '"':
        raise SpoolFormatError(f"line {lineno}: unterminated string")
    body = text[1:-1]
    if "\\" not in body:
        return body
    if "\\u" not in body:
        plain = _unescaped(body)
        if plain is not None:
            return plain
    out = []
    i = 0
    while True:
        at = body.find("\\", i)
        if at < 0:
            out.append(body[i:])
            return "".join(out)
        out.append(body[i:at])
        nxt = body[at + 1:at + 2]
        if nxt == "u":
            digits = body[at + 2:at + 6]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise SpoolFormatError(f"line {lineno}: bad \\u escape in string")
            out.append(chr(int(digits, 16)))
            i = at + 6
        elif nxt in _UNESCAPES:
            out.append(_UNESCAPES[nxt])
            i = at + 2
        else:
            raise SpoolFormatError(f"line {lineno}: bad escape in string")


def _unescaped(body):
    """``body`` unescaped with a few replacements (a ClassAd's text, say: quotes and
    lines) when it has no ``\\u`` escape; None when a backslash is left: an escaped
    backslash (whose first one no replacement takes), or a bad escape, which the loop of
    ``_unquote`` reads or reports. Without escaped backslashes, every backslash begins
    an escape of the next character, so the replacements cannot overlap."""
    for escape, char in _ESCAPED:
        if escape in body:
            body = body.replace(escape, char)
    return None if "\\" in body else body


#: (escape, character) of the escapes but ``\\\\`` and ``\\u``
_ESCAPED = tuple(("\\" + key, char) for key, char in _UNESCAPES.items() if key != "\\")


_WORDS = {"null": None, "~": None, "true": True, "false": False, "{}": None, "[]": None,
          ".inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}


def _parse_scalar(text, lineno):
    if text.startswith('"'):
        return _unquote(text, lineno)
    if text == "{}":
        return {}
    if text == "[]":
        return []
    if text in _WORDS:
        return _WORDS[text]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise SpoolFormatError(f"line {lineno}: cannot read value {text!r}") from None


def _split_key(text, lineno):
    if text.startswith('"'):
        end = 1
        while True:
            end = text.find('"', end)
            if end < 0:
                raise SpoolFormatError(f"line {lineno}: unterminated key")
            if text[end - 1] != "\\" or text[end - 2:end] == "\\\\":
                break
            end += 1
        key = _unquote(text[:end + 1], lineno)
        rest = text[end + 1:]
    else:
        colon = text.find(":")
        if colon < 0:
            raise SpoolFormatError(f"line {lineno}: expected 'key: value'")
        key, rest = text[:colon], text[colon:]
    if not rest.startswith(":"):
        raise SpoolFormatError(f"line {lineno}: expected ':' after key")
    return key, rest[1:].strip()


def _lines(text):
    result = []
    for lineno, raw in enumerate(text.split("\n"), 1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#") or stripped == "---":
            continue
        result.append((len(raw) - len(raw.lstrip(" ")), stripped, lineno))
    return result


def _block(lines, pos, indent):
    """Parse the block starting at lines[pos] with the given indent."""
    if lines[pos][1].startswith("- ") or lines[pos][1] == "-":
        return _sequence(lines, pos, indent)
    return _mapping(lines, pos, indent)


def _child(lines, pos, indent, rest, lineno):
    if rest:
        return _parse_scalar(rest, lineno), pos + 1
    if pos + 1 < len(lines) and lines[pos + 1][0] > indent:
        return _block(lines, pos + 1, lines[pos + 1][0])
    if pos + 1 < len(lines) and lines[pos + 1][0] == indent and lines[pos + 1][1].startswith("-"):
        return _sequence(lines, pos + 1, indent)
    return None, pos + 1


def _mapping(lines, pos, indent):
    result = {}
    while pos < len(lines) and lines[pos][0] == indent and not lines[pos][1].startswith("- "):
        _, text, lineno = lines[pos]
        key, rest = _split_key(text, lineno)
        result[key], pos = _child(lines, pos, indent, rest, lineno)
    if pos < len(lines) and lines[pos][0] > indent:
        raise SpoolFormatError(f"line {lines[pos][2]}: unexpected indentation")
    return result, pos


def _sequence(lines, pos, indent):
    result = []
    while pos < len(lines) and lines[pos][0] == indent and (
            lines[pos][1].startswith("- ") or lines[pos][1] == "-"):
        _, text, lineno = lines[pos]
        rest = text[1:].strip()
        if rest and not rest.startswith('"') and ": " in rest or rest.endswith(":"):
            raise SpoolFormatError(f"line {lineno}: inline mappings in sequences are not used")
        value, pos = _child(lines, pos, indent, rest, lineno)
        result.append(value)
    return result, pos


def load(text):
    """The value of a spool document written by :func:`dump`."""
    lines = _lines(text)
    if not lines:
        return {}
    if len(lines) == 1 and lines[0][1] == "{}":
        return {}
    if lines[0][0] != 0:
        raise SpoolFormatError(f"line {lines[0][2]}: document must start at column 0")
    value, pos = _mapping(lines, 0, 0)
    if pos != len(lines):
        raise SpoolFormatError(f"line {lines[pos][2]}: unexpected content")
    return value

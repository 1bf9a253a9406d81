"""A job ad while it is being built, made a ClassAd only when one is needed.

condor_submit builds each job's ad attribute by attribute. Nearly all the
values are plain (numbers, strings, booleans), and the expressions HTCondor
adds itself (the default Requirements, RequestMemory and RequestDisk) are
texts known in advance. A ``DraftAd`` keeps a plain value as it is, such an
expression as its texts (``Text``), and what the user wrote as the
expression the parser made of it. It reads plain values and prints the long
form without the expression modules (nodes, operators, parser), so that
submitting a plain job does not load them; ``classad()`` makes the ClassAd
(each ``Text`` parsed) for whatever needs one, and ``eval`` of an
expression goes through it.

The texts of a ``Text`` are what ``parse(new)`` prints: ``new`` in the
canonical spelling, ``old`` in the long form's (a test holds every ``Text``
condor_submit makes to that).
"""

from gridtools.classad.values import (ERROR, INT64_MIN, RESERVED_WORDS, UNDEFINED, Special, quote_string,
                                     unparse_value, wrap64)

#: the types of the values a DraftAd keeps as they are
PLAIN = (bool, int, float, str, Special)
_INT64_MAX = ~INT64_MIN


class Text:
    """An expression known by its texts: ``new`` (canonical) and ``old`` (the long
    form's spelling; the same when not given)."""

    __slots__ = ("new", "old")

    def __init__(self, new, old=None):
        self.new = new
        self.old = new if old is None else old

    def unparse(self, old=False):
        return self.old if old else self.new

    def expr(self):
        """The expression itself, parsed."""
        from gridtools.classad.parser import parse
        return parse(self.new)

    def __repr__(self):
        return f"Text({self.new!r})"


#: what ``read_text`` takes as blanks, names and digits (ASCII only: anything else sends a text
#: to the parser)
_BLANKS = frozenset(" \t\n\r\f\v")
_DIGITS = frozenset("0123456789")
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_REST = _NAME_START | _DIGITS
#: the binary operators by their first character, longest first (``is`` and ``isnt`` are
#: words), each with its canonical and long-form spellings, blanks around (written out:
#: building it costs every start more than reading it)
_BINARY_AT = {
    ">": ((">>>", " >>> ", " >>> "), (">>", " >> ", " >> "), (">=", " >= ", " >= "), (">", " > ", " > ")),
    "<": (("<<", " << ", " << "), ("<=", " <= ", " <= "), ("<", " < ", " < ")),
    "=": (("=?=", " is ", " =?= "), ("=!=", " isnt ", " =!= "), ("==", " == ", " == ")),
    "!": (("!=", " != ", " != "),),
    "&": (("&&", " && ", " && "), ("&", " & ", " & ")),
    "|": (("||", " || ", " || "), ("|", " | ", " | ")),
    "^": (("^", " ^ ", " ^ "),), "+": (("+", " + ", " + "),), "-": (("-", " - ", " - "),),
    "*": (("*", " * ", " * "),), "/": (("/", " / ", " / "),), "%": (("%", " % ", " % "),),
}
_WORD_OPERATORS = {"is": (" is ", " =?= "), "isnt": (" isnt ", " =!= ")}
_LITERAL_WORDS = {"true": True, "false": False, "undefined": UNDEFINED, "error": ERROR}
#: the longest text ``read_text`` reads, the most binary operators and the most parentheses
#: nested: the parser's tree is then far from its MAX_DEPTH
_READ_CHARS = 4096
_READ_OPERATORS = 128
_READ_NESTING = 32


def read_text(text, names=None):
    """The ``Text`` of the expression ``text`` when it is built of what most submit
    files write (integers without sign or leading zero, strings without escapes,
    ``true`` and the other literal words, names, ``MY.name`` and ``TARGET.name``, calls,
    parentheses and binary operators), read without the parser; else None (the parser
    reads it, or says what is wrong with it). With a list ``names``, each attribute
    reference read is appended to it as (its scope in lower case, ``""`` when it has
    none, its name), in the order written (what is appended before a None is to be
    thrown away).

    Canonical text needs no tree: the parser keeps the parentheses it reads, and the
    unparser prints a binary operator with a blank either side, a call as its name and
    its arguments between commas, a name (when not a reserved word) as written.
    Anything else (a real, an escape, a unary operator, a selection, a subscript, a
    list, an ad, ``?:``, a comment, a time literal) is left to the parser, as is a
    text that ends where an operand is wanted: the parser's answer and its errors
    stay the only ones. A test holds the two to the same texts."""
    end = len(text)
    if end > _READ_CHARS:
        return None
    new, old, opened, operators = [], [], [], 0       # opened: True for a call, False for "("
    i, operand = _skip(text, 0, end), True
    while i < end:
        if operand:
            found = _operand(text, i, end, names)
            if found is None:
                return None
            piece, old_piece, i, opens = found
            if opens is not None:
                if len(opened) == _READ_NESTING:
                    return None
                opened.append(opens)
            else:
                operand = False
        elif text[i] in "),":
            piece = old_piece = text[i]
            if not opened or (piece == "," and not opened[-1]):
                return None
            if piece == ")":
                opened.pop()
            else:
                operand = True
            i += 1
        else:
            found = _operator(text, i, end)
            if found is None:
                return None
            piece, old_piece, i = found
            operand, operators = True, operators + 1
        new.append(piece)
        old.append(old_piece)
        i = _skip(text, i, end)
    if operand or opened or operators > _READ_OPERATORS:
        return None
    return Text("".join(new), "".join(old))


def _skip(text, i, end):
    """Where the blanks at ``i`` end."""
    while i < end and text[i] in _BLANKS:
        i += 1
    return i


def _name_end(text, i, end):
    """Where the name characters at ``i`` end."""
    while i < end and text[i] in _NAME_REST:
        i += 1
    return i


def _operand(text, i, end, names=None):
    """(canonical text, long-form text, where it ends, what it opens: None for a whole
    operand, True for a call's parenthesis, False for a parenthesis) of the operand at
    ``i``; None when read_text leaves it to the parser. An attribute reference's
    (lower-case scope, "" when none, name) goes into ``names`` when given."""
    ch = text[i]
    if ch in _DIGITS:
        j = i + 1
        while j < end and text[j] in _DIGITS:
            j += 1
        if j - i > 18 or (ch == "0" and j > i + 1) or (j < end and (text[j] in _NAME_REST or text[j] == ".")):
            return None                         # a real, octal, hexadecimal or long number
        return text[i:j], text[i:j], j, None
    if ch == '"':
        j = text.find('"', i + 1)
        if j < 0 or "\\" in text[i:j]:
            return None
        value = text[i + 1:j]
        return unparse_value(value), unparse_value(value, True), j + 1, None
    if ch == "(":
        return "(", "(", i + 1, False
    if ch not in _NAME_START:
        return None
    j = _name_end(text, i + 1, end)
    word, k = text[i:j], _skip(text, j, end)
    after, lower = text[k:k + 1], word.lower()
    if lower in RESERVED_WORDS:
        if lower not in _LITERAL_WORDS or after in ("(", ".", "["):
            return None
        spelled = unparse_value(_LITERAL_WORDS[lower])
        return spelled, spelled, j, None
    if after == "(":
        if lower in ("abstime", "reltime"):
            return None                         # (the parser checks their literal)
        k = _skip(text, k + 1, end)
        if text[k:k + 1] == ")":
            return word + "()", word + "()", k + 1, None
        return word + "(", word + "(", k, True
    if after == ".":
        if lower not in ("my", "target"):
            return None                         # a selection
        k = _skip(text, k + 1, end)
        j = _name_end(text, k, end)
        if j == k or text[k] not in _NAME_START:
            return None
        name = text[k:j]
        if name.lower() in RESERVED_WORDS and name.lower() != "parent":
            return None                         # (the parser refuses ``MY.true``)
        if names is not None:
            names.append((lower, name))
        return word + "." + name, word + "." + name, j, None
    if after == "[":
        return None                             # a subscript
    if names is not None:
        names.append(("", word))
    return word, word, j, None


def _operator(text, i, end):
    """(canonical text, long-form text, where it ends) of the binary operator at ``i``;
    None when there is none (or a comment begins there)."""
    ch = text[i]
    if ch in _NAME_START:
        j = _name_end(text, i + 1, end)
        spelled = _WORD_OPERATORS.get(text[i:j].lower())
        return None if spelled is None else (spelled[0], spelled[1], j)
    for sym, spelled, old_spelled in _BINARY_AT.get(ch, ()):
        if text.startswith(sym, i):
            if sym == "/" and text[i + 1:i + 2] in ("/", "*"):
                return None                     # a comment
            return spelled, old_spelled, i + len(sym)
    return None


class DraftAd:
    """Names (case-insensitive, spelled as last set) to plain values, ``Text``s or
    parsed expressions, in the order first set. Offers what a ClassAd offers a
    reader of a job ad: ``in``, iteration over the names, ``lookup``, ``eval``
    and the long form (``str``). ``eval`` of an expression evaluates it in the
    ClassAd the draft makes, made once until the draft changes."""

    __slots__ = ("_values", "_names", "_made")

    def __init__(self):
        self._values = {}
        self._names = {}
        self._made = None

    def __setitem__(self, name, value):
        key = name.lower()
        if value.__class__ is int:
            if not INT64_MIN <= value <= _INT64_MAX:
                value = wrap64(value)
        elif value is None:
            value = UNDEFINED
        self._values[key] = value
        self._names[key] = name
        self._made = None

    def update(self, pairs):
        """Set each (name, plain value) of ``pairs``, in order: a value set in one call
        (the attributes every job ad starts with)."""
        values, names = self._values, self._names
        self._made = None
        for name, value in pairs:
            if value.__class__ is int and not INT64_MIN <= value <= _INT64_MAX:
                value = wrap64(value)
            key = name.lower()
            values[key] = value
            names[key] = name

    def inherit(self, base):
        """Take from ``base`` what this draft does not set (after the rest): as a proc ad
        of HTCondor's chains to its cluster's ad, proc 0's."""
        values, names = self._values, self._names
        self._made = None
        for key, value in base._values.items():
            if key not in values:
                values[key] = value
                names[key] = base._names[key]

    def __contains__(self, name):
        return name.lower() in self._values

    def __iter__(self):
        return iter(list(self._names.values()))

    def __len__(self):
        return len(self._values)

    def lookup(self, name):
        """What ``name`` is bound to, as an expression (``unparse`` prints it), or None."""
        value = self._values.get(name.lower())
        if value is None:
            return None
        if value.__class__ in PLAIN:
            return Text(unparse_value(value), unparse_value(value, True))
        return value

    def plain(self, name):
        """True when ``name`` is missing or a plain value: what ``eval`` reads without
        evaluating anything."""
        return self._values.get(name.lower(), UNDEFINED).__class__ in PLAIN

    def eval(self, name, target=None):
        """The value of ``name`` (UNDEFINED when missing); an expression is evaluated
        in the ClassAd this draft makes."""
        value = self._values.get(name.lower(), UNDEFINED)
        if value.__class__ in PLAIN and target is None:
            return value
        made = self._made
        if made is None:
            made = self._made = self.classad()
        return made.eval(name, target)

    def classad(self):
        """The ClassAd of this draft (each ``Text`` parsed)."""
        from gridtools.classad.ad import ClassAd
        ad = ClassAd()
        for key, value in self._values.items():
            ad[self._names[key]] = value.expr() if value.__class__ is Text else value
        return ad

    def __str__(self):
        """The long form, as ``str`` of the ClassAd prints it."""
        names, lines = self._names, []
        for key, value in self._values.items():
            name = names[key]           # quoted as values.quote_name quotes, seen here at once
            if not (name.isascii() and name.isidentifier()) or key in RESERVED_WORDS:
                name = quote_string(name, "'")
            kind = value.__class__
            if kind is int:                 # (the commonest values, spelled here without a call)
                text = str(value)
            elif kind is str:
                text = '"' + value.replace('"', '\\"') + '"'
            elif kind in PLAIN:
                text = unparse_value(value, True)
            else:
                text = value.unparse(True)
            lines.append(f"{name} = {text}\n")
        return "".join(lines)

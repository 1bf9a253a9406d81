"""Reading ClassAd text that is more than a lone literal or name (see
``parser``): a recursive-descent reader of the grammar written out in
``grammar.lark``, building the expression nodes as it goes.

The grammar, lowest precedence first: ``? :``, ``||``,
``&&``, ``|``, ``^``, ``&``, equality (``== != =?= =!= is isnt``),
relations (``< <= > >=``), shifts (``<< >> >>>``), ``+ -``, ``* / %``, the
unary ``- + ! ~``, then selection (``.``), subscripts (``[]``) and the Elvis
operator ``?:`` after a primary: a number, strings (adjacent ones are one), a
name (``'quoted'`` or plain), a call, a parenthesised expression, a list
``{...}`` or an ad ``[...]``. Binary operators group to the left, the
conditional to the right; the Elvis operator's right operand is again such a
postfix expression (as HTCondor reads it: ``a ?: b + 1`` is ``(a ?: b) + 1``,
``a ?: b ?: c`` is ``a ?: (b ?: c)``, ``a ?: +1`` no expression). Blanks and
``//`` and ``/* */`` comments separate tokens.

A token is read where the grammar expects it, as lark's contextual lexer
reads ``grammar.lark``: after an operand a ``.`` is a selection and
``is``/``isnt`` are operators, before one ``.5`` is a number and ``is`` a
name (which the grammar then refuses), and ``-`` right before a digit (or a dot
and a digit) is the sign of a negative number (``-2`` is the literal -2, as
HTCondor's lexer reads it; ``- 2``, ``-(2)`` and ``3-2`` hold an operator). A
test holds this reader to that
grammar through lark. Reading it by hand keeps lark (about 30 ms to import
and load) out of the commands that parse a requirement or a constraint.
"""

import sys

from gridtools.classad import nodes
from gridtools.classad.parser import KEYWORDS, MAX_DEPTH, MAX_NESTING, ClassAdSyntaxError

INT64_MAX = (1 << 63) - 1
#: the recursion limit while a long text is read (each level of nesting costs the
#: reader about six calls; MAX_DEPTH levels must fit)
_DEEP_LIMIT = 8 * MAX_DEPTH + 1000
#: texts shorter than this cannot nest deep enough to need more than the usual limit
_SHALLOW = 200

_DIGITS = frozenset("0123456789")
_OCTAL = frozenset("01234567")
_HEX = frozenset("0123456789abcdefABCDEF")
#: the kinds of number token (``Reader.number``)
INTEGER, REAL, HEX, OCTAL, BAD = range(5)
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_REST = _NAME_START | _DIGITS
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
#: the operator and punctuation tokens, longest first at each start
_SYMBOLS = (">>>", "=?=", "=!=", ">>", ">=", "<<", "<=", "==", "!=", "&&", "||") + tuple("<>&|^+-*/%?:.[](){},;=!~")
_UNARY = {op.symbol: op for op in nodes.OPERATORS if op.unary}
_TIME_LITERALS = {"abstime": "parse_abs", "reltime": "parse_rel"}
#: the words that name nothing unquoted after a dot or in a nested ad (``MY.true``,
#: ``x.isnt``, ``[is = 1]``: HTCondor refuses them; ``MY.'true'`` is a name)
_NOT_SELECTED = frozenset(("true", "false", "undefined", "error", "is", "isnt"))


class _TooDeep(Exception):
    pass


def _checked(node):
    if node.depth > MAX_DEPTH:
        raise _TooDeep(MAX_DEPTH)
    return node


def unescape(body):
    """The characters of a quoted literal: C escapes and octal escapes, as HTCondor's
    convert_escapes reads them: one or two octal digits, and a third only while the
    value of the first two is below 0x20 (``\\400`` is a blank and a ``0``); None
    when an escape makes the character 0 (``\\0``: no valid literal)."""
    if "\\" not in body:
        return body
    out, i, n = [], 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\" or i + 1 == n:
            out.append(ch)
            i += 1
            continue
        if body[i + 1] in _OCTAL:
            number, i = int(body[i + 1]), i + 2
            if i < n and body[i] in _OCTAL:
                number, i = number * 8 + int(body[i]), i + 1
                if number < 0x20 and i < n and body[i] in _OCTAL:
                    number, i = number * 8 + int(body[i]), i + 1
            if not number:
                return None
            out.append(chr(number))
            continue
        nxt = body[i + 1]
        out.append(_SIMPLE_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


#: the symbols that begin with each character, longest first
_SYMBOLS_AT = {}
for _sym in _SYMBOLS:
    _SYMBOLS_AT.setdefault(_sym[0], []).append(_sym)
del _sym


class _Reader:
    """One reading of ``text``; ``pos`` is where the next token starts (or blanks)."""

    def __init__(self, text, old=False):
        self.text, self.pos, self.end, self.nesting = text, 0, len(text), 0
        self.old = old

    # -- tokens -----------------------------------------------------------------
    def skip(self):
        """Step over blanks and comments; the next character (or "" at the end)."""
        text, i, end = self.text, self.pos, self.end
        while i < end:
            ch = text[i]
            if ch.isspace():
                i += 1
            elif ch == "/" and text.startswith("//", i):
                found = text.find("\n", i)
                i = end if found < 0 else found
            elif ch == "/" and text.startswith("/*", i) and text.find("*/", i + 2) >= 0:
                i = text.find("*/", i + 2) + 2
            else:
                break
        self.pos = i
        return text[i] if i < end else ""

    def symbol(self):
        """The operator or punctuation token at ``pos`` (after blanks), or ""."""
        first = self.skip()
        text, i = self.text, self.pos
        for sym in _SYMBOLS_AT.get(first, ()):
            if text.startswith(sym, i):
                return sym
        return ""

    def expect(self, sym):
        if self.symbol() != sym:
            self.fail()
        self.pos += len(sym)

    def word(self):
        """The name token at ``pos`` (after blanks), or ""."""
        text, i = self.text, self.pos
        if i >= self.end or text[i] not in _NAME_START:
            return ""
        j = i + 1
        while j < self.end and text[j] in _NAME_REST:
            j += 1
        return text[i:j]

    def quoted(self, quote):
        """The end (after the closing quote) of the quoted token at ``pos``; fails when
        it is not closed."""
        text, i, end = self.text, self.pos + 1, self.end
        while i < end:
            ch = text[i]
            if ch == "\\":
                i += 2
            elif ch == quote:
                return i + 1
            else:
                i += 1
        self.fail()

    def number(self):
        """(kind, end) of the number token at ``pos`` (a digit, or a dot and a digit), as
        HTCondor's lexer reads numbers: kind ``INTEGER``, ``REAL``, ``HEX`` (``0x`` and
        hexadecimal digits), ``OCTAL`` (a zero and octal digits) or ``BAD`` (no number:
        a ``0x`` without digits, a leading zero before an 8 or a 9 in an integer, a dot
        or an exponent mark without digits after it, as in ``2.x`` or ``5e``; ``end`` is
        past what was read). The grammar's REAL and INT read the same."""
        text, i, end = self.text, self.pos, self.end
        j = i
        if text[i] == "0" and i + 1 < end and text[i + 1] in "xX":
            j = i + 2
            while j < end and text[j] in _HEX:
                j += 1
            if j == i + 2 or (j < end and text[j] == "."):
                return BAD, j + 1
            return HEX, j
        while j < end and text[j] in _DIGITS:
            j += 1
        real = j < end and text[j] in ".eE"
        if j < end and text[j] == ".":
            j += 1
            if not (j < end and text[j] in _DIGITS):
                return BAD, j + (j < end)
            while j < end and text[j] in _DIGITS:
                j += 1
        if real and j < end and text[j] in "eE":
            after = self._exponent(j)
            if not after:
                return BAD, min(j + 1, end)
            j = after
        if not real and text[i] == "0" and j > i + 1:
            return (OCTAL if _OCTAL.issuperset(text[i:j]) else BAD), j
        return (REAL if real else INTEGER), j

    def _exponent(self, j):
        text, end = self.text, self.end
        if j < end and text[j] in "eE":
            k = j + 1
            if k < end and text[k] in "+-":
                k += 1
            start = k
            while k < end and text[k] in _DIGITS:
                k += 1
            if k > start:
                return k
        return 0

    def where(self, pos):
        line = self.text.count("\n", 0, pos) + 1
        return line, pos - self.text.rfind("\n", 0, pos)

    def fail(self):
        """Raise the error for the token at ``pos`` (after blanks)."""
        ch = self.skip()
        if not ch:
            lines = self.text.split("\n")
            raise ClassAdSyntaxError("unexpected end of input", len(lines), len(lines[-1]) + 1)
        line, column = self.where(self.pos)
        token = self.word() or self.symbol()
        if not token and ch in _DIGITS:
            token = self.text[self.pos:self.number()[1]]
        if not token and ch in "\"'":
            end = self.text.find(ch, self.pos + 1)
            token = self.text[self.pos:end + 1] if end > 0 else ""
        if token:
            raise ClassAdSyntaxError(f"unexpected '{token:.40}'", line, column)
        raise ClassAdSyntaxError(f"unexpected character {ch!r}", line, column)

    # -- the grammar ------------------------------------------------------------
    def expr(self):
        cond = self.binary(2)
        if self.symbol() != "?":
            return cond
        self.pos += 1
        then = self.expr()
        self.expect(":")
        return _checked(nodes.Cond(cond, then, self.expr()))

    def operator(self):
        """The binary operator at ``pos`` (after blanks) and its length, or (None, 0)."""
        sym = self.symbol()
        op = nodes.BINARY.get(sym)
        if op is not None:
            return op, len(sym)
        word = self.word().lower()
        if word in nodes.SYNONYMS:
            return nodes.BINARY[nodes.SYNONYMS[word]], len(word)
        return None, 0

    def binary(self, least):
        left = self.unary()
        while True:
            op, length = self.operator()
            if op is None or op.prec < least:
                return left
            self.pos += length
            left = _checked(nodes.Binary(op, left, self.binary(op.prec + 1)))

    def unary(self):
        signs = []
        while True:
            sym = self.symbol()
            if sym not in _UNARY or (sym == "-" and self.signed_number()):
                break
            signs.append(_UNARY[sym])
            self.pos += 1
        node = self.postfix()
        for op in reversed(signs):
            node = _checked(nodes.Unary(op, node))
        return node

    def signed_number(self):
        """Whether the ``-`` at ``pos`` starts a negative number: a digit, or a dot and
        a digit, right after it (``-2`` is a literal, ``- 2`` and ``-(2)`` negations)."""
        text, i = self.text, self.pos + 1
        ch = text[i:i + 1]
        return ch in _DIGITS if ch != "." else text[i + 1:i + 2] in _DIGITS

    def elvis(self):
        """Whether a ``?:`` (a ``?`` and a ``:``, blanks between allowed) is at ``pos``;
        steps over it when it is."""
        if self.symbol() != "?":
            return False
        at = self.pos
        self.pos += 1
        if self.symbol() == ":":
            self.pos += 1
            return True
        self.pos = at
        return False

    def postfix(self):
        node = self.primary()
        while True:
            sym = self.symbol()
            if sym == "?" and self.elvis():
                self.deeper()
                node = _checked(nodes.Elvis(node, self.postfix()))
                self.nesting -= 1
                return node
            if sym == ".":
                self.pos += 1
                if self.symbol() == ".":
                    self.pos += 1           # (``a..b`` is ``a.b``, as HTCondor's lexer reads it)
                self.skip()
                if self.word().lower() in _NOT_SELECTED:
                    self.fail()             # (``MY.true``: HTCondor's lexer reads a keyword there)
                node = self.select(node, self.name())
            elif sym == "[":
                self.pos += 1
                self.deeper()
                index = self.expr()
                self.expect("]")
                self.nesting -= 1
                node = _checked(nodes.Subscript(node, index))
            else:
                return node

    def select(self, base, name):
        if isinstance(base, nodes.Attr) and base.key in ("my", "target"):
            return nodes.Scoped(base.name, name)
        return _checked(nodes.Select(base, name))

    def name(self):
        """A name token (plain or quoted); its text."""
        ch = self.skip()
        if ch == "'":
            end = self.quoted("'")
            body = unescape(self.text[self.pos + 1:end - 1])
            if body is None:
                self.fail()
            self.pos = end
            return body
        word = self.word()
        if not word:
            self.fail()
        self.pos += len(word)
        return word

    def deeper(self):
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise _TooDeep(MAX_NESTING)

    def primary(self):
        ch = self.skip()
        if ch in _DIGITS or (ch == "." and self.text[self.pos + 1:self.pos + 2] in _DIGITS):
            return self.numeric()
        if ch == "-" and self.signed_number():
            self.pos += 1
            return self.numeric(-1)
        if ch == '"':
            return self.strings()
        if ch == "'":
            return nodes.Attr(self.name())
        if ch in _NAME_START:
            start = self.pos
            word = self.name()
            if self.symbol() == "(":
                return self.call(word, start)
            return self.attr(word, start)
        if ch == ".":                       # an absolute reference: the root ad's attribute
            self.pos += 1
            self.skip()
            if self.word().lower() in _NOT_SELECTED:
                self.fail()
            return nodes.Scoped("", self.name())
        if ch in "({[":
            self.pos += 1
            self.deeper()
            if ch == "(":
                node = _checked(nodes.Paren(self.expr()))
                self.expect(")")
            elif ch == "{":
                node = _checked(nodes.ListExpr(self.items("}")))
            else:
                node = self.ad_rest()
            self.nesting -= 1
            return node
        self.fail()

    def numeric(self, sign=1):
        """The number token at ``pos``; ``sign`` -1 when a minus sign led it (one
        token: ``-9223372036854775808`` is INT64_MIN, a magnitude out of range 0)."""
        start = self.pos
        kind, end = self.number()
        if kind == BAD or (sign > 0 and kind in (HEX, OCTAL)):
            # (HTCondor's tools refuse 017 and 0x1F, and read -017 as -17 and -0x1F as 0)
            line, column = self.where(start)
            raise ClassAdSyntaxError(f"unexpected '{self.text[start:end]:.40}'", line, column)
        self.pos = end
        if kind == REAL:
            return nodes.Literal(sign * float(self.text[start:end]))
        if kind == HEX:
            return nodes.Literal(0)
        value = sign * int(self.text[start:end])
        if -INT64_MAX - 1 <= value <= INT64_MAX:
            return nodes.Literal(value)
        return nodes.Literal(0)

    def strings(self):
        """One string, or adjacent strings joined; in the old syntax (``old``: what
        condor_submit reads) adjacent strings are refused, as HTCondor's old ClassAd
        parser refuses them."""
        parts = []
        while self.skip() == '"':
            if parts and self.old:
                self.fail()
            end = self.quoted('"')
            body = unescape(self.text[self.pos + 1:end - 1])
            if body is None:
                self.fail()
            parts.append(body)
            self.pos = end
        return nodes.Literal("".join(parts))

    def attr(self, word, start):
        keyword = KEYWORDS.get(word.lower())
        if keyword is not None:
            return nodes.Literal(keyword)
        if word.lower() in nodes.SYNONYMS:
            raise ClassAdSyntaxError(f"unexpected '{word}'", *self.where(start))
        return nodes.Attr(word)

    def call(self, word, start):
        self.pos += 1
        self.deeper()
        args = self.items(")")
        self.nesting -= 1
        check = _TIME_LITERALS.get(word.lower())
        if check and len(args) == 1 and isinstance(args[0], nodes.Literal) and type(args[0].value) is str:
            args = (nodes.Literal(_time_text(check, args[0].value, word, self.where(start))),)
        return _checked(nodes.Call(word, args))

    def items(self, close):
        """The expressions before ``close`` (none, or one or more between commas)."""
        if self.symbol() == close:
            self.pos += 1
            return ()
        found = [self.expr()]
        while self.symbol() == ",":
            self.pos += 1
            found.append(self.expr())
        self.expect(close)
        return tuple(found)

    def ad_rest(self):
        """A bracketed ad after its ``[``: ``name = expr`` separated by one or more
        ``;`` (some before the first and after the last allowed, as HTCondor allows them,
        but not in an ad of none), then ``]``. A name given again replaces the value
        where the name was first given, in its first spelling (as HTCondor keeps it)."""
        pairs, at = [], {}
        if self.symbol() != "]":
            while self.symbol() == ";":
                self.pos += 1
            while True:
                self.skip()
                if self.word().lower() in _NOT_SELECTED:
                    self.fail()             # (``[true = 1]``: a keyword is no name there either)
                name = self.name()
                self.expect("=")
                key = name.lower()
                if key in at:
                    pairs[at[key]] = (pairs[at[key]][0], self.expr())
                else:
                    at[key] = len(pairs)
                    pairs.append((name, self.expr()))
                if self.symbol() != ";":
                    break
                while self.symbol() == ";":
                    self.pos += 1
                if self.symbol() == "]":
                    break
        self.expect("]")
        return _checked(nodes.AdExpr(tuple(pairs)))

    def whole(self, start):
        """The node of the whole text, read from rule ``start``."""
        if start == "start_ad":
            if self.symbol() != "[":
                self.fail()
            self.pos += 1
            node = self.ad_rest()
        else:
            node = self.expr()
        if self.skip():
            self.fail()
        return node


def _time_text(check, text, word, where):
    """The text of an ``absTime("...")`` or ``relTime("...")`` literal as HTCondor's
    parser keeps it: the time value's own text (``absTime("2023-11-14")`` is
    ``absTime("2023-11-14T00:00:00-00:00")`` with the offset of then, ``relTime("2d3h")``
    ``relTime("2+03:00:00")``), or the text as written where the value's text would not
    read back to the same time; ClassAdSyntaxError when it is no time."""
    from gridtools.classad import timevals
    found = getattr(timevals, check)(text)
    if found is None:
        raise ClassAdSyntaxError(f"bad time in {word}()", *where)
    if check == "parse_abs":
        normal = found.text()
        again = timevals.parse_abs(normal)
        same = again is not None and again.same(found)
    else:
        normal = timevals.rel_text(found)
        same = timevals.parse_rel(normal) == found
    return normal if same else text


class _Parser:
    """What ``parser()`` gives: ``parse(text, start=...)``."""

    @staticmethod
    def parse(text, start="start_expr", old=False):
        if len(text) < _SHALLOW:
            return _Reader(text, old).whole(start)
        limit = sys.getrecursionlimit()
        if limit < _DEEP_LIMIT:
            sys.setrecursionlimit(_DEEP_LIMIT)
        try:
            return _Reader(text, old).whole(start)
        finally:
            if limit < _DEEP_LIMIT:
                sys.setrecursionlimit(limit)


_PARSER = _Parser()


def parser():
    """The reader of the grammar."""
    return _PARSER


def old_to_new(text):
    """``text`` with its double-quoted strings read as HTCondor reads those of the old
    ClassAd syntax (a submit description, the long form of an ad, a constraint),
    written in the new syntax the parser reads: a
    backslash is itself, but before a double quote, which it escapes (``"a\\.b"`` is
    the four characters a, backslash, dot, b; ``"q\\"t"`` is q, quote, t), but for one
    at the very end of the text, before the last quote (``"end\\"`` is e, n, d,
    backslash), and two backslashes are both themselves (so ``"end\\\\"`` ends at its
    quote too)."""
    out, i, inside, size = [], 0, False, len(text)
    while i < size:
        ch = text[i]
        if not inside:
            inside = ch == '"'
            out.append(ch)
        elif ch == '"':
            inside = False
            out.append(ch)
        elif ch != "\\":
            out.append(ch)
        elif text.startswith('\\"', i) and text[i + 2:].strip():
            out.append('\\"')
            i += 1
        elif text.startswith("\\\\", i):
            out.append("\\\\\\\\")
            i += 1
        else:
            out.append("\\\\")
        i += 1
    return "".join(out)


def run(text, start, get_parser=parser, old=False):
    """The node of ``text`` read from rule ``start`` (``start_expr`` or ``start_ad``)
    by ``get_parser()`` (in the old syntax with ``old``: its strings as ``old_to_new``
    reads them, adjacent strings refused); ClassAdSyntaxError with
    HTCondor's words when it is no such text."""
    if not isinstance(text, str):
        raise ClassAdSyntaxError(f"expected text, not {type(text).__name__}")
    if not text.strip():
        raise ClassAdSyntaxError("empty expression" if start == "start_expr" else "empty ClassAd")
    try:
        if old:
            if "\\" in text:
                text = old_to_new(text)
            return get_parser().parse(text, start=start, old=True)
        return get_parser().parse(text, start=start)
    except _TooDeep as exc:
        raise ClassAdSyntaxError(f"expression nested more than {exc.args[0]} levels deep") from None
    except RecursionError:
        raise ClassAdSyntaxError("expression nested too deeply") from None

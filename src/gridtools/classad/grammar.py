"""The ClassAd grammar (``grammar.lark``) through lark: the texts that are
more than a lone literal or name (see ``parser``).

lark is imported when the first such text is parsed, and the parser is
built once per process (``parser``); parse trees are turned into
expression nodes by callbacks run during the LALR parse itself, so no
intermediate tree is kept. The LALR tables are cached in the user's cache
directory (lark checks the grammar's hash when loading).
"""

from gridtools.classad import compound, nodes, operators as ops
from gridtools.classad.parser import KEYWORDS, MAX_DEPTH, ClassAdSyntaxError

INT64_MAX = (1 << 63) - 1


class _QuotedName(str):
    """An attribute name written in single quotes (never a keyword)."""


class _TooDeep(Exception):
    pass


#: the text being parsed, for callbacks that look around a token (a threading.local, made
#: by the first parse: most commands that import this module never parse)
_SOURCE = []


def _source():
    if not _SOURCE:
        import threading
        _SOURCE.append(threading.local())
    return _SOURCE[0]


def parser():
    """The LALR parser, built once per process."""
    if not _LALR:
        _LALR.append(_build_parser())
    return _LALR[0]


_LALR = []


def _build_parser():
    import os
    from lark import Lark
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grammar.lark")
    with open(path, encoding="utf-8") as handle:
        grammar = handle.read()
    return Lark(grammar, parser="lalr", lexer="contextual",
                start=["start_expr", "start_ad"], transformer=_callbacks(),
                propagate_positions=False, maybe_placeholders=False,
                cache=_cache_file())


def _cache_file():
    import os
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "gridtools")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if os.stat(directory).st_uid != os.getuid() or not os.access(directory, os.W_OK):
            return False
    except OSError:
        return False
    return os.path.join(directory, "classad-grammar.cache")


def _unescape(body):
    """The characters of a quoted literal: C escapes and octal escapes."""
    out, i, n = [], 0, len(body)
    simple = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
    while i < n:
        ch = body[i]
        if ch != "\\" or i + 1 == n:
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1]
        import re
        m = re.match(r"[0-7]{1,3}", body[i + 1:i + 4])
        if m and not (len(m.group()) == 3 and m.group()[0] > "3"):
            out.append(chr(int(m.group(), 8)))
            i += 1 + len(m.group())
            continue
        out.append(simple.get(nxt, nxt))
        i += 2
    return "".join(out)


def _checked(node):
    if node.depth > MAX_DEPTH:
        raise _TooDeep()
    return node


def _binary(alias):
    op = ops.BY_ALIAS[alias]
    return lambda children: _checked(nodes.Binary(op, children[0], children[1]))


def _unary(alias):
    op = ops.BY_ALIAS[alias]
    return lambda children: _checked(compound.Unary(op, children[0]))


def _name(children):
    token = children[0]
    if token.type == "QNAME":
        return _QuotedName(_unescape(token[1:-1]))
    return token


def _attr(children):
    name = children[0]
    if isinstance(name, _QuotedName):
        return nodes.Attr(str(name))
    keyword = KEYWORDS.get(name.lower())
    if keyword is not None:
        return nodes.Literal(keyword)
    if name.lower() in ("is", "isnt"):
        raise ClassAdSyntaxError(f"unexpected '{name}'", name.line, name.column)
    return nodes.Attr(str(name))


def _select(children):
    base, name = children
    if isinstance(base, nodes.Attr) and base.key in ("my", "target"):
        return nodes.Scoped(base.name, name)
    return _checked(compound.Select(base, name))


class _MinMagnitude(nodes.Literal):
    """The literal 9223372036854775808 written right after a minus sign:
    with the sign it is INT64_MIN; alone it is out of range (0)."""


def _integer(children):
    """An integer literal. HTCondor reads decimal digits only; a value beyond
    64 bits is 0, except that ``-9223372036854775808`` is INT64_MIN."""
    token = children[0]
    value = int(str(token))
    if value <= INT64_MAX:
        return nodes.Literal(value)
    source, start = _source().text, token.start_pos
    if value == INT64_MAX + 1 and start and source[start - 1] == "-":
        return _MinMagnitude(0)
    return nodes.Literal(0)


def _neg(children):
    if isinstance(children[0], _MinMagnitude):
        return nodes.Literal(-INT64_MAX - 1)
    return _checked(compound.Unary(ops.BY_ALIAS["neg"], children[0]))


def _args(children):
    if not children:
        return ()
    return tuple(children[0]) if isinstance(children[0], tuple) else ()


_TIME_LITERALS = {"abstime": "parse_abs", "reltime": "parse_rel"}


def _call(children):
    name, args = children[0], _args(children[1:])
    check = _TIME_LITERALS.get(name.lower())
    if check and args and isinstance(args[0], nodes.Literal) and type(args[0].value) is str:
        from gridtools.classad import timevals
        if getattr(timevals, check)(args[0].value) is None:
            raise ClassAdSyntaxError(f"bad time in {name}()", name.line, name.column)
    return _checked(nodes.Call(str(name), args))


def _callbacks():
    from lark import Transformer

    class _Build(Transformer):
        pass

    table = {alias: _binary(alias) for alias, op in ops.BY_ALIAS.items() if not op.unary}
    table.update({alias: _unary(alias) for alias, op in ops.BY_ALIAS.items() if op.unary})
    table["neg"] = _neg
    table.update(
        start_expr=lambda c: c[0],
        start_ad=lambda c: c[0],
        cond=lambda c: _checked(compound.Cond(*c)),
        elvis=lambda c: _checked(compound.Elvis(*c)),
        select=_select,
        subscript=lambda c: _checked(compound.Subscript(*c)),
        integer=_integer,
        real=lambda c: nodes.Literal(float(str(c[0]))),
        string=lambda c: nodes.Literal("".join(_unescape(t[1:-1]) for t in c)),
        attr=_attr,
        name=_name,
        call=_call,
        paren=lambda c: _checked(nodes.Paren(c[0])),
        listexpr=lambda c: _checked(compound.ListExpr(_args(c))),
        adexpr=lambda c: _checked(compound.AdExpr(c[0] if c else ())),
        attrdefs=lambda c: tuple(c),
        attrdef=lambda c: (c[0], c[1]),
        args=lambda c: tuple(c),
    )
    build = _Build()
    for alias, fn in table.items():
        setattr(build, alias, fn)
    return build


def _describe(exc, text):
    """A one-line description of a lark error, and its line and column."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken
    line, column = getattr(exc, "line", None), getattr(exc, "column", None)
    if isinstance(exc, UnexpectedToken) and exc.token.type == "$END" or isinstance(exc, UnexpectedEOF):
        lines = text.split("\n")
        return "unexpected end of input", len(lines), len(lines[-1]) + 1
    if isinstance(exc, UnexpectedToken):
        return f"unexpected '{exc.token!s:.40}'", line, column
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream
        char = text[pos] if pos is not None and pos < len(text) else "?"
        return f"unexpected character {char!r}", line, column
    return "syntax error", line, column


def run(text, start, get_parser=parser):
    """The node of ``text`` parsed from rule ``start`` by ``get_parser()``;
    ClassAdSyntaxError with HTCondor's words when it is no such text."""
    from lark.exceptions import LarkError
    if not isinstance(text, str):
        raise ClassAdSyntaxError(f"expected text, not {type(text).__name__}")
    if not text.strip():
        raise ClassAdSyntaxError("empty expression" if start == "start_expr" else "empty ClassAd")
    try:
        _source().text = text
        return get_parser().parse(text, start=start)
    except ClassAdSyntaxError:
        raise
    except _TooDeep:
        raise ClassAdSyntaxError(f"expression nested more than {MAX_DEPTH} levels deep") from None
    except RecursionError:
        raise ClassAdSyntaxError("expression nested too deeply") from None
    except LarkError as exc:
        message, line, column = _describe(exc, text)
        raise ClassAdSyntaxError(message, line, column) from None

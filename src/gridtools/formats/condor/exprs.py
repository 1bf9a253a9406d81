"""The expressions condor_submit adds to every job ad, built without the parser.

Requirements' default terms and RequestMemory's default are the same for
nearly every job; building their nodes directly (each equal to what
``classad.parse`` makes of the same text) keeps the ClassAd parser, and its
start-up cost, out of submitting a plain job. Anything a user wrote is
parsed as usual.
"""

from gridtools.classad import nodes
from gridtools.classad import operators as ops
from gridtools.classad.values import UNDEFINED

_BY_SYMBOL = {op.symbol: op for op in ops.BY_ALIAS.values() if not op.unary}


def binary(symbol, left, right):
    return nodes.Binary(_BY_SYMBOL[symbol], left, right)


def target(name):
    return nodes.Scoped("TARGET", name)


def my(name):
    return nodes.Scoped("MY", name)


def attr(name):
    return nodes.Attr(name)


def literal(value):
    return nodes.Literal(value)


def paren(inner):
    return nodes.Paren(inner)


def all_of(terms):
    """``t1 && t2 && ...`` (left-associative, as the parser builds it)."""
    expr = terms[0]
    for term in terms[1:]:
        expr = binary("&&", expr, term)
    return expr


def any_of(terms):
    expr = terms[0]
    for term in terms[1:]:
        expr = binary("||", expr, term)
    return expr


def compare(name, symbol, value):
    """``(TARGET.name symbol value)``; ``value`` is a node or a plain value."""
    right = value if isinstance(value, nodes.Expr) else literal(value)
    return paren(binary(symbol, target(name), right))


def default_request_memory():
    """``ifthenelse(MemoryUsage =!= undefined,MemoryUsage,(ImageSize + 1023) / 1024)``."""
    size = paren(binary("+", attr("ImageSize"), literal(1023)))
    return nodes.Call("ifthenelse", (binary("=!=", attr("MemoryUsage"), literal(UNDEFINED)),
                                      attr("MemoryUsage"), binary("/", size, literal(1024))))


#: the canonical text of ``default_request_memory()`` (its ``unparse()``)
DEFAULT_REQUEST_MEMORY_TEXT = "ifthenelse(MemoryUsage isnt undefined,MemoryUsage,(ImageSize + 1023) / 1024)"

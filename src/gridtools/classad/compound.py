"""The expression nodes that only parsed text has: selections (``a.b``),
subscripts (``a[i]``), unary operators, conditionals (``?:`` and ``?:`` with
one operand), lists and nested ads. The grammar builds them; ``nodes`` holds
the rest and names these too (see its docstring); ``evaluator`` compiles them.
"""

from gridtools.classad.nodes import COND_PREC, ELVIS_PREC, POSTFIX_PREC, UNARY_PREC, Expr, Pretty
from gridtools.classad.values import quote_name, quote_selected


class Select(Expr):
    """``base.name``: selection from a nested ad."""

    __slots__ = ("base", "name", "key")

    def __init__(self, base, name):
        super().__init__(base)
        self.base = base
        self.name = name
        self.key = name.lower()

    def children(self):
        return (self.base,)

    def _unparse(self, old):
        return f"{self._wrap(old, self.base, POSTFIX_PREC)}.{quote_selected(self.name)}"


class Subscript(Expr):
    """``base[index]``: an element of a list or an attribute of an ad."""

    __slots__ = ("base", "index")

    def __init__(self, base, index):
        super().__init__(base, index)
        self.base = base
        self.index = index

    def children(self):
        return (self.base, self.index)

    def _unparse(self, old):
        return f"{self._wrap(old, self.base, POSTFIX_PREC)}[{self.index.unparse(old)}]"


class Unary(Expr):
    __slots__ = ("op", "operand")
    prec = UNARY_PREC

    def __init__(self, op, operand):
        super().__init__(operand)
        self.op = op
        self.operand = operand

    def children(self):
        return (self.operand,)

    def _unparse(self, old):
        return " " + self.op.symbol + self._wrap(old, self.operand, UNARY_PREC)


class Cond(Expr):
    """``cond ? then : else``."""

    __slots__ = ("cond", "then", "other")
    prec = COND_PREC

    def __init__(self, cond, then, other):
        super().__init__(cond, then, other)
        self.cond, self.then, self.other = cond, then, other

    def children(self):
        return (self.cond, self.then, self.other)

    def _unparse(self, old):
        cond = self._wrap(old, self.cond, COND_PREC + 1)
        return f"{cond} ? {self.then.unparse(old)} : {self.other.unparse(old)}"


class Elvis(Expr):
    """``value ?: fallback``: the value unless it is UNDEFINED. A postfix operator, as in
    HTCondor: both operands are postfix expressions, and it groups to the right."""

    __slots__ = ("cond", "other")
    prec = ELVIS_PREC

    def __init__(self, cond, other):
        super().__init__(cond, other)
        self.cond, self.other = cond, other

    def children(self):
        return (self.cond, self.other)

    def _unparse(self, old):
        return f"{self._wrap(old, self.cond, POSTFIX_PREC)} ?: {self._wrap(old, self.other, ELVIS_PREC)}"


class ListExpr(Expr):
    __slots__ = ("items",)

    def __init__(self, items):
        items = tuple(items)
        super().__init__(*items)
        self.items = items

    def children(self):
        return self.items

    def _unparse(self, old):
        if old is not False and old.__class__ is Pretty:
            return _pretty(old, 3, "{", "}", ",", (item.unparse for item in self.items))
        return "{ " + ",".join(item.unparse(old) for item in self.items) + " }"


class AdExpr(Expr):
    """A nested ad literal ``[ a = 1; b = a + 1 ]``."""

    __slots__ = ("pairs",)

    def __init__(self, pairs):
        pairs = tuple(pairs)
        super().__init__(*(expr for _, expr in pairs))
        self.pairs = pairs

    def children(self):
        return tuple(expr for _, expr in self.pairs)

    def _unparse(self, old):
        if old is not False and old.__class__ is Pretty:
            return _pretty(old, 4, "[", "]", "; ", (_pair_printer(n, e) for n, e in self.pairs))
        body = "; ".join(f"{quote_name(n)} = {e.unparse(old)}" for n, e in self.pairs)
        return f"[ {body} ]"


def _pair_printer(name, expr):
    return lambda layout: f"{quote_name(name)} = {expr.unparse(layout)}"


def _pretty(layout, step, opening, closing, separator, printers):
    """A list or an ad as HTCondor's PrettyPrint writes it: the opening bracket on a
    new line indented by ``step`` more, each item on a line of its own indented by
    ``step`` more again, ``separator`` after all but the last, and the closing bracket
    on a new line under the opening one."""
    layout.indent += step
    outer = "\n" + " " * layout.indent
    layout.indent += step
    inner = "\n" + " " * layout.indent
    try:
        body = separator.join(inner + printer(layout) for printer in printers)
    finally:
        layout.indent -= 2 * step
    return outer + opening + body + outer + closing

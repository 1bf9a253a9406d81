"""The expression nodes that only parsed text has: selections (``a.b``),
subscripts (``a[i]``), unary operators, conditionals (``?:`` and ``?:`` with
one operand), lists and nested ads. The grammar builds them; ``nodes`` holds
the rest and names these too (see its docstring); ``evaluator`` compiles them.
"""

from gridtools.classad.nodes import COND_PREC, POSTFIX_PREC, UNARY_PREC, Expr
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
    """``value ?: fallback``: the value unless it is UNDEFINED."""

    __slots__ = ("cond", "other")
    prec = COND_PREC

    def __init__(self, cond, other):
        super().__init__(cond, other)
        self.cond, self.other = cond, other

    def children(self):
        return (self.cond, self.other)

    def _unparse(self, old):
        return f"{self._wrap(old, self.cond, COND_PREC + 1)} ?: {self.other.unparse(old)}"


class ListExpr(Expr):
    __slots__ = ("items",)

    def __init__(self, items):
        items = tuple(items)
        super().__init__(*items)
        self.items = items

    def children(self):
        return self.items

    def _unparse(self, old):
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
        body = "; ".join(f"{quote_name(n)} = {e.unparse(old)}" for n, e in self.pairs)
        return f"[ {body} ]"

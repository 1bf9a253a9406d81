"""The expression nodes that only parsed text has: selections (``a.b``),
subscripts (``a[i]``), unary operators, conditionals (``?:`` and ``?:`` with
one operand), lists and nested ads. The grammar builds them; ``nodes`` holds
the rest and names these too (see its docstring).
"""

from gridtools.classad import nodes, operators as ops
from gridtools.classad.nodes import Expr, Literal, select
from gridtools.classad.values import ERROR, UNDEFINED, Special, quote_name, truth


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

    def _compile(self):
        base, key = self.base.compiled(), self.key
        return lambda env: select(base(env), key, env)

    def _unparse(self, old):
        return f"{self._wrap(old, self.base, ops.POSTFIX_PREC)}.{quote_name(self.name)}"


class Subscript(Expr):
    """``base[index]``: an element of a list or an attribute of an ad."""

    __slots__ = ("base", "index")

    def __init__(self, base, index):
        super().__init__(base, index)
        self.base = base
        self.index = index

    def children(self):
        return (self.base, self.index)

    def _compile(self):
        base, index = self.base.compiled(), self.index.compiled()
        return lambda env: _subscript(base(env), index(env), env)

    def _unparse(self, old):
        return f"{self._wrap(old, self.base, ops.POSTFIX_PREC)}[{self.index.unparse(old)}]"


def _subscript(base, index, env):
    if base is ERROR or index is ERROR:
        return ERROR
    if base is UNDEFINED or index is UNDEFINED:
        return UNDEFINED
    if base.__class__ is list:
        if index.__class__ is int and 0 <= index < len(base):
            return base[index]
        return ERROR
    if index.__class__ is str and hasattr(base, "_exprs"):
        return select(base, index.lower(), env)
    return ERROR


class Unary(Expr):
    __slots__ = ("op", "operand")
    prec = ops.UNARY_PREC

    def __init__(self, op, operand):
        super().__init__(operand)
        self.op = op
        self.operand = operand

    def children(self):
        return (self.operand,)

    def _compile(self):
        fn, operand = self.op.fn, self.operand.compiled()
        if isinstance(self.operand, Literal):
            value = _unary(fn, self.operand.value)
            return lambda env: value
        return lambda env: _unary(fn, operand(env))

    def _unparse(self, old):
        return " " + self.op.symbol + self._wrap(old, self.operand, ops.UNARY_PREC)


def _unary(fn, value):
    return value if value.__class__ is Special else fn(value)


class Cond(Expr):
    """``cond ? then : else``."""

    __slots__ = ("cond", "then", "other")
    prec = ops.COND_PREC

    def __init__(self, cond, then, other):
        super().__init__(cond, then, other)
        self.cond, self.then, self.other = cond, then, other

    def children(self):
        return (self.cond, self.then, self.other)

    def _compile(self):
        cond, then, other = self.cond.compiled(), self.then.compiled(), self.other.compiled()

        def conditional(env):
            c = cond(env)
            if c is UNDEFINED:
                return UNDEFINED
            b = truth(c)
            if b is None:
                return ERROR
            return then(env) if b else other(env)
        return conditional

    def _unparse(self, old):
        cond = self._wrap(old, self.cond, ops.COND_PREC + 1)
        return f"{cond} ? {self.then.unparse(old)} : {self.other.unparse(old)}"


class Elvis(Expr):
    """``value ?: fallback``: the value unless it is UNDEFINED."""

    __slots__ = ("cond", "other")
    prec = ops.COND_PREC

    def __init__(self, cond, other):
        super().__init__(cond, other)
        self.cond, self.other = cond, other

    def children(self):
        return (self.cond, self.other)

    def _compile(self):
        cond, other = self.cond.compiled(), self.other.compiled()

        def elvis(env):
            c = cond(env)
            return other(env) if c is UNDEFINED else c
        return elvis

    def _unparse(self, old):
        return f"{self._wrap(old, self.cond, ops.COND_PREC + 1)} ?: {self.other.unparse(old)}"


class ListExpr(Expr):
    __slots__ = ("items",)

    def __init__(self, items):
        items = tuple(items)
        super().__init__(*items)
        self.items = items

    def children(self):
        return self.items

    def _compile(self):
        fns = tuple(item.compiled() for item in self.items)
        return lambda env: [fn(env) for fn in fns]

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

    def _compile(self):
        from gridtools.classad.ad import ClassAd
        exprs = {name.lower(): expr for name, expr in self.pairs}
        names = {name.lower(): name for name, _ in self.pairs}
        return lambda env: ClassAd._make(dict(exprs), dict(names), _enclosing(env))

    def _unparse(self, old):
        body = "; ".join(f"{quote_name(n)} = {e.unparse(old)}" for n, e in self.pairs)
        return f"[ {body} ]"


def _enclosing(env):
    ad = env.my
    return None if ad is nodes._EMPTY[0] else ad

"""Expression trees and their evaluator.

A parsed expression is a tree of small immutable node objects. Each node
knows how to print itself (``unparse``) and how to compile itself, once, into
a Python closure that evaluates it; evaluation never touches the parser.
Parentheses are kept as nodes for printing but cost nothing when evaluating.

Evaluation happens in an ``Env``: the ad whose expression is evaluated
(``my``), the other ad of a match (``target``), and the set of attributes
being evaluated right now (a reference back into that set is a cycle and
gives UNDEFINED, as HTCondor does). ``self`` is the ad an expression belongs
to and ``parent`` the ad enclosing that one.
"""

import time

from gridtools.classad import operators as ops
from gridtools.classad.values import (
    ERROR, UNDEFINED, Special, quote_name, truth, unparse_value, wrap64,
)

_FUNCTIONS = None  # name -> Builtin, loaded on first compile of a call
_AS_AD = None  # ad.as_ad, loaded on first evaluation (ad imports this module)
_EMPTY = [None]  # the shared empty ad standing for "no ad" (set with _AS_AD)


class Env:
    """Where an expression is evaluated: its own ad, the target ad, and the
    attributes in the middle of evaluation (for cycle detection: an attribute that needs its own value is UNDEFINED)."""

    __slots__ = ("my", "target", "busy")

    def __init__(self, my, target, busy):
        self.my = my
        self.target = target
        self.busy = busy


def eval_attr(ad, key, expr, target, env):
    """Evaluate ``ad``'s attribute ``key`` (whose expression is ``expr``) with
    ``ad`` as MY and ``target`` as TARGET."""
    if expr.__class__ is Literal:
        return expr.value
    busy = env.busy
    token = (id(ad), key)
    if token in busy:
        return UNDEFINED
    busy.add(token)
    try:
        inner = env if (ad is env.my and target is env.target) else Env(ad, target, busy)
        return expr.compiled()(inner)
    finally:
        busy.discard(token)


def _root(ad):
    while ad._parent is not None:
        ad = ad._parent
    return ad


def resolve(key, env):
    """An unqualified reference: the own ad (and the ads enclosing it), then
    the target ad, then the built-in CurrentTime; else UNDEFINED."""
    ad = env.my
    while ad is not None:
        expr = ad._exprs.get(key)
        if expr is not None:
            return eval_attr(ad, key, expr, env.target, env)
        ad = ad._parent
    other = env.target
    while other is not None:
        expr = other._exprs.get(key)
        if expr is not None:
            return eval_attr(other, key, expr, _root(env.my), env)
        other = other._parent
    if key == "currenttime":
        return int(time.time())
    return UNDEFINED


def _self_scope(env):
    ad = env.my
    return UNDEFINED if ad is None or ad is _EMPTY[0] else ad


def _parent_scope(env):
    ad = env.my
    parent = ad._parent if ad is not None else None
    return UNDEFINED if parent is None else parent


_SCOPE_NAMES = {"self": _self_scope, "parent": _parent_scope}


def select(base, key, env):
    """``base.key``: an attribute of a nested ad, or of each ad in a list."""
    cls = base.__class__
    if cls is list:
        return [select(item, key, env) for item in base]
    if base is UNDEFINED:
        return UNDEFINED
    if not hasattr(base, "_exprs"):
        return ERROR
    expr = base._exprs.get(key)
    if expr is None:
        return UNDEFINED
    return eval_attr(base, key, expr, env.target, env)


class Expr:
    """A parsed ClassAd expression. Immutable; compare and hash by its
    canonical text."""

    __slots__ = ("_fn", "_text", "_old_text", "depth")
    prec = ops.POSTFIX_PREC

    def __init__(self, *children):
        self._fn = None
        self._text = None
        self._old_text = None
        depth = 1
        for child in children:
            if child.depth >= depth:
                depth = child.depth + 1
        self.depth = depth

    def eval(self, my=None, target=None):
        """The value of this expression with ``my`` as its own ad and
        ``target`` as the other ad (ClassAd, dict or None)."""
        global _AS_AD
        if _AS_AD is None:
            from gridtools.classad.ad import _EMPTY as empty, as_ad
            _AS_AD, _EMPTY[0] = as_ad, empty
        env = Env(_AS_AD(my), _AS_AD(target, empty=None), set())
        try:
            return self.compiled()(env)
        except RecursionError:
            return ERROR

    def compiled(self):
        """The closure evaluating this node (built on first use)."""
        fn = self._fn
        if fn is None:
            fn = self._fn = self._compile()
        return fn

    def unparse(self, old=False):
        """The canonical text (HTCondor's ClassAd unparser: reals as
        ``1.500000000000000E+00``, ``is`` and ``isnt``); with ``old``, the
        long form ``condor_q -l`` prints (``1.5``, ``=?=``, ``=!=``)."""
        if old:
            text = self._old_text
            if text is None:
                text = self._old_text = self._unparse(True)
            return text
        text = self._text
        if text is None:
            text = self._text = self._unparse(False)
        return text

    def children(self):
        return ()

    def __str__(self):
        return self.unparse()

    def __repr__(self):
        return f"parse({self.unparse()!r})"

    def __eq__(self, other):
        return isinstance(other, Expr) and self.unparse() == other.unparse()

    def __hash__(self):
        return hash(self.unparse())

    def _wrap(self, old, child, min_prec):
        text = child.unparse(old)
        return f"({text})" if child.prec < min_prec else text


class Literal(Expr):
    __slots__ = ("value",)

    def __init__(self, value):          # a leaf: Expr.__init__ without children, inline
        self._fn = self._text = self._old_text = None
        self.depth = 1
        self.value = value

    def _compile(self):
        value = self.value
        return lambda env: value

    def _unparse(self, old):
        return unparse_value(self.value, old)


class Attr(Expr):
    """An unqualified attribute reference."""

    __slots__ = ("name", "key")

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.key = name.lower()

    def _compile(self):
        if self.key in _SCOPE_NAMES:
            return _SCOPE_NAMES[self.key]
        from functools import partial       # here: building an ad needs no evaluator
        return partial(resolve, self.key)

    def _unparse(self, old):
        return quote_name(self.name)


class Scoped(Expr):
    """``MY.name`` or ``TARGET.name``."""

    __slots__ = ("scope", "name", "key")

    def __init__(self, scope, name):
        super().__init__()
        self.scope = scope
        self.name = name
        self.key = name.lower()

    def _compile(self):
        key = self.key
        if self.scope.lower() == "my":
            return lambda env: select(env.my, key, env)
        from functools import partial
        return partial(_target_attr, key)

    def _unparse(self, old):
        return f"{self.scope}.{quote_name(self.name)}"


def _target_attr(key, env):
    other = env.target
    if other is None:
        return UNDEFINED
    expr = other._exprs.get(key)
    if expr is None:
        return UNDEFINED
    return eval_attr(other, key, expr, _root(env.my), env)


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


class Binary(Expr):
    __slots__ = ("op", "left", "right")

    def __init__(self, op, left, right):
        super().__init__(left, right)
        self.op = op
        self.left = left
        self.right = right

    @property
    def prec(self):
        return self.op.prec

    def children(self):
        return (self.left, self.right)

    def _compile(self):
        op = self.op
        left, right = self.left.compiled(), self.right.compiled()
        if op.alias == "land":
            return _compile_and(left, right)
        if op.alias == "lor":
            return _compile_or(left, right)
        fn = op.fn
        if isinstance(self.left, Literal) and isinstance(self.right, Literal):
            value = _binary(fn, op.strict, self.left.value, self.right.value)
            return lambda env: value
        if not op.strict:
            return lambda env: fn(left(env), right(env))

        def strict(env):
            a, b = left(env), right(env)
            if a.__class__ is Special or b.__class__ is Special:
                return ERROR if (a is ERROR or b is ERROR) else UNDEFINED
            return fn(a, b)
        return strict

    def _unparse(self, old):
        prec = self.op.prec
        left = self._wrap(old, self.left, prec)
        right = self._wrap(old, self.right, prec + 1)
        symbol = self.op.symbol
        return f"{left} {ops.NEW_SPELLING.get(symbol, symbol) if not old else symbol} {right}"


def _binary(fn, strict, a, b):
    if strict and (a.__class__ is Special or b.__class__ is Special):
        return ERROR if (a is ERROR or b is ERROR) else UNDEFINED
    return fn(a, b)


def _compile_and(left, right):
    operand, rest = ops.logical_operand, ops.and_rest

    def land(env):
        a = left(env)
        if a is not True:
            a = operand(a)
            if a is False or a is ERROR:
                return a
        b = right(env)
        return rest(a, b if b is True or b is False else operand(b))
    return land


def _compile_or(left, right):
    operand, rest = ops.logical_operand, ops.or_rest

    def lor(env):
        a = left(env)
        if a is not False:
            a = operand(a)
            if a is True or a is ERROR:
                return a
        b = right(env)
        return rest(a, b if b is True or b is False else operand(b))
    return lor


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


class Paren(Expr):
    """Parentheses written in the source; kept for printing only."""

    __slots__ = ("inner",)

    def __init__(self, inner):
        super().__init__(inner)
        self.inner = inner

    def children(self):
        return (self.inner,)

    def _compile(self):
        return self.inner.compiled()

    def _unparse(self, old):
        return f"({self.inner.unparse(old)})"


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
    return None if ad is _EMPTY[0] else ad


class Call(Expr):
    """A function call; an unknown function evaluates to ERROR."""

    __slots__ = ("name", "args")

    def __init__(self, name, args):
        args = tuple(args)
        super().__init__(*args)
        self.name = name
        self.args = args

    def children(self):
        return self.args

    def _compile(self):
        global _FUNCTIONS
        if _FUNCTIONS is None:
            from gridtools.classad.functions import FUNCTIONS
            _FUNCTIONS = FUNCTIONS
        builtin = _FUNCTIONS.get(self.name.lower())
        if builtin is None or not builtin.min_args <= len(self.args) <= builtin.max_args:
            return lambda env: ERROR
        return builtin.bind(self.args)

    def _unparse(self, old):
        return f"{self.name}({','.join(a.unparse(old) for a in self.args)})"


def to_expr(value):
    """An expression for a Python value (or the expression itself)."""
    if isinstance(value, Expr):
        return value
    t = type(value)
    if t is int:
        return Literal(wrap64(value))
    if t in (bool, float, str, Special):
        return Literal(value)
    if value is None:
        return Literal(UNDEFINED)
    if t in (list, tuple):
        return ListExpr(to_expr(v) for v in value)
    if isinstance(value, dict) or hasattr(value, "_exprs"):
        return AdExpr((name, to_expr(v)) for name, v in _ad_items(value))
    raise TypeError(f"cannot make a ClassAd expression from {type(value).__name__}")


def _ad_items(value):
    if hasattr(value, "_exprs"):
        return [(name, value.lookup(name)) for name in value]
    return list(value.items())

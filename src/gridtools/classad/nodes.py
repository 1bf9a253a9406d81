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

This module holds the nodes the ads of submitted jobs are built of
(literals, attribute references, binary operators, parentheses, calls);
those that only parsed text has (selections, subscripts, unary operators,
conditionals, lists and nested ads) are in ``compound``, loaded when first
asked for (``nodes.Select`` and the others still name them).
"""

import time

from gridtools.classad import operators as ops
from gridtools.classad import budget, values
from gridtools.classad.budget import STEP_CHARS, Run, TooCostly
from gridtools.classad.values import ERROR, UNDEFINED, Special, quote_name, unparse_value, wrap64

_FUNCTIONS = None  # functions.lookup (name -> Builtin), imported on first compile of a call
_AS_AD = None  # ad.as_ad, loaded on first evaluation (ad imports this module)
_EMPTY = [None]  # the shared empty ad standing for "no ad" (set with _AS_AD)


class Env:
    """Where an expression is evaluated: its own ad, the target ad, and the
    evaluation's Run (``busy``): the attributes in the middle of evaluation (for cycle
    detection: an attribute that needs its own value is UNDEFINED), its budget and its
    memo."""

    __slots__ = ("my", "target", "busy")

    def __init__(self, my, target, busy):
        self.my = my
        self.target = target
        self.busy = busy


def eval_attr(ad, key, expr, target, env):
    """Evaluate ``ad``'s attribute ``key`` (whose expression is ``expr``) with
    ``ad`` as MY and ``target`` as TARGET. Once an evaluation has taken a first chunk
    of steps (budget.STEP_CHUNK: ordinary ones never do), the values of its attributes
    are remembered by (ad, name, target), unless one depended on more than those (a
    cycle met on the way, which depends on what else is being evaluated; random()): an
    attribute read many times is then evaluated once."""
    if expr.__class__ is Literal:
        return expr.value
    run = env.busy
    run.left -= 1
    if run.left < 0:
        run.refill()
    if run.spent:
        return _remembered(ad, key, expr, target, env, run)
    token = (id(ad), key)
    if token in run:
        run.impure += 1
        return UNDEFINED
    run.add(token)
    try:
        inner = env if (ad is env.my and target is env.target) else Env(ad, target, run)
        return expr.compiled()(inner)
    finally:
        run.discard(token)


def _remembered(ad, key, expr, target, env, run):
    """eval_attr in a long evaluation: the value from the memo, or evaluated and kept."""
    mkey = (id(ad), key, id(target))
    memo = run.memo
    found = memo.get(mkey)
    if found is not None and found[0] is ad and found[1] is target:
        if found[3]:
            run.left -= found[3]
        return found[2]
    token = (id(ad), key)
    if token in run:
        run.impure += 1
        return UNDEFINED
    impure = run.impure
    run.add(token)
    try:
        inner = env if (ad is env.my and target is env.target) else Env(ad, target, run)
        value = expr.compiled()(inner)
    finally:
        run.discard(token)
    if run.impure == impure:
        # (the ads are kept with the value: their ids cannot be taken by others meanwhile)
        cls = value.__class__
        memo[mkey] = (ad, target, value,
                      len(value) // STEP_CHARS if cls is str or cls is list else 0)
    return value


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
        run = env.busy
        run.left -= len(base)
        if run.left < 0:
            run.refill()
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
        ``target`` as the other ad (ClassAd, dict or None); ERROR when the
        evaluation goes over its budget (``budget.STEPS``), runs out of memory or of
        recursion depth."""
        global _AS_AD
        if _AS_AD is None:
            from gridtools.classad.ad import _EMPTY as empty, as_ad
            _AS_AD, _EMPTY[0] = as_ad, empty
        run = Run()
        current = values._CURRENT       # (the evaluation going on: functions charge it)
        outer = current[0]
        current[0] = run
        try:
            return self.compiled()(Env(_AS_AD(my), _AS_AD(target, empty=None), run))
        except (TooCostly, MemoryError):
            budget._OVER[0] += 1
            return ERROR
        except RecursionError:
            return ERROR
        finally:
            current[0] = outer

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
            from gridtools.classad.functions import lookup
            _FUNCTIONS = lookup
        builtin = _FUNCTIONS(self.name)
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
        from gridtools.classad.compound import ListExpr
        return ListExpr(to_expr(v) for v in value)
    if isinstance(value, dict) or hasattr(value, "_exprs"):
        from gridtools.classad.compound import AdExpr
        return AdExpr((name, to_expr(v)) for name, v in _ad_items(value))
    raise TypeError(f"cannot make a ClassAd expression from {type(value).__name__}")


def _ad_items(value):
    if hasattr(value, "_exprs"):
        return [(name, value.lookup(name)) for name in value]
    return list(value.items())


#: the nodes of ``compound``, found here too
COMPOUND = frozenset(("Select", "Subscript", "Unary", "Cond", "Elvis", "ListExpr", "AdExpr"))


def __getattr__(name):
    if name in COMPOUND:
        from gridtools.classad import compound
        return getattr(compound, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The evaluator: each expression node compiled, once, into a Python closure that
evaluates it, and the helpers those closures share.

Evaluation happens in an ``Env``: the ad whose expression is evaluated
(``my``), the other ad of a match (``target``), and the evaluation's Run: the
set of attributes being evaluated right now (a reference back into that set is
a cycle and gives UNDEFINED, as HTCondor does), its budget and its memo.
``self`` is the ad an expression belongs to and ``parent`` the ad enclosing
that one.

The nodes (``nodes``, ``compound``) only read and print expressions; this
module, the operators' functions and the budget are imported by the first
compile (``Expr.compiled``), so that parsing and printing load none of them.
The compile functions are found by the name of the node's class.
"""

import time

from gridtools.classad.ad import _EMPTY, ClassAd
from gridtools.classad.budget import STEP_CHARS
from gridtools.classad.nodes import Literal
from gridtools.classad.operators import and_rest, logical_operand, or_rest
from gridtools.classad.values import ERROR, UNDEFINED, Special, truth, wrap32

_FUNCTIONS = None  # functions.lookup (name -> Builtin), imported on first compile of a call


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
        return expr.entry()(inner)
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
        value = expr.entry()(inner)
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
    return UNDEFINED if ad is None or ad is _EMPTY else ad


def _parent_scope(env):
    ad = env.my
    parent = ad._parent if ad is not None else None
    return UNDEFINED if parent is None else parent


_SCOPE_NAMES = {"self": _self_scope, "parent": _parent_scope}
#: the names a selection gives an ad by where the ad has no such attribute
_SELECTED_SCOPES = frozenset(("self", "my", "parent"))


def select(base, key, env):
    """``base.key``: an attribute of a nested ad, or of each ad in a list. As HTCondor's
    LookupInScope: a name the ad does not hold is looked for in the ads enclosing it
    (``[x = 1; y = [w = my.x]].y.w`` is 1), but ``self`` and ``my`` (the ad itself) and
    ``parent`` (the ad enclosing it), which name those ads where the ad has no such
    attribute."""
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
    if expr is not None:
        return eval_attr(base, key, expr, env.target, env)
    if key in _SELECTED_SCOPES:
        if key == "parent":
            return UNDEFINED if base._parent is None else base._parent
        return base
    ad = base._parent
    while ad is not None and ad is not base:
        expr = ad._exprs.get(key)
        if expr is not None:
            return eval_attr(ad, key, expr, env.target, env)
        ad = ad._parent
    return UNDEFINED


def _absolute(key, env):
    """``.key``: the attribute of the outermost ad enclosing the own one (ERROR when the
    evaluation began in no ad, even where the reference sits in an ad written in the
    expression, as in ``[a = 1; b = .a].b``: HTCondor's evaluation fails there)."""
    ad = env.my
    if ad is None or ad is _EMPTY or env.busy.rootless:
        return ERROR
    root = _root(ad)
    expr = root._exprs.get(key)
    if expr is None:
        return UNDEFINED
    return eval_attr(root, key, expr, env.target, env)


def _target_attr(key, env):
    other = env.target
    if other is None:
        return UNDEFINED
    expr = other._exprs.get(key)
    if expr is None:
        return UNDEFINED
    return eval_attr(other, key, expr, _root(env.my), env)


# ------------------------------------------------------------------ the nodes of ``nodes``

def compile_node(node):
    """The closure evaluating ``node`` (``Expr.compiled`` keeps it)."""
    return _COMPILERS[node.__class__.__name__](node)


def _literal(node):
    value = node.value
    return lambda env: value


def _attr(node):
    if node.key in _SCOPE_NAMES:
        return _SCOPE_NAMES[node.key]
    from _functools import partial      # (functools' partial, without loading collections)
    return partial(resolve, node.key)


def _scoped(node):
    key = node.key
    if node.scope.lower() == "my":
        return lambda env: select(env.my, key, env)
    from _functools import partial
    if not node.scope:
        return partial(_absolute, key)
    return partial(_target_attr, key)


def _binary_node(node):
    op = node.op
    left, right = node.left.compiled(), node.right.compiled()
    if op.alias == "land":
        return _compile_and(left, right)
    if op.alias == "lor":
        return _compile_or(left, right)
    fn = op.fn
    if isinstance(node.left, Literal) and isinstance(node.right, Literal):
        value = _binary(fn, op.strict, node.left.value, node.right.value)
        return lambda env: value
    if not op.strict:
        return lambda env: fn(left(env), right(env))

    def strict(env):
        a, b = left(env), right(env)
        if a.__class__ is Special or b.__class__ is Special:
            return ERROR if (a is ERROR or b is ERROR) else UNDEFINED
        return fn(a, b)
    return strict


def _binary(fn, strict, a, b):
    if strict and (a.__class__ is Special or b.__class__ is Special):
        return ERROR if (a is ERROR or b is ERROR) else UNDEFINED
    return fn(a, b)


def _compile_and(left, right):
    operand, rest = logical_operand, and_rest

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
    operand, rest = logical_operand, or_rest

    def lor(env):
        a = left(env)
        if a is not False:
            a = operand(a)
            if a is True or a is ERROR:
                return a
        b = right(env)
        return rest(a, b if b is True or b is False else operand(b))
    return lor


def _paren(node):
    return node.inner.compiled()


def _call(node):
    global _FUNCTIONS
    if _FUNCTIONS is None:
        from gridtools.classad.functions import lookup
        _FUNCTIONS = lookup
    builtin = _FUNCTIONS(node.name)
    if builtin is None or not builtin.min_args <= len(node.args) <= builtin.max_args:
        return lambda env: ERROR
    return builtin.bind(node.args)


# --------------------------------------------------------------- the nodes of ``compound``

def _select(node):
    base, key = node.base.compiled(), node.key
    return lambda env: select(base(env), key, env)


def _subscript_node(node):
    base, index = node.base.compiled(), node.index.compiled()
    return lambda env: _subscript(base(env), index(env), env)


def _subscript(base, index, env):
    if base is ERROR or index is ERROR:
        return ERROR
    if base is UNDEFINED or index is UNDEFINED:
        return UNDEFINED
    if base.__class__ is list:
        if index.__class__ is int:
            index = wrap32(index)           # (HTCondor reads the index into a C int)
            if 0 <= index < len(base):
                return base[index]
        return ERROR
    if index.__class__ is str and hasattr(base, "_exprs"):
        key = index.lower()             # (the ad's own attribute only, as in HTCondor)
        expr = base._exprs.get(key)
        return UNDEFINED if expr is None else eval_attr(base, key, expr, env.target, env)
    return ERROR


def _unary_node(node):
    fn, operand = node.op.fn, node.operand.compiled()
    if isinstance(node.operand, Literal):
        value = _unary(fn, node.operand.value)
        return lambda env: value
    return lambda env: _unary(fn, operand(env))


def _unary(fn, value):
    return value if value.__class__ is Special else fn(value)


def _cond(node):
    cond, then, other = node.cond.compiled(), node.then.compiled(), node.other.compiled()

    def conditional(env):
        c = cond(env)
        if c is UNDEFINED:
            return UNDEFINED
        b = truth(c)
        if b is None:
            return ERROR
        return then(env) if b else other(env)
    return conditional


def _elvis(node):
    cond, other = node.cond.compiled(), node.other.compiled()

    def elvis(env):
        c = cond(env)
        return other(env) if c is UNDEFINED else c
    return elvis


def _list(node):
    fns = tuple(item.compiled() for item in node.items)
    if all(_as_written(item) for item in node.items):
        return lambda env: [fn(env) for fn in fns]

    def written(env):
        # (a list whose items print otherwise than their values: the evaluation keeps
        # what it was written as, which converting it to a string shows, as HTCondor's
        # list values hold their items unevaluated)
        value = [fn(env) for fn in fns]
        env.busy.keep_written(value, node)
        return value
    return written


def _as_written(node):
    """Whether ``node``'s value prints as the node does (literals, lists of them)."""
    cls = node.__class__.__name__
    if cls == "Literal":
        return True
    return cls == "ListExpr" and all(_as_written(item) for item in node.items)


def _ad(node):
    exprs = {name.lower(): expr for name, expr in node.pairs}
    names = {name.lower(): name for name, _ in node.pairs}
    return lambda env: ClassAd._make(dict(exprs), dict(names), _enclosing(env))


def _enclosing(env):
    ad = env.my
    return None if ad is _EMPTY else ad


_COMPILERS = {
    "Literal": _literal, "Attr": _attr, "Scoped": _scoped, "Binary": _binary_node,
    "Paren": _paren, "Call": _call, "Select": _select, "Subscript": _subscript_node,
    "Unary": _unary_node, "Cond": _cond, "Elvis": _elvis, "ListExpr": _list, "AdExpr": _ad,
}

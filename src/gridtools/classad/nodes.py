"""Expression trees and the operator table: what reading and printing
expressions need.

The operator table gives every ClassAd operator's spelling, precedence,
strictness and arity; what an operator does (``Op.fn``) is in ``operators``.
A parsed expression is a tree of small immutable node objects. Each node
knows how to print itself (``unparse``); evaluating it compiles it, once,
into a Python closure (``compiled``), which the evaluator (``evaluator``)
builds: that module, the operators' functions (``operators``) and the budget
are imported by the first evaluation, so that parsing and printing load none
of them. Parentheses are kept as nodes for printing but cost nothing when
evaluating.

This module holds the nodes the ads of submitted jobs are built of
(literals, attribute references, binary operators, parentheses, calls);
those that only parsed text has (selections, subscripts, unary operators,
conditionals, lists and nested ads) are in ``compound``, loaded when first
asked for (``nodes.Select`` and the others still name them).
"""

from gridtools.classad import values
from gridtools.classad.values import ERROR, UNDEFINED, Special, quote_name, quote_selected, unparse_value, wrap64

#: what evaluating needs, bound by the first evaluation or compile (``_load_evaluator``):
#: the evaluator's compile_node and Env, the budget's Run, TooCostly, count of
#: evaluations over it, count of steps taken and steps per chunk, ad.as_ad and the ad
#: standing for no ad
_COMPILE = _Env = _Run = _TooCostly = _OVER = _TAKEN = _CHUNK = _AS_AD = _NO_AD = None
#: and the budget's FREE_NODES and NODES_PER_STEP
_FREE = _PER_STEP = None


def _load_evaluator():
    global _COMPILE, _Env, _Run, _TooCostly, _OVER, _TAKEN, _CHUNK, _AS_AD, _NO_AD, _FREE, _PER_STEP
    from gridtools.classad import ad, budget, evaluator
    _COMPILE, _Env, _AS_AD, _NO_AD = evaluator.compile_node, evaluator.Env, ad.as_ad, ad._EMPTY
    _Run, _TooCostly, _OVER = budget.Run, budget.TooCostly, budget._OVER
    _TAKEN, _CHUNK = budget._TAKEN, budget.STEP_CHUNK
    _FREE, _PER_STEP = budget.FREE_NODES, budget.NODES_PER_STEP


class Op:
    """One operator: ``alias`` is its grammar rule name, ``prec`` its binding
    strength (higher binds tighter), ``fn`` its implementation (see ``operators``); a
    strict operator gives ERROR or UNDEFINED when an operand is one of those."""

    __slots__ = ("symbol", "alias", "prec", "strict", "unary", "fn")

    def __init__(self, symbol, alias, prec, strict=True, unary=False):
        self.symbol, self.alias, self.prec = symbol, alias, prec
        self.strict, self.unary = strict, unary

    def __getattr__(self, name):
        # (reached only while ``fn`` is unset: importing ``operators`` sets every one)
        if name != "fn":
            raise AttributeError(name)
        __import__("gridtools.classad.operators")
        return object.__getattribute__(self, "fn")

    def __repr__(self):
        return f"Op({self.symbol!r})"


# Precedence levels, lowest first. The conditional (? :) is level 1; the Elvis
# operator (?:) binds tighter than the unary operators and looser than selection and
# subscripts (``-a ?: b`` is ``-(a ?: b)``, ``(a ?: b).c`` needs its parentheses).
COND_PREC = 1
UNARY_PREC = 12
ELVIS_PREC = 12.5
POSTFIX_PREC = 13

OPERATORS = [
    Op("||", "lor", 2, strict=False),
    Op("&&", "land", 3, strict=False),
    Op("|", "bitor_", 4),
    Op("^", "bitxor_", 5),
    Op("&", "bitand_", 6),
    Op("==", "eq", 7),
    Op("!=", "ne", 7),
    Op("=?=", "is_", 7, strict=False),
    Op("=!=", "isnt", 7, strict=False),
    Op("<", "lt", 8),
    Op("<=", "le", 8),
    Op(">", "gt", 8),
    Op(">=", "ge", 8),
    Op("<<", "lshift", 9),
    Op(">>", "rshift", 9),
    Op(">>>", "urshift", 9),
    Op("+", "add", 10),
    Op("-", "sub", 10),
    Op("*", "mul", 11),
    Op("/", "div", 11),
    Op("%", "mod", 11),
    Op("-", "neg", UNARY_PREC, unary=True),
    Op("+", "pos", UNARY_PREC, unary=True),
    Op("!", "not_", UNARY_PREC, unary=True),
    Op("~", "bnot", UNARY_PREC, unary=True),
]

BINARY = {op.symbol: op for op in OPERATORS if not op.unary}
UNARY = {op.symbol: op for op in OPERATORS if op.unary}
BY_ALIAS = {op.alias: op for op in OPERATORS}
# Other spellings of =?= and =!= that the parser accepts.
SYNONYMS = {"is": "=?=", "isnt": "=!="}
# How the canonical unparser spells them.
NEW_SPELLING = {"=?=": "is", "=!=": "isnt"}


class Pretty:
    """The layout of HTCondor's PrettyPrint unparser (what the ``unparse()`` function
    gives): lists and ads over several lines, each ad indented by 4 and each list by 3
    more than what encloses it. Passed for ``old`` to ``Expr.unparse``; false, so that
    all else prints as in the canonical (new) syntax."""

    __slots__ = ("indent",)

    def __init__(self):
        self.indent = 0

    def __bool__(self):
        return False


class Expr:
    """A parsed ClassAd expression. Immutable; compare and hash by its
    canonical text."""

    __slots__ = ("_fn", "_text", "_old_text", "depth", "size")
    prec = POSTFIX_PREC

    def __init__(self, *children):
        self._fn = None
        self._text = None
        self._old_text = None
        depth = size = 1
        for child in children:
            if child.depth >= depth:
                depth = child.depth + 1
            size += child.size
        self.depth = depth
        self.size = size                # (the nodes of the tree: what evaluating it costs)

    def eval(self, my=None, target=None):
        """The value of this expression with ``my`` as its own ad and
        ``target`` as the other ad (ClassAd, dict or None); ERROR when the
        evaluation goes over its budget (``budget.STEPS``), runs out of memory or of
        recursion depth."""
        if _Run is None:
            _load_evaluator()
        run = _Run()
        my = _AS_AD(my)
        run.rootless = my is _NO_AD
        current = values._CURRENT       # (the evaluation going on: functions charge it)
        outer = current[0]
        current[0] = run
        try:
            return self.entry()(_Env(my, _AS_AD(target, empty=None), run))
        except (_TooCostly, MemoryError):
            _OVER[0] += 1
            return ERROR
        except RecursionError:
            return ERROR
        finally:
            current[0] = outer
            _TAKEN[0] += 1 + run.spent + _CHUNK - run.left

    def compiled(self):
        """The closure evaluating this node (built on first use)."""
        fn = self._fn
        if fn is None:
            if _COMPILE is None:
                _load_evaluator()
            fn = self._fn = _COMPILE(self)
        return fn

    def entry(self):
        """The closure evaluating this expression as a whole (an attribute's, a constraint):
        one of more than budget.FREE_NODES nodes first charges the evaluation a step for
        each NODES_PER_STEP of them, what walking them costs, whatever steps the
        attributes and functions in it take besides."""
        fn = self.compiled()
        if self.size <= _FREE:
            return fn
        steps = self.size // _PER_STEP

        def charged(env):
            run = env.busy
            run.left -= steps
            if run.left < 0:
                run.refill()
            return fn(env)
        return charged

    def unparse(self, old=False):
        """The canonical text (HTCondor's ClassAd unparser: reals as
        ``1.500000000000000E+00``, ``is`` and ``isnt``); with ``old``, the
        long form ``condor_q -l`` prints (``1.5``, ``=?=``, ``=!=``); with a ``Pretty``,
        that layout (not kept)."""
        if old:
            text = self._old_text
            if text is None:
                text = self._old_text = self._unparse(True)
            return text
        if old is not False and old.__class__ is Pretty:
            return self._unparse(old)
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
        self.depth = self.size = 1
        self.value = value

    def _unparse(self, old):
        return unparse_value(self.value, old)


class Attr(Expr):
    """An unqualified attribute reference."""

    __slots__ = ("name", "key")

    def __init__(self, name):
        super().__init__()
        self.name = name
        self.key = name.lower()

    def _unparse(self, old):
        return quote_name(self.name)


class Scoped(Expr):
    """``MY.name``, ``TARGET.name``, or an absolute reference ``.name`` (scope "": the
    attribute of the outermost ad the evaluation is in)."""

    __slots__ = ("scope", "name", "key")

    def __init__(self, scope, name):
        super().__init__()
        self.scope = scope
        self.name = name
        self.key = name.lower()

    def _unparse(self, old):
        if not self.scope:
            return f".{quote_name(self.name)}"        # (HTCondor quotes .'parent')
        return f"{self.scope}.{quote_selected(self.name)}"


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

    def _unparse(self, old):
        prec = self.op.prec
        left = self._wrap(old, self.left, prec)
        right = self._wrap(old, self.right, prec + 1)
        symbol = self.op.symbol
        return f"{left} {NEW_SPELLING.get(symbol, symbol) if not old else symbol} {right}"


class Paren(Expr):
    """Parentheses written in the source; kept for printing only."""

    __slots__ = ("inner",)

    def __init__(self, inner):
        super().__init__(inner)
        self.inner = inner

    def children(self):
        return (self.inner,)

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

"""The ClassAd: a case-insensitive mapping of attribute names to expressions.

``ad["X"]`` gives the expression bound to X; ``ad.eval("X", target)`` its
value. Assigning a Python value stores it as a literal; assigning an ``Expr``
stores the expression. ``str(ad)`` is the long form (one ``Name = value``
line per attribute, as ``condor_q -l`` prints); ``ad.unparse()`` the
bracketed form ``[ a = 1; b = "x" ]``. A ClassAd has the methods of a
mutable mapping (those ``collections.abc.MutableMapping`` would add, written
here: that module costs a command more than building its ads).
"""

from gridtools.classad.nodes import Literal, to_expr
from gridtools.classad.values import _CURRENT, ERROR, UNDEFINED, quote_name, unparse_value

#: what evaluating needs (the evaluator's Env, the budget's Run, TooCostly, count of
#: evaluations over it, count of steps taken and steps per chunk), bound by the first
#: evaluation (``_load_evaluator``): building, reading and printing ads load none of it
_Env = _Run = _TooCostly = _OVER = _TAKEN = _CHUNK = None


def _load_evaluator():
    global _Env, _Run, _TooCostly, _OVER, _TAKEN, _CHUNK
    from gridtools.classad import budget, evaluator
    _Env, _Run, _TooCostly, _OVER = evaluator.Env, budget.Run, budget.TooCostly, budget._OVER
    _TAKEN, _CHUNK = budget._TAKEN, budget.STEP_CHUNK


class ClassAd:
    """A ClassAd. Build one from a dict of Python values or expressions,
    ``ClassAd({"Owner": "alice", "Cpus": 2})``, or parse one with
    ``parse_ad``."""

    __slots__ = ("_exprs", "_names", "_parent")

    def __init__(self, attrs=None, **kwargs):
        self._exprs = {}
        self._names = {}
        self._parent = None
        if attrs is not None:
            items = attrs.items() if hasattr(attrs, "items") else attrs
            for name, value in items:
                self[name] = value
        for name, value in kwargs.items():
            self[name] = value

    @classmethod
    def _make(cls, exprs, names, parent):
        ad = cls.__new__(cls)
        ad._exprs, ad._names, ad._parent = exprs, names, parent
        return ad

    # -- mapping protocol ---------------------------------------------------
    def __getitem__(self, name):
        try:
            return self._exprs[name.lower()]
        except (KeyError, AttributeError):
            raise KeyError(name) from None

    def __setitem__(self, name, value):
        if not isinstance(name, str) or not name:
            raise TypeError("ClassAd attribute names are non-empty strings")
        key = name.lower()
        self._exprs[key] = to_expr(value)
        self._names[key] = name

    def __delitem__(self, name):
        key = name.lower()
        del self._exprs[key]
        del self._names[key]

    def __contains__(self, name):
        return isinstance(name, str) and name.lower() in self._exprs

    def __iter__(self):
        return iter(list(self._names.values()))

    def __len__(self):
        return len(self._exprs)

    def __eq__(self, other):
        if not isinstance(other, ClassAd):
            return NotImplemented
        return self._exprs == other._exprs

    __hash__ = None

    def keys(self):
        from collections.abc import KeysView
        return KeysView(self)

    def items(self):
        from collections.abc import ItemsView
        return ItemsView(self)

    def values(self):
        from collections.abc import ValuesView
        return ValuesView(self)

    def get(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            return default

    def pop(self, name, *default):
        try:
            value = self[name]
        except KeyError:
            if default:
                return default[0]
            raise
        del self[name]
        return value

    def popitem(self):
        try:
            name = next(iter(self))
        except StopIteration:
            raise KeyError("popitem(): the ClassAd is empty") from None
        return name, self.pop(name)

    def clear(self):
        self._exprs.clear()
        self._names.clear()

    def update(self, other=(), **kwargs):
        if hasattr(other, "keys"):
            for name in other.keys():
                self[name] = other[name]
        else:
            for name, value in other:
                self[name] = value
        for name, value in kwargs.items():
            self[name] = value

    def setdefault(self, name, default=None):
        try:
            return self[name]
        except KeyError:
            self[name] = default
        return default

    # -- ClassAd operations -------------------------------------------------
    def lookup(self, name):
        """The expression bound to ``name``, or None."""
        return self._exprs.get(name.lower())

    def eval(self, name, target=None):
        """The value of attribute ``name`` with this ad as MY and ``target``
        as TARGET; UNDEFINED when the attribute is missing; ERROR when the evaluation
        goes over its budget (``budget.STEPS``), runs out of memory or of recursion depth."""
        key = name.lower()
        expr = self._exprs.get(key)
        if expr is None:
            return UNDEFINED
        if expr.__class__ is Literal:
            return expr.value
        if _Run is None:
            _load_evaluator()
        run = _Run()
        run.add((id(self), key))
        current = _CURRENT              # (the evaluation going on: functions charge it)
        outer = current[0]
        current[0] = run
        try:
            return expr.entry()(_Env(self, as_ad(target, empty=None), run))
        except (_TooCostly, MemoryError):
            _OVER[0] += 1
            return ERROR
        except RecursionError:
            return ERROR
        finally:
            current[0] = outer
            _TAKEN[0] += 1 + run.spent + _CHUNK - run.left

    def set_expr(self, name, text):
        """Bind ``name`` to the expression parsed from ``text``."""
        from gridtools.classad.parser import parse
        self[name] = parse(text)

    def copy(self):
        return ClassAd._make(dict(self._exprs), dict(self._names), self._parent)

    def unparse(self, old=False):
        """The bracketed form ``[ a = 1; b = 2 ]`` (``old``: reals and
        strings spelled as in the long form)."""
        if not self._exprs:
            return "[  ]"
        body = "; ".join(f"{quote_name(self._names[k])} = {e.unparse(old)}"
                         for k, e in self._exprs.items())
        return f"[ {body} ]"

    def __str__(self):
        """The long form, one ``Name = value`` line per attribute."""
        names, lines = self._names, []
        for key, expr in self._exprs.items():
            text = unparse_value(expr.value, True) if expr.__class__ is Literal else expr.unparse(True)
            lines.append(f"{quote_name(names[key])} = {text}\n")
        return "".join(lines)

    def __repr__(self):
        return f"ClassAd({self.unparse()})"


_EMPTY = ClassAd()


def as_ad(value, empty=_EMPTY):
    """A ClassAd from a ClassAd, a dict, or None (``empty``)."""
    if value is None:
        return empty
    if isinstance(value, ClassAd):
        return value
    if isinstance(value, dict):
        return ClassAd(value)
    raise TypeError(f"expected a ClassAd or a dict, not {type(value).__name__}")

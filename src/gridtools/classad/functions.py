"""Built-in functions: the registry, and the type, conversion, math, list,
evaluation functions and time(). String, string-list and version functions
are in ``strfuncs``, the regular-expression ones in ``regexfuncs``, those of
time values in ``timefuncs``, the environment and argument ones in
``envargs``; ``lookup`` imports those modules the first time one of their
functions is called (most expressions call none of them, and they are more
than half of the library). Time values (``timevals``) are imported by the
first one met.

Function names are case-insensitive. A call with the wrong number of
arguments, or of an unknown function, evaluates to ERROR. Unless a function
says otherwise, an UNDEFINED argument gives UNDEFINED and an ERROR argument
or one of the wrong type gives ERROR.
"""

import math
import time as _time

from gridtools.classad.evaluator import Env
from gridtools.classad.nodes import BINARY
from gridtools.classad.operators import identical, logical_operand, op_add, op_div, op_gt, op_lt
from gridtools.classad.budget import built, charge, current_run
from gridtools.classad.values import ERROR, UNDEFINED, Special, to_int64, truth, unparse_value, wrap64

FUNCTIONS = {}


class Builtin:
    """A built-in function. ``mode`` says what it receives: "values" (its
    evaluated arguments), "lazy" (env and argument closures) or "nodes" (env
    and the argument expressions)."""

    __slots__ = ("name", "fn", "min_args", "max_args", "mode")

    def __init__(self, name, fn, min_args, max_args, mode):
        self.name, self.fn, self.mode = name, fn, mode
        self.min_args, self.max_args = min_args, max_args

    def bind(self, args):
        """A closure evaluating a call of this function on ``args`` (a call is a step
        of the evaluation's budget)."""
        fn = self.fn
        fns = tuple(arg.compiled() for arg in args)
        if self.mode == "lazy":
            def call_lazy(env):
                run = env.busy
                run.left -= 1
                if run.left < 0:
                    run.refill()
                return fn(env, fns)
            return call_lazy
        if self.mode == "nodes":
            def call_nodes(env):
                run = env.busy
                run.left -= 1
                if run.left < 0:
                    run.refill()
                return fn(env, args)
            return call_nodes
        if len(fns) == 1:
            only = fns[0]

            def call_one(env):
                run = env.busy
                run.left -= 1
                if run.left < 0:
                    run.refill()
                return fn(only(env))
            return call_one

        def call(env):
            run = env.busy
            run.left -= 1
            if run.left < 0:
                run.refill()
            return fn(*[g(env) for g in fns])
        return call


def builtin(*names, args=(1, 1), mode="values"):
    """Register a function under ``names`` taking ``args`` = (min, max)."""
    def register(fn):
        for name in names:
            FUNCTIONS[name.lower()] = Builtin(name, fn, args[0], args[1], mode)
        return fn
    return register


def exceptional(*values):
    """ERROR if any value is ERROR, else UNDEFINED if any is UNDEFINED, else None."""
    if any(v is ERROR for v in values):
        return ERROR
    if any(v is UNDEFINED for v in values):
        return UNDEFINED
    return None


# ------------------------------------------------------------- conversions

#: the patterns parse_c_real reads (compiled on first use: ``re`` costs a command that
#: only evaluates arithmetic more than its own work)
_C_NUMBERS = []


def _c_numbers():
    if not _C_NUMBERS:
        import re
        _C_NUMBERS.extend((
            re.compile(r"\s*([+-]?)0x([0-9a-f]+\.?[0-9a-f]*|\.[0-9a-f]+)(p[+-]?\d+)?", re.I),
            re.compile(r"\s*[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf(inity)?|nan)", re.I)))
    return _C_NUMBERS


def parse_c_real(text):
    """The number at the start of ``text`` (as C's strtod reads it: decimal,
    hexadecimal, inf and nan), or None."""
    hexadecimal, decimal = _c_numbers()
    m = hexadecimal.match(text)
    if m:
        sign, digits, power = m.groups()
        return float.fromhex(sign + "0x" + digits + (power or ""))
    m = decimal.match(text)
    return float(m.group()) if m else None


#: the types of the values that are no time values (see _is_time)
_PLAIN = frozenset((bool, int, float, str, list, Special))


def _is_time(t):
    """Whether ``t`` is AbsTime or RelTime. Their module is imported by the first value
    of a type no plain one is (no time value exists before it is): evaluating plain
    values loads none of it."""
    if t in _PLAIN:
        return False
    return t in _time_types()


def _time_types():
    """(AbsTime, RelTime), once a time value exists (see ``_is_time``)."""
    from gridtools.classad.timevals import TIME_TYPES
    return TIME_TYPES


def to_string(value):
    """A value as a string: strings as they are, times as their text,
    others unparsed."""
    t = type(value)
    if t is str or t is Special:
        return value
    if _is_time(t):
        return value.text()
    if t is list:
        run = current_run()
        node = run.written_as(value) if run is not None else None
        if node is not None:
            return node.unparse()       # (a list shows its items as written, as in HTCondor)
    return unparse_value(value)


def to_real(value):
    """A value as a float, or None when it has no numeric reading."""
    t = type(value)
    if t is float:
        return value
    if t is int or t is bool:
        return float(value)
    if t is str:
        return parse_c_real(value)
    if _is_time(t):
        return float(int(value.secs))
    return None


def to_int(value):
    t = type(value)
    if t is int:
        return value
    if t is bool:
        return int(value)
    if value is UNDEFINED:
        return UNDEFINED
    if t is float or t is str:
        real = value if t is float else parse_c_real(value)
        return ERROR if real is None else to_int64(real)
    if _is_time(t):
        return to_int64(float(value.secs))
    return ERROR


@builtin("int")
def fn_int(value):
    return to_int(value)


@builtin("real")
def fn_real(value):
    if value is UNDEFINED:
        return UNDEFINED
    real = to_real(value)
    return ERROR if real is None else real


@builtin("string")
def fn_string(value):
    text = to_string(value)
    return built(text) if type(value) is list else text


@builtin("bool")
def fn_bool(value):
    t = type(value)
    if value is UNDEFINED:
        return UNDEFINED
    if t is str:
        return {"true": True, "false": False}.get(value.lower(), UNDEFINED)
    b = truth(value)
    if b is None:           # (a relative time is true unless 0; an absolute time is no truth)
        return value.secs != 0 if _is_time(t) and t is _time_types()[1] else ERROR
    return b


# ------------------------------------------------------------ type tests

for _name, _test in {
    "isUndefined": lambda v: v is UNDEFINED,
    "isError": lambda v: v is ERROR,
    "isString": lambda v: type(v) is str,
    "isInteger": lambda v: type(v) is int,
    "isReal": lambda v: type(v) is float,
    "isBoolean": lambda v: type(v) is bool,
    "isList": lambda v: type(v) is list,
    "isClassAd": lambda v: hasattr(v, "_exprs"),
}.items():
    builtin(_name)(_test)


@builtin("ifThenElse", args=(3, 3), mode="lazy")
def fn_if_then_else(env, fns):
    cond = fns[0](env)
    if cond is UNDEFINED or cond is ERROR:
        return cond
    b = truth(cond)
    if b is None:
        return ERROR
    return fns[1](env) if b else fns[2](env)


# ------------------------------------------------------------------ math

def _rounder(fn):
    def apply(value):
        if type(value) is int:
            return value
        real = to_real(value)
        if real is None:
            return ERROR
        return to_int64(fn(real) if math.isfinite(real) else real)
    return apply


builtin("floor")(_rounder(math.floor))
builtin("ceiling", "ceil")(_rounder(math.ceil))
builtin("round")(_rounder(round))


@builtin("pow", args=(2, 2))
def fn_pow(base, exponent):
    """C's pow(); an integer to a non-negative integer power is an integer: the real
    result plus 0.5, converted as C converts it (HTCondor's rounding, which takes a
    negative result one toward zero: pow(-2, 3) is -7, pow(-1, 7) is 0)."""
    rb, re_ = to_real(base), to_real(exponent)
    if rb is None or re_ is None or type(base) is str and not base.strip():
        return ERROR
    result = _c_pow(rb, re_)
    if type(base) is int and type(exponent) is int and exponent >= 0:
        return to_int64(result + 0.5)
    return result


def _c_pow(x, y):
    try:
        return math.pow(x, y)
    except OverflowError:
        return math.inf if x > 0 or float(y).is_integer() and y % 2 == 0 else -math.inf
    except ValueError:
        if x != 0.0:
            return math.nan
        odd = float(y).is_integer() and y % 2 == 1
        return math.copysign(math.inf, x) if odd else math.inf


def _quantum_number(value):
    """A number quantize() reads: an integer, else a real (a boolean or a string read
    as one); None for anything else."""
    t = type(value)
    if t is int or t is float:
        return value
    if t is bool:
        return float(value)
    if t is str:
        return parse_c_real(value)
    if _is_time(t):
        return float(value.secs)
    return None


def _c_quotient(a, b):
    """C's integer division (towards zero)."""
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


@builtin("quantize", args=(2, 2))
def fn_quantize(value, step):
    """The first multiple of ``step`` at or above ``value``, as HTCondor computes it:
    for integers ``((value + step - 1) / step) * step`` in C's 64-bit arithmetic (which
    for a negative step is not a multiple above), else a real. With a list, its first
    element at or above the value (as it is), else the last one as the step; an empty
    list gives the value back. A step of 0 gives the value."""
    number = _quantum_number(value)
    if number is None:
        return ERROR
    if type(step) is list:
        if not step:
            return value
        for item in step:
            reading = _quantum_number(item)
            if reading is None:
                return ERROR
            if reading >= number:
                return item
        step = step[-1]
    step = _quantum_number(step) if type(step) is not int else step
    if step is None:
        return ERROR
    if step == 0:
        return value
    if type(number) is int and type(step) is int:
        return wrap64(_c_quotient(wrap64(number + step - 1), step) * step)
    ratio = number / step
    if math.isfinite(ratio):
        ratio = math.copysign(float(math.ceil(ratio)), ratio)    # (C's ceil keeps the sign of -0.4)
    return ratio * step


@builtin("random", args=(0, 1))
def fn_random(limit=1.0):
    import random
    run = current_run()
    if run is not None:
        run.impure += 1                 # (an attribute calling random() is not remembered)
    if type(limit) is int and limit > 0:
        return random.randrange(limit)
    if type(limit) is float and limit > 0:
        return random.random() * limit
    return ERROR


# ----------------------------------------------------------------- lists

def _numbers(value):
    """The defined elements of a list when all of them are numbers or
    booleans (UNDEFINED elements are skipped); else UNDEFINED or ERROR."""
    if value is UNDEFINED:
        return UNDEFINED
    if type(value) is not list:
        return ERROR
    out = []
    for item in value:
        t = type(item)
        if t is int or t is float or t is bool:
            out.append(item)
        elif item is not UNDEFINED:
            return ERROR
    return out


def _total(values):
    """The sum with the ``+`` operator, so that it wraps and overflows as
    HTCondor's does."""
    if not values:
        return 0
    total = values[0]
    for item in values[1:]:
        total = op_add(total, item)
        if total is ERROR:
            break
    return total


@builtin("sum")
def fn_sum(value):
    values = _numbers(value)
    return values if type(values) is Special else _total(values)


@builtin("avg")
def fn_avg(value):
    values = _numbers(value)
    if type(values) is Special:
        return values
    if not values:
        return 0
    total = _total(values)
    return total if total is ERROR else op_div(total, float(len(values)))


def _bound(test):
    def apply(value):
        values = _numbers(value)
        if type(values) is Special:
            return values
        if not values:
            return UNDEFINED
        best = values[0]
        for item in values[1:]:
            if test(item, best) is True:
                best = item
        if any(type(v) is float for v in values):
            return float(best)
        return int(best)
    return apply


builtin("min")(_bound(op_lt))
builtin("max")(_bound(op_gt))


@builtin("size")
def fn_size(value):
    if value is UNDEFINED:
        return UNDEFINED
    if type(value) in (str, list) or hasattr(value, "_exprs"):
        return len(value)
    return ERROR


def _member(item, items, test, strict):
    if items is UNDEFINED or (strict and item is UNDEFINED):
        return UNDEFINED
    if type(items) is not list or type(item) is list or hasattr(item, "_exprs"):
        return ERROR
    if strict and item is ERROR:
        return ERROR
    return any(test(element, item) is True for element in items)


@builtin("member", args=(2, 2))
def fn_member(item, items):
    return _member(item, items, _loose_eq, True)


@builtin("identicalMember", args=(2, 2))
def fn_identical_member(item, items):
    return _member(item, items, identical, False)


def _loose_eq(a, b):
    if type(a) is Special or type(b) is Special:
        return UNDEFINED
    return BINARY["=="].fn(a, b)


#: the operator names anyCompare and allCompare take (as written: any other is ERROR)
_COMPARE_OPS = {"<": "<", "<=": "<=", "==": "==", "!=": "!=", ">": ">", ">=": ">=",
                "is": "=?=", "isnt": "=!="}


def _list_compare(want_all):
    """HTCondor's listCompare: the elements in turn, the first that decides ends the
    scan; a comparison that is UNDEFINED ends it too, with false (for both), one that
    is ERROR (or no boolean) with ERROR."""
    def apply(op, items, value):
        if op is UNDEFINED:
            return UNDEFINED
        symbol = _COMPARE_OPS.get(op) if type(op) is str else None
        if symbol is None:
            return ERROR
        if items is UNDEFINED:
            return UNDEFINED
        if type(items) is not list:
            return ERROR
        operator = BINARY[symbol]
        for element in items:
            result = _apply_op(operator, element, value)
            if result is UNDEFINED:
                return False
            if type(result) is not bool:
                return ERROR
            if (result is True) != want_all:
                return not want_all
        return want_all
    return apply


def _apply_op(operator, a, b):
    if operator.strict and (type(a) is Special or type(b) is Special):
        return ERROR if (a is ERROR or b is ERROR) else UNDEFINED
    return operator.fn(a, b)


builtin("anyCompare", args=(3, 3))(_list_compare(False))
builtin("allCompare", args=(3, 3))(_list_compare(True))


# ------------------------------------------------------------- evaluation

#: steps charged for each character eval() parses (Python's parser takes a few
#: microseconds a character; a step is about half of one)
PARSE_STEPS = 6


@builtin("eval", mode="lazy")
def fn_eval(env, fns):
    text = fns[0](env)
    if _is_time(type(text)):
        text = text.text()              # (as HTCondor: its text, which does not parse)
    if type(text) is not str:
        return ERROR if type(text) is Special else text
    from gridtools.classad.parser import ClassAdSyntaxError, parse
    # parsing costs about what PARSE_STEPS steps cost for each character: the text is
    # charged in full first, so that a text too long for the budget is never parsed
    charge(len(text) * PARSE_STEPS)
    try:
        expr = parse(text)
    except ClassAdSyntaxError:
        return ERROR
    return expr.entry()(env)


@builtin("unparse", mode="nodes")
def fn_unparse(env, args):
    """As HTCondor's unparse(): the argument must be an attribute reference, whose text
    (``a``; ``MY.a``, ``x.y`` and ``.a`` too) is looked up as a name in the own ad only;
    the expression found, laid out as HTCondor's PrettyPrint does, or ""."""
    from gridtools.classad.nodes import Attr, Pretty, Scoped, Select
    node = args[0]
    if not isinstance(node, (Attr, Scoped, Select)):
        return ERROR
    ad = env.my
    expr = ad.lookup(node.unparse()) if ad is not None else None
    return "" if expr is None else built(expr.unparse(Pretty()))


@builtin("debug")
def fn_debug(value):
    return value


def _contexts(env, fns):
    """The contexts of the second argument's elements (an ad's Env, else the element), or
    the argument's value when it is no list."""
    ads = fns[1](env) if len(fns) > 1 else UNDEFINED
    if type(ads) is not list:
        return ads
    charge(len(ads))                    # (each element evaluates the expression once)
    return [Env(ad, env.target, env.busy) if hasattr(ad, "_exprs") else ad for ad in ads]


@builtin("evalInEachContext", args=(2, 2), mode="lazy")
def fn_eval_in_each(env, fns):
    """The expression's value in each ad of the list: an undefined element gives
    UNDEFINED, any other that is no ad ERROR; an undefined list UNDEFINED (HTCondor's
    evalInEachContext_func)."""
    envs = _contexts(env, fns)
    if type(envs) is not list:
        return UNDEFINED if envs is UNDEFINED else ERROR
    return [fns[0](e) if type(e) is Env else UNDEFINED if e is UNDEFINED else ERROR for e in envs]


@builtin("countMatches", args=(2, 2), mode="lazy")
def fn_count_matches(env, fns):
    """How many ads of the list the expression is true in; 0 for an undefined list,
    ERROR for any other that is no list."""
    envs = _contexts(env, fns)
    if type(envs) is not list:
        return 0 if envs is UNDEFINED else ERROR
    return sum(1 for e in envs if type(e) is Env and logical_operand(fns[0](e)) is True)


# ------------------------------------------------------------ references

@builtin("unresolved", args=(1, 2), mode="nodes")
def fn_unresolved(env, args):
    """HTCondor's hasRefs: the attributes the expression of the attribute named by the
    first argument (a reference: anything else is ERROR; one that names nothing,
    UNDEFINED) refers to that are in none of the ads it is looked up in, as a string
    (``"Foo,x"``: sorted and without repeats, any case; a ``TARGET.`` prefix left off;
    "" when finding them fails); with a second argument, a regular expression (matched
    in any case), whether one of those names matches it (non-empty)."""
    from gridtools.classad.nodes import Attr, Scoped
    from gridtools.classad.compound import Select
    node = args[0]
    if node.__class__ not in (Attr, Scoped, Select):
        return ERROR
    found = _deref(node, env)
    if found is None:
        return UNDEFINED
    regex = None
    if len(args) == 2:
        pattern = args[1].compiled()(env)
        if type(pattern) is not str:
            return ERROR
        from gridtools.classad.regexfuncs import compile_regex
        regex = compile_regex(pattern, "i")
        if regex is None:
            return ERROR
    ad, expr = found
    refs = {}
    try:
        complete = _external_refs(expr, ad, _root(ad), env, refs, 400)
    except RecursionError:
        complete = False
    names = [refs[key] for key in sorted(refs)] if complete else []
    names = [n[7:] if n[:7].lower() == "target." else n for n in names]
    if regex is None:
        return built(",".join(names))
    return any(m.end() > m.start() for n in names for m in regex.finditer(n))


def _root(ad):
    while ad._parent is not None:
        ad = ad._parent
    return ad


def _in_scope(ad, key, root):
    """(the ad, the expression) of attribute ``key`` looked up from ``ad`` outwards (not
    beyond ``root``), or None."""
    while ad is not None:
        expr = ad._exprs.get(key)
        if expr is not None:
            return ad, expr
        if ad is root:
            return None
        ad = ad._parent
    return None


def _deref(node, env):
    """(ad, expression) of the attribute reference ``node`` in ``env``, or None."""
    cls = node.__class__.__name__
    my = env.my if env.my is not None and hasattr(env.my, "_exprs") else None
    if cls == "Attr":
        return _in_scope(my, node.key, None)
    if cls == "Scoped":
        scope = node.scope.lower()
        start = my if scope == "my" else env.target if scope == "target" else \
            (_root(my) if my is not None else None)
        return _in_scope(start, node.key, None)
    base = node.base.compiled()(env)
    return _in_scope(base, node.key, None) if hasattr(base, "_exprs") else None


def _external_refs(expr, ad, root, env, refs, depth):
    """HTCondor's _GetExternalReferences with full names: adds to ``refs`` (by lower-case
    name, the first spelling met) the names ``expr``, in ``ad``, refers to that no ad
    holds, following those that one holds; False when it fails (a selection from what is
    no ad, too deep)."""
    if depth <= 0:
        return False
    charge(1)
    cls = expr.__class__.__name__
    if cls == "Literal":
        return True
    if cls == "Attr" or cls == "Scoped" or cls == "Select":
        if cls == "Attr":
            start, key = ad, expr.key
            if key in ("self", "parent", "toplevel", "root") and key not in ad._exprs:
                named = ad if key == "self" else ad._parent if key == "parent" else root
                if named is None:
                    refs.setdefault(key, expr.name)
                    return True
                return all(_external_refs(e, named, root, env, refs, depth - 1)
                           for e in list(named._exprs.values()))
        elif cls == "Scoped":
            scope, key = expr.scope.lower(), expr.key
            start = ad if scope == "my" else root if not scope else env.target
            if start is None:
                name = f"{expr.scope}.{expr.name}"
                refs.setdefault(name.lower(), name)
                return True
        else:
            from gridtools.classad.evaluator import Env
            key = expr.key
            start = expr.base.compiled()(Env(ad, env.target, env.busy))
            if start is UNDEFINED:
                name = f"{expr.base.unparse()}.{expr.name}"
                refs.setdefault(name.lower(), name)
                return True
            if not hasattr(start, "_exprs"):
                return False
        found = _in_scope(start, key, root)
        if found is None:
            refs.setdefault(key, expr.name)
            return True
        return _external_refs(found[1], found[0], root, env, refs, depth - 1)
    for child in expr.children():       # (an operator's operands, a call's arguments, the
        if not _external_refs(child, ad, root, env, refs, depth - 1):  # items of a list or an ad)
            return False
    return True


# ------------------------------------------------------------------ time

@builtin("time", args=(0, 0))
def fn_time():
    return int(_time.time())


# ------------------------------------------------------------- the other modules

#: the functions of ``strfuncs``, ``regexfuncs``, ``timefuncs`` and ``envargs`` by their
#: lower-case names: those modules register them when they are imported (a test holds this table to what they register)
ELSEWHERE = dict.fromkeys((
    "join", "split", "splitslotname", "splitusername", "strcat", "strcmp", "stricmp",
    "stringlistavg", "stringlistimember", "stringlistisubsetmatch", "stringlistmax",
    "stringlistmember", "stringlistmin", "stringlistsintersect", "stringlistsize",
    "stringlistsubsetmatch", "stringlistsum", "substr", "tolower", "toupper", "userhome",
    "version_in_range", "versioncmp", "versioneq", "versionge", "versiongt", "versionle",
    "versionlt"), "strfuncs")
ELSEWHERE.update(dict.fromkeys(("regexp", "regexpmember", "regexps", "replace", "replaceall",
                                "stringlist_regexpmember"), "regexfuncs"))
ELSEWHERE.update(dict.fromkeys(("abstime", "currenttime", "daytime", "timezoneoffset", "formattime",
                                "interval", "isabstime", "isreltime",
                                "reltime", "splittime", "getyear", "getmonth", "getdayofmonth",
                                "getdayofweek", "getdayofyear", "gethours", "getminutes",
                                "getseconds", "getdays"), "timefuncs"))
ELSEWHERE.update(dict.fromkeys(("argstolist", "envv1tov2", "listtoargs", "mergeenvironment", "usermap"),
                               "envargs"))


def lookup(name):
    """The Builtin of function ``name`` (any case), or None when there is none."""
    key = name.lower()
    found = FUNCTIONS.get(key)
    if found is None and key in ELSEWHERE:
        __import__("gridtools.classad." + ELSEWHERE[key])
        found = FUNCTIONS.get(key)
    return found

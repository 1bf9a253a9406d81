"""What the ClassAd operators do: the implementation of every operator of the
table (``nodes.OPERATORS``), set as its ``fn`` when this module is imported (by the first
evaluation), and three-valued logic.

Strict operators (most of them) never see UNDEFINED or ERROR: the evaluator
propagates those first (ERROR wins over UNDEFINED). Non-strict operators
(``=?=``, ``=!=``, ``&&``, ``||`` and the conditional) get every value;
``&&`` and ``||`` short-circuit, so the evaluator calls their ``combine``
function only when the right operand is needed.

Semantics follow HTCondor: integers and reals promote to real; booleans
promote to integers in arithmetic and comparisons; integer division and
modulus truncate toward zero; division or modulus by zero, modulus on reals,
arithmetic on strings and comparisons of unlike types are ERROR; ``==`` and
the ordering operators compare strings case-insensitively, ``=?=`` exactly.
"""

import _operator as operator   # the functions of ``operator``, without its module's start-up
import math

from gridtools.classad.budget import charge
from gridtools.classad.nodes import OPERATORS
from gridtools.classad.values import INT64_MIN, ERROR, UNDEFINED, Special, truth, wrap64

_INTLIKE = (int, bool)
_NUMERIC = (int, float, bool)


# ---------------------------------------------------------------- arithmetic

def _arith(a, b, int_fn, real_fn):
    ta, tb = type(a), type(b)
    if ta in _INTLIKE and tb in _INTLIKE:
        return int_fn(int(a), int(b))
    if ta in _NUMERIC and tb in _NUMERIC:
        result = real_fn(float(a), float(b))
        # HTCondor keeps -inf and NaN results but turns +inf into ERROR.
        return ERROR if result == math.inf else result
    times = _timevals()
    if ta in times.TIME_TYPES or tb in times.TIME_TYPES:
        return times.arith(_SYMBOLS[int_fn], a, b)
    return ERROR


def _timevals():
    """The module of time values, imported by the first operation on values that are no
    numbers (no time value exists before it is: building ads of plain numbers and
    strings needs none of it)."""
    from gridtools.classad import timevals
    return timevals


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _idiv(a, b):
    if b == 0:
        return ERROR
    if b == -1 and a == INT64_MIN:
        return ~INT64_MIN
    return _trunc_div(a, b)


def _imod(a, b):
    if b == 0:
        return ERROR
    return 0 if b == -1 else a - b * _trunc_div(a, b)


def real_divide(x, y):
    """IEEE division: a zero divisor gives an infinity or NaN (relative times divide so
    too: timevals)."""
    if y != 0.0:
        return x / y
    if x != x or x == 0.0:
        return math.nan
    return math.copysign(math.inf, x) * math.copysign(1.0, y)


def _iadd(x, y):
    return wrap64(x + y)


def _isub(x, y):
    return wrap64(x - y)


def _imul(x, y):
    return wrap64(x * y)


def op_add(a, b):
    return _arith(a, b, _iadd, operator.add)


def op_sub(a, b):
    return _arith(a, b, _isub, operator.sub)


def op_mul(a, b):
    return _arith(a, b, _imul, operator.mul)


def op_div(a, b):
    return _arith(a, b, _idiv, real_divide)


def op_mod(a, b):
    return _arith(a, b, _imod, lambda x, y: ERROR)


_SYMBOLS = {_iadd: "+", _isub: "-", _imul: "*", _idiv: "/", _imod: "%"}


# ---------------------------------------------------------------- comparison

def _comparison(test):
    """A comparison operator from a Python comparison function."""
    def compare(a, b):
        ta, tb = type(a), type(b)
        if ta in _NUMERIC and tb in _NUMERIC:
            return test(a, b)
        if ta is str and tb is str:
            return test(a.lower(), b.lower())
        return _timevals().compare(test, a, b)
    return compare


op_lt = _comparison(operator.lt)
op_le = _comparison(operator.le)
op_gt = _comparison(operator.gt)
op_ge = _comparison(operator.ge)
op_eq = _comparison(operator.eq)
op_ne = _comparison(operator.ne)


def identical(a, b):
    """``=?=``: same type and same value; strings compare case-sensitively;
    lists and ads compare element by element."""
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is Special:
        return a is b
    if ta is list:
        if len(a) != len(b):
            return False
        charge(len(a))                  # (a list may hold the same list many times over)
        return all(identical(x, y) for x, y in zip(a, b))
    if ta in _NUMERIC or ta is str:
        return a == b
    if ta in _timevals().TIME_TYPES:
        return a.same(b)
    return len(a) == len(b) and all(k in b and a.lookup(k) == b.lookup(k) for k in a)


def _aggregate(a, b):
    """True when ``=?=`` compares two lists or two ads: HTCondor gives ERROR."""
    ta = type(a)
    return ta is type(b) and (ta is list or hasattr(a, "_exprs"))


def op_is(a, b):
    return ERROR if _aggregate(a, b) else identical(a, b)


def op_isnt(a, b):
    return ERROR if _aggregate(a, b) else not identical(a, b)


# ------------------------------------------------------------------- bitwise

def _bitwise(a, b, fn):
    if type(a) is int and type(b) is int:
        return fn(a, b)
    return ERROR


# Shift counts are taken modulo 64, as the x86-64 shift instructions do.

def _lshift(a, b):
    return wrap64(a << (b & 63))


def _rshift(a, b):
    # (HTCondor shifts a negative number one bit at a time, at most 64 times: by a
    # count that is not positive it stays as it is)
    if a >= 0:
        return a >> (b & 63)
    return a >> min(b, 64) if b > 0 else a


def _urshift(a, b):
    count = b & 63
    if a >= 0:
        return a >> count
    # HTCondor clears the top ``count`` bits with a mask shifted by
    # 64 - count, which is a shift by 0 when count is 0.
    return (a >> count) & ~wrap64(-1 << ((64 - count) & 63))


def op_band(a, b):
    return _bitwise(a, b, lambda x, y: x & y)


def op_bor(a, b):
    return _bitwise(a, b, lambda x, y: x | y)


def op_bxor(a, b):
    return _bitwise(a, b, lambda x, y: x ^ y)


def op_lshift(a, b):
    return _bitwise(a, b, _lshift)


def op_rshift(a, b):
    return _bitwise(a, b, _rshift)


def op_urshift(a, b):
    return _bitwise(a, b, _urshift)


# --------------------------------------------------------------------- unary

def op_neg(a):
    t = type(a)
    if t is int:
        return wrap64(-a)
    if t is float:
        return -a
    return _timevals().negate(a)


def op_pos(a):
    t = type(a)
    if t is int or t is float:
        return a
    return a if t is _timevals().RelTime else ERROR      # (an absolute time has no sign)


def op_not(a):
    t = type(a)
    if t is bool:
        return not a
    if t is int or t is float:
        return a == 0
    return ERROR


def op_bnot(a):
    return ~a if type(a) is int else ERROR


# ------------------------------------------------------------------- logical

def logical_operand(value):
    """A logical operand normalised: True/False, UNDEFINED or ERROR."""
    b = truth(value)
    if b is not None:
        return b
    return value if value is UNDEFINED else ERROR


def and_rest(a, b):
    """``a && b`` once ``a`` is known not to decide the result alone
    (``a`` is True or UNDEFINED); ``b`` is already normalised."""
    if a is True:
        return b
    if b is False:
        return False
    return ERROR if b is ERROR else UNDEFINED


def or_rest(a, b):
    """``a || b`` once ``a`` is False or UNDEFINED; ``b`` normalised."""
    if a is False:
        return b
    if b is True:
        return True
    return ERROR if b is ERROR else UNDEFINED


#: the function of each operator, by its alias (see ``nodes.OPERATORS``)
IMPLEMENTATIONS = {
    "lor": or_rest, "land": and_rest, "bitor_": op_bor, "bitxor_": op_bxor, "bitand_": op_band,
    "eq": op_eq, "ne": op_ne, "is_": op_is, "isnt": op_isnt, "lt": op_lt, "le": op_le, "gt": op_gt,
    "ge": op_ge, "lshift": op_lshift, "rshift": op_rshift, "urshift": op_urshift, "add": op_add,
    "sub": op_sub, "mul": op_mul, "div": op_div, "mod": op_mod, "neg": op_neg, "pos": op_pos,
    "not_": op_not, "bnot": op_bnot,
}

for _op in OPERATORS:
    _op.fn = IMPLEMENTATIONS[_op.alias]
del _op

"""Resource requests against what queues and hosts offer (complex(5) semantics).

A request ``name=value`` matches an offered value when ``requested RELOP
offered`` holds with the complex's relation operator: ``h_vmem=2G`` (<=)
needs a queue limit of at least 2G, ``arch=lx*`` (==) a matching
architecture, ``load_avg=2`` (>=) a host whose load is at most 2. String
types compare with wildcard patterns (``*``, ``?``, ``[...]``, alternatives
with ``|``, negation with ``!``); CSTRING and HOST ignore case.

Consumables count down: each running task holds ``slots x amount`` (per job
for JOB consumables) at every level (global, host, queue) where the
consumable has a capacity.
"""

import fnmatch

from gridtools.errors import InputError
from gridtools.formats import values

NUMERIC = frozenset({"INT", "DOUBLE", "MEMORY", "TIME", "BOOL"})


def to_number(cx_type, text):
    """The numeric value of ``text`` for a numeric complex type."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return text
    text = str(text)
    if cx_type == "MEMORY":
        return values.parse_memory(text)
    if cx_type == "TIME":
        return values.parse_time(text)
    if cx_type == "BOOL":
        return 1 if values.parse_bool(text) else 0
    if text.upper() == "INFINITY":
        return values.INFINITY
    return values.parse_number(text)


def valid_request(cx, text):
    """Raise InputError when ``text`` is not a valid value for complex ``cx``."""
    if cx.type in NUMERIC:
        to_number(cx.type, text)


def _string_match(pattern, offered, fold):
    if fold:
        pattern, offered = pattern.lower(), offered.lower()
    for alt in pattern.split("|"):
        negate = alt.startswith("!")
        alt = alt[1:] if negate else alt
        if fnmatch.fnmatchcase(offered, alt) != negate:
            return True
    return False


def satisfies(cx, requested, offered):
    """True when ``requested RELOP offered`` for complex ``cx``."""
    if cx.type in NUMERIC:
        try:
            req = to_number(cx.type, requested)
            off = to_number(cx.type, offered)
        except InputError:
            return False
        return _relop(cx.relop, req, off)
    fold = cx.type in ("CSTRING", "HOST")
    matched = _string_match(str(requested), str(offered), fold)
    return matched if cx.relop != "!=" else not matched


def _relop(op, a, b):
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if op == "<=":
        return a <= b
    if op == "<":
        return a < b
    if op == ">=":
        return a >= b
    if op == ">":
        return a > b
    return a == b


def threshold_exceeded(cx, load, threshold):
    """True when a load value crosses a load/suspend threshold (``load RELOP threshold``)."""
    try:
        return _relop(cx.relop, to_number(cx.type, load), to_number(cx.type, threshold))
    except InputError:
        return False


def amount(cx, text):
    """Numeric amount of a consumable request."""
    return to_number(cx.type, text)


class Capacity:
    """Remaining consumable amounts per level: ('global',), ('host', h), ('queue', q, h)."""

    def __init__(self):
        self.left = {}           # (level key, name) -> remaining amount

    def set(self, level, name, total):
        self.left[(level, name)] = total

    def get(self, level, name):
        return self.left.get((level, name))

    def take(self, level, name, value):
        key = (level, name)
        if key in self.left:
            self.left[key] -= value

    def fits(self, level, name, value):
        left = self.left.get((level, name))
        return left is None or left >= value - 1e-9

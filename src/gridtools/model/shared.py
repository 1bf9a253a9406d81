"""One object for each distinct value of the job descriptions a daemon holds.

Thousands of pending jobs mostly repeat one another: the same owner, paths,
resource requests, environment of submission. ``canonical`` returns a copy of
a description whose strings, numbers, lists and mappings are shared with
every equal value seen before, so memory holds each distinct value once (and
the status snapshot, written with ``marshal``, writes it once). Shared values
must never be changed in place: a change makes a new description (as
``model.alteration`` does).
"""

import sys

#: most distinct lists and mappings remembered before the table starts again
LIMIT = 50_000

_TABLE = {}


def canonical(value):
    """``value`` with every part replaced by the one equal object already known."""
    return _canonical(value)[0]


def mapping(values):
    """A new mapping (its own: it may be changed or replaced) whose values are shared:
    a job description, or the facts of a job the status shows."""
    return {sys.intern(k) if type(k) is str else k: _canonical(v)[0] for k, v in values.items()}


def _canonical(value):
    """(the shared object equal to ``value``, a hashable key of it; None: not shared)."""
    kind = type(value)
    if kind is str:
        value = sys.intern(value)
        return value, value
    if kind is dict:
        parts = [(sys.intern(k) if type(k) is str else k, _canonical(v)) for k, v in value.items()]
        if any(part[1] is None for _k, part in parts):
            return {k: part[0] for k, part in parts}, None
        key = ("d",) + tuple((k, part[1]) for k, part in parts)
        return _known(key, lambda: {k: part[0] for k, part in parts}), key
    if kind is list:
        parts = [_canonical(v) for v in value]
        if any(part[1] is None for part in parts):
            return [part[0] for part in parts], None
        key = ("l",) + tuple(part[1] for part in parts)
        return _known(key, lambda: [part[0] for part in parts]), key
    if kind in (int, float, bool) or value is None:
        return value, (kind, value)         # (numbers are not worth a place in the table)
    if kind is tuple:
        parts = [_canonical(v) for v in value]
        if any(part[1] is None for part in parts):
            return value, None
        key = ("t",) + tuple(part[1] for part in parts)
        return _known(key, lambda: tuple(part[0] for part in parts)), key
    return value, None


def _known(key, make):
    try:
        found = _TABLE.get(key)
    except TypeError:                   # an unhashable part: not shared
        return make()
    if found is None:
        if len(_TABLE) >= LIMIT:
            _TABLE.clear()
        found = _TABLE[key] = make()
    return found

"""One object for each distinct value of the job descriptions a daemon holds.

Thousands of pending jobs mostly repeat one another: the same owner, paths,
resource requests, environment of submission. ``canonical`` returns a copy of
a description whose strings, numbers, lists and mappings are shared with
every equal value seen before, so memory holds each distinct value once (and
the status snapshot, written with ``marshal``, writes it once). Shared values
must never be changed in place: a change makes a new description (as
``model.alteration`` does).

``Description`` holds a job description in less than a tenth of a dict's room:
the order of its keys (one index for all descriptions with the same keys),
the values every alike job shares (one tuple for the jobs of a loop of
submits) and the few values each job has of its own (its id and submission
time). It reads as a mapping; ``dict(description)`` makes the plain mapping
for what writes or changes one.
"""

import sys
from _collections_abc import Mapping   # collections.abc's own: that package costs a command 1 ms more

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


#: the keys whose values each job has of its own (the rest are shared with alike jobs)
OWN_KEYS = ("id", "submit_time")
#: most key orders, and most objects made recently, remembered for sharing (see _recent)
RECENT_KEPT = 256

_INDEXES = {}       # key order -> {key: place; >= 0 in the shared values, < 0 (~place) in the own}
_RECENT_VALUES = {}     # values of recent descriptions -> the tuple of them
_RECENT_FACTS = {}      # keys and values of recent mappings made by ``alike`` -> the mapping


#: parts compared by value (of the same type): numbers are not made canonical
_BY_VALUE = (int, float, bool)


class _Same(tuple):
    """Parts that are equal when they are the same objects, or numbers of the same type
    and value (every other part is canonical already: equal parts are one object)."""

    __slots__ = ()

    def __hash__(self):
        return hash(tuple(v if type(v) in _BY_VALUE else id(v) for v in self))

    def __eq__(self, other):
        return len(self) == len(other) and all(
            a is b or (type(a) is type(b) and type(a) in _BY_VALUE and a == b) for a, b in zip(self, other))

    __ne__ = object.__ne__


def _recent(table, parts, make):
    """The object made of ``parts`` (a _Same) lately, else ``make()``, remembered. Only
    the last few are remembered: alike jobs come one after the other (a loop of
    submits, the job store read in id order), and a table of every distinct object
    would hold the unique ones too."""
    found = table.get(parts)
    if found is None:
        if len(table) >= RECENT_KEPT:
            table.clear()
        found = table[parts] = make()
    return found


def alike(values):
    """A mapping equal to ``values`` whose values are shared (as ``mapping`` makes), and
    one object for the equal mappings made recently (the facts of alike jobs)."""
    made = mapping(values)
    return _recent(_RECENT_FACTS, _Same(tuple(made) + tuple(made.values())), lambda: made)


def _index(keys):
    """{key: place} of a key order (see Description)."""
    index = _INDEXES.get(keys)
    if index is None:
        if len(_INDEXES) >= RECENT_KEPT:
            _INDEXES.clear()
        common = [k for k in keys if k not in OWN_KEYS]
        index = _INDEXES[keys] = {k: ~OWN_KEYS.index(k) if k in OWN_KEYS else common.index(k) for k in keys}
    return index


class Description(Mapping):
    """A job description: a read-only mapping over shared parts (see the module)."""

    __slots__ = ("_index", "_values", "_id", "_submitted")      # (the last two: OWN_KEYS)

    def __init__(self, values):
        keys = tuple(sys.intern(k) if type(k) is str else k for k in values)
        parts = [_canonical(v)[0] for v in values.values()]
        common = _Same(v for k, v in zip(keys, parts) if k not in OWN_KEYS)
        self._index = _index(keys)
        self._values = _recent(_RECENT_VALUES, common, lambda: common)
        self._id = values.get(OWN_KEYS[0])
        self._submitted = values.get(OWN_KEYS[1])

    def _own(self, place):
        return self._id if place == -1 else self._submitted

    def __getitem__(self, key):
        place = self._index[key]
        return self._values[place] if place >= 0 else self._own(place)

    def get(self, key, default=None):
        place = self._index.get(key)
        if place is None:
            return default
        return self._values[place] if place >= 0 else self._own(place)

    def __contains__(self, key):
        return key in self._index

    def __iter__(self):
        return iter(self._index)

    def __len__(self):
        return len(self._index)

    def __repr__(self):
        return f"Description({dict(self)!r})"

    def copy(self):
        """The plain mapping (its values still shared: replace them, never change them)."""
        return dict(self)

    def __reduce__(self):
        return Description, (dict(self),)


def description(values):
    """``values`` (a job description) as a Description."""
    return values if type(values) is Description else Description(values)

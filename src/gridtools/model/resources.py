"""Resources as the scheduler reasons about them: complex attributes and their values.

A complex attribute (complex(5)) has a type, a relation operator, whether
jobs may (or must) request it, whether it is consumed, a default amount and
an urgency. Values are held as numbers (seconds, bytes, counts; booleans as
1/0) for the numeric types and as text for the string types; a request
``name=value`` matches an offered value when ``requested RELOP offered``
holds (``h_vmem=2G`` with ``<=`` needs an offer of at least 2G). String
types compare with wildcard patterns: ``*``, ``?``, ``[...]``, alternatives
with ``|`` and negation with ``!``; CSTRING and HOST ignore case.
"""

import enum
import fnmatch
import functools
from dataclasses import dataclass

INFINITY = float("inf")


class CxType(enum.Enum):
    INT = "INT"
    DOUBLE = "DOUBLE"
    MEMORY = "MEMORY"
    TIME = "TIME"
    STRING = "STRING"
    CSTRING = "CSTRING"
    RESTRING = "RESTRING"
    HOST = "HOST"
    BOOL = "BOOL"

    @property
    def numeric(self):
        return self in _NUMERIC

    @property
    def folds_case(self):
        return self in (CxType.CSTRING, CxType.HOST)


_NUMERIC = frozenset({CxType.INT, CxType.DOUBLE, CxType.MEMORY, CxType.TIME, CxType.BOOL})


class Relop(enum.Enum):
    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    EXCL = "EXCL"

    def holds(self, left, right):
        """``left RELOP right`` for two numbers."""
        return _RELOPS[self](left, right)


_RELOPS = {
    Relop.EQ: lambda a, b: a == b, Relop.NE: lambda a, b: a != b,
    Relop.LT: lambda a, b: a < b, Relop.LE: lambda a, b: a <= b,
    Relop.GT: lambda a, b: a > b, Relop.GE: lambda a, b: a >= b,
    Relop.EXCL: lambda a, b: a == b,
}


class Requestable(enum.Enum):
    NO = "NO"
    YES = "YES"
    FORCED = "FORCED"


class Consumable(enum.Enum):
    NO = "NO"
    YES = "YES"        # each slot of a job holds the requested amount
    JOB = "JOB"        # the job as a whole holds it, on its master host


class PerJobInt(int):
    """A request's amount that the job as a whole holds, as of a consumable JOB, whatever
    the consumable's own kind (``per_job``)."""
    __slots__ = ()


class PerJobFloat(float):
    """``PerJobInt`` of a real amount."""
    __slots__ = ()


PER_JOB = (PerJobInt, PerJobFloat)


def per_job(value):
    """``value`` (a number) marked as an amount the job as a whole holds: a job
    description's ``per_job_requests`` (an HTCondor job's request_gpus, counted once for
    the job where Grid Engine counts a request once per slot)."""
    return PerJobInt(value) if isinstance(value, int) else PerJobFloat(value)


@dataclass(frozen=True, slots=True)
class Complex:
    """One complex attribute definition."""
    name: str
    shortcut: str
    type: CxType
    relop: Relop
    requestable: Requestable = Requestable.YES
    consumable: Consumable = Consumable.NO
    default: object = None          # parsed default amount (None: no default)
    urgency: float = 0.0

    @property
    def counted(self):
        """True for a consumable other than ``slots`` (which queue slot counts cover)."""
        return self.consumable is not Consumable.NO and self.name != "slots"


def pattern_match(pattern, offered, fold=False):
    """True when ``offered`` matches a Grid Engine string pattern (``a|b*|!c``): one of
    its alternatives, or does not match one of its negated ones."""
    if fold:
        pattern, offered = pattern.lower(), offered.lower()
    positive, negated = _compiled(pattern)
    if positive is not None and positive(offered) is not None:
        return True
    return any(match(offered) is None for match in negated)


def prepare(pattern, fold=False):
    """Compile ``pattern`` as ``pattern_match`` will use it (kept, as it keeps it) and
    return the seconds that took (next to none when it was kept already): the daemon
    charges them to the job's owner (``daemon.patterncost``)."""
    import time
    began = time.perf_counter()
    _compiled(pattern.lower() if fold else pattern)
    return time.perf_counter() - began


@functools.lru_cache(maxsize=1024)
def _compiled(pattern):
    """(the match of one expression for all of the pattern's plain alternatives, or None;
    the matches of its negated ones): a pattern is compiled once, not at every host
    and pass, and its alternatives are tried by the expression engine."""
    import re
    plain, negated = [], []
    for alt in pattern.split("|"):
        if alt.startswith("!"):
            negated.append(re.compile(fnmatch.translate(alt[1:])).match)
        else:
            plain.append(f"(?:{fnmatch.translate(alt)})")
    return (re.compile("|".join(plain)).match if plain else None), tuple(negated)


def satisfies(cx, requested, offered):
    """True when a request for ``cx`` is met by an offered value (both parsed)."""
    if cx.type in _NUMERIC:
        if not isinstance(offered, (int, float)) or not isinstance(requested, (int, float)):
            return False
        return _RELOPS[cx.relop](requested, offered)
    matched = pattern_match(str(requested), str(offered), cx.type.folds_case)
    return not matched if cx.relop is Relop.NE else matched


def crosses(cx, load, threshold):
    """True when a load value crosses a load or suspend threshold (``load RELOP threshold``)."""
    if not isinstance(load, (int, float)) or not isinstance(threshold, (int, float)):
        return False
    return cx.relop.holds(load, threshold)

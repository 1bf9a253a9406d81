"""Regular-expression matching with a time limit.

``re`` backtracks: a pattern such as ``^(a|aa)*$`` takes exponential time on a
target it does not match, and rewriting patterns cannot rule that out. But ``re``
looks for signals while it matches, so every match runs under an interval timer
(SIGALRM) set to what is left of the evaluation's ``budget.REGEX_SECONDS``; when it
fires the evaluation is over its budget (TooCostly) and its value is ERROR. Outside
the main thread no signal can be caught, and matching there is not stopped.

Whatever a match takes, in any thread, is charged to the evaluation as steps
(``budget.charge_seconds``): a pattern that backtracks for a tenth of a second costs
as many steps as a tenth of a second of evaluating does, so the evaluation's step
budget and the steps counted for the scheduler (``budget.steps_taken``) both see it.
"""

import _signal
from _signal import ITIMER_REAL, SIGALRM, setitimer
from _thread import get_ident
from time import monotonic

from gridtools.classad.budget import REGEX_SECONDS, TooCostly, charge_seconds, current_run


class _Expired(TooCostly):
    """The matching time of an evaluation is over."""


#: whether a timed match is going on (a signal that comes after it is let go)
_ARMED = [False]
#: the main thread's id, once _expire is SIGALRM's handler for good
_TIMING = []


def _expire(signum, frame):
    if _ARMED[0]:
        _ARMED[0] = False
        raise _Expired


def timed(match):
    """``match()`` (a call into ``re``) timed: TooCostly when what is left of the
    evaluation's REGEX_SECONDS runs out first (or, outside an evaluation, REGEX_SECONDS).
    The time it took is charged to the evaluation as steps (``budget.charge_seconds``).

    The first timed match of a process whose SIGALRM has its default action makes
    _expire its handler for good (a SIGALRM that comes while no match is timed is then
    let go); a program with a handler of its own has it put back after each match. A
    timer armed by the caller is put back too, less the time spent here. (``_signal``:
    the functions of ``signal`` without its enumerations, which cost microseconds.)"""
    run = current_run()
    allowance = run.regex_left if run is not None else REGEX_SECONDS
    if allowance <= 0:
        raise _Expired
    if _TIMING:
        if get_ident() != _TIMING[0]:
            return _charged(match, run)  # (another thread: no signal can be caught there)
        old_handler = None if _signal.getsignal(SIGALRM) is _expire else _signal.signal(SIGALRM, _expire)
    else:
        try:
            old_handler = _signal.signal(SIGALRM, _expire)
        except ValueError:              # not the main thread: no signal can be caught here
            return _charged(match, run)
        if old_handler == _signal.SIG_DFL:
            _TIMING.append(get_ident())
            old_handler = None
    began = monotonic()
    old_delay, old_interval = setitimer(ITIMER_REAL, allowance)
    if old_delay and old_delay < allowance:
        setitimer(ITIMER_REAL, old_delay)
    _ARMED[0] = True
    try:
        return match()
    finally:
        _ARMED[0] = False
        setitimer(ITIMER_REAL, 0)
        if old_handler is not None:
            _signal.signal(SIGALRM, old_handler)
        spent = monotonic() - began
        if run is not None:
            run.regex_left -= spent
        if old_delay:
            setitimer(ITIMER_REAL, max(old_delay - spent, 1e-6), old_interval)
        if run is not None:
            charge_seconds(run, spent)


def _charged(match, run):
    """``match()`` not timed (no signal can stop it here), its time charged all the same."""
    if run is None:
        return match()
    began = monotonic()
    try:
        return match()
    finally:
        charge_seconds(run, monotonic() - began)

"""An HTCondor job's own policy: what its expressions say at exit and periodically.

Pure decisions over job ads (HTCondor's user policy): at a task's exit,
``OnExitHold`` is looked at first (true: the task is held, HoldReasonCode 3
with ``OnExitHoldReason``/``OnExitHoldSubCode`` or a sentence naming the
expression), then ``OnExitRemove`` (false: it runs again); anything else
leaves the queue. Periodically, ``PeriodicHold`` for tasks neither held nor
completed, ``PeriodicRelease`` for held tasks not held by their owner (code
1), then ``PeriodicRemove``. An expression triggers only when it evaluates
to a true number or boolean; UNDEFINED and ERROR never do. The daemon
carries the decisions out (``daemon.apply``).
"""

import enum
from dataclasses import dataclass

from gridtools import ads

#: HoldReasonCode of holds made by the job's own expressions (JobPolicy)
HOLD_CODE_POLICY = 3
#: HoldReasonCode of holds made by the owner (UserRequest): PeriodicRelease leaves them
HOLD_CODE_USER = 1


class Action(enum.Enum):
    HOLD = "hold"
    RELEASE = "release"
    REMOVE = "remove"
    REQUEUE = "requeue"


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str = ""
    code: int = 0
    subcode: int = 0


def fires(ad, name):
    """True when attribute ``name`` of ``ad`` evaluates to a true number or boolean."""
    if name not in ad:
        return False
    value = ad.eval(name)
    return (isinstance(value, bool) and value) or \
        (not isinstance(value, bool) and isinstance(value, (int, float)) and value != 0)


def _why(ad, name):
    """(reason, subcode) of a policy that fired: the job's own words, else HTCondor's sentence."""
    reason = ad.eval(name + "Reason")
    subcode = ad.eval(name + "SubCode")
    subcode = int(subcode) if type(subcode) in (int, float) else 0
    if isinstance(reason, str) and reason:
        return reason, subcode
    text = ad.lookup(name).unparse(True)
    return f"The job attribute {name} expression '{text}' evaluated to TRUE", subcode


def with_exit(ad, result, completions, now):
    """The ad as the policy sees it when a task has just exited."""
    ad = ad.copy()
    status = int(result.get("exit_status", 0) or 0)
    sig = int(result.get("signal") or 0)
    ad["ExitBySignal"] = bool(sig)
    if sig:
        ad["ExitSignal"] = sig
        if "ExitCode" in ad:
            del ad["ExitCode"]
    else:
        ad["ExitCode"] = status
    ad["NumJobCompletions"] = completions
    ad["CompletionDate"] = int(result.get("end_time") or now)
    ad["CurrentTime"] = int(now)
    return ad


def at_exit(ad):
    """The Decision at a task's normal exit (``ad`` from ``with_exit``), or None: it leaves."""
    if fires(ad, "OnExitHold"):
        reason, subcode = _why(ad, "OnExitHold")
        return Decision(Action.HOLD, reason, HOLD_CODE_POLICY, subcode)
    if "OnExitRemove" in ad:
        value = ad.eval("OnExitRemove")
        if (isinstance(value, bool) and not value) or \
                (not isinstance(value, bool) and isinstance(value, (int, float)) and value == 0):
            return Decision(Action.REQUEUE, "The job attribute OnExitRemove expression "
                            f"'{ad.lookup('OnExitRemove').unparse(True)}' evaluated to FALSE")
    return None


def periodic(ad, now):
    """The Decision of the periodic expressions for one task's ad, or None."""
    ad = ad.copy()
    ad["CurrentTime"] = int(now)
    status = ad.eval("JobStatus")
    if status not in (ads.JobStatus.HELD, ads.JobStatus.COMPLETED, ads.JobStatus.REMOVED) \
            and fires(ad, "PeriodicHold"):
        reason, subcode = _why(ad, "PeriodicHold")
        return Decision(Action.HOLD, reason, HOLD_CODE_POLICY, subcode)
    if status == ads.JobStatus.HELD and ad.eval("HoldReasonCode") != HOLD_CODE_USER \
            and fires(ad, "PeriodicRelease"):
        return Decision(Action.RELEASE, "The job attribute PeriodicRelease expression '"
                        f"{ad.lookup('PeriodicRelease').unparse(True)}' evaluated to TRUE")
    if status != ads.JobStatus.REMOVED and fires(ad, "PeriodicRemove"):
        reason, _ = _why(ad, "PeriodicRemove")
        return Decision(Action.REMOVE, reason)
    return None


def has_periodic(ad):
    return any(name in ad for name in ("PeriodicHold", "PeriodicRelease", "PeriodicRemove"))


def interval(config_get):
    """PERIODIC_EXPR_INTERVAL in seconds (``config_get(NAME)``: expanded text or None)."""
    text = config_get("PERIODIC_EXPR_INTERVAL")
    try:
        return max(0.1, float(text)) if text is not None and text.strip() else 60.0
    except ValueError:
        return 60.0

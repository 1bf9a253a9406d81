"""An HTCondor job's own policy: what its expressions say at exit and periodically.

Pure decisions over job ads (HTCondor's user policy): at a task's exit, the
periodic expressions are looked at first, as HTCondor's shadow does (its
AnalyzePolicy in PERIODIC_THEN_EXIT mode): with the exit's ExitCode or
ExitSignal and ExitBySignal in the ad and JobStatus still running, the allowed
durations, then ``PeriodicHold`` and ``PeriodicRemove``, each followed by the
system's (no ``PeriodicVacate``, no ``PeriodicRelease`` of a running job); then
``OnExitHold`` (true: the task is held, HoldReasonCode 3 with
``OnExitHoldReason``/``OnExitHoldSubCode`` or a sentence naming the
expression), then ``OnExitRemove`` (false: it runs again); anything else
leaves the queue. Periodically, first a running task that ran longer than
its ``AllowedJobDuration`` (since it started) or ``AllowedExecuteDuration``
(since it began to execute, after its input files and prolog) is held, HoldReasonCode 46 or 47 with HTCondor's
"The job exceeded allowed job duration of 1:00:00"; then a running (or
suspended) task whose ``PeriodicVacate`` is true is vacated: evicted back to
the queue to run again, VacateReasonCode 1000 (JobPolicyVacate; 1001,
SystemPolicyVacate, for the system's); then a task whose ``TimerRemove`` time
has passed is removed, whatever its state (at an exit too: it leaves as removed),
and one whose ``TimerRemove`` is no number ends the evaluation: a running task is
held (at an exit too), HoldReasonCode 5 (JobPolicyUndefined), "... evaluated to
UNDEFINED", an idle or held one is left as it is, none of its other expressions looked at;
then ``PeriodicHold`` for tasks
neither held nor completed, ``PeriodicRelease`` for held tasks not held by
their owner (code 1) whose ``NumHolds`` is below SYSTEM_MAX_RELEASES, then
``PeriodicRemove``; after each of these the schedd's own (``SystemPolicy``:
condor_config's SYSTEM_PERIODIC_VACATE, _HOLD, _RELEASE and _REMOVE with
their _NAMES, _REASON and _SUBCODE), which applies to every job and holds
with HoldReasonCode 26 (SystemPolicy). An expression triggers only when it
evaluates to a number or boolean that is not 0 once read as HTCondor's schedd reads
it (``as_integer``: a real is cut to an integer, so 0.5 is 0 and does not trigger, and
an ``OnExitRemove`` of 0.5 keeps the job); UNDEFINED, ERROR and strings never do.
The daemon carries the decisions out (``daemon.apply``).
"""

import enum
import math
import time
from dataclasses import dataclass

from gridtools import ads

#: HoldReasonCode of holds made by the job's own expressions (JobPolicy)
HOLD_CODE_POLICY = 3
#: HoldReasonCode of a hold because a policy expression evaluated to no number (JobPolicyUndefined)
HOLD_CODE_POLICY_UNDEFINED = 5
#: HoldReasonCode of holds made by the owner (UserRequest): PeriodicRelease leaves them
HOLD_CODE_USER = 1
#: HoldReasonCode of a job that ran longer than its AllowedJobDuration (JobDurationExceeded)
HOLD_CODE_JOB_DURATION = 46
#: HoldReasonCode of a job that executed longer than its AllowedExecuteDuration (JobExecuteExceeded)
HOLD_CODE_EXECUTE_DURATION = 47
#: the job attributes that make a job's tasks looked at periodically
PERIODIC_ATTRS = ("PeriodicHold", "PeriodicRelease", "PeriodicRemove", "PeriodicVacate",
                  "AllowedJobDuration", "AllowedExecuteDuration", "TimerRemove")
#: VacateReasonCode of a task vacated by its own PeriodicVacate (JobPolicyVacate)
VACATE_CODE_POLICY = 1000
#: VacateReasonCode of a task vacated by SYSTEM_PERIODIC_VACATE (SystemPolicyVacate)
VACATE_CODE_SYSTEM = 1001


class Action(enum.Enum):
    HOLD = "hold"
    RELEASE = "release"
    REMOVE = "remove"
    REQUEUE = "requeue"
    VACATE = "vacate"


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str = ""
    code: int = 0
    subcode: int = 0


def fires(ad, name):
    """True when attribute ``name`` of ``ad`` evaluates to a value that fires (``_true``)."""
    return name in ad and _true(ad.eval(name))


def true(found):
    """True for a true boolean or a number other than 0, a real too (0.5 is true): how
    HTCondor reads an attribute it looks up as a boolean (LookupBool: LeaveJobInQueue,
    IsNoopJob, WantGracefulRemoval), unlike a policy expression (``_true``)."""
    if isinstance(found, bool):
        return found
    return isinstance(found, (int, float)) and found != 0


def as_integer(value):
    """A value as HTCondor reads a number of it (ClassAd IsNumber, EvalInteger): an
    integer as it is, a real cut toward 0 (0.5 is 0, -1.9 is -1), a boolean 1 or 0;
    None for anything else (a string, UNDEFINED, ERROR, a list). A real too large for an
    integer, or not a number, is the one integer its C cast gives (not 0)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and abs(value) < 2.0 ** 63:
            return int(value)
        return -(2 ** 63)
    return None


def _why(ad, name, value=None):
    """(reason, subcode) of a policy that fired: the job's own words, else HTCondor's sentence."""
    value = value or ad.eval
    reason = value(name + "Reason")
    subcode = as_integer(value(name + "SubCode")) or 0
    if isinstance(reason, str) and reason:
        return reason, subcode
    text = ad.lookup(name).unparse(True)
    return f"The job attribute {name} expression '{text}' evaluated to TRUE", subcode


def with_exit(ad, result, completions, now):
    """The ad as the policy sees it when a task has just exited."""
    ad = ad.copy()
    for name in ("ExitCode", "ExitSignal"):
        if name in ad:
            del ad[name]
    for name, value in exit_attrs(result).items():
        ad[name] = value
    ad["NumJobCompletions"] = completions
    ad["CompletionDate"] = int(result.get("end_time") or now)
    ad["CurrentTime"] = int(now)
    # (the shadow evaluates the policy before it tells the schedd the job ended)
    ad["JobStatus"] = int(ads.JobStatus.RUNNING)
    return ad


def exit_attrs(result):
    """The attributes an exit gives a job's ad, as HTCondor's shadow sets them: ExitBySignal,
    and ExitSignal (a death by a signal) or ExitCode (an exit, whatever its status)."""
    sig = int(result.get("signal") or 0)
    if sig:
        return {"ExitBySignal": True, "ExitSignal": sig}
    return {"ExitBySignal": False, "ExitCode": int(result.get("exit_status", 0) or 0)}


def at_exit(ad, value=None, now=None, system=None):
    """The Decision at a task's normal exit (``ad`` from ``with_exit``), or None: it leaves.
    ``value(name)`` evaluates an attribute of ``ad`` (``ad.eval`` when not given). The
    periodic expressions (the job's and the ``system`` policy's) are looked at first,
    at ``now`` (the ad's CurrentTime when not given): a hold, or a removal
    (Action.REMOVE), of theirs wins over the exit expressions."""
    if now is None:
        now = _number(ad, "CurrentTime")
        now = time.time() if now is None else now
    decision = periodic(ad, now, system or NO_SYSTEM_POLICY, exiting=True)
    if decision is not None:
        return decision
    value_of = value or ad.eval
    if "OnExitHold" in ad and _true(value_of("OnExitHold")):
        reason, subcode = _why(ad, "OnExitHold", value_of)
        return Decision(Action.HOLD, reason, HOLD_CODE_POLICY, subcode)
    # (as the schedd: OnExitRemove keeps the job only when it reads as the number 0; 0.5
    # does, while a string, UNDEFINED or ERROR lets it leave)
    if "OnExitRemove" in ad and as_integer(value_of("OnExitRemove")) == 0:
        return Decision(Action.REQUEUE, "The job attribute OnExitRemove expression "
                        f"'{ad.lookup('OnExitRemove').unparse(True)}' evaluated to FALSE")
    return None


def short_time(seconds):
    """A duration as HTCondor's short form: ``[D+]H:MM:SS`` without the leading zero
    fields, at least ``MM:SS`` (5 -> 00:05, 3600 -> 1:00:00, 90000 -> 1+01:00:00)."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    text = f"{days:3d}+{rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    at = 0
    while at < len(text) and text[at] in " 0+":
        at += 1
    return text[at + 1:] if text[at] == ":" else text[at:]


def _number(ad, name):
    value = ad.eval(name) if name in ad else None
    return int(value) if type(value) in (int, float) else None


def _over_duration(ad, now):
    """The hold of a running task that ran longer than its AllowedJobDuration (since its
    shadow started, HoldReasonCode 46) or AllowedExecuteDuration (since it began to
    execute, JobCurrentStartExecutingDate, 47), as HTCondor's user policy checks them
    before anything else; else None."""
    born = _number(ad, "ShadowBirthdate") or _number(ad, "JobCurrentStartDate")
    if born is None:
        return None
    allowed = _number(ad, "AllowedJobDuration")
    if allowed is not None and now - born >= allowed:
        return Decision(Action.HOLD, f"The job exceeded allowed job duration of {short_time(allowed)}",
                        HOLD_CODE_JOB_DURATION)
    # the execute duration counts from when the job began to execute (its files copied in,
    # the queue's prolog done): none while it has not, nor from a run before this one
    allowed = _number(ad, "AllowedExecuteDuration")
    began = _number(ad, "JobCurrentStartExecutingDate")
    if allowed is not None and began is not None and began >= born and now - began > allowed:
        return Decision(Action.HOLD, f"The job exceeded allowed execute duration of {short_time(allowed)}",
                        HOLD_CODE_EXECUTE_DURATION)
    return None


@dataclass(frozen=True)
class SystemRule:
    """One of condor_config's SYSTEM_PERIODIC_HOLD / _RELEASE / _REMOVE / _VACATE expressions (the
    nameless one or one of its ``_NAMES``), with its _REASON and _SUBCODE expressions."""
    knob: str               # SYSTEM_PERIODIC_HOLD (also for a named one: HTCondor's words)
    text: str               # the expression as configured
    expr: object
    reason: object = None
    subcode: object = None

    def fires(self, ad):
        return _true(self.expr.eval(ad))

    def why(self, ad):
        """(reason, subcode): its _REASON when that is a non-empty string, else HTCondor's
        sentence; its _SUBCODE when that is a number, else 0."""
        reason = self.reason.eval(ad) if self.reason is not None else None
        subcode = as_integer(self.subcode.eval(ad) if self.subcode is not None else None) or 0
        if not (isinstance(reason, str) and reason):
            reason = f"The system macro {self.knob} expression '{self.text}' evaluated to TRUE"
        return reason, subcode


@dataclass(frozen=True)
class SystemPolicy:
    """The schedd's policy for every job (condor_config); empty by default."""
    holds: tuple = ()
    releases: tuple = ()
    removes: tuple = ()
    vacates: tuple = ()
    #: SYSTEM_MAX_RELEASES: a held job whose NumHolds reached it is released by no
    #: periodic expression (None: no limit); it alone makes no policy to evaluate
    max_releases: object = None

    def __bool__(self):
        return bool(self.holds or self.releases or self.removes or self.vacates)


NO_SYSTEM_POLICY = SystemPolicy()
#: HoldReasonCode of holds made by SYSTEM_PERIODIC_HOLD (SystemPolicy)
HOLD_CODE_SYSTEM = 26


def system_policy(get, log=None):
    """The SystemPolicy of a configuration (``get(NAME)``: expanded text or None). An
    expression that does not parse is left out, and said so through ``log``."""
    from gridtools.classad import parse

    def expression(knob):
        text = (get(knob) or "").strip()
        if not text:
            return "", None
        try:
            return text, parse(text)
        except Exception as exc:  # noqa: BLE001 - any text that is no expression
            if log is not None:
                log(f"W|ignoring invalid {knob} expression : {text} ({exc})")
            return text, None

    def rules(base):
        found, seen = [], set()
        names = (get(base + "_NAMES") or "").replace(",", " ").split()
        for tag in [n for n in names if n.upper() != "NAMES"] + [None]:
            if tag is not None and tag.upper() in seen:
                continue
            knob = base if tag is None else f"{base}_{tag}"
            seen.add(tag.upper() if tag else None)
            text, expr = expression(knob)
            if expr is None or text.lower() == "false":
                continue
            reason = expression(knob + "_REASON")[1]
            subcode = expression(knob + "_SUBCODE")[1]
            found.append(SystemRule(base, text, expr, reason, subcode))
        return tuple(found)

    return SystemPolicy(rules("SYSTEM_PERIODIC_HOLD"), rules("SYSTEM_PERIODIC_RELEASE"),
                        rules("SYSTEM_PERIODIC_REMOVE"), rules("SYSTEM_PERIODIC_VACATE"),
                        _max_releases(get("SYSTEM_MAX_RELEASES")))


def _max_releases(text):
    """SYSTEM_MAX_RELEASES as a whole number, or None (unset, -1 or not a number: no limit)."""
    try:
        value = int((text or "").strip())
    except ValueError:
        return None
    return None if value == -1 else value


def _true(value):
    """Whether a value triggers a policy, as HTCondor's user policy decides it: it reads
    as a number (``as_integer``: true is 1, a real cut toward 0) that is not 0."""
    number = as_integer(value)
    return number is not None and number != 0


def _system(rules, ad):
    """(reason, subcode) of the first of ``rules`` that fires on ``ad``, or None."""
    for rule in rules:
        if rule.fires(ad):
            return rule.why(ad)
    return None


def _timer_remove(ad, now):
    """The removal of a task whose ``TimerRemove`` (an absolute Unix time, any expression of
    the job's ad that reads as a number, ``as_integer``) is before ``now``, as HTCondor's
    user policy checks it after the allowed durations and PeriodicVacate, before
    PeriodicHold, whatever the task's state (idle, held, running); else None. A value
    below 0 removes nothing. One that is no number (a string, UNDEFINED, ERROR) stops the
    evaluation, as HTCondor's AnalyzePolicy returns UNDEFINED_EVAL: the hold of
    ``_undefined`` (HoldReasonCode 5, JobPolicyUndefined), which the shadow of a running
    task makes and the schedd, for an idle or held one, does not (``periodic``)."""
    if "TimerRemove" not in ad:
        return None
    when = as_integer(ad.eval("TimerRemove"))
    if when is None:
        return _undefined(ad, "TimerRemove")
    if when < 0 or when >= int(now):
        return None
    return Decision(Action.REMOVE, "The job attribute TimerRemove expression "
                    f"'{ad.lookup('TimerRemove').unparse(True)}' evaluated to TRUE")


def _undefined(ad, name):
    """The hold of a job whose policy expression ``name`` did not evaluate to a number,
    in HTCondor's words and code (JobPolicyUndefined)."""
    return Decision(Action.HOLD, f"The job attribute {name} expression "
                    f"'{ad.lookup(name).unparse(True)}' evaluated to UNDEFINED",
                    HOLD_CODE_POLICY_UNDEFINED)


def periodic(ad, now, system=NO_SYSTEM_POLICY, exiting=False):
    """The Decision of the periodic expressions for one task's ad, or None. As HTCondor's
    schedd: the allowed durations, then PeriodicVacate (of a running or suspended task),
    TimerRemove (``_timer_remove``), then each of PeriodicHold, PeriodicRelease and
    PeriodicRemove, the job's own expression first, then the ``system`` policy's.
    ``exiting``: the task has just exited (``at_exit``), when HTCondor's shadow
    evaluates them all but PeriodicVacate."""
    ad = ad.copy()
    ad["CurrentTime"] = int(now)
    status = ad.eval("JobStatus")
    if status in (ads.JobStatus.RUNNING, ads.JobStatus.SUSPENDED):
        decision = _over_duration(ad, now)
        if decision is not None or exiting:
            return decision or _timer_remove(ad, now) or _hold_or_remove(ad, system)
        decision = _own_then_system(ad, "PeriodicVacate", system.vacates, Action.VACATE,
                                    VACATE_CODE_POLICY, VACATE_CODE_SYSTEM)
        if decision is not None:
            return decision
    if status != ads.JobStatus.REMOVED:
        decision = _timer_remove(ad, now)
        if decision is not None:
            # (a TimerRemove that is no number: the shadow holds a running task; the
            # schedd does nothing with an idle or held one, nor looks any further)
            if decision.code == HOLD_CODE_POLICY_UNDEFINED and \
                    status not in (ads.JobStatus.RUNNING, ads.JobStatus.SUSPENDED):
                return None
            return decision
    if status not in (ads.JobStatus.HELD, ads.JobStatus.COMPLETED, ads.JobStatus.REMOVED):
        decision = _own_then_system(ad, "PeriodicHold", system.holds, Action.HOLD,
                                    HOLD_CODE_POLICY, HOLD_CODE_SYSTEM)
        if decision is not None:
            return decision
    holds = _number(ad, "NumHolds") or 0
    if status == ads.JobStatus.HELD and ad.eval("HoldReasonCode") != HOLD_CODE_USER and \
            (system.max_releases is None or holds < system.max_releases):
        if fires(ad, "PeriodicRelease"):
            return Decision(Action.RELEASE, "The job attribute PeriodicRelease expression '"
                            f"{ad.lookup('PeriodicRelease').unparse(True)}' evaluated to TRUE")
        found = _system(system.releases, ad)
        if found is not None:
            return Decision(Action.RELEASE, found[0])
    if status != ads.JobStatus.REMOVED:
        if fires(ad, "PeriodicRemove"):
            reason, _ = _why(ad, "PeriodicRemove")
            return Decision(Action.REMOVE, reason)
        found = _system(system.removes, ad)
        if found is not None:
            return Decision(Action.REMOVE, found[0])
    return None


def _hold_or_remove(ad, system):
    """PeriodicHold, then PeriodicRemove, each followed by the ``system`` policy's: what
    is left of the periodic policy of a task that has just exited (it is running to HTCondor)."""
    decision = _own_then_system(ad, "PeriodicHold", system.holds, Action.HOLD,
                                HOLD_CODE_POLICY, HOLD_CODE_SYSTEM)
    if decision is not None:
        return decision
    if fires(ad, "PeriodicRemove"):
        return Decision(Action.REMOVE, _why(ad, "PeriodicRemove")[0])
    found = _system(system.removes, ad)
    return Decision(Action.REMOVE, found[0]) if found is not None else None


def _own_then_system(ad, attr, rules, action, own_code, system_code):
    """The job's own expression ``attr`` (its reason and subcode, ``own_code``), else the
    first of the system's ``rules`` that fires (``system_code``); None when none does."""
    if fires(ad, attr):
        reason, subcode = _why(ad, attr)
        return Decision(action, reason, own_code, subcode)
    found = _system(rules, ad)
    if found is not None:
        return Decision(action, found[0], system_code, found[1])
    return None


def has_periodic(ad):
    return any(name in ad for name in PERIODIC_ATTRS)


def interval(config_get):
    """PERIODIC_EXPR_INTERVAL in seconds (``config_get(NAME)``: expanded text or None)."""
    text = config_get("PERIODIC_EXPR_INTERVAL")
    try:
        return max(0.1, float(text)) if text is not None and text.strip() else 60.0
    except ValueError:
        return 60.0

"""The startd's state and activity machine for one slot, as a pure function.

A slot is in a *state* (Owner, Unclaimed, Matched, Claimed, Preempting) and,
within it, an *activity* (Idle, Busy, Suspended, Retiring, Vacating,
Killing). ``step(slot, machine, job, policy, now, event)`` returns the next
state and activity, what to do to the job (suspend, continue, vacate with
its kill signal, kill), why, and when to look again. Protocol events move
the slot (a match, a claim, a job starting or exiting, a release, a vacate
request, a preempting claim); without an event the policy expressions are
evaluated, with the slot ad (``machine``, its State, Activity and timers
set to the slot's) as MY and the claim's job ad as TARGET:

- Owner -> Unclaimed when the machine is not its owner's: IS_OWNER is
  false (by default: START, evaluated without a job, is not false);
  Unclaimed -> Owner when it is; Matched -> Owner after MATCH_TIMEOUT or
  when it is the owner's.
- Claimed/Busy -> Claimed/Suspended (suspend) when WANT_SUSPEND and
  SUSPEND are true; otherwise, when PREEMPT is true, the claim retires
  (Claimed/Retiring) and, once MaxJobRetirementTime has passed (at once by
  default), the slot enters Preempting.
- Claimed/Suspended -> Preempting when PREEMPT is true, else
  Claimed/Busy (continue) when CONTINUE is true.
- Claimed/Idle -> Preempting when the machine is the owner's.
- Preempting: Vacating (vacate: the job's KillSig, SIGTERM by default) when
  WANT_VACATE is true, else Killing (kill). When PREEMPT brought the slot
  there and WANT_HOLD is true then, the job is put on hold as it goes
  (``Step.hold``: WANT_HOLD_REASON, else HTCondor's own words, and
  WANT_HOLD_SUBCODE; hold code 21, the startd's). Vacating -> Killing when KILL
  is true; Killing gives up after KILLING_TIMEOUT (kill again). When the
  job is gone the slot returns to Owner (its owner came back) or to
  Claimed/Idle (it was preempted for a better match).

Claimed/Busy is also where a job is asked to checkpoint: at condor_checkpoint
(the CHECKPOINT event) and, at a poll that changes nothing else, when
PERIODIC_CHECKPOINT is true (checkpoint: the job's checkpoint signal, which
its starter sends only to a job that asked for one). Neither changes the
state; the slot remembers when (``last_checkpoint``, the slot ad's
LastPeriodicCheckpoint) until its job is gone.

A slot running a vanilla job uses ``<NAME>_VANILLA`` expressions where they
are set. Transitions that follow at once are taken in the same step (a
slot whose job is gone goes on from Preempting to Owner and, if the owner
lets it, to Unclaimed); ``Step.path`` lists the states passed through.
"""

import enum
from dataclasses import dataclass, replace

from gridtools.ads import SlotView, with_view
from gridtools.classad import parse
from gridtools.classad.nodes import Literal
from gridtools.classad.values import truth


class State(enum.Enum):
    OWNER = "Owner"
    UNCLAIMED = "Unclaimed"
    MATCHED = "Matched"
    CLAIMED = "Claimed"
    PREEMPTING = "Preempting"


class Activity(enum.Enum):
    IDLE = "Idle"
    BUSY = "Busy"
    SUSPENDED = "Suspended"
    RETIRING = "Retiring"
    VACATING = "Vacating"
    KILLING = "Killing"


class Event(enum.Enum):
    NONE = "none"                  # a periodic evaluation of the policy
    MATCH = "match"                # the negotiator matched the slot
    CLAIM = "claim"                # the submit side claimed it
    ACTIVATE = "activate"          # a job started on the claim
    JOB_EXIT = "job_exit"          # the job (its starter) is gone
    RELEASE = "release"            # the submit side gave the claim up
    VACATE = "vacate"              # condor_vacate
    VACATE_FAST = "vacate_fast"    # condor_vacate -fast
    PREEMPT_CLAIM = "preempt"      # a better match (rank or user priority) wants the slot
    CHECKPOINT = "checkpoint"      # condor_checkpoint


class Action(enum.Enum):
    SUSPEND = "suspend"
    CONTINUE = "continue"
    VACATE = "vacate"              # ask the job to leave: its soft kill signal
    KILL = "kill"                  # SIGKILL
    CHECKPOINT = "checkpoint"      # ask the job to checkpoint and go on (its checkpoint signal)


#: the policy knobs and their defaults (condor_config(5)); None: see ``Policy.is_owner``
DEFAULTS = {
    "START": "true", "SUSPEND": "false", "CONTINUE": "true", "PREEMPT": "false",
    "KILL": "false", "WANT_SUSPEND": "true", "WANT_VACATE": "true", "IS_OWNER": None,
    "MAXJOBRETIREMENTTIME": "0", "PERIODIC_CHECKPOINT": "false",
    "WANT_HOLD": "false", "WANT_HOLD_REASON": None, "WANT_HOLD_SUBCODE": None,
}
#: HTCondor's HoldReasonCode of a job the startd's WANT_HOLD put on hold
HOLD_CODE_STARTD = 21
#: seconds a Matched slot waits for its claim (MATCH_TIMEOUT)
MATCH_TIMEOUT = 120.0
#: seconds a Killing slot waits for its job to go (KILLING_TIMEOUT)
KILLING_TIMEOUT = 30.0
#: seconds between evaluations of a claimed slot (POLLING_INTERVAL)
POLLING_INTERVAL = 5.0
#: seconds between evaluations of an unclaimed or owned slot (UPDATE_INTERVAL)
UPDATE_INTERVAL = 300.0
#: the signal that vacates a job that names none (its KillSig)
DEFAULT_KILL_SIG = "SIGTERM"
#: HTCondor's JobUniverse of vanilla jobs (whose policy may have _VANILLA variants)
VANILLA = 5
#: the most transitions taken in one step
MAX_CHAIN = 8
#: actions after which a step ends (the policy is evaluated again at the next poll)
_SETTLING = ("suspend", "continue")


def _policy_expr(text):
    """The expression of a policy knob's text; one whose text does not parse is the
    ClassAd ``error`` (a START that does not parse matches no job), never an exception
    that would cut every pass short."""
    from gridtools.classad import ClassAdSyntaxError
    try:
        return parse(text)
    except (ClassAdSyntaxError, ValueError, RecursionError):
        return parse("error")


@dataclass(frozen=True, slots=True)
class Policy:
    """The startd policy of a host: expressions by knob name, and its timers."""
    exprs: tuple = ()                    # ((NAME, Expr), ...), NAME upper-case, _VANILLA variants too
    match_timeout: float = MATCH_TIMEOUT
    killing_timeout: float = KILLING_TIMEOUT
    polling_interval: float = POLLING_INTERVAL
    update_interval: float = UPDATE_INTERVAL

    @classmethod
    def from_config(cls, config):
        """The policy of a condor_config (``config.get(NAME)``: expanded text or None)."""
        found = []
        for name in DEFAULTS:
            for key in (name, name + "_VANILLA"):
                text = config.get(key)
                if text is not None and text.strip():
                    found.append((key, _policy_expr(text)))
        return cls(tuple(found), _seconds(config.get("MATCH_TIMEOUT"), MATCH_TIMEOUT),
                   _seconds(config.get("KILLING_TIMEOUT"), KILLING_TIMEOUT),
                   _seconds(config.get("POLLING_INTERVAL"), POLLING_INTERVAL),
                   _seconds(config.get("UPDATE_INTERVAL"), UPDATE_INTERVAL))

    def expr(self, name, vanilla):
        table = dict(self.exprs)
        if vanilla and name + "_VANILLA" in table:
            return table[name + "_VANILLA"]
        if name in table:
            return table[name]
        default = DEFAULTS.get(name)
        return parse(default) if default is not None else None


@dataclass(frozen=True, slots=True)
class Slot:
    """What the startd remembers of one slot."""
    state: State = State.OWNER
    activity: Activity = Activity.IDLE
    entered_state: float = 0.0
    entered_activity: float = 0.0
    job_start: float = 0.0               # when the claim's job started (0: no job)
    preempt_was_true: bool = False       # PREEMPT fired: the claim is retiring for good
    preempting_claim: bool = False       # a better match waits for the slot
    destination: State = State.OWNER     # where Preempting leads once the job is gone
    last_checkpoint: float = 0.0         # when its job was last asked to checkpoint (0: never)

    @property
    def view(self):
        return SlotView(self.state.value, self.activity.value, self.entered_state, self.entered_activity,
                        self.last_checkpoint)


@dataclass(frozen=True, slots=True)
class Step:
    """The outcome of one evaluation."""
    slot: Slot
    actions: tuple = ()                  # Action, in order
    signal: str = ""                     # the signal of a VACATE action
    reason: str = ""                     # why the step's first transition happened
    next_check: float = 0.0              # when to evaluate again (absolute time)
    path: tuple = ()                     # (State, Activity) passed through, the last is the slot's
    hold: tuple = ()                     # (reason, subcode): the job leaves on hold (WANT_HOLD)


def step(slot, machine, job, policy, now, event=Event.NONE):
    """The next state of ``slot`` (see the module docstring)."""
    ctx = _Context(machine, job, policy, now)
    if event is Event.CHECKPOINT:
        return Step(_checkpoint(ctx, slot), tuple(ctx.actions), "", "", _next_check(ctx, slot), (), ())
    moved, reason = _on_event(ctx, slot, event) if event is not Event.NONE else (None, "")
    current = moved or slot
    path = [(current.state, current.activity)] if moved else []
    for _ in range(MAX_CHAIN):
        before = len(ctx.actions)
        nxt, why = _evaluate(ctx, current)
        if nxt is None:
            break
        current, reason = nxt, reason or why
        path.append((current.state, current.activity))
        if any(a.value in _SETTLING for a in ctx.actions[before:]):
            break                       # a suspend or continue is looked at again next poll
    if event is Event.NONE and not ctx.actions and ctx.truth("PERIODIC_CHECKPOINT", current):
        current = _checkpoint(ctx, current)
    return Step(current, tuple(ctx.actions), ctx.signal, reason, _next_check(ctx, current), tuple(path),
                ctx.hold)


class _Context:
    """One step's inputs and the actions it collects."""

    def __init__(self, machine, job, policy, now):
        self.machine, self.job, self.policy, self.now = machine, job, policy, now
        self.vanilla = job is not None and job.eval("JobUniverse") == VANILLA
        self.actions, self.signal, self.hold = [], "", ()
        self._viewed = None             # (SlotView, the machine ad seen in it)

    def seen(self, slot):
        """The machine ad in the slot's state and activity (made once per view)."""
        view = slot.view
        if self._viewed is None or self._viewed[0] != view:
            self._viewed = (view, with_view(self.machine, view))
        return self._viewed[1]

    def value(self, expr, slot, with_job=True):
        """The value of ``expr`` (a constant needs no ad to be worked out)."""
        if expr.__class__ is Literal:
            return expr.value
        return expr.eval(self.seen(slot), self.job if with_job else None)

    def truth(self, name, slot, with_job=True):
        """True, False or None (undefined or not a boolean) of a policy expression."""
        expr = self.policy.expr(name, self.vanilla and with_job)
        if expr is None:
            return None
        return truth(self.value(expr, slot, with_job))

    def number(self, name, slot):
        expr = self.policy.expr(name, self.vanilla)
        value = self.value(expr, slot) if expr is not None else 0
        return value if type(value) in (int, float) else 0

    def act(self, action, signal=""):
        self.actions.append(action)
        if signal:
            self.signal = signal


def _moved(slot, now, state=None, activity=Activity.IDLE, **changes):
    """``slot`` in a new state and/or activity entered at ``now``."""
    state = slot.state if state is None else state
    entered_state = now if state is not slot.state else slot.entered_state
    return replace(slot, state=state, activity=activity, entered_state=entered_state,
                   entered_activity=now, **changes)


# ---------------------------------------------------------------- protocol events

def _on_event(ctx, slot, event):
    now, state, act = ctx.now, slot.state, slot.activity
    if event is Event.MATCH and state is State.UNCLAIMED:
        return _moved(slot, now, State.MATCHED), "matched by the negotiator"
    if event is Event.CLAIM and state in (State.UNCLAIMED, State.MATCHED):
        return _claimed(slot, now), "claimed"
    if event is Event.ACTIVATE and state is State.CLAIMED and act is Activity.IDLE:
        return _moved(slot, now, activity=Activity.BUSY, job_start=now), "job started"
    if event is Event.JOB_EXIT:
        return _job_gone(slot, now)
    if state is not State.CLAIMED:
        return None, ""
    if event is Event.RELEASE:
        return _preempt(ctx, replace(slot, destination=State.OWNER), "claim released"), "claim released"
    if event in (Event.VACATE, Event.VACATE_FAST):
        fast = event is Event.VACATE_FAST
        return _preempt(ctx, replace(slot, destination=State.OWNER), "vacate requested", kill=fast), \
            "vacate requested"
    if event is Event.PREEMPT_CLAIM:
        slot = replace(slot, preempting_claim=True, destination=State.CLAIMED)
        if act is Activity.IDLE:
            return _preempt(ctx, slot, "preempting idle claim"), "preempting idle claim"
        return _moved(slot, now, activity=Activity.RETIRING), "retiring due to preempting claim"
    return None, ""


def _checkpoint(ctx, slot):
    """A checkpoint asked for (condor_checkpoint, PERIODIC_CHECKPOINT): only a slot in
    Claimed/Busy with a job asks its job; the slot stays, noting when."""
    if slot.state is not State.CLAIMED or slot.activity is not Activity.BUSY or ctx.job is None:
        return slot
    ctx.act(Action.CHECKPOINT)
    return replace(slot, last_checkpoint=ctx.now)


def _claimed(slot, now):
    return _moved(slot, now, State.CLAIMED, job_start=0.0, preempt_was_true=False,
                  preempting_claim=False, destination=State.OWNER, last_checkpoint=0.0)


def _job_gone(slot, now):
    if slot.state is State.PREEMPTING:
        return _arrive(slot, now), "the job is gone"
    if slot.state is State.CLAIMED and slot.activity is not Activity.IDLE:
        if slot.preempt_was_true or slot.preempting_claim:
            return _arrive(slot, now), "the job is gone"
        return _moved(slot, now, activity=Activity.IDLE, job_start=0.0, last_checkpoint=0.0), "the job exited"
    return None, ""


def _arrive(slot, now):
    """Leave Preempting (or a retiring claim) for its destination."""
    if slot.destination is State.CLAIMED:
        return _claimed(slot, now)
    return _moved(slot, now, State.OWNER, job_start=0.0, preempt_was_true=False,
                  preempting_claim=False, last_checkpoint=0.0)


def _preempt(ctx, slot, why, kill=False):
    """Enter Preempting: vacate the job politely if WANT_VACATE allows, else kill it."""
    now = ctx.now
    if slot.job_start == 0 or ctx.job is None:            # no job on the claim: nothing to stop
        return _arrive(slot, now)
    if slot.preempt_was_true and ctx.truth("WANT_HOLD", slot):
        ctx.hold = _hold(ctx, slot)
    vacate = not kill and (slot.preempting_claim or ctx.truth("WANT_VACATE", slot) is not False)
    if vacate:
        ctx.act(Action.VACATE, _kill_sig(ctx.job))
        return _moved(slot, now, State.PREEMPTING, Activity.VACATING)
    ctx.act(Action.KILL)
    return _moved(slot, now, State.PREEMPTING, Activity.KILLING)


def _hold(ctx, slot):
    """(reason, subcode) of a job WANT_HOLD puts on hold: WANT_HOLD_REASON's string (else
    the words HTCondor's startd says then) and WANT_HOLD_SUBCODE's integer (else 0)."""
    expr = ctx.policy.expr("WANT_HOLD_REASON", ctx.vanilla)
    reason = ctx.value(expr, slot) if expr is not None else None
    if not isinstance(reason, str) or not reason:
        said = ctx.policy.expr("WANT_HOLD", ctx.vanilla)
        reason = "The startd put this job on hold.  (At preemption time, WANT_HOLD evaluated to true: " \
                 f"WANT_HOLD = {said.unparse()})"
    expr = ctx.policy.expr("WANT_HOLD_SUBCODE", ctx.vanilla)
    subcode = ctx.value(expr, slot) if expr is not None else None
    if type(subcode) is float and subcode == subcode and abs(subcode) != float("inf"):
        subcode = int(subcode)
    return reason, subcode if type(subcode) is int else 0


def _kill_sig(job):
    value = job.eval("KillSig") if job is not None else None
    if isinstance(value, str) and value.strip():
        return value.strip()
    if type(value) is int:
        return str(value)
    return DEFAULT_KILL_SIG


# ---------------------------------------------------------------- policy evaluation

def _evaluate(ctx, slot):
    """(next slot, reason) from the policy, or (None, "") when the slot stays."""
    handler = _HANDLERS.get(slot.state)
    return handler(ctx, slot) if handler else (None, "")


def _is_owner(ctx, slot):
    """IS_OWNER, or by default: START evaluated without a job is false."""
    if ctx.policy.expr("IS_OWNER", False) is not None:
        return ctx.truth("IS_OWNER", slot, with_job=False) is True
    start = ctx.machine.lookup("Start") or ctx.policy.expr("START", False)
    return ctx.value(start, slot, with_job=False) is False


def _owner(ctx, slot):
    if not _is_owner(ctx, slot):
        return _moved(slot, ctx.now, State.UNCLAIMED), "START is not false"
    return None, ""


def _unclaimed(ctx, slot):
    if _is_owner(ctx, slot):
        return _moved(slot, ctx.now, State.OWNER), "START is false"
    return None, ""


def _matched(ctx, slot):
    if ctx.now - slot.entered_state >= ctx.policy.match_timeout:
        return _moved(slot, ctx.now, State.OWNER), "match timed out"
    if _is_owner(ctx, slot):
        return _moved(slot, ctx.now, State.OWNER), "START is false"
    return None, ""


def _claimed_state(ctx, slot):
    act = slot.activity
    if act is Activity.IDLE:
        if _is_owner(ctx, slot):
            return _preempt(ctx, replace(slot, destination=State.OWNER), ""), "START is false"
        return None, ""
    if act in (Activity.BUSY, Activity.RETIRING):
        return _busy(ctx, slot)
    if act is Activity.SUSPENDED:
        return _suspended(ctx, slot)
    return None, ""


def _busy(ctx, slot):
    if ctx.truth("WANT_SUSPEND", slot) and ctx.truth("SUSPEND", slot):
        ctx.act(Action.SUSPEND)
        return _moved(slot, ctx.now, activity=Activity.SUSPENDED), "SUSPEND is true"
    if slot.activity is Activity.BUSY and ctx.truth("PREEMPT", slot):
        retiring = _moved(slot, ctx.now, activity=Activity.RETIRING, preempt_was_true=True,
                          destination=State.OWNER)
        return retiring, "PREEMPT is true"
    if slot.activity is Activity.RETIRING and _retirement_over(ctx, slot):
        return _preempt(ctx, slot, ""), "retirement ended"
    return None, ""


def _suspended(ctx, slot):
    if not slot.preempt_was_true and ctx.truth("PREEMPT", slot):
        nxt = replace(slot, preempt_was_true=True, destination=State.OWNER)
        if _retirement_over(ctx, nxt):
            return _preempt(ctx, nxt, ""), "PREEMPT is true"
        return nxt, "PREEMPT is true"
    if ctx.truth("CONTINUE", slot):
        ctx.act(Action.CONTINUE)
        retiring = slot.preempt_was_true or slot.preempting_claim
        return _moved(slot, ctx.now, activity=Activity.RETIRING if retiring else Activity.BUSY), \
            "CONTINUE is true"
    if (slot.preempt_was_true or slot.preempting_claim) and _retirement_over(ctx, slot):
        return _preempt(ctx, slot, ""), "retirement ended"
    return None, ""


def _retirement(ctx, slot):
    """Seconds of retirement a job may use: the slot's MaxJobRetirementTime, or the
    job's own when it asks for less."""
    granted = ctx.number("MAXJOBRETIREMENTTIME", slot)
    if ctx.job is not None:
        own = ctx.job.eval("MaxJobRetirementTime", ctx.seen(slot))
        if type(own) in (int, float) and own < granted:
            granted = own
    return granted


def _retirement_over(ctx, slot):
    return ctx.now - slot.job_start >= _retirement(ctx, slot)


def _preempting(ctx, slot):
    if slot.activity is Activity.VACATING and ctx.truth("KILL", slot):
        ctx.act(Action.KILL)
        return _moved(slot, ctx.now, activity=Activity.KILLING), "KILL is true"
    if slot.activity is Activity.KILLING and ctx.now - slot.entered_activity >= ctx.policy.killing_timeout:
        ctx.act(Action.KILL)
        if ctx.job is not None:         # the slot stays Preempting until its job is gone
            return _moved(slot, ctx.now, activity=Activity.KILLING), "KILLING_TIMEOUT expired"
        return _arrive(slot, ctx.now), "KILLING_TIMEOUT expired"
    return None, ""


_HANDLERS = {State.OWNER: _owner, State.UNCLAIMED: _unclaimed, State.MATCHED: _matched,
             State.CLAIMED: _claimed_state, State.PREEMPTING: _preempting}


def _next_check(ctx, slot):
    """When the slot's policy should be evaluated again."""
    p, now = ctx.policy, ctx.now
    if slot.state in (State.OWNER, State.UNCLAIMED):
        return now + p.update_interval
    times = [now + p.polling_interval]
    if slot.state is State.MATCHED:
        times.append(slot.entered_state + p.match_timeout)
    if slot.activity is Activity.KILLING:
        times.append(slot.entered_activity + p.killing_timeout)
    if slot.activity is Activity.RETIRING:
        times.append(slot.job_start + _retirement(ctx, slot))
    return max(now, min(times))


def _seconds(text, default):
    try:
        return float(text) if text is not None and str(text).strip() else default
    except ValueError:
        return default

"""The startd's state and activity machine (seed 000) with the policies of seed 002."""

import pytest

from gridtools import ads
from gridtools.classad import ClassAd
from gridtools.formats import condor_params
from gridtools.formats.condor_config import Config
from gridtools.sched.startd import Action, Activity, Event, Policy, Slot, State, step
from condortools import DESKTOP

T0 = 1_700_000_000


def config(text, fallback=None):
    cfg = Config({}, fallback=fallback)
    cfg.read_text(text)
    return cfg


class Desk:
    """A one-slot desktop whose owner's keyboard and load change over time (``fallback``:
    the configuration's macros that no line sets)."""

    def __init__(self, text=DESKTOP, fallback=None):
        self.cfg = config(text, fallback)
        self.policy = Policy.from_config(self.cfg)
        self.job = ClassAd({"JobUniverse": 5, "Owner": "bob", "KillSig": "SIGTERM"})

    def machine(self, now, keyboard_idle, owner_load=0.0, job_load=1.0):
        host = ads.HostFacts("desk", cpus=1, memory=2048, disk=10**6, keyboard_idle=keyboard_idle,
                             load_avg=owner_load + job_load, condor_load_avg=job_load)
        return ads.machine_ads(host, self.cfg, now)[0]

    def step(self, slot, now, keyboard_idle, event=Event.NONE, owner_load=0.0, job=True):
        return step(slot, self.machine(now, keyboard_idle, owner_load), self.job if job else None,
                    self.policy, now, event)

    def running(self, now):
        """A slot that matched, was claimed and started the job at ``now``."""
        slot = self.step(Slot(entered_state=now, entered_activity=now), now, 1000, job=False).slot
        assert slot.state is State.UNCLAIMED
        for event in (Event.MATCH, Event.CLAIM, Event.ACTIVATE):
            slot = self.step(slot, now, 1000, event).slot
        assert (slot.state, slot.activity) == (State.CLAIMED, Activity.BUSY)
        return slot


def where(result):
    return result.slot.state.value, result.slot.activity.value


def test_desktop_suspends_when_the_owner_types_and_resumes_when_idle_again():
    desk = Desk()
    slot = desk.running(T0)
    r = desk.step(slot, T0 + 100, 400)
    assert where(r) == ("Claimed", "Busy") and r.actions == ()
    r = desk.step(r.slot, T0 + 110, 2)                     # the owner types
    assert where(r) == ("Claimed", "Suspended") and r.actions == (Action.SUSPEND,)
    assert r.reason == "SUSPEND is true"
    r = desk.step(r.slot, T0 + 200, 90)                    # idle, but not for 120 s yet
    assert where(r) == ("Claimed", "Suspended") and r.actions == ()
    r = desk.step(r.slot, T0 + 240, 130)
    assert where(r) == ("Claimed", "Busy") and r.actions == (Action.CONTINUE,)
    assert r.slot.entered_activity == T0 + 240 and r.slot.entered_state == T0


def test_desktop_load_from_the_owner_also_suspends():
    desk = Desk()
    r = desk.step(desk.running(T0), T0 + 50, 1000, owner_load=0.5)
    assert where(r) == ("Claimed", "Suspended")


def test_desktop_vacates_after_five_suspended_minutes_then_kills():
    desk = Desk()
    r = desk.step(desk.running(T0), T0 + 10, 1)
    assert where(r) == ("Claimed", "Suspended")
    r = desk.step(r.slot, T0 + 300, 5)                     # suspended 290 s: not yet
    assert where(r) == ("Claimed", "Suspended")
    r = desk.step(r.slot, T0 + 311, 5)
    assert where(r) == ("Preempting", "Vacating")
    assert r.actions == (Action.VACATE,) and r.signal == "SIGTERM" and r.reason == "PREEMPT is true"
    r = desk.step(r.slot, T0 + 600, 5)
    assert where(r) == ("Preempting", "Vacating")
    r = desk.step(r.slot, T0 + 612, 5)                     # vacating for more than 300 s
    assert where(r) == ("Preempting", "Killing") and r.actions == (Action.KILL,)
    gone = desk.step(r.slot, T0 + 615, 5, Event.JOB_EXIT)
    assert where(gone) == ("Owner", "Idle")                # the owner is still busy
    later = desk.step(gone.slot, T0 + 1000, 400, job=False)
    assert where(later) == ("Unclaimed", "Idle")


def test_owner_state_follows_start_evaluated_without_a_job():
    text = 'MINUTE = 60\nSTART = KeyboardIdle > 15 * $(MINUTE) {} Owner == "coltrane"\n'
    for op, expected in (("&&", "Owner"), ("||", "Unclaimed")):
        desk = Desk(text.format(op))
        r = desk.step(Slot(), T0, 34, job=False)           # FALSE || UNDEFINED is UNDEFINED
        assert r.slot.state.value == expected


def test_matched_slot_gives_up_after_match_timeout():
    desk = Desk("MATCH_TIMEOUT = 120\n")
    slot = desk.step(Slot(), T0, 1000, job=False).slot
    matched = desk.step(slot, T0, 1000, Event.MATCH, job=False)
    assert where(matched) == ("Matched", "Idle") and matched.next_check == T0 + 5
    assert desk.step(matched.slot, T0 + 119, 1000, job=False).slot.state is State.MATCHED
    r = desk.step(matched.slot, T0 + 120, 1000, job=False)
    assert r.path[0] == (State.OWNER, Activity.IDLE) and where(r) == ("Unclaimed", "Idle")


def test_want_vacate_false_kills_at_once_and_killing_timeout_gives_up():
    desk = Desk("PREEMPT = KeyboardIdle < 10\nWANT_VACATE = False\nKILLING_TIMEOUT = 20\n")
    r = desk.step(desk.running(T0), T0 + 30, 1)
    assert where(r) == ("Preempting", "Killing") and r.actions == (Action.KILL,)
    assert r.next_check == T0 + 30 + 5
    r2 = desk.step(r.slot, T0 + 49, 1)
    assert where(r2) == ("Preempting", "Killing")
    r3 = desk.step(r2.slot, T0 + 50, 1)
    assert r3.actions == (Action.KILL,) and r3.reason == "KILLING_TIMEOUT expired"
    # the job is still there: killed again, the slot stays Preempting until it is gone
    assert where(r3) == ("Preempting", "Killing") and r3.slot.entered_activity == T0 + 50
    gone = desk.step(r3.slot, T0 + 52, 1, Event.JOB_EXIT, job=False)
    assert gone.path[0] == (State.OWNER, Activity.IDLE)       # START is true: on to Unclaimed
    assert gone.slot.state is State.UNCLAIMED
    r4 = desk.step(r3.slot, T0 + 70, 1, job=False)            # gone without a word: leaves too
    assert r4.actions == (Action.KILL,) and r4.slot.state is State.UNCLAIMED


def test_max_job_retirement_time_lets_the_job_finish_first():
    desk = Desk("PREEMPT = KeyboardIdle < 10\nMaxJobRetirementTime = 600\n")
    r = desk.step(desk.running(T0), T0 + 100, 1)
    assert where(r) == ("Claimed", "Retiring") and r.next_check == T0 + 100 + 5
    assert desk.step(r.slot, T0 + 599, 1).slot.activity is Activity.RETIRING
    r = desk.step(r.slot, T0 + 600, 1)
    assert where(r) == ("Preempting", "Vacating")
    exited = desk.step(desk.step(desk.running(T0), T0 + 100, 1).slot, T0 + 200, 1, Event.JOB_EXIT)
    assert exited.path[0] == (State.OWNER, Activity.IDLE)  # a retiring claim ends with its job


#: HTCondor's HOLD_IF_MEMORY_EXCEEDED policy, written out
HOLD_IF_MEMORY = """MEMORY_EXCEEDED = (JobUniverse != 13 && MemoryUsage =!= UNDEFINED && MemoryUsage > Memory)
PREEMPT = $(MEMORY_EXCEEDED)
MAXJOBRETIREMENTTIME = ifthenelse($(MEMORY_EXCEEDED), -1, 0)
WANT_SUSPEND = $(MEMORY_EXCEEDED) =!= true
WANT_HOLD = (JobUniverse != 1 && $(MEMORY_EXCEEDED))
WANT_HOLD_SUBCODE = ifThenElse($(MEMORY_EXCEEDED), 102, UNDEFINED)
WANT_HOLD_REASON = ifThenElse($(MEMORY_EXCEEDED), "memory usage exceeded request_memory", UNDEFINED)
"""


def test_want_hold_puts_the_job_preempt_stops_on_hold_with_its_reason_and_subcode():
    desk = Desk(HOLD_IF_MEMORY)
    desk.job["MemoryUsage"] = 100
    slot = desk.running(T0)
    r = desk.step(slot, T0 + 10, 1000)
    assert where(r) == ("Claimed", "Busy") and r.hold == ()
    desk.job["MemoryUsage"] = 4096                          # more than the slot's 2048 MB
    r = desk.step(r.slot, T0 + 20, 1000)
    assert where(r) == ("Preempting", "Vacating") and r.actions == (Action.VACATE,)
    assert r.hold == ("memory usage exceeded request_memory", 102)
    assert r.path == ((State.CLAIMED, Activity.RETIRING), (State.PREEMPTING, Activity.VACATING))
    # without WANT_HOLD_REASON and WANT_HOLD_SUBCODE: HTCondor's own words, subcode 0
    plain = Desk("PREEMPT = KeyboardIdle < 10\nWANT_HOLD = KeyboardIdle < 5\nWANT_VACATE = false\n")
    r = plain.step(plain.running(T0), T0 + 30, 1)
    assert where(r) == ("Preempting", "Killing") and r.actions == (Action.KILL,)
    assert r.hold == ("The startd put this job on hold.  (At preemption time, WANT_HOLD evaluated to true: "
                      "WANT_HOLD = KeyboardIdle < 5)", 0)
    # WANT_HOLD false when PREEMPT fires: vacated, not held
    assert plain.step(plain.running(T0), T0 + 30, 7).hold == ()
    # a preemption PREEMPT did not start (a better match) never holds
    r = plain.step(plain.running(T0), T0 + 30, 1000, Event.PREEMPT_CLAIM)
    assert r.hold == () and where(r) == ("Preempting", "Vacating")


def test_htcondor_s_desktop_policy_metaknob_suspends_for_the_owner_and_continues(monkeypatch):
    """``use POLICY : DESKTOP``: a job starts only after 15 idle minutes, is suspended
    when the owner types, continues once the keyboard has been idle for 5 minutes, and
    is vacated after 10 suspended minutes. (Its expressions read the clock with time():
    the ClassAd functions' clock follows the steps' times.)"""
    from gridtools.classad import functions
    clock = [T0]
    monkeypatch.setattr(functions, "_time", type("Clock", (), {"time": staticmethod(lambda: clock[0])}))

    def at(slot, now, keyboard_idle):
        clock[0] = now
        return desk.step(slot, now, keyboard_idle)
    desk = Desk("use POLICY : DESKTOP\n", fallback=condor_params.macro)
    assert desk.step(Slot(entered_state=T0, entered_activity=T0), T0, 600, job=False).slot.state is State.OWNER
    slot = desk.running(T0)                                 # (idle for 1000 s)
    r = at(slot, T0 + 30, 2)
    assert where(r) == ("Claimed", "Suspended") and r.actions == (Action.SUSPEND,)
    r = at(r.slot, T0 + 60, 200)
    assert where(r) == ("Claimed", "Suspended") and r.actions == ()
    r = at(r.slot, T0 + 400, 310)
    assert where(r) == ("Claimed", "Busy") and r.actions == (Action.CONTINUE,)
    r = at(at(r.slot, T0 + 410, 1).slot, T0 + 1011, 1)
    assert where(r) == ("Preempting", "Vacating") and r.reason == "PREEMPT is true"


def test_a_better_match_preempts_into_a_new_claim():
    desk = Desk("")
    r = desk.step(desk.running(T0), T0 + 50, 1000, Event.PREEMPT_CLAIM)
    assert where(r) == ("Preempting", "Vacating") and r.actions == (Action.VACATE,)
    assert r.reason == "retiring due to preempting claim"
    assert r.path == ((State.CLAIMED, Activity.RETIRING), (State.PREEMPTING, Activity.VACATING))
    done = desk.step(r.slot, T0 + 60, 1000, Event.JOB_EXIT)
    assert where(done) == ("Claimed", "Idle")


def test_job_exit_and_release():
    desk = Desk("")
    idle = desk.step(desk.running(T0), T0 + 5, 1000, Event.JOB_EXIT)
    assert where(idle) == ("Claimed", "Idle")
    released = desk.step(idle.slot, T0 + 6, 1000, Event.RELEASE, job=False)
    assert [s.value for s, _a in released.path] == ["Owner", "Unclaimed"]


def test_idle_claim_of_a_busy_desktop_returns_to_its_owner():
    desk = Desk()
    slot = desk.running(T0)
    idle = desk.step(slot, T0 + 5, 1000, Event.JOB_EXIT).slot
    r = desk.step(idle, T0 + 10, 3, job=False)             # START is false now
    assert r.slot.state is State.OWNER and r.actions == ()


def test_vanilla_expressions_win_for_vanilla_jobs():
    desk = Desk("SUSPEND = False\nSUSPEND_VANILLA = KeyboardIdle < 10\n")
    r = desk.step(desk.running(T0), T0 + 5, 1)
    assert where(r) == ("Claimed", "Suspended")
    desk.job["JobUniverse"] = 7
    r = desk.step(desk.running(T0), T0 + 5, 1)
    assert where(r) == ("Claimed", "Busy")


def test_vacate_commands():
    desk = Desk("")
    polite = desk.step(desk.running(T0), T0 + 5, 1000, Event.VACATE)
    assert where(polite) == ("Preempting", "Vacating") and polite.signal == "SIGTERM"
    desk.job["KillSig"] = "SIGUSR1"
    assert desk.step(desk.running(T0), T0 + 5, 1000, Event.VACATE).signal == "SIGUSR1"
    fast = desk.step(desk.running(T0), T0 + 5, 1000, Event.VACATE_FAST)
    assert where(fast) == ("Preempting", "Killing") and fast.actions == (Action.KILL,)


@pytest.mark.parametrize("state", [State.OWNER, State.UNCLAIMED])
def test_idle_slots_are_looked_at_every_update_interval(state):
    desk = Desk("UPDATE_INTERVAL = 60\nSTART = KeyboardIdle > 100\n")
    idle = 1000 if state is State.UNCLAIMED else 5
    r = desk.step(Slot(state), T0, idle, job=False)
    assert r.slot.state is state and r.next_check == T0 + 60


# ---------------------------------------------------------------- checkpoints

def test_condor_checkpoint_asks_a_busy_job_and_changes_no_state():
    desk = Desk("")
    slot = desk.running(T0)
    r = desk.step(slot, T0 + 60, 1000, Event.CHECKPOINT)
    assert where(r) == ("Claimed", "Busy") and r.actions == (Action.CHECKPOINT,)
    assert r.path == () and r.slot.entered_activity == T0 and r.slot.last_checkpoint == T0 + 60
    assert desk.machine(T0 + 61, 1000).lookup("LastPeriodicCheckpoint") is None
    seen = ads.with_view(desk.machine(T0 + 61, 1000), r.slot.view)
    assert seen.eval("LastPeriodicCheckpoint") == T0 + 60
    gone = desk.step(r.slot, T0 + 70, 1000, Event.JOB_EXIT)        # the job exits: forgotten
    assert where(gone) == ("Claimed", "Idle") and gone.slot.last_checkpoint == 0.0
    assert "LastPeriodicCheckpoint" not in ads.with_view(desk.machine(T0 + 71, 1000), gone.slot.view)


def test_condor_checkpoint_of_a_slot_without_a_busy_job_does_nothing():
    desk = Desk()
    slot = desk.running(T0)
    suspended = desk.step(slot, T0 + 10, 1).slot
    assert suspended.activity is Activity.SUSPENDED
    for state, job in ((suspended, True), (Slot(), False), (slot, False)):
        r = desk.step(state, T0 + 20, 1000, Event.CHECKPOINT, job=job)
        assert r.actions == () and r.slot == state


def test_periodic_checkpoint_fires_at_a_poll_when_true_and_reads_the_last_one():
    desk = Desk("PERIODIC_CHECKPOINT = (CurrentTime - JobStart) > 600 && "
                "(LastPeriodicCheckpoint =?= undefined || (CurrentTime - LastPeriodicCheckpoint) > 600)\n")
    slot = desk.running(T0)
    r = desk.step(slot, T0 + 300, 1000)
    assert r.actions == ()
    machine = ads.with_view(desk.machine(T0 + 700, 1000), slot.view)
    machine["JobStart"] = T0
    r = step(slot, machine, desk.job, desk.policy, T0 + 700)
    assert r.actions == (Action.CHECKPOINT,) and r.slot.last_checkpoint == T0 + 700 and r.path == ()
    machine = ads.with_view(desk.machine(T0 + 1000, 1000), r.slot.view)
    machine["JobStart"] = T0
    again = step(r.slot, machine, desk.job, desk.policy, T0 + 1000)    # 300 s after the last
    assert again.actions == () and again.slot.last_checkpoint == T0 + 700


def test_periodic_checkpoint_waits_for_other_actions_of_the_poll():
    desk = Desk(DESKTOP + "PERIODIC_CHECKPOINT = True\n")
    r = desk.step(desk.running(T0), T0 + 10, 1)                # the owner types: suspended
    assert r.actions == (Action.SUSPEND,)
    assert desk.step(r.slot, T0 + 20, 1).actions == ()      # (suspended: no checkpoint)

"""NEGOTIATOR_INTERVAL in whole daemon ticks (in-process, nothing runs): a negotiation
cycle preempts at most once per interval, as HTCondor's negotiator, which runs a cycle
every NEGOTIATOR_INTERVAL seconds; slots that are free are matched at every pass."""

import os
import re

from test_daemon_tick import ask
from test_negotiator_claims import _configure, _slots, _submit, _vacated


def _six_slots(cell, daemon, extra=""):
    _configure(cell, daemon, "NUM_SLOTS = 6\nPREEMPTION_REQUIREMENTS = True\n" + extra)
    ask(cell, daemon, "qconf", "-mattr", "queue", "slots", "6", "all.q")


def _preemptions(cell):
    with open(os.path.join(cell.root, "spool", "messages")) as fh:
        return re.findall(r"job (\d+)\.(\d+) preempted from (\S+) by job (\d+)\.(\d+)", fh.read())


def _ticks(daemon, fake, count):
    """``count`` ticks, each with a pass (as in a busy cell: jobs come and go, the
    regular scheduling interval passes); after each, the procs preempted leave their
    slots (requeued)."""
    for _ in range(count):
        daemon.state.need_schedule = True
        daemon.tick()
        for _name, (state, _activity, key, _claimant) in _slots(daemon).items():
            if state == "Preempting" and key in fake.running():
                _vacated(fake, *key)


def _later(daemon, seconds):
    """As if ``seconds`` had passed since the last preempting cycle."""
    condor = daemon.state.condor
    condor.preempted -= seconds
    condor.negotiate_at -= seconds


def test_three_submitters_preempt_once_per_negotiator_interval(ticking):
    """Priorities 10/20/30 on 6 slots and PREEMPTION_REQUIREMENTS = True: the shares
    are fractions that HTCondor rounds up, so each cycle could take one more slot from
    another submitter. The passes the victims' leaving triggers preempt nothing more;
    the daemon wakes for the cycle NEGOTIATOR_INTERVAL (60 s) after the last preemption,
    which may preempt again, once."""
    cell, daemon, fake = ticking
    _six_slots(cell, daemon)
    for user, prio in (("u1", 10), ("u2", 20), ("u3", 30)):
        ask(cell, daemon, "condor_userprio", "-setprio", f"g{user}.{user}@example.org", str(prio))
    worst = _submit(cell, daemon, "u3", 6)
    daemon.tick()
    assert len(fake.running()) == 6 and not _preemptions(cell)
    _submit(cell, daemon, "u2", 6)
    _submit(cell, daemon, "u1", 6)
    _ticks(daemon, fake, 10)
    first = _preemptions(cell)
    assert first and {int(j) for j, *_rest in first} == {worst}
    _ticks(daemon, fake, 20)                    # the slots left are taken: no preemption
    assert _preemptions(cell) == first
    condor = daemon.state.condor                # the daemon wakes for the next cycle
    assert condor.negotiate_at == condor.preempted + 60
    assert condor.next_wake() <= condor.negotiate_at
    assert len(fake.running()) == 6
    starts = {key: sum(1 for j, t, _p in fake.launched if (j, t) == key) for key in fake.running()}
    assert set(starts.values()) == {1}
    _later(daemon, 60)
    daemon.tick()                               # the next cycle is due: a pass, which may preempt
    second = _preemptions(cell)[len(first):]
    assert second
    _ticks(daemon, fake, 20)
    assert _preemptions(cell) == first + second
    assert len(fake.running()) == 6


def test_a_free_slot_is_matched_at_once_between_preempting_cycles(ticking):
    """A slot freed while the negotiator may not preempt yet is matched in the next pass."""
    cell, daemon, fake = ticking
    _six_slots(cell, daemon)
    for user, prio in (("u1", 10), ("u3", 30)):
        ask(cell, daemon, "condor_userprio", "-setprio", f"g{user}.{user}@example.org", str(prio))
    _submit(cell, daemon, "u3", 6)
    daemon.tick()
    better = _submit(cell, daemon, "u1", 8)
    _ticks(daemon, fake, 10)
    preempted = _preemptions(cell)
    before = fake.running()
    assert preempted and before == [(better, n) for n in range(1, 7)]
    fake.finish(better, 1, exit_status=0)
    daemon.tick()
    after = fake.running()
    assert len(after) == 6 and (better, 1) not in after
    assert len(set(after) - set(before)) == 1         # a pending proc (u3's, u1 is at its share)
    assert _preemptions(cell) == preempted
    assert daemon.state.condor.negotiate_at is not None      # (between preempting cycles)

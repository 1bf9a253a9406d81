"""The negotiator's further spins of the pie: a submitter whose share ran out while free
slots are left and others want none of them gets them in the same cycle (HTCondor's
spin_pie goes on while the pie shrinks), even when the claimed slots it may not preempt
(PREEMPTION_REQUIREMENTS) are what its last job was refused; the first spin keeps the
fair-share order."""

from collections import Counter

import pytest

from gridtools.sched import negotiator as N
from test_negotiator import NOW, Pool, config, jobs, negotiate, split

NO_PREEMPTION = "NEGOTIATOR_CONSIDER_PREEMPTION = False\n"


def _with_ceilings(jobs_, slots, prios, ceilings, text=""):
    return N.negotiate(N.submitters_from(jobs_), slots, prios, N.NegotiatorConfig.from_config(config(text)),
                       NOW, ceilings=ceilings)


@pytest.mark.parametrize("text", ["", NO_PREEMPTION])
def test_the_second_submitter_gets_both_free_slots_in_one_pass(text):
    """alice runs on 2 of 4 slots and wants no more; bob (a worse priority: his share
    is less than the 2 free slots) has 2 idle jobs: both run."""
    pool = Pool(4)
    pool.run("h0", "alice")
    pool.run("h1", "alice")
    out = negotiate(jobs("bob", 2), pool.slots(), {"alice": 0.5, "bob": 0.6}, text)
    assert split(out) == {"bob": 2}
    assert sorted(m.slot for m in out.matches) == ["slot1@h2", "slot1@h3"]
    assert out.rejected == {} and out.preemptions == []


def test_every_free_slot_goes_to_the_submitter_with_idle_jobs():
    """alice runs on 2 of 6 slots; bob's 10 idle jobs take the 4 free ones, the others
    wait (alice's slots are not preempted: PREEMPTION_REQUIREMENTS)."""
    pool = Pool(6)
    pool.run("h0", "alice")
    pool.run("h1", "alice")
    out = negotiate(jobs("bob", 10), pool.slots(), {"alice": 0.5, "bob": 0.6})
    assert split(out) == {"bob": 4} and out.preemptions == []
    assert len(out.rejected) == 6


@pytest.mark.parametrize("prios", [{"alice": 0.5, "bob": 0.5}, {"alice": 0.4, "bob": 0.5}])
def test_the_slots_a_ceiling_leaves_go_to_the_other_submitter(prios):
    """alice (ceiling 1) runs on 1 of 4 slots with 3 idle jobs; bob's 4 idle jobs take the
    3 other slots; alice's wait at her ceiling."""
    pool = Pool(4)
    pool.run("h0", "alice")
    out = _with_ceilings(jobs("alice", 3) + jobs("bob", 4), pool.slots(), prios, {"alice": 1})
    assert split(out) == {"bob": 3} and out.preemptions == []
    assert Counter(out.rejected.values())[N.Why.SUBMITTER_CEILING] == 3


def test_the_first_spin_keeps_the_fair_share_order():
    """Both want more than the pool: alice (better priority) is matched first and gets
    her larger share, 3 of 5 (shares 0.6 and 0.4)."""
    out = negotiate(jobs("alice", 10) + jobs("bob", 10), Pool(5).slots(), {"alice": 0.5, "bob": 0.75})
    assert [m.submitter for m in out.matches] == ["alice"] * 3 + ["bob"] * 2


def test_the_share_alice_leaves_goes_to_bob_in_the_next_spin():
    """alice wants 1 slot, bob and carol (worse priorities) 10 each: after the first spin
    hands out their shares, the slots alice left are shared out between bob and carol in
    the next, every slot taken."""
    out = negotiate(jobs("alice", 1) + jobs("bob", 10) + jobs("carol", 10), Pool(6).slots(),
                    {"alice": 0.5, "bob": 1.0, "carol": 1.0})
    assert split(out) == {"alice": 1, "bob": 3, "carol": 2} or split(out) == {"alice": 1, "bob": 2, "carol": 3}
    assert out.matches[0].submitter == "alice"

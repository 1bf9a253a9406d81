"""A negotiator preemption in whole daemon ticks (in-process, nothing runs): the slot the
victim leaves is claimed for the proc that matched, which starts there, and the victim
waits; the claim is released when that proc leaves the queue, is held, or does not start
within MATCH_TIMEOUT."""

import os
import re

from condortools import negotiated
from test_daemon_tick import ask


def _configure(cell, daemon, extra=""):
    negotiated(cell, "UID_DOMAIN = example.org\n"
               "PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmittorPrio * 1.2\n" + extra)
    daemon.state.config_checked = daemon.rested = 0
    ask(cell, daemon, "condor_reconfig")


def _submit(cell, daemon, user, count, extra=""):
    path = os.path.join(cell.root, f"{user}.sub")
    with open(path, "w") as fh:
        fh.write(f"executable = /bin/sleep\narguments = 600\naccounting_group = g{user}\n"
                 f"accounting_group_user = {user}\n{extra}queue {count}\n")
    return int(re.search(r"submitted to cluster (\d+)", ask(cell, daemon, "condor_submit", path)).group(1))


def _slots(daemon):
    """slot name -> (state, activity, job key or None, claimant or None)."""
    return {n: (r.slot.state.value, r.slot.activity.value, r.task, r.reserved)
            for n, r in sorted(daemon.state.condor.machines.slots.items())}


def _preempted(daemon, cell, victim_cluster, fake, end=True):
    """Tick until the negotiator has preempted procs of ``victim_cluster``, then (``end``)
    end them as their shepherds would (requeued); the victims' (job, task)."""
    for _ in range(5):
        daemon.tick()
        victims = sorted({(j, t) for j, t, _sig in fake.signals if j == victim_cluster})
        if victims:
            break
    assert victims
    for j, t in victims if end else ():
        _vacated(fake, j, t)
    return victims


def _vacated(fake, job, task):
    fake.finish(job, task, exit_status=0, requeue=True)


def _setup(cell, daemon, fake, extra="", end=True):
    """u2 (priority 20) runs on both slots; u1 (priority 10) submits 2 procs and preempts
    u2's procs. (u2's procs, their claimants by slot)."""
    _configure(cell, daemon, extra)
    worse = _submit(cell, daemon, "u2", 2)
    daemon.tick()
    assert fake.running() == [(worse, 1), (worse, 2)]
    ask(cell, daemon, "condor_userprio", "-setprio", "gu1.u1@example.org", "10")
    ask(cell, daemon, "condor_userprio", "-setprio", "gu2.u2@example.org", "20")
    better = _submit(cell, daemon, "u1", 2)
    victims = _preempted(daemon, cell, worse, fake, end)
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    found = re.findall(rf"job {worse}\.(\d) preempted from (slot\d@\S+) by job {better}\.(\d) \(priority\)",
                       messages)
    assert sorted((worse, int(v)) for v, _slot, _by in found) == victims
    return victims, {slot: (better, int(by)) for _v, slot, by in found}


def _launches(fake):
    counts = {}
    for j, t, _plan in fake.launched:
        counts[(j, t)] = counts.get((j, t), 0) + 1
    return counts


def test_the_preempting_proc_takes_the_slot_and_the_victim_does_not_restart(ticking):
    cell, daemon, fake = ticking
    victims, claimants = _setup(cell, daemon, fake)
    for _ in range(6):                      # the victims have gone: several passes
        daemon.tick()
    machines = daemon.state.condor.machines
    assert {slot: machines.slot_of(key) for slot, key in claimants.items()} == {s: s for s in claimants}
    assert all(_launches(fake)[key] == 1 for key in claimants.values())
    assert all(_launches(fake)[key] == 1 and key not in fake.running() for key in victims)
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert len(re.findall(r"preempted from", messages)) == len(victims)
    assert all(r[3] is None for r in _slots(daemon).values())     # the claims were used


def test_the_claim_is_released_when_its_proc_is_held_or_removed(ticking):
    """The procs a preemption claimed slots for are held, or removed, while their victims
    leave: the claims are released, and the slots, once free, are not left Claimed/Idle
    with no job (they are Unclaimed, or taken by a job that waits)."""
    cell, daemon, fake = ticking
    victims, claimants = _setup(cell, daemon, fake, end=False)
    (slot, held), (other, removed) = sorted(claimants.items()) if len(claimants) == 2 else \
        (sorted(claimants.items())[0], (None, None))
    ask(cell, daemon, "condor_hold", f"{held[0]}.{held[1] - 1}")
    if removed is not None:
        ask(cell, daemon, "condor_rm", f"{removed[0]}.{removed[1] - 1}")
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert f"the claim of {slot} for job {held[0]}.{held[1]} is released (job held)" in messages
    if removed is not None:
        assert f"the claim of {other} for job {removed[0]}.{removed[1]} is released (job left the queue)" in messages
    for key in victims:
        _vacated(fake, *key)
    for _ in range(3):
        daemon.tick()
    for name in claimants:
        state, activity, task, claimant = _slots(daemon)[name]
        assert claimant is None
        assert (state, activity) == ("Claimed", "Busy") and task is not None or \
            (state, activity, task) == ("Unclaimed", "Idle", None)


def test_a_claim_its_proc_does_not_use_within_match_timeout_is_released(ticking):
    """The proc cannot start on its claimed slot (its queue instance was disabled): the
    claim lasts MATCH_TIMEOUT (120 s, HTCondor's default) from when the slot was left to it, then is released."""
    import time
    cell, daemon, fake = ticking
    victims, claimants = _setup(cell, daemon, fake, end=False)
    ask(cell, daemon, "qmod", "-d", "all.q")
    for key in victims:
        _vacated(fake, *key)
    daemon.tick()
    slot, claimant = sorted(claimants.items())[0]
    assert _slots(daemon)[slot] == ("Claimed", "Idle", None, claimant)
    assert claimant not in fake.running()
    machines = daemon.state.condor.machines
    machines.slots[slot].idle_since = time.time() - 121      # two minutes later
    machines.next_wake = 0.0
    daemon.tick()
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert f"the claim of {slot} for job {claimant[0]}.{claimant[1]} is released " \
           "(not started within MATCH_TIMEOUT)" in messages
    assert _slots(daemon)[slot][3] is None
    assert _slots(daemon)[slot][0] != "Claimed"

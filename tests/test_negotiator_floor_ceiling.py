"""The submitter floor and ceiling of condor_userprio -setfloor/-setceiling in the negotiator:
a ceiling caps the weighted slots a submitter holds, running ones included (the others get
the rest); submitters below their floor negotiate first, up to it; and a cell whose
negotiator keeps a submitter at its ceiling, with the reason condor_q gives its idle jobs."""

from collections import Counter

import pytest

from conftest import destroy_cell, make_cell, wait_for
from qtools import passes_every_second
from condortools import negotiated, submit
from gridtools import ads
from gridtools.classad import ClassAd, parse
from gridtools.formats.condor_config import Config
from gridtools.sched import matchpass
from gridtools.sched import negotiator as N

import schedkit
from test_matchpass import inputs, scenario, users_jobs

NOW = 1_700_000_000


def config(text=""):
    cfg = Config({})
    cfg.read_text(text)
    return cfg


def pool(count, claims=None, text=""):
    """One-slot hosts h0, h1, ...; ``claims``: host -> the user running a job there."""
    cfg, out = config(text), []
    for i in range(count):
        host, name = ads.HostFacts(f"h{i}", memory=1024, disk=10**6), f"slot1@h{i}"
        user = (claims or {}).get(f"h{i}")
        claim = ads.Claim(f"9{i}.0", user, user, 0.0, NOW - 3600) if user else None
        views = {name: ads.SlotView("Claimed", "Busy", NOW - 3600, NOW - 3600)} if claim else None
        ad = ads.machine_ads(host, cfg, NOW, views, {name: claim} if claim else None)[0]
        out.append(N.Slot(name, ad, claim))
    return out


def partitionable(cpus):
    cfg = config("NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = True\n")
    host = ads.HostFacts("big", cpus=cpus, memory=1024 * cpus, disk=10**6)
    return [N.Slot(ad.eval("Name"), ad) for ad in ads.machine_ads(host, cfg, NOW)]


_ids = iter(range(1, 10**6))


def jobs(owner, count, cpus=1, rank="0.0"):
    out = []
    for _ in range(count):
        n = next(_ids)
        ad = ClassAd({"Owner": owner, "ClusterId": n, "ProcId": 0, "QDate": NOW - 1000 + n, "JobPrio": 0,
                      "RequestCpus": cpus, "RequestMemory": 10, "RequestDisk": 1, "JobStatus": 1})
        ad["Requirements"] = parse("TARGET.Memory >= RequestMemory")
        ad["Rank"] = parse(rank)
        out.append((f"{n}.0", ad))
    return out


def negotiate(idle, slots, prios, text="", floors=None, ceilings=None):
    return N.negotiate(N.submitters_from(idle), slots, prios, N.NegotiatorConfig.from_config(config(text)),
                       NOW, floors=floors, ceilings=ceilings)


def split(outcome):
    return dict(Counter(m.submitter for m in outcome.matches))


def reasons(outcome, idle, owner):
    ids = {job_id for job_id, ad in idle if ad.eval("Owner") == owner}
    return Counter(why for job_id, why in outcome.rejected.items() if job_id in ids)


# ---------------------------------------------------------------- ceilings

def test_a_ceiling_of_one_leaves_the_other_three_slots_to_the_other_submitter():
    idle = jobs("alice", 4) + jobs("bob", 4)
    assert split(negotiate(idle, pool(4), {"alice": 0.5, "bob": 0.5})) == {"alice": 2, "bob": 2}
    out = negotiate(idle, pool(4), {"alice": 0.5, "bob": 0.5}, ceilings={"alice": 1})
    assert split(out) == {"alice": 1, "bob": 3}
    assert reasons(out, idle, "alice") == {N.Why.SUBMITTER_CEILING: 3}
    assert N.Why.SUBMITTER_CEILING.value == "submitter ceiling reached"


def test_what_a_submitter_runs_counts_against_its_ceiling():
    idle = jobs("alice", 4) + jobs("bob", 4)
    slots = pool(6, {"h0": "alice", "h1": "alice"})
    out = negotiate(idle, slots, {"alice": 0.5, "bob": 0.5}, ceilings={"alice": 2})
    assert split(out) == {"bob": 4} and out.preemptions == []
    assert reasons(out, idle, "alice") == {N.Why.SUBMITTER_CEILING: 4}
    assert split(negotiate(idle, slots, {"alice": 0.5, "bob": 0.5}, ceilings={"alice": 3})) == \
        {"alice": 1, "bob": 3}


def test_a_ceiling_of_zero_matches_nothing_and_minus_one_is_no_ceiling():
    idle = jobs("alice", 3)
    out = negotiate(idle, pool(3), {}, ceilings={"alice": 0})
    assert out.matches == [] and reasons(out, idle, "alice") == {N.Why.SUBMITTER_CEILING: 3}
    assert split(negotiate(idle, pool(3), {}, ceilings={"alice": -1})) == {"alice": 3}


def test_the_ceiling_counts_cores_of_a_partitionable_slot():
    """Jobs of 2 CPUs under a ceiling of 5: two run (4 cores), a third would make 6."""
    idle = jobs("alice", 4, cpus=2)
    out = negotiate(idle, partitionable(8), {}, ceilings={"alice": 5})
    assert [m.carved[0] for m in out.matches] == [2, 2]
    assert reasons(out, idle, "alice") == {N.Why.SUBMITTER_CEILING: 2}
    assert len(negotiate(idle, partitionable(8), {}).matches) == 4


def test_a_slot_that_ranks_a_capped_submitter_higher_is_not_taken_past_its_ceiling():
    """Every slot ranks alice's jobs higher than bob's running ones (rank preemption, which
    no share limits), yet her ceiling of 1 lets her take one."""
    text = 'RANK = ifThenElse(TARGET.Owner =?= "alice", 10, 0)\n'
    idle = jobs("alice", 3)
    slots = pool(3, {"h0": "bob", "h1": "bob", "h2": "bob"}, text)
    assert len(negotiate(idle, slots, {"alice": 0.5, "bob": 0.5}, text).preemptions) == 3
    out = negotiate(idle, slots, {"alice": 0.5, "bob": 0.5}, text, ceilings={"alice": 1})
    assert [p.kind for p in out.preemptions] == [N.Kind.RANK]
    assert reasons(out, idle, "alice") == {N.Why.SUBMITTER_CEILING: 2}


# ---------------------------------------------------------------- floors

def test_a_submitter_below_its_floor_is_negotiated_first_up_to_it():
    """bob's priority is so bad that alice takes all the pool he leaves; with a floor of 3
    he gets 3."""
    idle = jobs("alice", 6) + jobs("bob", 6)
    prios = {"alice": 0.5, "bob": 500.0}
    assert split(negotiate(idle, pool(4), prios)) == {"alice": 3, "bob": 1}
    out = negotiate(idle, pool(4), prios, floors={"bob": 3})
    assert split(out) == {"alice": 1, "bob": 3}
    assert out.submitters["bob"].share == pytest.approx(0.001, rel=0.01)    # the fair-share round's


def test_the_floor_counts_what_a_submitter_already_runs():
    idle = jobs("alice", 6) + jobs("bob", 6)
    prios = {"alice": 0.5, "bob": 500.0}
    slots = pool(6, {"h0": "bob", "h1": "bob"})
    assert split(negotiate(idle, slots, prios, floors={"bob": 3})) == {"alice": 3, "bob": 1}
    assert split(negotiate(idle, slots, prios, floors={"bob": 2})) == {"alice": 4}


def test_submitters_below_their_floors_share_the_floor_round_by_priority():
    """carol (10) and bob (20) below floors of 3 on 4 slots: the floor round gives them
    2/3 and 1/3 of the pool, carol first; alice, at the best priority, gets what is left."""
    idle = jobs("alice", 6) + jobs("bob", 6) + jobs("carol", 6)
    prios = {"alice": 0.5, "bob": 20.0, "carol": 10.0}
    out = negotiate(idle, pool(4), prios, floors={"bob": 3, "carol": 3})
    assert split(out) == {"alice": 1, "bob": 1, "carol": 2}
    assert [m.submitter for m in out.matches][:3] == ["carol", "carol", "bob"]


def test_a_floor_and_a_ceiling_together():
    idle = jobs("alice", 6) + jobs("bob", 6)
    out = negotiate(idle, pool(4), {"alice": 0.5, "bob": 500.0}, floors={"bob": 3}, ceilings={"bob": 2})
    assert split(out) == {"alice": 2, "bob": 2}


def test_a_floor_round_runs_within_the_group_and_its_quota():
    """group_a (quota 3) has alice and bob; carol is outside. bob's floor of 2 takes him
    to 2 of the group's 3 first; a floor of 4 gets him the whole quota, no more."""
    text = "GROUP_NAMES = group_a\nGROUP_QUOTA_group_a = 3\n"
    idle = [(j, _grouped(ad, "group_a")) for j, ad in jobs("bob", 6) + jobs("alice", 6)] + jobs("carol", 6)
    prios = {"group_a.alice": 0.5, "group_a.bob": 500.0, "carol": 0.5}
    assert split(negotiate(idle, pool(6), prios, text)) == {"group_a.alice": 2, "group_a.bob": 1, "carol": 3}
    assert split(negotiate(idle, pool(6), prios, text, floors={"group_a.bob": 2})) == \
        {"group_a.alice": 1, "group_a.bob": 2, "carol": 3}
    assert split(negotiate(idle, pool(6), prios, text, floors={"group_a.bob": 4})) == \
        {"group_a.bob": 3, "carol": 3}


def _grouped(ad, group):
    ad = ad.copy()
    ad["AccountingGroup"] = f"{group}.{ad.eval('Owner')}"
    return ad


def test_remote_user_floor_is_given_to_preemption_requirements():
    """HTCondor's RemoteUserFloor: bob's running jobs are safe while he holds no more than
    his floor."""
    text = "PREEMPTION_REQUIREMENTS = RemoteUserResourcesInUse > RemoteUserFloor\n"
    idle = jobs("alice", 2)
    slots = pool(2, {"h0": "bob", "h1": "bob"})
    prios = {"alice": 0.5, "bob": 10.0}
    assert negotiate(idle, slots, prios, text, floors={"bob": 2}).preemptions == []
    assert negotiate(idle, slots, prios, text, floors={"bob": 1}).preemptions
    assert negotiate(idle, slots, prios, text).preemptions


# ---------------------------------------------------------------- the pass

def test_the_pass_gives_the_ceiling_and_its_reason():
    snap = schedkit.snapshot(scenario(hosts=("h1", "h2"), jobs=users_jobs("alice", "bob", per_user=4)))
    inp = inputs(snap, {"alice": 0.5, "bob": 0.5})
    inp = matchpass.Inputs(inp.slots, inp.job_ad, inp.priorities, inp.config, ceilings={"alice": 1},
                           floors={"bob": 1})
    decisions = matchpass.match_pass(snap, inp)
    owners = sorted(next(j.owner for j in snap.jobs if j.id == s.job_id) for s in decisions.starts)
    assert owners == ["alice", "bob", "bob", "bob"]
    alice = [line for jid in range(1, 5) for line in schedkit.reasons(decisions, jid)]
    assert alice.count("not matched by the negotiator: submitter ceiling reached") == 3


# ---------------------------------------------------------------- a cell

@pytest.fixture
def four(users):
    cell = make_cell(slots=4, start=False)
    negotiated(cell, "UID_DOMAIN = example.org\n")
    passes_every_second(cell)         # (passes come often: each is one more chance to go past a ceiling)
    cell.start_daemon()
    try:
        yield cell
    finally:
        destroy_cell(cell)


def running_by_owner(cell):
    out = cell.run("condor_q", "-allusers", "-af", "Owner", "JobStatus").stdout
    return Counter(line.split()[0] for line in out.splitlines() if line.split()[1:] == ["2"])


def test_a_submitter_at_its_ceiling_never_runs_more_while_the_other_gets_the_rest(four, workdir):
    proc = four.run("condor_userprio", "-setceiling", "gtalice@example.org", "1")
    assert proc.returncode == 0 and proc.stdout == "The ceiling of gtalice@example.org was set to 1\n"
    body = "executable = /bin/sleep\narguments = 60\nqueue 4\n"
    alice = submit(four, body, cwd=workdir, user="gtalice", name="alice.sub")
    bob = submit(four, body, cwd=workdir, user="gtbob", name="bob.sub")
    wait_for(lambda: running_by_owner(four) == {"gtalice": 1, "gtbob": 3}, timeout=30)
    for _ in range(3):          # later passes keep her at one
        four.run("condor_reschedule")
        seen = running_by_owner(four)
        assert seen["gtalice"] <= 1 and sum(seen.values()) <= 4
    procs = four.run("condor_q", str(alice), "-af", "ProcId", "JobStatus").stdout.split("\n")
    waiting = next(f"{alice}.{ln.split()[0]}" for ln in procs if ln.split()[1:] == ["1"])

    def reason():
        out = four.run("condor_q", waiting, "-af", "LastRejMatchReason").stdout.strip()
        return out if out != "undefined" else None
    assert wait_for(reason, timeout=20) == "submitter ceiling reached"
    out = four.run("condor_q", waiting, "-better-analyze").stdout
    assert "\tReason for last match failure: submitter ceiling reached\n" in out, out
    # the ceiling lifted, she gets the slots bob leaves
    four.run("condor_userprio", "-setceiling", "gtalice@example.org", "-1", check=True)
    four.run("condor_rm", str(bob), check=True)
    wait_for(lambda: running_by_owner(four) == {"gtalice": 4}, timeout=30)

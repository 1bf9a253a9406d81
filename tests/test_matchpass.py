"""The pass in the negotiator's order (sched.matchpass): who gets slots, where Grid Engine's
placement puts them, preemptions, and the hosts whose START refuses a job in Grid Engine's order."""

from dataclasses import replace

import schedkit
from gridtools import ads
from gridtools.classad import ClassAd, parse
from gridtools.formats.condor_config import Config
from gridtools.sched import matchpass
from gridtools.sched import negotiator as N
from gridtools.sched.cycle import cycle

NOW = 1000.0


def config(text=""):
    cfg = Config({})
    cfg.read_text(text)
    return cfg


def scenario(hosts=("h1", "h2", "h3"), slots=2, jobs=(), **more):
    sc = {"hosts": list(hosts), "slots": slots, "sched": {"params": "NEGOTIATOR=1"}, "now": NOW,
          "jobs": list(jobs)}
    sc.update(more)
    return sc


def slots_of(snap, text="", claims=None):
    cfg = config(text)
    per_host = {}
    for qi in snap.queues:
        per_host[qi.host] = per_host.get(qi.host, 0) + qi.slots
    found = []
    claims = claims or {}
    for host, count in sorted(per_host.items()):
        facts = ads.HostFacts(host, cpus=count, memory=1024 * count, disk=10**6)
        views = {n: ads.SlotView("Claimed", "Busy", NOW - 100, NOW - 100) for n in claims}
        for ad in ads.machine_ads(facts, cfg, NOW, views, claims):
            name = ad.eval("Name")
            found.append(N.Slot(name, ad, claims.get(name)))
    return tuple(found)


def job_ads(snap, extra=None):
    extra = extra or {}

    def job_ad(job_id, task):
        job = next(j for j in snap.jobs if j.id == job_id)
        ad = ClassAd({"Owner": job.owner, "ClusterId": job_id, "ProcId": task - 1, "QDate": int(job.submit_time),
                      "JobPrio": 0, "RequestCpus": 1, "RequestMemory": 1, "RequestDisk": 1, "JobStatus": 1,
                      "JobUniverse": 5})
        ad["Requirements"] = parse("TARGET.Memory >= RequestMemory")
        for name, value in extra.get(job_id, {}).items():
            ad[name] = parse(value) if isinstance(value, str) and value.startswith("(") else value
        return ad
    return job_ad


def inputs(snap, priorities=None, text="", claims=None, extra=None):
    return matchpass.Inputs(slots_of(snap, text, claims), job_ads(snap, extra), priorities or {},
                            N.NegotiatorConfig.from_config(config(text)))


def users_jobs(*owners, per_user=6):
    jobs, n = [], 0
    for owner in owners:
        for _ in range(per_user):
            n += 1
            jobs.append({"id": n, "owner": owner, "submit": n})
    return jobs


def test_the_param_selects_the_negotiators_order():
    snap = schedkit.snapshot(scenario())
    assert matchpass.enabled(snap.config)
    assert not matchpass.enabled(schedkit.snapshot({"hosts": ["h1"], "slots": 1}).config)


def test_priority_factors_1_and_2_split_six_slots_four_to_two():
    snap = schedkit.snapshot(scenario(jobs=users_jobs("alice", "bob")))
    decisions = matchpass.match_pass(snap, inputs(snap, {"alice": 0.5, "bob": 1.0}))
    owners = [next(j.owner for j in snap.jobs if j.id == s.job_id) for s in decisions.starts]
    assert sorted(owners) == ["alice"] * 4 + ["bob"] * 2
    left = [r for jid, rs in decisions.reasons.items() for r in schedkit.reasons(decisions, jid)]
    assert "not matched by the negotiator: submitter limit exceeded" in left


def test_a_user_who_holds_slots_already_gets_less():
    snap = schedkit.snapshot(scenario(jobs=users_jobs("alice", "bob"), running=[
        {"job": 90 + i, "owner": "alice", "granted": f"all.q@h{i + 1}=1", "start": 900} for i in range(3)]))
    claims = {f"slot1@h{i + 1}": ads.Claim(f"{90 + i}.0", "alice", "alice", 0.0, 900) for i in range(3)}
    decisions = matchpass.match_pass(snap, inputs(snap, {"alice": 0.5, "bob": 1.0}, claims=claims))
    owners = sorted(next(j.owner for j in snap.jobs if j.id == s.job_id) for s in decisions.starts)
    assert owners == ["alice", "bob", "bob"]        # alice 3 + 1 = her 4, bob his 2


def test_grid_engine_placement_still_decides_where_a_match_fits():
    sc = scenario(hosts=("h1",), slots=2, jobs=[{"id": 1, "qsub": "-l gpu=1"}, {"id": 2, "qsub": "-l gpu=1"}],
                  complex=["gpu gpu INT <= YES YES 0 0"], exechost={"h1": {"complex_values": "gpu=1"}})
    snap = schedkit.snapshot(sc)
    decisions = matchpass.match_pass(snap, inputs(snap))
    assert schedkit.starts(decisions) == ["1.1 all.q@h1=1"]
    assert any("gpu" in line for line in schedkit.reasons(decisions, 2))


def test_group_quotas_negotiate_the_most_starved_group_first():
    text = "GROUP_NAMES = physics, chemistry\nGROUP_QUOTA_physics = 4\nGROUP_QUOTA_chemistry = 2\n"
    jobs = [{"id": i, "owner": "alice", "submit": i} for i in range(1, 7)] + \
           [{"id": i, "owner": "bob", "submit": i} for i in range(7, 13)]
    snap = schedkit.snapshot(scenario(jobs=jobs))
    extra = {i: {"AccountingGroup": "physics.alice"} for i in range(1, 7)}
    extra.update({i: {"AccountingGroup": "chemistry.bob"} for i in range(7, 13)})
    decisions = matchpass.match_pass(snap, inputs(snap, text=text, extra=extra))
    owners = sorted(next(j.owner for j in snap.jobs if j.id == s.job_id) for s in decisions.starts)
    assert owners == ["alice"] * 4 + ["bob"] * 2
    assert any("group quota exceeded" in line or "submitter limit" in line
               for jid in range(1, 13) for line in schedkit.reasons(decisions, jid))


def test_preemption_requirements_make_a_preempt_decision_not_a_start():
    text = "PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmittorPrio * 1.2\n"
    snap = schedkit.snapshot(scenario(hosts=("h1",), slots=1, jobs=[{"id": 1, "owner": "alice"}], running=[
        {"job": 9, "owner": "bob", "granted": "all.q@h1=1", "start": 900}]))
    claims = {"slot1@h1": ads.Claim("9.0", "bob", "bob", 0.0, 900)}
    decisions = matchpass.match_pass(snap, inputs(snap, {"alice": 0.5, "bob": 10.0}, text, claims))
    assert decisions.starts == []
    assert [(p.job_id, p.task, p.slot, p.by, p.kind) for p in decisions.preempts] == \
        [(9, 1, "slot1@h1", 1, "priority")]
    # without PREEMPTION_REQUIREMENTS (false by default) nobody is preempted
    decisions = matchpass.match_pass(snap, inputs(snap, {"alice": 0.5, "bob": 10.0}, "", claims))
    assert decisions.preempts == []
    assert schedkit.reasons(decisions, 1)


def test_a_proc_waiting_for_a_preempted_slot_is_not_negotiated_again_its_cluster_is():
    snap = schedkit.snapshot(scenario(jobs=[{"id": 1, "tasks": [1, 2]}]))
    decisions = matchpass.match_pass(snap, replace(inputs(snap), waiting=frozenset({(1, 1)})))
    assert [(s.job_id, s.task) for s in decisions.starts] == [(1, 2)]
    assert schedkit.reasons(decisions, 1) == [f"not matched by the negotiator: {matchpass.WAITING}"]


def test_a_slot_a_preemption_claimed_goes_to_its_proc_whatever_its_submitters_limit():
    """alice (priority 0.5) holds 1 of 2 slots and the claim on the other: her share is
    used up, yet the proc the slot was claimed for starts there; bob's idle job, which
    could take a free slot, is not matched to it (its Requirements are false), nor is
    alice's other idle proc."""
    snap = schedkit.snapshot(scenario(hosts=("h1",), jobs=[{"id": 1, "owner": "alice", "tasks": [2, 3]},
                                                            {"id": 2, "owner": "bob"}], running=[
        {"job": 1, "task": 1, "owner": "alice", "granted": "all.q@h1=1", "start": 900}]))
    claims = {"slot1@h1": ads.Claim("1.0", "alice", "alice", 0.0, 900),
              "slot2@h1": ads.Claim("", "alice", "alice")}
    slots = tuple(replace(s, ad=_false_requirements(s.ad)) if s.name == "slot2@h1" else s
                  for s in slots_of(snap, "", claims))
    inp = replace(inputs(snap, {"alice": 0.5, "bob": 0.5}), slots=slots, claims={(1, 3): "slot2@h1"})
    decisions = matchpass.match_pass(snap, inp)
    assert [(s.job_id, s.task, s.granted) for s in decisions.starts] == [(1, 3, (("all.q", "h1", 1),))]
    assert decisions.slots == {(1, 3): "slot2@h1"}
    assert decisions.preempts == []
    assert schedkit.reasons(decisions, 2) == ["not matched by the negotiator: PREEMPTION_REQUIREMENTS == False"]
    assert schedkit.reasons(decisions, 1) == ["not matched by the negotiator: submitter limit exceeded"]


def test_a_proc_whose_claimed_slot_cannot_take_it_waits_and_is_not_negotiated():
    snap = schedkit.snapshot(scenario(hosts=("h1",), slots=1, jobs=[
        {"id": 1, "owner": "alice", "held_tasks": [1]}]))
    decisions = matchpass.match_pass(snap, replace(inputs(snap), claims={(1, 1): "slot1@h1"}))
    assert decisions.starts == []
    assert schedkit.reasons(decisions, 1) == ["Job is in hold state"]


def _false_requirements(ad):
    ad = ad.copy()
    ad["Requirements"] = False
    return ad


def test_holds_and_dependencies_keep_their_grid_engine_reasons():
    snap = schedkit.snapshot(scenario(jobs=[{"id": 1, "hold": True}, {"id": 2, "predecessors": [7]}],
                                      live=[7]))
    decisions = matchpass.match_pass(snap, inputs(snap))
    assert decisions.starts == []
    assert schedkit.reasons(decisions, 1) == ["Job is in hold state"]
    assert schedkit.reasons(decisions, 2) == ["job dropped because of job dependencies"]


def test_the_start_expression_of_a_host_refuses_jobs_in_grid_engines_order():
    snap = schedkit.snapshot({"hosts": ["h1", "h2"], "slots": 1, "jobs": [{"id": 1}, {"id": 2}]})
    decisions = cycle(replace(snap, refused={1: frozenset({"h1"}), 2: frozenset({"h1", "h2"})}))
    assert schedkit.starts(decisions) == ["1.1 all.q@h2=1"]
    assert schedkit.reasons(decisions, 2) == [
        'cannot run in queue instance "all.q@h1" because the START expression of host "h1" is false for it',
        'cannot run in queue instance "all.q@h2" because the START expression of host "h2" is false for it']


def test_slotless_jobs_start_without_a_slot_in_both_orders():
    sc = {"hosts": ["h1"], "slots": 1, "jobs": [{"id": 1}], "running": [
        {"job": 9, "owner": "bob", "granted": "all.q@h1=1", "start": 900}]}
    snap = schedkit.snapshot(sc)
    local = replace(snap.jobs[0], universe="scheduler", submit_host="h1")
    snap = replace(snap, jobs=(local,))
    assert schedkit.starts(cycle(snap)) == ["1.1 all.q@h1=0"]
    negotiated = replace(snap, config=replace(snap.config, params={"NEGOTIATOR": "1"}))
    assert schedkit.starts(matchpass.match_pass(negotiated, inputs(negotiated))) == ["1.1 all.q@h1=0"]


def test_slotless_jobs_start_while_their_universes_rule_allows():
    """START_LOCAL_UNIVERSE (HTCondor's TotalLocalJobsRunning < 200 unless configured)
    counts the local universe tasks running and those the pass starts; the others wait
    with the rule as their reason, in both orders."""
    sc = {"hosts": ["h1"], "slots": 1, "jobs": [{"id": 1, "tasks": [1, 2, 3, 4, 5]}], "running": [
        {"job": 9, "owner": "bob", "granted": "all.q@h1=1", "start": 900},
        {"job": 8, "owner": "bob", "granted": "all.q@h1=1", "start": 900}]}
    snap = schedkit.snapshot(sc)
    local = replace(snap.jobs[0], universe="local", submit_host="h1")
    running = (replace(snap.running[0], universe="local", granted=(("all.q", "h1", 0),)),
               replace(snap.running[1], universe="scheduler", granted=(("all.q", "h1", 0),)))
    rule = (("local", "TotalLocalJobsRunning < 3"), ("scheduler", "TotalSchedulerJobsRunning < 500"))
    snap = replace(snap, jobs=(local,), running=running, config=replace(snap.config, slotless_start=rule))
    expected_reason = "cannot run because START_LOCAL_UNIVERSE (TotalLocalJobsRunning < 3) is false"
    decisions = cycle(snap)
    assert schedkit.starts(decisions) == ["1.1 all.q@h1=0", "1.2 all.q@h1=0"]
    assert expected_reason in schedkit.reasons(decisions, 1)
    negotiated = replace(snap, config=replace(snap.config, params={"NEGOTIATOR": "1"}))
    decisions = matchpass.match_pass(negotiated, inputs(negotiated))
    assert schedkit.starts(decisions) == ["1.1 all.q@h1=0", "1.2 all.q@h1=0"]
    assert schedkit.starts(cycle(replace(snap, config=replace(snap.config, slotless_start=()))))[-1] == \
        "1.5 all.q@h1=0"


def test_a_job_is_matched_only_to_slots_its_queue_list_allows():
    """A Grid Engine job limited to some hosts (-q q@host, -q q@@group) is matched to
    a slot on one of them: a match elsewhere, which the placement must refuse, would
    keep it waiting while its hosts have free slots."""
    group = "group_name @even\nhostlist h2\n"
    sc = scenario(jobs=[{"id": 1, "qsub": "-q all.q@h3"}, {"id": 2, "qsub": "-q all.q@@even", "tasks": [1, 2, 3]},
                        {"id": 3, "qsub": "-l h=h3"}],
                  objects={"hostgroups/@even": group})
    snap = schedkit.snapshot(sc)
    decisions = matchpass.match_pass(snap, inputs(snap))
    assert schedkit.starts(decisions) == ["1.1 all.q@h3=1", "2.1 all.q@h2=1", "2.2 all.q@h2=1", "3.1 all.q@h3=1"]
    assert decisions.slots[(2, 1)].endswith("@h2") and decisions.slots[(1, 1)].endswith("@h3")

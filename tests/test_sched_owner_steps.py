"""What one owner's matching may take of a pass (sched.evalbudget, sched_conf params
OWNER_MATCH_STEPS): a user whose jobs each carry a costly Requirements of their own is
cut off once the steps are spent, the others' jobs are matched in the same pass, the
jobs put off go first in the next pass (so all of them start in turn), and ordinary
workloads never meet the limit."""

from dataclasses import replace

import pytest

import schedkit
from gridtools import ads
from gridtools.classad import ClassAd, parse
from gridtools.formats.condor_config import Config
from gridtools.formats.sge import sched as sched_format
from gridtools.sched import matchpass
from gridtools.sched import negotiator as N
from gridtools.sched.cycle import cycle
from gridtools.sched.snapshot import SchedConfig

NOW = 1000.0
#: a string list whose search takes about 100,000 steps: far below what one evaluation
#: may take (classad(5), COST), far above what the budget below gives a pass
LONG = ",".join(f"x{i}" for i in range(20000))
#: a Requirements that costs that much, and differs from job to job (it reads ClusterId,
#: so no two jobs share an autocluster)
COSTLY = f'!stringListMember("zz", "{LONG}") && ClusterId > 0 && TARGET.Memory >= RequestMemory'
#: the same, false for every slot
COSTLY_NEVER = f'!stringListMember("zz", "{LONG}") && ClusterId > 0 && TARGET.Memory < 0'
#: the steps each owner's matching may take in these passes: ordinary jobs take a few
STEPS = 1000
SENTENCE = 'job dropped because matching the jobs of "{owner}" took the {steps} ClassAd evaluation steps'


def scenario(jobs, steps=STEPS):
    params = "NEGOTIATOR=1" + (f",OWNER_MATCH_STEPS={steps}" if steps is not None else "")
    return {"hosts": ["h1", "h2", "h3"], "slots": 4, "sched": {"params": params}, "now": NOW,
            "jobs": list(jobs)}


def slots(snap):
    cfg = Config({})
    cfg.read_text("")
    found = []
    for host in sorted({qi.host for qi in snap.queues}):
        facts = ads.HostFacts(host, cpus=4, memory=4096, disk=10**6)
        for ad in ads.machine_ads(facts, cfg, NOW, {}, {}):
            found.append(N.Slot(ad.eval("Name"), ad))
    return tuple(found)


def job_ads(snap, requirements):
    def job_ad(job_id, task):
        job = next(j for j in snap.jobs if j.id == job_id)
        ad = ClassAd({"Owner": job.owner, "ClusterId": job_id, "ProcId": task - 1, "QDate": int(job.submit_time),
                      "JobPrio": 0, "RequestCpus": 1, "RequestMemory": 1, "RequestDisk": 1, "JobStatus": 1,
                      "JobUniverse": 5})
        ad["Requirements"] = parse(requirements.get(job_id, "TARGET.Memory >= RequestMemory"))
        return ad
    return job_ad


def one_pass(jobs, requirements, put_off=(), steps=STEPS):
    snap = schedkit.snapshot(scenario(jobs, steps))
    inputs = matchpass.Inputs(slots(snap), job_ads(snap, requirements), {}, N.NegotiatorConfig(),
                              put_off=put_off)
    return snap, matchpass.match_pass(snap, inputs)


def started(decisions):
    return sorted(s.job_id for s in decisions.starts)


def alice_and_bob(costly=range(1, 7), never=()):
    """alice's jobs 1-6 with a costly Requirements each (those in ``never`` match no
    slot), bob's 7-9 ordinary."""
    jobs = [{"id": i, "owner": "alice", "submit": i} for i in costly] + \
           [{"id": i, "owner": "bob", "submit": i} for i in (7, 8, 9)]
    requirements = {i: (COSTLY_NEVER if i in never else COSTLY) for i in costly}
    return jobs, requirements


def test_a_costly_owner_is_cut_off_with_the_reason_and_the_other_owner_starts_in_the_same_pass():
    jobs, requirements = alice_and_bob()
    _snap, decisions = one_pass(jobs, requirements)
    assert started(decisions) == [1, 7, 8, 9]             # alice's first job; all of bob's
    assert decisions.put_off == ("2.0", "3.0", "4.0", "5.0", "6.0")
    for job_id in (2, 3, 4, 5, 6):
        lines = schedkit.reasons(decisions, job_id)
        assert len(lines) == 1 and lines[0].startswith(SENTENCE.format(owner="alice", steps=STEPS)), lines
    assert not any("evaluation steps" in line for job_id in (1, 7, 8, 9)
                   for line in schedkit.reasons(decisions, job_id))


def test_the_jobs_put_off_go_first_in_the_next_pass_so_all_start_in_turn():
    """alice's first job matches no slot and costs a pass's steps each time it is
    matched: were the put-off jobs not taken first, it would be the only one matched
    in every pass, and her others would wait for ever."""
    jobs, requirements = alice_and_bob(never=(1,))
    left, put_off, passes, order = jobs, (), 0, []
    while any(j["owner"] == "alice" and j["id"] != 1 for j in left):
        passes += 1
        assert passes <= 7, order
        _snap, decisions = one_pass(left, requirements, put_off)
        if passes == 1:
            assert started(decisions) == [7, 8, 9]        # bob's, in the same pass
        now = started(decisions)
        assert len([j for j in now if j < 7]) <= 1          # one costly job a pass
        order.extend(now)
        left = [j for j in left if j["id"] not in now]
        put_off = decisions.put_off
    assert order == [7, 8, 9, 2, 3, 4, 5, 6]
    assert [j["id"] for j in left] == [1]                   # (it matches nothing)


def test_without_a_limit_the_costly_owner_takes_the_whole_pass():
    jobs, requirements = alice_and_bob()
    _snap, decisions = one_pass(jobs, requirements, steps=0)
    assert started(decisions) == [1, 2, 3, 4, 5, 6, 7, 8, 9] and decisions.put_off == ()


def test_ordinary_workloads_never_meet_the_default():
    """Many users' many jobs with Requirements of their own (each job's differs: no two
    share an autocluster) are all matched under the default limit."""
    assert SchedConfig().owner_steps >= 1_000_000
    jobs = [{"id": i, "owner": f"u{i % 3}", "submit": i} for i in range(1, 13)]
    requirements = {i: f"TARGET.Memory >= RequestMemory && ClusterId == {i} && TARGET.Cpus >= 1"
                    for i in range(1, 13)}
    snap, decisions = one_pass(jobs, requirements, steps=None)
    assert snap.config.owner_steps == SchedConfig().owner_steps
    assert started(decisions) == list(range(1, 13)) and decisions.put_off == ()


# ---------------------------------------------------------------- Grid Engine's order

def test_jobs_and_procs_put_off_wait_with_the_reason_in_grid_engines_order():
    """In Grid Engine's order the daemon evaluates the HTCondor jobs' Requirements before
    the pass (daemon.slotads.refusals) and names what it put off; the pass starts none of
    those, and the other jobs as usual."""
    sc = {"hosts": ["h1"], "slots": 8, "now": NOW, "sched": {"params": "OWNER_MATCH_STEPS=500"},
          "jobs": [{"id": 1, "owner": "alice", "tasks": [1, 2, 3]}, {"id": 2, "owner": "alice"},
                   {"id": 3, "owner": "bob"}]}
    snap = schedkit.snapshot(sc)
    assert snap.config.owner_steps == 500
    decisions = cycle(replace(snap, put_off={1: frozenset({2}), 2: None}))
    assert schedkit.starts(decisions) == ["1.1 all.q@h1=1", "1.3 all.q@h1=1", "3.1 all.q@h1=1"]
    sentence = SENTENCE.format(owner="alice", steps=500)
    assert [line[:len(sentence)] for line in schedkit.reasons(decisions, 1)] == [sentence]
    assert [line[:len(sentence)] for line in schedkit.reasons(decisions, 2)] == [sentence]
    assert cycle(snap).starts and len(cycle(snap).starts) == 5          # (nothing put off: all five)


@pytest.mark.parametrize("params,why", [
    ("OWNER_MATCH_STEPS=1000000", None),
    ("NEGOTIATOR=1,OWNER_MATCH_STEPS=0", None),
    ("OWNER_MATCH_STEPS=lots", 'invalid value "lots" for param "OWNER_MATCH_STEPS": expected a whole number'),
    ("OWNER_MATCH_STEPS=-5", 'invalid value "-5" for param "OWNER_MATCH_STEPS": expected a whole number'),
])
def test_the_param_is_a_whole_number(params, why):
    assert sched_format._params_refusal(params) == why


def test_the_evaluator_counts_the_steps_of_every_evaluation():
    from gridtools.classad import ERROR
    from gridtools.classad.budget import STEPS, steps_taken
    ad = ClassAd({"Memory": 10})
    before = steps_taken()
    assert parse("Memory > 1").eval(ad) is True
    ordinary = steps_taken() - before
    assert 1 <= ordinary < 10
    before = steps_taken()
    assert parse(COSTLY.replace("ClusterId > 0 && ", "").replace("TARGET.", "")).eval(
        ClassAd({"Memory": 10, "RequestMemory": 1})) is True
    assert 50_000 < steps_taken() - before < STEPS
    before = steps_taken()                                   # (over the budget: counted too)
    assert parse(f'stringListMember("zz", "{LONG},{LONG},{LONG},{LONG}")').eval() is ERROR
    assert steps_taken() - before > STEPS


# ---------------------------------------------------------------- what a step is

#: a pattern that backtracks: matching it against ``BACKTRACKED`` takes some milliseconds
#: (far below the 0.2 seconds an evaluation's matching may take), for two steps of calls
BACKTRACKING = "^(a|aa)*$"
BACKTRACKED = "a" * 23 + "b"
#: a Requirements that costs that much, and differs from job to job
REGEX_COSTLY = f'regexp("{BACKTRACKING}", "{BACKTRACKED}") == false && ClusterId > 0 && ' \
               "TARGET.Memory >= RequestMemory"


def test_the_time_a_regular_expression_takes_counts_as_steps():
    """A match that backtracks for milliseconds costs as many thousand steps, not the two
    of its call: the owner's budget sees it."""
    import time
    from gridtools.classad.budget import steps_taken
    expr = parse(f'regexp("{BACKTRACKING}", "{BACKTRACKED}")')
    assert expr.eval() is False                             # (the pattern compiled, kept)
    before, began = steps_taken(), time.monotonic()
    assert expr.eval() is False
    took = time.monotonic() - began
    assert steps_taken() - before >= 1000
    assert steps_taken() - before <= took * 1_000_000 + 10
    ordinary, costs = parse('regexp("^a", "ab")'), []      # (a step or a few: at least once
    for _ in range(5):                                      # in five, on a loaded machine)
        before = steps_taken()
        assert ordinary.eval() is True
        costs.append(steps_taken() - before)
    assert min(costs) < 10, costs


def test_the_time_a_regular_expression_takes_counts_against_the_evaluations_budget(monkeypatch):
    """The evaluation's own budget of steps sees the time too: at a step a nanosecond,
    the same match is over it, and ERROR."""
    from gridtools.classad import ERROR, budget
    expr = parse(f'regexp("{BACKTRACKING}", "{BACKTRACKED}")')
    assert expr.eval() is False
    monkeypatch.setattr(budget, "STEPS_PER_SECOND", 1_000_000_000)
    assert expr.eval() is ERROR
    assert parse('regexp("^a", "ab")').eval() is True


def test_jobs_whose_regular_expressions_backtrack_spend_their_owners_steps():
    """alice's jobs each match a backtracking pattern in their Requirements (two steps of
    calls, milliseconds of matching): her first job is matched, her others put off; bob's
    start in the same pass."""
    jobs, _requirements = alice_and_bob()
    requirements = {i: REGEX_COSTLY for i in range(1, 7)}
    _snap, decisions = one_pass(jobs, requirements)
    assert started(decisions) == [1, 7, 8, 9]
    assert decisions.put_off == ("2.0", "3.0", "4.0", "5.0", "6.0")
    for job_id in (2, 3, 4, 5, 6):
        lines = schedkit.reasons(decisions, job_id)
        assert len(lines) == 1 and lines[0].startswith(SENTENCE.format(owner="alice", steps=STEPS)), lines


# ---------------------------------------------------------------- whose steps

def grouped_ads(snap, requirements, groups):
    """job_ads, each job of ``groups`` (job id -> accounting group) naming its group."""
    plain = job_ads(snap, requirements)

    def job_ad(job_id, task):
        ad = plain(job_id, task)
        if job_id in groups:
            ad["AccountingGroup"] = groups[job_id]
        return ad
    return job_ad


def grouped_pass(jobs, requirements, groups, put_off=()):
    snap = schedkit.snapshot(scenario(jobs))
    inputs = matchpass.Inputs(slots(snap), grouped_ads(snap, requirements, groups), {}, N.NegotiatorConfig(),
                              put_off=put_off)
    return matchpass.match_pass(snap, inputs)


def test_a_job_that_names_another_users_group_spends_its_owners_steps():
    """alice's costly jobs name bob as their accounting group (accounting_group_user =
    bob): they count for bob's submitter, but spend alice's steps, not bob's; bob's
    plain jobs start in the same pass, and the reason names alice."""
    jobs, requirements = alice_and_bob()
    decisions = grouped_pass(jobs, requirements, dict.fromkeys(range(1, 7), "bob"))
    assert started(decisions) == [1, 7, 8, 9]
    assert decisions.put_off == ("2.0", "3.0", "4.0", "5.0", "6.0")
    assert set(decisions.submitters) == {"bob"}
    for job_id in (2, 3, 4, 5, 6):
        lines = schedkit.reasons(decisions, job_id)
        assert len(lines) == 1 and lines[0].startswith(SENTENCE.format(owner="alice", steps=STEPS)), lines
    assert not any("evaluation steps" in line for job_id in (7, 8, 9)
                   for line in schedkit.reasons(decisions, job_id))


def test_jobs_spread_over_accounting_groups_share_their_owners_steps():
    """alice's costly jobs each name a group of their own: one submitter each, but one
    budget (hers), so one of them is matched in the pass, as without the groups."""
    jobs, requirements = alice_and_bob()
    decisions = grouped_pass(jobs, requirements, {i: f"g{i}.alice" for i in range(1, 7)})
    assert len(decisions.submitters) == 7
    alices = [j for j in started(decisions) if j < 7]
    assert len(alices) == 1 and [j for j in started(decisions) if j >= 7] == [7, 8, 9]
    assert sorted(decisions.put_off) == sorted(f"{i}.0" for i in range(1, 7) if i not in alices)
    for job_id in set(range(1, 7)) - set(alices):
        lines = schedkit.reasons(decisions, job_id)
        assert len(lines) == 1 and lines[0].startswith(SENTENCE.format(owner="alice", steps=STEPS)), lines


def test_the_jobs_put_off_across_groups_still_all_start_in_turn():
    """As test_the_jobs_put_off_go_first_in_the_next_pass_so_all_start_in_turn, with
    each of alice's jobs in a group of its own: her first job, which matches no slot, is
    not matched before the others the last pass put off, whatever the order of their
    submitters."""
    jobs, requirements = alice_and_bob(never=(1,))
    groups = {i: f"g{i}.alice" for i in range(1, 7)}
    left, put_off, order = jobs, (), []
    for _ in range(7):
        decisions = grouped_pass(left, requirements, groups, put_off)
        now = started(decisions)
        assert len([j for j in now if j < 7]) <= 1          # one costly job a pass
        order.extend(now)
        left = [j for j in left if j["id"] not in now]
        put_off = decisions.put_off
        if [j["id"] for j in left] == [1]:
            break
    assert sorted(order) == [2, 3, 4, 5, 6, 7, 8, 9] and [j["id"] for j in left] == [1]


#: a Requirements of 250 comparisons with literals, false for every slot: no attribute
#: or function in it costs much, walking its thousand nodes does
WIDE_NEVER = " || ".join(f"TARGET.Memory < {-i}" for i in range(250)) + " || ClusterId < 0"


def test_walking_a_wide_expression_costs_steps():
    """An expression evaluated as a whole costs a step for each budget.NODES_PER_STEP of
    its nodes beyond budget.FREE_NODES, whatever its attributes and functions cost; an
    ordinary one costs what it did."""
    from gridtools.classad import budget
    wide = parse(WIDE_NEVER)
    target = ClassAd({"Memory": 4096})
    before = budget.steps_taken()
    assert wide.eval(ClassAd({"ClusterId": 1}), target) is False
    assert budget.steps_taken() - before >= wide.size // budget.NODES_PER_STEP >= 250
    small = parse("TARGET.Memory >= 1 && ClusterId > 0")
    before = budget.steps_taken()
    assert small.eval(ClassAd({"ClusterId": 1}), target) is True
    assert budget.steps_taken() - before < 10


def test_jobs_with_wide_requirements_spend_their_owners_steps():
    """alice's jobs whose Requirements are wide but cost no attribute or function are
    put off once her steps are spent, as costly ones are; bob's start in the pass."""
    jobs, _ = alice_and_bob()
    requirements = {i: WIDE_NEVER.replace("ClusterId < 0", f"ClusterId < {-i}") for i in range(1, 7)}
    snap, decisions = one_pass(jobs, requirements)
    assert started(decisions) == [7, 8, 9]
    assert decisions.put_off and set(decisions.put_off) <= {f"{i}.0" for i in range(1, 7)}

"""Functional and override tickets and the policy hierarchy, with numbers worked by hand.

F = weight_tickets_functional. The functional weights (user, project,
department, job) are 0.25 each unless a test says otherwise; pending jobs
weigh all four (so a user's part is 0.25 F), running jobs only the
categories in which someone has shares.
"""

import pytest

from gridtools.sched.policy import greedy, tickets
from gridtools.sched.policy.config import (
    Policy, PolicyConfig, parse_hierarchy, ticket_steps)
from gridtools.sched.policy.inputs import AutoUser, Member, Members, PolicyJob, ShareNode

F = 10000.0


def run(job_id, owner, **kw):
    return PolicyJob(job_id, owner, float(job_id), pending=(), running=(1,), **kw)


def wait(job_id, owner, **kw):
    return PolicyJob(job_id, owner, float(job_id), **kw)


def compute(jobs, members, **config):
    return tickets.compute(jobs, members, PolicyConfig(**config))


def field(result, name, ids):
    return [getattr(result.of(i), name) for i in ids]


# -- functional policy ------------------------------------------------------

SEED_USERS = Members.of(users=[Member("davidson", fshare=200), Member("donlee", fshare=100)])


def test_running_user_with_twice_the_shares_gets_twice_the_tickets():
    """Seed: davidson 200 shares, donlee 100. One running job each: only the
    user category has shares, so it weighs 1; 200/300 and 100/300 of F."""
    result = compute([run(1, "davidson"), run(2, "donlee")], SEED_USERS,
                     weight_tickets_functional=F)
    assert field(result, "ftckt", (1, 2)) == pytest.approx([20000 / 3, 10000 / 3])


def test_pending_jobs_are_ranked_one_by_one():
    """The same users, one pending job each, nothing running.

    Round 1: davidson's job would get 0.25 * 200 * F / 0.001 (huge), more
    than donlee's; it is counted as running (user sum 200) and gets
    0.25 * 200 * F / 200 = 2500. Round 2: donlee's job, user sum 300:
    0.25 * 100 * F / 300 = 833.33.
    """
    result = compute([wait(1, "davidson"), wait(2, "donlee")], SEED_USERS,
                     weight_tickets_functional=F)
    assert field(result, "ftckt", (1, 2)) == pytest.approx([2500.0, 2500.0 / 3])


def test_pending_jobs_of_users_with_200_and_100_shares_come_out_two_to_one():
    """Ten pending jobs each: among the first nine in ticket order, six are
    davidson's and three donlee's (each round, davidson's next job is worth
    200 / (n + 1) shares against donlee's 100 / (m + 1))."""
    jobs = [wait(i, "davidson") for i in range(1, 11)] + [wait(i, "donlee")
                                                           for i in range(11, 21)]
    result = compute(jobs, SEED_USERS, weight_tickets_functional=F)
    ranked = sorted(jobs, key=lambda j: (-result.of(j.id).ftckt, j.id))
    assert [j.owner for j in ranked[:9]].count("davidson") == 6


def test_equal_share_per_user_with_auto_users():
    """Seed's -user_sort example: enforce_user auto, auto_user_fshare 100,
    weight_tickets_functional 10000. u1 submits three jobs, then u2 three,
    then u3 one; nothing runs.

    Ranks (user sum S after each pick, shares of the picked job):
    u1 (S=100, 100): 0.25*100*F/100 = 2500; u2 (S=200): 1250; u3 (S=300):
    833.33; u1 again (100/2 shares, S=300): 416.67; u2 416.67 (tie with
    u1's: earlier submission first); u1 (100/3): 277.78; u2 277.78. Users
    alternate whatever the submission order.
    """
    jobs = [wait(i, "u1") for i in (1, 2, 3)] + [wait(i, "u2") for i in (4, 5, 6)] + [
        wait(7, "u3")]
    members = Members(auto_user=AutoUser(fshare=100))
    result = compute(jobs, members, weight_tickets_functional=F)
    by_job = dict(zip(range(1, 8), field(result, "ftckt", range(1, 8))))
    expected = {1: 2500.0, 4: 1250.0, 7: 2500.0 / 3, 2: 1250.0 / 3, 5: 1250.0 / 3,
                3: 2500.0 / 9, 6: 2500.0 / 9}
    assert by_job == pytest.approx(expected)
    order = sorted(by_job, key=lambda i: (-round(by_job[i], 6), i))
    assert order == [1, 4, 7, 2, 5, 3, 6]


def test_jobs_beyond_max_functional_jobs_to_schedule_get_estimates():
    """As above but only 2 jobs are ranked. Rounds: u1's first (2500), u2's
    first (1250). The others get what the first job of their category was
    worth in the last round (user sum 100, u1 counted once):
    u1: 0.25 * (100/2) * F / 100.001 = 1249.99; u2 and u3:
    0.25 * 100 * F / 100.001 = 2499.98."""
    jobs = [wait(i, "u1") for i in (1, 2, 3)] + [wait(i, "u2") for i in (4, 5, 6)] + [
        wait(7, "u3")]
    result = compute(jobs, Members(auto_user=AutoUser(fshare=100)),
                     weight_tickets_functional=F, max_functional_jobs_to_schedule=2)
    low, high = 0.25 * 50 * F / 100.001, 0.25 * 100 * F / 100.001
    assert field(result, "ftckt", range(1, 8)) == pytest.approx(
        [2500.0, low, low, 1250.0, high, high, high])


def test_share_functional_shares_false_gives_every_job_the_full_shares():
    """davidson runs two jobs, donlee one. Shared: davidson's 200 shares
    split (100 each), sum 300: 3333.33 for every job. Not shared: sum
    200 + 200 + 100 = 500: 4000, 4000 and 2000."""
    jobs = [run(1, "davidson"), run(2, "davidson"), run(3, "donlee")]
    shared = compute(jobs, SEED_USERS, weight_tickets_functional=F)
    full = compute(jobs, SEED_USERS, weight_tickets_functional=F,
                   share_functional_shares=False)
    assert field(shared, "ftckt", (1, 2, 3)) == pytest.approx([F / 3] * 3)
    assert field(full, "ftckt", (1, 2, 3)) == pytest.approx([4000.0, 4000.0, 2000.0])


def test_job_shares_and_several_categories():
    """Running: job 1 of alice (fshare 100) in projA (fshare 50) with -js 3,
    job 2 of bob (fshare 0) in projB (fshare 150) with -js 1. Categories
    with shares: user, project, job, weights 1/3 each.
    Job 1: (100/100 + 50/200 + 3/4) / 3 * F = 6666.67;
    job 2: (0 + 150/200 + 1/4) / 3 * F = 3333.33."""
    members = Members.of(users=[Member("alice", fshare=100), Member("bob")],
                         projects=[Member("projA", fshare=50), Member("projB", fshare=150)])
    jobs = [run(1, "alice", project="projA", jobshare=3),
            run(2, "bob", project="projB", jobshare=1)]
    result = compute(jobs, members, weight_tickets_functional=F)
    assert field(result, "ftckt", (1, 2)) == pytest.approx([20000 / 3, 10000 / 3])


def test_departments_count_as_a_category():
    """weight_department only; dept X (fshare 3) and Y (fshare 1), one running
    job each: 7500 and 2500."""
    members = Members.of(departments=[Member("X", fshare=3), Member("Y", fshare=1)])
    jobs = [run(1, "a", department="X"), run(2, "b", department="Y")]
    result = compute(jobs, members, weight_tickets_functional=F, weight_user=0,
                     weight_project=0, weight_job=0, weight_department=1)
    assert field(result, "ftckt", (1, 2)) == [7500.0, 2500.0]


def test_jobs_without_any_functional_shares_get_no_functional_tickets():
    result = compute([wait(1, "nobody"), run(2, "nobody")], Members(),
                     weight_tickets_functional=F)
    assert field(result, "ftckt", (1, 2)) == [0.0, 0.0]


# -- override policy -------------------------------------------------------

OT_MEMBERS = Members.of(users=[Member("alice", oticket=1000), Member("bob", oticket=400)],
                        projects=[Member("projA", oticket=300)])


def test_running_override_tickets_are_shared_among_a_members_jobs():
    """alice (1000) runs two jobs, one with 50 job tickets; bob (400) one;
    all three in projA (300): alice's 500 + 100 (+ 50), bob's 400 + 100."""
    jobs = [run(1, "alice", project="projA", oticket=50), run(2, "alice", project="projA"),
            run(3, "bob", project="projA")]
    shared = compute(jobs, OT_MEMBERS)
    full = compute(jobs, OT_MEMBERS, share_override_tickets=False)
    assert field(shared, "otckt", (1, 2, 3)) == [650.0, 600.0, 500.0]
    assert field(full, "otckt", (1, 2, 3)) == [1350.0, 1300.0, 700.0]


def test_pending_override_tickets_as_if_the_job_ran_next():
    """alice runs one job; her pending ones are ranked: the first would be
    her second running job (1000/2 = 500), the next her third (333.33)."""
    jobs = [run(1, "alice"), wait(2, "alice"), wait(3, "alice")]
    result = compute(jobs, OT_MEMBERS)
    assert field(result, "otckt", (1, 2, 3)) == pytest.approx([1000.0, 500.0, 1000 / 3])


def test_pending_override_ranking_across_users():
    """alice (1000) two pending, bob (400) one: alice's first 1000, then her
    second 500 beats bob's 400, then bob's 400. Job tickets add in full."""
    jobs = [wait(1, "alice"), wait(2, "alice"), wait(3, "bob"), wait(4, "carol", oticket=200)]
    result = compute(jobs, OT_MEMBERS)
    assert field(result, "otckt", (1, 2, 3, 4)) == [1000.0, 500.0, 400.0, 200.0]


def test_unshared_pending_override_tickets_are_the_full_amounts():
    jobs = [wait(1, "alice", project="projA"), wait(2, "alice", project="projA")]
    result = compute(jobs, OT_MEMBERS, share_override_tickets=False)
    assert field(result, "otckt", (1, 2)) == [1300.0, 1300.0]


# -- policy hierarchy ------------------------------------------------------

def test_parse_hierarchy():
    O, F_, S = Policy.OVERRIDE, Policy.FUNCTIONAL, Policy.SHARE_TREE
    assert parse_hierarchy("OFS") == (O, F_, S)
    assert parse_hierarchy("os") == (O, S)
    assert parse_hierarchy("NONE") == () and parse_hierarchy("") == ()
    assert parse_hierarchy("OFSD") == (O, F_, S)
    with pytest.raises(ValueError, match="unknown"):
        parse_hierarchy("OX")
    with pytest.raises(ValueError, match="twice"):
        parse_hierarchy("OSO")
    assert ticket_steps((S,)) == ((S, True), (O, False), (F_, False))


THREE_JOBS = [wait(1, "alice"), wait(2, "alice"), wait(3, "alice", oticket=100)]
ALICE = Members.of(users=[Member("alice", fshare=100)])
ONE_LEAF = ShareNode("Root", 1, (ShareNode("alice", 1),))


def test_os_hierarchy_override_orders_the_share_tree():
    """policy_hierarchy OS, weight_tickets_share 1000: job 3 has 100 override
    tickets, so at alice's leaf it comes first: 1000, then jobs 1 and 2
    get 1000/2 and 1000/3. Totals 500, 333.33, 1100."""
    config = PolicyConfig(weight_tickets_share=1000, policy_hierarchy=parse_hierarchy("OS"))
    result = tickets.compute(THREE_JOBS, ALICE, config, ONE_LEAF)
    assert field(result, "stckt", (1, 2, 3)) == pytest.approx([500.0, 1000 / 3, 1000.0])
    assert [result.of(i).total for i in (1, 2, 3)] == pytest.approx([500.0, 1000 / 3, 1100.0])


def test_without_hierarchy_the_share_tree_goes_first_come_first_served():
    """policy_hierarchy S (override outside it): jobs 1, 2, 3 get 1000, 500,
    333.33 share tree tickets; job 3's 100 override tickets come on top."""
    config = PolicyConfig(weight_tickets_share=1000, policy_hierarchy=parse_hierarchy("S"))
    result = tickets.compute(THREE_JOBS, ALICE, config, ONE_LEAF)
    assert field(result, "stckt", (1, 2, 3)) == pytest.approx([1000.0, 500.0, 1000 / 3])
    assert result.of(3).total == pytest.approx(1000 / 3 + 100)


def test_of_hierarchy_override_orders_the_functional_ranking():
    """policy_hierarchy OF, F = 1000, user weight only: job 3 (100 override
    tickets) heads alice's category: 100/100 of F = 1000; then job 1 with
    100/2 shares (sum 100): 500; job 2: 333.33."""
    config = PolicyConfig(weight_tickets_functional=1000, weight_user=1, weight_project=0,
                          weight_department=0, weight_job=0,
                          policy_hierarchy=parse_hierarchy("OF"))
    result = tickets.compute(THREE_JOBS, ALICE, config)
    assert field(result, "ftckt", (1, 2, 3)) == pytest.approx([500.0, 1000 / 3, 1000.0])
    none = tickets.compute(THREE_JOBS, ALICE, PolicyConfig(
        weight_tickets_functional=1000, weight_user=1, weight_project=0, weight_department=0,
        weight_job=0, policy_hierarchy=()))
    assert field(none, "ftckt", (1, 2, 3)) == pytest.approx([1000.0, 500.0, 1000 / 3])


def test_fs_hierarchy_functional_orders_the_share_tree():
    """FS: bob's jobs have -js; functional (job weight) gives job 2 more than
    job 1, so at bob's leaf job 2 is first (1000) and job 1 second (500)."""
    config = PolicyConfig(weight_tickets_share=1000, weight_tickets_functional=100,
                          weight_user=0, weight_project=0, weight_department=0, weight_job=1,
                          policy_hierarchy=parse_hierarchy("FS"))
    jobs = [wait(1, "bob", jobshare=1), wait(2, "bob", jobshare=5)]
    members = Members.of(users=[Member("bob")])
    result = tickets.compute(jobs, members, config, ShareNode("Root", 1, (ShareNode("bob", 1),)))
    assert result.of(2).ftckt > result.of(1).ftckt
    assert field(result, "stckt", (1, 2)) == pytest.approx([500.0, 1000.0])


def test_ticket_shares_of_pending_and_running_jobs():
    """share = tickets / all tickets of the pending (or the running) jobs."""
    jobs = [run(1, "alice"), run(2, "bob"), wait(3, "alice"), wait(4, "bob")]
    result = compute(jobs, OT_MEMBERS)
    assert result.of(1).share == pytest.approx(1000 / 1400)
    assert result.of(3).share == pytest.approx(500 / 700)


# -- the one-by-one ranking ------------------------------------------------

class _Task:
    def __init__(self, key):
        self.key = key


def _scenario(seed):
    """Categories of tasks in groups; a task's value falls as its group and
    everyone take tasks (like shares divided among more running jobs)."""
    import random
    rng = random.Random(seed)
    cats, group_of = [], {}
    serial = 0
    for n in range(rng.randint(1, 12)):
        cat = greedy.Category(None, None, None, rng.choice([1, 2, 2, 4]), "fshare")
        group_of[id(cat)] = rng.randint(0, 3)
        for _ in range(rng.randint(1, 6)):
            serial += 1
            cat.refs.append(_Task((rng.randint(0, 3), serial, 1)))
        cat.refs.sort(key=lambda t: t.key)
        cats.append(cat)
    return cats, group_of


def _pick_all_by_looking_at_every_category(cats, value, limit, take):
    taken = 0
    while taken < limit:
        open_cats = [c for c in cats if c.pos < len(c.refs)]
        if not open_cats:
            break
        best = min(open_cats, key=lambda c: (-value(c), c.refs[c.pos].key))
        take(best, best.refs[best.pos], value(best))
        best.pos += 1
        taken += 1


@pytest.mark.parametrize("seed", range(40))
def test_lazy_ranking_picks_what_looking_at_every_category_picks(seed):
    """Values with many exact ties (small integers) and falling as tasks are
    taken: the heap must take the same tasks in the same order as a scan of
    every category each round, ties to the lowest key."""
    picked = []
    for pick in (greedy.pick, _pick_all_by_looking_at_every_category):
        cats, group_of = _scenario(seed)
        taken_in, order = [0, 0, 0, 0], []

        def value(cat):
            return cat.job_value / (1 + taken_in[group_of[id(cat)]]) / (1 + 0.1 * len(order))

        def take(cat, task, _value):
            taken_in[group_of[id(cat)]] += 1
            order.append(task.key)

        pick(cats, value, 25, take)
        picked.append(order)
    assert picked[0] == picked[1]
    assert len(picked[0]) == min(25, sum(len(c.refs) for c in _scenario(seed)[0]))

"""The share tree policy (sched.policy.sharetree) with numbers worked by hand.

Notation as in the module: ltt/oltt long-term targets, shr = shares**2 /
max(usage, oltt), stt = shr / sum of active siblings' shr, ostt the
product of the stt above; T = weight_tickets_share.
"""

import pytest

from gridtools.accounting.usage import Usage
from gridtools.sched.policy import tickets
from gridtools.sched.policy.config import PolicyConfig
from gridtools.sched.policy.inputs import (
    AutoUser, Member, Members, PolicyJob, ProjectUsage, ShareNode)

T = 10000.0


def tree(*children, shares=1):
    return ShareNode("Root", shares, tuple(children))


def users(*names, usage=None):
    usage = usage or {}
    return Members.of(users=[Member(n, usage=Usage(cpu=usage.get(n, 0.0))) for n in names])


def pending(spec):
    """PolicyJobs from "owner" strings, ids 1.. in submission order."""
    return [PolicyJob(i, owner, submit_time=float(i)) for i, owner in enumerate(spec, 1)]


def stckt(result, job_id, task=None):
    return result.of(job_id, task).stckt


def test_fifty_fifty_pending_jobs_interleave_with_falling_tickets():
    """Users a and b with 50 shares each, no usage, all jobs pending.

    ltt = oltt = 0.5; shr = 50**2 / max(0, 0.5) = 5000 for both, so
    stt = 0.5. A user's n-th pending job gets stt / n of T: a's three jobs
    5000, 2500, 1666.67; b's two 5000, 2500.
    """
    jobs = pending(["a", "a", "a", "b", "b"])
    result = tickets.compute(jobs, users("a", "b"), PolicyConfig(weight_tickets_share=T),
                             tree(ShareNode("a", 50), ShareNode("b", 50)))
    assert [stckt(result, i) for i in range(1, 6)] == pytest.approx(
        [5000.0, 2500.0, 5000.0 / 3, 5000.0, 2500.0])


def test_usage_below_target_raises_the_short_term_share():
    """a 75 shares, b 25; a used 3000 CPU seconds, b nothing (cf 5).

    shr_a = 75**2 / 3000 = 1.875, shr_b = 25**2 / max(0, 0.25) = 2500:
    stt_b = 2500 / 2501.875 = 0.999251, stt_a = 0.000749. No compensation:
    ostt_b = 0.999 is below 5 * 0.25.
    """
    jobs = pending(["a", "b"])
    result = tickets.compute(jobs, users("a", "b", usage={"a": 3000.0}),
                             PolicyConfig(weight_tickets_share=T),
                             tree(ShareNode("a", 75), ShareNode("b", 25)))
    assert stckt(result, 1) == pytest.approx(T * 1.875 / 2501.875)
    assert stckt(result, 2) == pytest.approx(T * 2500.0 / 2501.875)


def test_usage_in_proportion_to_shares_gives_the_long_term_targets():
    """a 75 / b 25 having used 3000 / 1000: shr 1.875 / 0.625, stt 0.75 / 0.25."""
    jobs = pending(["a", "b"])
    result = tickets.compute(jobs, users("a", "b", usage={"a": 3000.0, "b": 1000.0}),
                             PolicyConfig(weight_tickets_share=T),
                             tree(ShareNode("a", 75), ShareNode("b", 25)))
    assert [stckt(result, 1), stckt(result, 2)] == pytest.approx([7500.0, 2500.0])


def test_compensation_factor_limits_a_node_far_below_its_usage_target():
    """a 20 shares no usage, b 80 shares 100 CPU s, compensation_factor 2.

    shr_a = 400 / 0.2 = 2000, shr_b = 6400 / 100 = 64: stt_a = 0.968992,
    above 2 * oltt_a = 0.4, so shr_a = 400 / (0.2 * 0.968992 / 0.4) = 825.6
    and stt_a = 825.6 / 889.6 = 0.928058. With factor 0 (off) stt_a stays
    0.968992.
    """
    members = users("a", "b", usage={"b": 100.0})
    shape = tree(ShareNode("a", 20), ShareNode("b", 80))
    jobs = pending(["a", "b"])
    limited = tickets.compute(jobs, members, PolicyConfig(weight_tickets_share=T,
                                                          compensation_factor=2.0), shape)
    free = tickets.compute(jobs, members, PolicyConfig(weight_tickets_share=T,
                                                       compensation_factor=0.0), shape)
    assert stckt(limited, 1) == pytest.approx(T * 825.6 / 889.6)
    assert stckt(limited, 2) == pytest.approx(T * 64.0 / 889.6)
    assert stckt(free, 1) == pytest.approx(T * 2000.0 / 2064.0)


def test_usage_weight_list_combines_cpu_mem_and_io():
    """usage_weight_list cpu=1,mem=1 (io 0): a's usage (100 cpu, 300 mem)
    combines to 200, b's (0, 50) to 25; 50/50 shares:
    shr_a = 2500 / 200 = 12.5, shr_b = 2500 / 25 = 100, stt_b = 100 / 112.5."""
    members = Members.of(users=[Member("a", usage=Usage(100.0, 300.0)),
                                Member("b", usage=Usage(0.0, 50.0))])
    config = PolicyConfig(weight_tickets_share=T, usage_weights=Usage(1.0, 1.0, 0.0))
    result = tickets.compute(pending(["a", "b"]), members, config,
                             tree(ShareNode("a", 50), ShareNode("b", 50)))
    assert stckt(result, 2) == pytest.approx(T * 100.0 / 112.5)


def test_running_jobs_keep_their_share_and_push_pending_jobs_down():
    """a and b (50/50) each run one job; a has two pending, b one.

    Running: over the running jobs alone both leaves have ostt 0.5, so each
    running job holds 5000. Pending: at a's leaf the running job comes
    first (dilution 1), so a's pending jobs get 0.5/2 and 0.5/3 of T:
    2500, 1666.67; b's pending job 2500.
    """
    jobs = [PolicyJob(1, "a", 1.0, pending=(), running=(1,)),
            PolicyJob(2, "b", 2.0, pending=(), running=(1,)),
            PolicyJob(3, "a", 3.0), PolicyJob(4, "a", 4.0), PolicyJob(5, "b", 5.0)]
    result = tickets.compute(jobs, users("a", "b"), PolicyConfig(weight_tickets_share=T),
                             tree(ShareNode("a", 50), ShareNode("b", 50)))
    assert [stckt(result, i) for i in range(1, 6)] == pytest.approx(
        [5000.0, 5000.0, 2500.0, 5000.0 / 3, 2500.0])


def test_running_jobs_only_see_running_jobs():
    """a runs two jobs, b only has pending ones: a's leaf is the only active
    one among running jobs (ostt 1), its two jobs split T evenly."""
    jobs = [PolicyJob(1, "a", 1.0, pending=(), running=(1, 2)), PolicyJob(2, "b", 2.0)]
    result = tickets.compute(jobs, users("a", "b"), PolicyConfig(weight_tickets_share=T),
                             tree(ShareNode("a", 50), ShareNode("b", 50)))
    assert [stckt(result, 1, 1), stckt(result, 1, 2)] == [5000.0, 5000.0]
    assert stckt(result, 2) == 5000.0


def test_running_jobs_at_one_leaf_split_by_job_shares():
    """Two running jobs of a with -js 1 and -js 3: 1/4 and 3/4 of a's T."""
    jobs = [PolicyJob(1, "a", 1.0, jobshare=1, pending=(), running=(1,)),
            PolicyJob(2, "a", 2.0, jobshare=3, pending=(), running=(1,))]
    result = tickets.compute(jobs, users("a"), PolicyConfig(weight_tickets_share=T),
                             tree(ShareNode("a", 1)))
    assert [stckt(result, 1), stckt(result, 2)] == [2500.0, 7500.0]


def test_job_shares_order_a_users_pending_jobs():
    """a's job 2 has -js 10: it comes first at a's leaf (stt/1), job 1 second (stt/2)."""
    jobs = [PolicyJob(1, "a", 1.0), PolicyJob(2, "a", 2.0, jobshare=10)]
    result = tickets.compute(jobs, users("a"), PolicyConfig(weight_tickets_share=T),
                             tree(ShareNode("a", 1)))
    assert [stckt(result, 1), stckt(result, 2)] == [5000.0, 10000.0]


def test_parallel_jobs_dilute_as_one_job():
    """a's first job asks for at least 4 slots: it counts one job, the next gets stt / 2."""
    jobs = [PolicyJob(1, "a", 1.0, min_slots=4), PolicyJob(2, "a", 2.0)]
    result = tickets.compute(jobs, users("a"), PolicyConfig(weight_tickets_share=T),
                             tree(ShareNode("a", 1)))
    assert [stckt(result, 1), stckt(result, 2)] == [10000.0, 5000.0]


def test_default_leaf_gives_each_user_its_shares():
    """Root -> alice (10), default (10). bob and carol map to default and get
    twins with 10 shares each: three active leaves, stt 1/3 each."""
    jobs = pending(["alice", "bob", "carol", "dave"])
    members = users("alice", "bob", "carol")          # dave is not a known user
    result = tickets.compute(jobs, members, PolicyConfig(weight_tickets_share=T),
                             tree(ShareNode("alice", 10), ShareNode("default", 10)))
    assert [stckt(result, i) for i in range(1, 5)] == pytest.approx(
        [T / 3, T / 3, T / 3, 0.0])


def test_enforce_user_auto_makes_unknown_owners_users():
    """With auto users dave maps to default too: four leaves, stt 1/4 each."""
    members = Members(users=users("alice", "bob", "carol").users, auto_user=AutoUser(fshare=100))
    result = tickets.compute(pending(["alice", "bob", "carol", "dave"]), members,
                             PolicyConfig(weight_tickets_share=T),
                             tree(ShareNode("alice", 10), ShareNode("default", 10)))
    assert [stckt(result, i) for i in range(1, 5)] == pytest.approx([T / 4] * 4)


def test_project_nodes():
    """Root -> projA (60), default (40), as in the reference share tree.

    carol's job under projA maps to the projA leaf; alice's job without a
    project to her default twin (40). shr = 60**2 / 0.6 = 6000 and
    40**2 / 0.4 = 4000: stt 0.6 and 0.4. A job under a project the tree
    does not name gets nothing.
    """
    members = Members.of(users=[Member("alice"), Member("carol")],
                         projects=[Member("projA"), Member("projB")])
    jobs = [PolicyJob(1, "carol", 1.0, project="projA"), PolicyJob(2, "alice", 2.0),
            PolicyJob(3, "alice", 3.0, project="projB")]
    shape = tree(ShareNode("projA", 60, project=True), ShareNode("default", 40))
    result = tickets.compute(jobs, members, PolicyConfig(weight_tickets_share=T), shape)
    assert [stckt(result, i) for i in (1, 2, 3)] == pytest.approx([6000.0, 4000.0, 0.0])


def test_users_inside_a_project_weigh_their_usage_in_that_project():
    """Root -> projA (1) -> alice (50), bob (50). alice used 100 CPU s in
    projA (and much more outside it, which does not count here), bob 0.
    The root has one active child, so projA's level is not handed out
    again: shr_alice = 2500 / 100 = 25, shr_bob = 2500 / 0.5 = 5000,
    stt_alice = 25 / 5025."""
    members = Members.of(
        users=[Member("alice", usage=Usage(cpu=1e9),
                      in_projects=(ProjectUsage("projA", Usage(cpu=100.0)),)),
               Member("bob")],
        projects=[Member("projA")])
    shape = tree(ShareNode("projA", 1, (ShareNode("alice", 50), ShareNode("bob", 50)),
                           project=True))
    jobs = [PolicyJob(1, "alice", 1.0, project="projA"),
            PolicyJob(2, "bob", 2.0, project="projA")]
    result = tickets.compute(jobs, members, PolicyConfig(weight_tickets_share=T), shape)
    assert [stckt(result, 1), stckt(result, 2)] == pytest.approx(
        [T * 25 / 5025, T * 5000 / 5025])


def test_inner_nodes_hand_out_their_share_again_in_merged_order():
    """Root -> P (50) -> a (30), b (10); Q (50) -> c (1); all pending.

    At P's leaves: a's jobs 0.75/1, 0.75/2, b's 0.25/1 (times T); merged
    at P by those tickets: a1, a2, b1, and P's stt 0.5 handed out again:
    0.5, 0.25, 0.1667. Q: c1 gets Q's 0.5.
    """
    shape = tree(ShareNode("P", 50, (ShareNode("a", 30), ShareNode("b", 10))),
                 ShareNode("Q", 50, (ShareNode("c", 1),)))
    jobs = pending(["a", "a", "b", "c"])
    result = tickets.compute(jobs, users("a", "b", "c"),
                             PolicyConfig(weight_tickets_share=T), shape)
    assert [stckt(result, i) for i in range(1, 5)] == pytest.approx(
        [5000.0, 2500.0, 5000.0 / 3, 5000.0])


def test_a_single_active_branch_is_not_handed_out_again():
    """Only P's users have jobs: the root's single active child P is treated
    as the root, so a and b keep their own stt 0.75 / 0.25."""
    shape = tree(ShareNode("P", 50, (ShareNode("a", 30), ShareNode("b", 10))),
                 ShareNode("Q", 50, (ShareNode("c", 1),)))
    result = tickets.compute(pending(["a", "a", "b"]), users("a", "b", "c"),
                             PolicyConfig(weight_tickets_share=T), shape)
    assert [stckt(result, i) for i in (1, 2, 3)] == pytest.approx([7500.0, 3750.0, 2500.0])


def test_array_tasks_count_as_jobs_up_to_max_pending_tasks_per_job():
    """One array job of 100 tasks: 50 take part (max_pending_tasks_per_job);
    task n gets T / n. With 3 free slots only 4 take part."""
    job = PolicyJob(1, "a", 1.0, pending=range(1, 101))
    config = PolicyConfig(weight_tickets_share=T)
    result = tickets.compute([job], users("a"), config, tree(ShareNode("a", 1)))
    assert len(result.tasks) == 50
    assert stckt(result, 1, 4) == 2500.0 and stckt(result, 1) == T
    few = tickets.compute([job], users("a"), config, tree(ShareNode("a", 1)), free_slots=3)
    assert sorted(few.tasks) == [(1, 1), (1, 2), (1, 3), (1, 4)]


def test_no_pool_no_share_tree_tickets():
    result = tickets.compute(pending(["a"]), users("a"), PolicyConfig(),
                             tree(ShareNode("a", 1)))
    assert stckt(result, 1) == 0.0


def test_share_tree_report_as_the_monitor_shows_it():
    """Root (1) -> projA (60, project), default (40); T = 1000.

    Running: carol's job under projA, alice's without a project (her twin
    of default); bob's job waits. Over the running jobs: oltt projA 0.6,
    alice 0.4; usage projA 60, alice 30, so shr 3600/60 = 60 and
    1600/30 = 53.33, short-term targets 60/113.33 = 0.5294 and 0.4706,
    which are also the running jobs' shares of T. The default row shows a
    child for each known user (all three map to it without a project),
    each with level 1/3 and total 0.4/3, and sums them. The tree's usage is
    60 (projA) + 30 + 10 + 0 = 100.
    """
    members = Members.of(
        users=[Member("alice", usage=Usage(cpu=30.0)), Member("bob", usage=Usage(cpu=10.0)),
               Member("carol", in_projects=(ProjectUsage("projA", Usage(cpu=20.0)),))],
        projects=[Member("projA", usage=Usage(cpu=60.0), long_term=Usage(cpu=80.0))])
    jobs = [PolicyJob(1, "carol", 1.0, project="projA", pending=(), running=(1,)),
            PolicyJob(2, "alice", 2.0, pending=(), running=(1,)),
            PolicyJob(3, "bob", 3.0)]
    shape = tree(ShareNode("projA", 60, project=True), ShareNode("default", 40))
    result = tickets.compute(jobs, members, PolicyConfig(weight_tickets_share=1000.0), shape)
    rows = {row.path: row for row in result.nodes}
    assert list(rows) == ["/", "/projA", "/default", "/default/alice", "/default/bob",
                          "/default/carol"]
    st_proj, st_alice = 60 / (60 + 1600 / 30), (1600 / 30) / (60 + 1600 / 30)
    root, proj, default = rows["/"], rows["/projA"], rows["/default"]
    assert (root.level, root.total, root.usage, root.actual, root.job_count) == (
        1.0, 1.0, 100.0, 1.0, 2)
    assert (proj.project, proj.shares, proj.level, proj.total, proj.job_count) == (
        "projA", 60, 0.6, 0.6, 1)
    assert proj.long_target == pytest.approx(0.6)
    assert proj.short_target == pytest.approx(st_proj)
    assert (proj.usage, proj.actual, proj.decayed, proj.long_term) == (
        60.0, 0.6, Usage(cpu=60.0), Usage(cpu=80.0))
    assert proj.tickets == pytest.approx(1000 * st_proj)
    assert result.of(1).stckt == pytest.approx(1000 * st_proj)
    assert (default.level, default.job_count, default.usage) == (0.4, 1, 40.0)
    assert default.short_target == pytest.approx(st_alice)
    alice, bob = rows["/default/alice"], rows["/default/bob"]
    assert (alice.user, alice.shares, alice.job_count, alice.usage, alice.actual) == (
        "alice", 40, 1, 30.0, 0.3)
    assert alice.level == pytest.approx(1 / 3) and alice.total == pytest.approx(0.4 / 3)
    assert alice.long_target == pytest.approx(0.4)
    assert alice.tickets == pytest.approx(1000 * st_alice)
    assert (bob.job_count, bob.long_target, bob.short_target, bob.usage) == (0, 0.0, 0.0, 10.0)
    assert rows["/default/carol"].usage == 0.0

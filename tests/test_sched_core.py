"""The pass as a pure function: stages, job categories, capped reasons, PEs, consumables."""

from gridtools.sched.reasons import Why
from schedkit import reasons, run, snapshot

SMP4 = "pe_name smp\nslots 4\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n" \
       "stop_proc_args NONE\nallocation_rule $pe_slots\ncontrol_slaves FALSE\n" \
       "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n"


def pe(name, slots, rule="$pe_slots"):
    return SMP4.replace("smp", name).replace("slots 4", f"slots {slots}").replace("$pe_slots", rule)


def test_a_pe_never_hands_out_more_than_its_slots():
    """Two -pe smp 4 jobs with a PE of 4 slots on hosts with 8 free: one starts."""
    sc = {"hosts": ["h1", "h2"], "slots": 4, "objects": {"pe/smp": pe("smp", 4)},
          "jobs": [{"id": 1, "qsub": "-pe smp 4"}, {"id": 2, "qsub": "-pe smp 4"}]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=4"]
    assert 'cannot run in PE "smp" because it only offers 0 slots' in reasons(decisions, 2)


def test_running_tasks_hold_their_pe_slots():
    sc = {"hosts": ["h1", "h2"], "slots": 4, "objects": {"pe/smp": pe("smp", 4)},
          "running": [{"job": 9, "granted": "all.q@h1=4", "pe": "smp"}],
          "jobs": [{"id": 1, "qsub": "-pe smp 1-4"}]}
    decisions, started = run(sc)
    assert started == []
    assert 'cannot run in PE "smp" because it only offers 0 slots' in reasons(decisions, 1)


def test_slot_ranges_take_the_most_that_fits():
    sc = {"hosts": ["h1", "h2"], "slots": 2, "objects": {"pe/smp": pe("smp", 16)},
          "jobs": [{"id": 1, "qsub": "-pe smp 1-8"}]}
    assert run(sc)[1] == ["1.1 all.q@h1=2"]              # $pe_slots: one host only


def test_round_robin_spreads_over_hosts():
    sc = {"hosts": ["h1", "h2"], "slots": 2, "objects": {"pe/mpi": pe("mpi", 16, "$round_robin")},
          "jobs": [{"id": 1, "qsub": "-pe mpi 4"}]}
    assert run(sc)[1] == ["1.1 all.q@h1=2,all.q@h2=2"]


def test_wildcard_pe_names_pick_a_matching_pe():
    sc = {"hosts": ["h1"], "slots": 4, "queue": {"pe_list": "make smp mpi"},
          "objects": {"pe/smp": pe("smp", 0), "pe/mpi": pe("mpi", 8)},
          "jobs": [{"id": 1, "qsub": "-pe mp* 2"}]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=2"]
    assert decisions.starts[0].pe == "mpi"


def test_an_unknown_pe_is_named():
    decisions, _ = run({"jobs": [{"id": 1, "qsub": "-pe nosuch 2"}]})
    assert 'cannot run because parallel environment "nosuch" does not exist' in reasons(decisions, 1)


def test_consumables_count_down_per_host():
    sc = {"hosts": ["h1"], "slots": 8, "complex": ["gpu gpu INT <= YES YES 0 0"],
          "exechost": {"h1": {"complex_values": "gpu=2"}},
          "jobs": [{"id": i, "qsub": "-l gpu=1"} for i in (1, 2, 3)]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=1", "2.1 all.q@h1=1"]
    assert reasons(decisions, 3)[0] == ('(-l gpu=1) cannot run at host "h1" because it offers only '
                                        "hc:gpu=0.000000")


def test_jobs_of_one_category_share_one_look():
    """Three jobs with the same request: the first finds no room, the others get its reasons
    without being placed again (the very same tuple)."""
    sc = {"hosts": ["h1"], "jobs": [{"id": 1, "qsub": "-l h_vmem=1G"}, {"id": 2, "qsub": "-l h_vmem=1G"},
                                    {"id": 3, "qsub": "-l h_vmem=1G"}],
          "queue": {"h_vmem": "500M"}}
    decisions, started = run(sc)
    assert started == []
    assert decisions.reasons[2] is decisions.reasons[3]
    assert reasons(decisions, 3)[0] == ('(-l h_vmem=1G) cannot run in queue "all.q@h1" because '
                                        "it offers only qf:h_vmem=500M")


def test_reasons_are_capped_on_a_large_cluster():
    hosts = [f"n{i:03d}" for i in range(200)]
    decisions, started = run({"hosts": hosts, "queue": {"h_vmem": "500M"},
                              "jobs": [{"id": 1, "qsub": "-l h_vmem=1G"}]})
    kinds = [r.why for r in decisions.reasons[1]]
    assert started == [] and len(kinds) < 15
    assert kinds.count(Why.RESOURCE_VALUE) == 10
    more = [r for r in decisions.reasons[1] if r.why is Why.MORE]
    assert more[0].args == (Why.RESOURCE_VALUE.value, 190)


def test_holds_start_time_dependencies_and_limits():
    sc = {"hosts": ["h1"], "slots": 4, "now": 1000, "sched": {"maxujobs": 1},
          "jobs": [{"id": 1, "qsub": "-h"}, {"id": 2, "qsub": "-a 209901010000"},
                   {"id": 3, "predecessors": [77]}, {"id": 4, "owner": "bob"},
                   {"id": 5, "owner": "bob"}],
          "live": [77]}
    decisions, started = run(sc)
    assert started == ["4.1 all.q@h1=1"]
    assert reasons(decisions, 1) == ["Job is in hold state"]
    assert reasons(decisions, 2) == ["execution time not reached"]
    assert reasons(decisions, 3) == ["job dropped because of job dependencies"]
    assert reasons(decisions, 5, "bob") == ["job dropped because of user limitations"]


def test_jobs_blocked_alike_share_their_reasons():
    """Held jobs, and jobs waiting on others, wait for one tuple of reasons each kind (the
    status publishes it once), also once the queues are full; a start time is each job's."""
    sc = {"hosts": ["h1"], "slots": 1, "now": 1000,
          "jobs": [{"id": 1}, {"id": 2, "qsub": "-h"}, {"id": 3, "qsub": "-h"},
                   {"id": 4, "predecessors": [77]}, {"id": 5, "predecessors": [77]},
                   {"id": 6, "qsub": "-a 209901010000"}, {"id": 7, "qsub": "-a 209901010000"}],
          "live": [77]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=1"]
    found = decisions.reasons
    assert reasons(decisions, 2) == ["Job is in hold state"]
    assert found[2] is found[3]
    assert reasons(decisions, 4) == ["job dropped because of job dependencies"]
    assert found[4] is found[5]
    assert found[6] == found[7] and found[6] is not found[7]


def test_array_dependencies_of_other_steps_wait_for_blocks_of_tasks():
    """-hold_jid_ad between arrays of one first and last task and other steps: a task of
    step 3 waits for the three tasks of step 1 from its own number; tasks of step 1 wait
    for the task of step 3 at or below theirs; a block ends at the last task."""
    sc = {"hosts": ["h1"], "slots": 8, "live": [77, 78],
          "jobs": [{"id": 1, "qsub": "-t 1-7:3", "tasks": [1, 4, 7], "ad_predecessors": [77]},
                   {"id": 2, "qsub": "-t 1-7", "tasks": [1, 2, 3, 4, 5, 6, 7], "ad_predecessors": [78]},
                   {"id": 3, "qsub": "-t 1-7", "tasks": [1, 2], "ad_predecessors": [77]}],
          "ad_done": {77: [1, 2, 3, 5, 7], 78: [4]},
          "ad_ranges": {77: [1, 7, 1], 78: [1, 7, 3], 1: [1, 7, 3], 2: [1, 7, 1], 3: [1, 7, 1]}}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=1", "1.7 all.q@h1=1", "2.4 all.q@h1=1", "2.5 all.q@h1=1",
                       "2.6 all.q@h1=1", "3.1 all.q@h1=1", "3.2 all.q@h1=1"]
    assert reasons(decisions, 1) == reasons(decisions, 2) == ["job dropped because of job dependencies"]
    sc["ad_ranges"] = {}                # ranges unknown: task n waits for task n
    _decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=1", "1.7 all.q@h1=1", "2.4 all.q@h1=1", "3.1 all.q@h1=1",
                       "3.2 all.q@h1=1"]


def test_task_concurrency_limit_and_held_tasks():
    sc = {"hosts": ["h1"], "slots": 8,
          "jobs": [{"id": 1, "qsub": "-t 1-6 -tc 2", "tasks": [1, 2, 3, 4, 5, 6], "held_tasks": [1]}]}
    decisions, started = run(sc)
    assert started == ["1.2 all.q@h1=1", "1.3 all.q@h1=1"]
    assert reasons(decisions, 1) == ["Job is in hold state",
                                     "not all array task may be started due to 'max_aj_instances'"]


def test_an_immediate_job_that_cannot_start_is_rejected():
    decisions, started = run({"hosts": ["h1"], "slots": 1,
                              "jobs": [{"id": 1}, {"id": 2, "qsub": "-now y"}]})
    assert started == ["1.1 all.q@h1=1"]
    assert [r.job_id for r in decisions.rejects] == [2]


def test_an_immediate_job_that_is_held_deferred_or_waits_for_another_is_rejected_too():
    """A -now y job starts in its first pass or is turned away, whatever keeps it."""
    sc = {"hosts": ["h1"], "slots": 4, "now": 100,
          "jobs": [{"id": 1, "qsub": "-now y -h"}, {"id": 2, "qsub": "-now y -a 203001010000"},
                   {"id": 3, "qsub": "-now y", "predecessors": [9]}, {"id": 9, "qsub": "-h"},
                   {"id": 4, "qsub": "-now y"}]}
    decisions, started = run(sc)
    assert started == ["4.1 all.q@h1=1"]
    assert sorted(r.job_id for r in decisions.rejects) == [1, 2, 3]


def test_posix_priority_orders_the_jobs():
    """With urgency weighing nothing (the oldest job's waiting time would outweigh the
    0.049 that -p 100 is worth over -1024..1024)."""
    sc = {"hosts": ["h1"], "slots": 1, "sched": {"weight_priority": 1, "weight_urgency": 0},
          "jobs": [{"id": 1, "qsub": "-p -100"}, {"id": 2}, {"id": 3, "qsub": "-p -10"}]}
    decisions, started = run(sc)
    assert started == ["2.1 all.q@h1=1"]
    order = sorted(decisions.order, key=lambda j: -decisions.order[j].prio)
    assert order == [2, 3, 1]


def test_posix_priority_weighs_nothing_by_default():
    """Grid Engine 8.1.9's weight_priority is 0: the oldest job goes first."""
    sc = {"hosts": ["h1"], "slots": 1, "now": 100,
          "jobs": [{"id": 1, "qsub": "-p -100", "submit": 1}, {"id": 2, "submit": 2},
                   {"id": 3, "qsub": "-p -10", "submit": 3}]}
    _decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=1"]


def test_the_snapshot_is_typed():
    snap = snapshot({"hosts": ["h1"], "queue": {"h_rt": "1:0:0"},
                     "jobs": [{"id": 1, "qsub": "-l h_rt=0:10:0,h_vmem=2G -pe smp 2-4"}]})
    req = snap.jobs[0].request
    assert req.runtime == 600.0
    assert {a.name: a.value for a in req.hard} == {"h_rt": 600, "h_vmem": 2 * 1024 ** 3}
    assert snap.queues[0].values == (("h_rt", 3600, "1:0:0"),)


TREE_75_25 = ("id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,2\n"
              "id=1\nname=alice\ntype=0\nshares=75\nchildnodes=NONE\n"
              "id=2\nname=bob\ntype=0\nshares=25\nchildnodes=NONE\n")


def test_running_tasks_are_reniced_by_their_tickets():
    """With reprioritize_interval set, the running task with the most tickets on a host
    gets nice 0 and the others less, in proportion (sched.policy.renice)."""
    sc = {"hosts": ["h1"], "slots": 2, "users": ["alice", "bob"], "sharetree": TREE_75_25,
          "sched": {"weight_tickets_share": 10000, "reprioritize_interval": "0:0:10"},
          "running": [{"job": 1, "owner": "alice", "granted": "all.q@h1=1"},
                      {"job": 2, "owner": "bob", "granted": "all.q@h1=1"}]}
    decisions, _ = run(sc)
    nice = {r.job_id: r.nice for r in decisions.reprioritize}
    assert nice[1] == 0 and 0 < nice[2] < 19
    sc["sched"]["reprioritize_interval"] = "0:0:0"
    assert run(sc)[0].reprioritize == []


def test_report_pjob_tickets_false_hides_pending_tickets_but_keeps_their_order():
    sched = {"weight_tickets_functional": 1000, "weight_user": 1}
    shown = {"hosts": ["h1"], "slots": 1, "sched": sched,
             "users": {"alice": {"fshare": 100}, "bob": {"fshare": 300}},
             "jobs": [{"id": 1, "owner": "alice"}, {"id": 2, "owner": "bob"}, {"id": 3, "owner": "alice"}]}
    hidden = dict(shown, sched=dict(sched, report_pjob_tickets="FALSE"))
    seen, started = run(shown)
    unseen, started_too = run(hidden)
    assert started == started_too == ["2.1 all.q@h1=1"]
    assert seen.order[2].tickets[0] > seen.order[1].tickets[0] > 0
    assert [unseen.order[j].tickets for j in (1, 2, 3)] == [(0.0, 0.0, 0.0, 0.0)] * 3
    assert seen.order[2].prio > 0
    assert [(unseen.order[j].prio, unseen.order[j].ntckts, unseen.order[j].nurg)
            for j in (1, 2, 3)] == [(0.0, 0.0, 0.0)] * 3

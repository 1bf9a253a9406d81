"""Parallel environments in the pass (sge_pe(5)): slot ranges and lists, wildcards,
allocation rules over several hosts, the PE's slots and access lists."""

import pytest

from schedkit import reasons, run


def pe(name, slots=32, rule="$pe_slots", users="NONE", xusers="NONE"):
    return (f"pe_name {name}\nslots {slots}\nuser_lists {users}\nxuser_lists {xusers}\nstart_proc_args NONE\n"
            f"stop_proc_args NONE\nallocation_rule {rule}\ncontrol_slaves FALSE\n"
            "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")


def cell(rule="$pe_slots", jobs=(), hosts=("h1", "h2"), slots=4, **more):
    """Hosts with 4 slots; h1 a little less loaded, so it comes first."""
    return {"hosts": list(hosts), "slots": slots, "queue": {"pe_list": "mpi"},
            "load": {"h2": {"np_load_avg": 0.01}}, "sched": {"job_load_adjustments": "NONE"},
            "objects": {"pe/mpi": pe("mpi", rule=rule), **more.pop("objects", {})}, "jobs": list(jobs), **more}


@pytest.mark.parametrize("job, started", [
    ({"qsub": "-pe mpi 3"}, "all.q@h1=3"),                       # n
    ({"qsub": "-pe mpi 2-8"}, "all.q@h1=4"),                     # n-m: the most that fits one host
    ({"qsub": "-pe mpi 2-"}, "all.q@h1=4"),                      # n-: open
    ({"qsub": "-pe mpi -3"}, "all.q@h1=3"),                      # -m: 1..m
    ({"pe": ["mpi", [[1, 1], [2, 2], [5, 5], [8, 8]]]}, "all.q@h1=2"),   # slot list 1,2,5,8
    ({"qsub": "-pe mpi 5"}, None)])                              # $pe_slots: one host only
def test_slot_ranges_and_lists(job, started):
    decisions, found = run(cell(jobs=[{"id": 1, **job}]))
    assert found == ([f"1.1 {started}"] if started else [])
    if started is None:
        assert reasons(decisions, 1) == ['cannot run in PE "mpi" because it only offers 0 slots']


@pytest.mark.parametrize("rule, qsub, started", [
    ("$fill_up", "-pe mpi 6", "all.q@h1=4,all.q@h2=2"),
    ("$round_robin", "-pe mpi 3", "all.q@h1=2,all.q@h2=1"),
    ("$round_robin", "-pe mpi 8", "all.q@h1=4,all.q@h2=4"),
    ("2", "-pe mpi 4", "all.q@h1=2,all.q@h2=2"),
    ("2", "-pe mpi 2-5", "all.q@h1=2,all.q@h2=2"),               # 5 and 3 are no multiple of 2
    ("2", "-pe mpi 3", None),
    ("$fill_up", "-pe mpi 9", None)])
def test_allocation_rules_across_hosts(rule, qsub, started):
    decisions, found = run(cell(rule, jobs=[{"id": 1, "qsub": qsub}]))
    assert found == ([f"1.1 {started}"] if started else [])


@pytest.mark.parametrize("rule, qsub, running, offered", [
    ("$pe_slots", "-pe mpi 5", [], 0),              # no host has 5: the rule gathers nothing
    ("$pe_slots", "-pe mpi 5-8", [], 0),            # (the smallest count is the last one tried)
    ("$pe_slots", "-pe mpi 4", [{"job": 9, "granted": "all.q@h1=1"}, {"job": 8, "granted": "all.q@h2=1"}], 0),
    ("$fill_up", "-pe mpi 9", [], 8),               # all that is free
    ("$fill_up", "-pe mpi 8", [{"job": 9, "granted": "all.q@h1=1"}], 7),
    ("$round_robin", "-pe mpi 9", [], 8),
    ("$round_robin", "-pe mpi 8-9", [{"job": 9, "granted": "all.q@h2=2"}], 6),
    ("4", "-pe mpi 12", [], 8),                     # 4 from each host with 4 free
    ("4", "-pe mpi 8", [{"job": 9, "granted": "all.q@h1=1"}], 4),
    ("3", "-pe mpi 4", [], 0),                      # no count the rule can grant
    ("3", "-pe mpi 4-7", [{"job": 9, "granted": "all.q@h1=2"}], 3),   # 6 is tried: only h2 has 3
])
def test_only_offers_counts_what_the_allocation_rule_can_gather(rule, qsub, running, offered):
    """The N of "only offers N slots" as Grid Engine's scheduler counts it."""
    decisions, found = run(cell(rule, jobs=[{"id": 1, "qsub": qsub}], running=running))
    assert found == []
    assert f'cannot run in PE "mpi" because it only offers {offered} slots' in reasons(decisions, 1)


def test_only_offers_the_pes_free_slots_when_they_are_fewer():
    sc = cell("$fill_up", jobs=[{"id": 1, "qsub": "-pe mpi 3"}], objects={"pe/mpi": pe("mpi", slots=6)},
              running=[{"job": 9, "granted": "all.q@h1=4", "pe": "mpi"}])
    decisions, found = run(sc)
    assert found == [] and reasons(decisions, 1) == ['cannot run in PE "mpi" because it only offers 2 slots']


def test_fill_up_spreads_over_queues_and_hosts_already_in_use():
    """h1 has 1 slot free (3 busy), h2 4: $fill_up for 4 takes h1's 1 and 3 of h2."""
    sc = cell("$fill_up", jobs=[{"id": 1, "qsub": "-pe mpi 4"}],
              running=[{"job": 9, "granted": "all.q@h1=3"}])
    assert run(sc)[1] == ["1.1 all.q@h1=1,all.q@h2=3"]


def test_wildcards_try_each_matching_pe():
    sc = cell(jobs=[{"id": 1, "qsub": "-pe 'm*' 4"}], queue={"pe_list": "mpi mpich"},
              objects={"pe/mpi": pe("mpi", slots=2), "pe/mpich": pe("mpich", slots=8)})
    decisions, found = run(sc)
    assert found == ["1.1 all.q@h1=4"] and decisions.starts[0].pe == "mpich"


def test_the_pes_slots_bound_all_its_jobs():
    sc = cell(jobs=[{"id": 1, "qsub": "-pe mpi 4"}, {"id": 2, "qsub": "-pe mpi 2-4"}],
              objects={"pe/mpi": pe("mpi", slots=6)})
    decisions, found = run(sc)
    assert found == ["1.1 all.q@h1=4", "2.1 all.q@h2=2"]


def test_pe_access_lists():
    staff = "name staff\ntype ACL\nfshare 0\noticket 0\nentries bob\n"
    sc = cell(jobs=[{"id": 1, "qsub": "-pe mpi 2"}, {"id": 2, "owner": "bob", "qsub": "-pe mpi 2"}],
              objects={"pe/mpi": pe("mpi", users="staff"), "usersets/staff": staff})
    decisions, found = run(sc)
    assert found == ["2.1 all.q@h1=2"]
    assert reasons(decisions, 1) == ['cannot run because no access to PE "mpi"']
    sc = cell(jobs=[{"id": 1, "qsub": "-pe mpi 2"}, {"id": 2, "owner": "bob", "qsub": "-pe mpi 2"}],
              objects={"pe/mpi": pe("mpi", xusers="staff"), "usersets/staff": staff})
    decisions, found = run(sc)
    assert found == ["1.1 all.q@h1=2"]
    assert reasons(decisions, 2, "bob") == ['cannot run because no access to PE "mpi"']


@pytest.mark.parametrize("rule, qsub, started", [
    ("$round_robin", "-pe mpi 3 -masterq all.q@h2", "all.q@h2=2,all.q@h1=1"),
    ("$round_robin", "-pe mpi 1 -masterq 'all.q@h[23]'", "all.q@h2=1"),
    ("$fill_up", "-pe mpi 6 -masterq all.q@h2", "all.q@h2=4,all.q@h1=2"),
    ("$pe_slots", "-pe mpi 2 -masterq all.q@h2", "all.q@h2=2"),
    ("2", "-pe mpi 4 -masterq all.q@h2", "all.q@h2=2,all.q@h1=2"),
    # an instance -masterq names but -q does not holds the master task only, with one slot
    ("$fill_up", "-pe mpi 3 -q all.q@h1 -masterq all.q@h2", "all.q@h2=1,all.q@h1=2"),
    ("$pe_slots", "-pe mpi 2 -q all.q@h1 -masterq all.q@h2", None)])
def test_the_master_task_goes_only_to_a_masterq_instance(rule, qsub, started):
    """-masterq (submit(1)): the first instance of the grant, where the master task
    runs, is one the list names; without one the job waits."""
    decisions, found = run(cell(rule, jobs=[{"id": 1, "qsub": qsub}]))
    assert found == ([f"1.1 {started}"] if started else [])
    if started is None:
        assert reasons(decisions, 1)[-1].startswith('cannot run in PE "mpi" because it only offers')


def test_a_job_waits_while_its_master_queue_is_full():
    sc = cell("$round_robin", jobs=[{"id": 1, "qsub": "-pe mpi 2 -masterq all.q@h2"}],
              running=[{"job": 9, "granted": "all.q@h2=4"}])
    decisions, found = run(sc)
    assert found == []
    assert reasons(decisions, 1) == ['cannot run in PE "mpi" because it only offers 1 slots']
    sc["running"] = [{"job": 9, "granted": "all.q@h2=3"}]
    assert run(sc)[1] == ["1.1 all.q@h2=1,all.q@h1=1"]

"""Complexes in the pass (complex(5)): types and operators, FORCED, consumables with
defaults at every level, per-slot amounts of parallel jobs, soft requests, load values,
load scaling and the load formula. Every case is a scenario with worked numbers."""

import pytest

from gridtools.model.resources import Complex, CxType, Relop, satisfies
from schedkit import reasons, run

GIB = 1024 ** 3


def pe(name, slots, rule="$pe_slots"):
    return (f"pe_name {name}\nslots {slots}\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
            f"stop_proc_args NONE\nallocation_rule {rule}\ncontrol_slaves FALSE\n"
            "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")


@pytest.mark.parametrize("kind, relop, requested, offered, ok", [
    (CxType.INT, Relop.LE, 4, 4, True), (CxType.INT, Relop.LE, 5, 4, False),
    (CxType.INT, Relop.LT, 4, 4, False), (CxType.INT, Relop.LT, 3, 4, True),
    (CxType.INT, Relop.GE, 4, 3, True), (CxType.INT, Relop.GT, 4, 4, False),
    (CxType.INT, Relop.EQ, 2, 2, True), (CxType.INT, Relop.NE, 2, 2, False),
    (CxType.DOUBLE, Relop.GE, 0.5, 0.25, True), (CxType.DOUBLE, Relop.GE, 0.5, 0.75, False),
    (CxType.MEMORY, Relop.LE, 2 * GIB, 4 * GIB, True), (CxType.MEMORY, Relop.LE, 8 * GIB, 4 * GIB, False),
    (CxType.TIME, Relop.LE, 3600, 7200, True), (CxType.TIME, Relop.LE, 7201, 7200, False),
    (CxType.BOOL, Relop.EQ, 1, 1, True), (CxType.BOOL, Relop.EQ, 1, 0, False),
    (CxType.STRING, Relop.EQ, "lx-*", "lx-amd64", True), (CxType.STRING, Relop.EQ, "LX-*", "lx-amd64", False),
    (CxType.STRING, Relop.EQ, "sol*|lx-amd64", "lx-amd64", True),
    (CxType.STRING, Relop.EQ, "!sol*", "lx-amd64", True), (CxType.STRING, Relop.NE, "lx-*", "lx-amd64", False),
    (CxType.CSTRING, Relop.EQ, "LX-*", "lx-amd64", True), (CxType.RESTRING, Relop.EQ, "lx-[a-z]*", "lx-amd64", True),
    (CxType.HOST, Relop.EQ, "NODE1", "node1", True), (CxType.HOST, Relop.EQ, "node2", "node1", False)])
def test_every_type_and_operator(kind, relop, requested, offered, ok):
    """``request RELOP offered``; strings match as wildcard patterns (``|`` alternatives,
    ``!`` negation), CSTRING and HOST ignore case."""
    assert satisfies(Complex("x", "x", kind, relop), requested, offered) is ok


def test_fixed_values_pick_the_host_that_offers_enough():
    """ncpu INT <=: h1 offers 4, h2 offers 8; -l ncpu=6 runs on h2 only."""
    sc = {"hosts": ["h1", "h2"], "complex": ["ncpu ncpu INT <= YES NO 0 0"],
          "exechost": {"h1": {"complex_values": "ncpu=4"}, "h2": {"complex_values": "ncpu=8"}},
          "jobs": [{"id": 1, "qsub": "-l ncpu=6"}, {"id": 2, "qsub": "-l ncpu=9"}]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h2=1"]
    assert reasons(decisions, 2) == ['(-l ncpu=9) cannot run in queue "all.q@h1" because it offers only hf:ncpu=4',
                                     '(-l ncpu=9) cannot run in queue "all.q@h2" because it offers only hf:ncpu=8']


def test_load_values_are_compared_with_requests():
    """np_load_avg DOUBLE >=: -l np_load_avg=0.5 wants a host whose load is at most 0.5."""
    sc = {"hosts": ["h1", "h2"], "load": {"h1": {"np_load_avg": 0.25}, "h2": {"np_load_avg": 0.75}},
          "jobs": [{"id": 1, "qsub": "-l np_load_avg=0.5"}, {"id": 2, "qsub": "-l np_load_avg=0.1"}]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=1"]
    assert ('(-l np_load_avg=0.1) cannot run in queue "all.q@h2" because it offers only '
            "hl:np_load_avg=0.750000") in reasons(decisions, 2)


def test_load_sensor_values_of_hosts_and_of_the_cell_are_compared_with_requests():
    """A load sensor reports scratch (MEMORY <=) per host as text, licenses (INT <=) for
    ``global``: -l scratch=2G runs where 3G are free; -l licenses=9 finds only 7."""
    sc = {"hosts": ["h1", "h2"], "complex": ["scratch scr MEMORY <= YES NO 0 0", "licenses lic INT <= YES NO 0 0"],
          "load": {"h1": {"scratch": "1G"}, "h2": {"scratch": "3G"}}, "global_load": {"licenses": "7"},
          "jobs": [{"id": 1, "qsub": "-l scr=2G,lic=7"}, {"id": 2, "qsub": "-l lic=9"}]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h2=1"]
    assert reasons(decisions, 2) == ['(-l lic=9) cannot run in queue "all.q@h1" because it offers only gl:licenses=7',
                                     '(-l lic=9) cannot run in queue "all.q@h2" because it offers only gl:licenses=7']


def test_a_load_value_that_does_not_read_as_a_number_counts_as_the_worst():
    """A sensor's "abc", "nan" or "-5G": a load threshold on it is crossed and a request
    for it is not met, as Grid Engine takes a load value it cannot read."""
    sc = {"hosts": ["h1", "h2", "h3"], "complex": ["scratch scr MEMORY <= YES NO 0 0"],
          "queue": {"load_thresholds": "np_load_avg=1.75"},
          "load": {"h1": {"np_load_avg": "abc", "scratch": "3G"}, "h2": {"np_load_avg": "nan", "scratch": "3G"},
                   "h3": {"np_load_avg": 0.1, "scratch": "-5G"}},
          "jobs": [{"id": 1, "qsub": "-l scr=1G"}, {"id": 2}]}
    decisions, started = run(sc)
    assert started == ["2.1 all.q@h3=1"]
    assert any("all.q@h1" in r and "overloaded" in r for r in reasons(decisions, 1))
    assert any("all.q@h2" in r and "overloaded" in r for r in reasons(decisions, 1))
    assert '(-l scr=1G) cannot run in queue "all.q@h3" because it offers only hl:scratch=-inf' in reasons(decisions, 1)


def test_a_gpu_job_waits_with_a_clear_reason_where_no_host_has_gpus():
    """gpu is a consumable defined in the complex but offered by no host (their
    complex_values NONE): unknown there. The shipped cell's hosts offer gpu=0 where the
    machine has no GPUs: the reason is the amount left."""
    base = {"hosts": ["h1", "h2"], "slots": 4, "complex": ["gpu gpu INT <= YES YES 0 0"]}
    undefined = {"h1": {"complex_values": "NONE"}, "h2": {"complex_values": "NONE"}}
    decisions, started = run({**base, "exechost": undefined, "jobs": [{"id": 1, "qsub": "-l gpu=1"}]})
    assert started == []
    assert reasons(decisions, 1) == [
        '(-l gpu=1) cannot run in queue "all.q@h1" because job requests unknown resource (gpu)',
        '(-l gpu=1) cannot run in queue "all.q@h2" because job requests unknown resource (gpu)']
    decisions, started = run({**base, "jobs": [{"id": 1, "qsub": "-l gpu=1"}]})
    assert reasons(decisions, 1) == ['(-l gpu=1) cannot run at host "h1" because it offers only hc:gpu=0.000000',
                                     '(-l gpu=1) cannot run at host "h2" because it offers only hc:gpu=0.000000']
    decisions, started = run({**base, "exechost": {"h1": {"complex_values": "gpu=0"},
                                                   "h2": {"complex_values": "gpu=2"}},
                              "jobs": [{"id": i, "qsub": "-l gpu=1"} for i in (1, 2, 3)]})
    assert started == ["1.1 all.q@h2=1", "2.1 all.q@h2=1"]
    assert reasons(decisions, 3) == ['(-l gpu=1) cannot run at host "h1" because it offers only hc:gpu=0.000000',
                                     '(-l gpu=1) cannot run at host "h2" because it offers only hc:gpu=0.000000']


def test_forced_complexes_keep_other_jobs_out():
    """fast BOOL FORCED on queue fast.q: a job that does not ask for it stays out of
    fast.q; one asking fast=TRUE may only go there. FORCED at host level and globally."""
    sc = {"hosts": ["h1"], "complex": ["fast fast BOOL == FORCED NO 0 0"],
          "queues": {"fast.q": {"complex_values": "fast=TRUE", "seq_no": 0}},
          "queue": {"seq_no": 10}, "sched": {"queue_sort_method": "seqno"},
          "jobs": [{"id": 1}, {"id": 2, "qsub": "-l fast=TRUE"}]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=1", "2.1 fast.q@h1=1"]
    only = {**sc, "jobs": [{"id": 1, "qsub": "-q fast.q"}]}
    assert reasons(run(only)[0], 1) == [
        'cannot run in queue "all.q@h1" because it is not contained in its hard queue list (-q)',
        "does not request 'forced' resource \"fast\" of queue instance fast.q@h1"]
    host = {"hosts": ["h1", "h2"], "complex": ["fast fast BOOL == FORCED NO 0 0"],
            "exechost": {"h1": {"complex_values": "fast=TRUE"}}, "jobs": [{"id": 1}, {"id": 2}]}
    decisions, started = run({**host, "slots": 1})
    assert started == ["1.1 all.q@h2=1"]
    assert "does not request 'forced' resource \"fast\" of host h1" in reasons(decisions, 2)
    glob = {"hosts": ["h1"], "complex": ["fast fast BOOL == FORCED NO 0 0"],
            "exechost": {"global": {"complex_values": "fast=TRUE"}},
            "jobs": [{"id": 1}, {"id": 2, "qsub": "-l fast=TRUE"}]}
    decisions, started = run(glob)
    assert started == ["2.1 all.q@h1=1"]
    assert reasons(decisions, 1) == ["does not request globally 'forced' resource \"fast\""]


def test_consumable_defaults_are_requested_implicitly():
    """mem_c MEMORY consumable, default 1G, host capacity 4G: jobs without -l mem_c hold
    1G each, so four of five start; an explicit 2G request holds 2G."""
    sc = {"hosts": ["h1"], "slots": 8, "complex": ["mem_c mc MEMORY <= YES YES 1G 0"],
          "exechost": {"h1": {"complex_values": "mem_c=4G"}},
          "jobs": [{"id": i} for i in range(1, 6)]}
    decisions, started = run(sc)
    assert len(started) == 4
    assert reasons(decisions, 5) == ['(-l mem_c=1G) cannot run at host "h1" because it offers only '
                                     "hc:mem_c=0.000000"]
    sc["jobs"] = [{"id": 1, "qsub": "-l mc=2G"}, {"id": 2}, {"id": 3}, {"id": 4}]
    assert run(sc)[1] == ["1.1 all.q@h1=1", "2.1 all.q@h1=1", "3.1 all.q@h1=1"]


def test_consumables_at_global_host_and_queue_level():
    """lic: 3 globally; per host h1 2; per queue instance big.q 1. Every level counts."""
    sc = {"hosts": ["h1", "h2"], "slots": 4, "complex": ["lic lic INT <= YES YES 0 0"],
          "exechost": {"global": {"complex_values": "lic=3"}, "h1": {"complex_values": "lic=2"}},
          "queues": {"big.q": {"complex_values": "lic=1"}},
          "jobs": [{"id": i, "qsub": "-l lic=1 -q big.q"} for i in (1, 2, 3)]
          + [{"id": 4, "qsub": "-l lic=1"}, {"id": 5, "qsub": "-l lic=1"}]}
    decisions, started = run(sc)
    assert started == ["1.1 big.q@h1=1", "2.1 big.q@h2=1", "4.1 all.q@h1=1"]
    assert '(-l lic=1) cannot run globally because it offers only gc:lic=0.000000' in reasons(decisions, 5)
    assert '(-l lic=1) cannot run in queue "big.q@h1" because it offers only qc:lic=0.000000' \
        in reasons(decisions, 3)


def test_host_slots_bound_all_queues_of_a_host():
    """complex_values slots=2 on h1: two queues of 2 slots each, only 2 tasks in all."""
    sc = {"hosts": ["h1"], "exechost": {"h1": {"complex_values": "slots=2"}},
          "queues": {"b.q": {}}, "jobs": [{"id": i} for i in (1, 2, 3)]}
    decisions, started = run(sc)
    assert len(started) == 2
    assert '(-l slots=1) cannot run at host "h1" because it offers only hc:slots=0.000000' \
        in reasons(decisions, 3)


def test_per_slot_amounts_of_parallel_jobs_across_hosts():
    """mem_c 4G per host, $round_robin over h1 and h2: -l mem_c=2G holds 2G per slot, so
    4 slots fit (2 per host); 3G per slot fits one slot per host, so a 2-4 range gets 2
    and a fixed 4 gets none. A JOB consumable counts once, on the master host."""
    base = {"hosts": ["h1", "h2"], "slots": 4, "queue": {"pe_list": "mpi"},
            "objects": {"pe/mpi": pe("mpi", 16, "$round_robin")},
            "complex": ["mem_c mc MEMORY <= YES YES 0 0", "lic lic INT <= YES JOB 0 0"],
            "exechost": {"h1": {"complex_values": "mem_c=4G,lic=2"}, "h2": {"complex_values": "mem_c=4G,lic=0"}}}
    assert run({**base, "jobs": [{"id": 1, "qsub": "-pe mpi 4 -l mem_c=2G"}]})[1] == \
        ["1.1 all.q@h1=2,all.q@h2=2"]
    assert run({**base, "jobs": [{"id": 1, "qsub": "-pe mpi 2-4 -l mem_c=3G"}]})[1] == \
        ["1.1 all.q@h1=1,all.q@h2=1"]
    decisions, started = run({**base, "jobs": [{"id": 1, "qsub": "-pe mpi 4 -l mem_c=3G"}]})
    assert started == [] and 'cannot run in PE "mpi" because it only offers 2 slots' in reasons(decisions, 1)
    decisions, started = run({**base, "jobs": [{"id": 1, "qsub": "-pe mpi 4 -l lic=2"},
                                               {"id": 2, "qsub": "-l lic=1"}]})
    assert started == ["1.1 all.q@h1=2,all.q@h2=2"]           # lic 2 once, on the master h1
    assert reasons(decisions, 2)[0] == '(-l lic=1) cannot run at host "h1" because it offers only hc:lic=0.000000'


def test_soft_requests_prefer_but_do_not_require():
    """h2 offers arch=lx-arm; a -soft -l arch=lx-arm job goes there although h1 is less
    loaded; a soft request nobody meets does not keep a job from running."""
    sc = {"hosts": ["h1", "h2"], "load": {"h1": {"np_load_avg": 0.0, "arch": "lx-amd64"},
                                          "h2": {"np_load_avg": 0.5, "arch": "lx-arm"}},
          "jobs": [{"id": 1, "qsub": "-soft -l arch=lx-arm"}, {"id": 2, "qsub": "-soft -l arch=sol*"},
                   {"id": 3}]}
    assert run(sc)[1] == ["1.1 all.q@h2=1", "2.1 all.q@h1=1", "3.1 all.q@h1=1"]


def test_load_scaling_and_the_load_formula_order_hosts():
    """load_scaling np_load_avg=4 makes h1's 0.2 count as 0.8, behind h2's 0.5. The formula
    np_load_avg+2*mem_used/mem_total: h1 0.1+2*3/4 = 1.6, h2 0.5+2*1/4 = 1.0: h2 first."""
    scaled = {"hosts": ["h1", "h2"], "sched": {"job_load_adjustments": "NONE"},
              "load": {"h1": {"np_load_avg": 0.2}, "h2": {"np_load_avg": 0.5}},
              "exechost": {"h1": {"load_scaling": "np_load_avg=4"}}, "jobs": [{"id": 1}]}
    assert run(scaled)[1] == ["1.1 all.q@h2=1"]
    assert run({**scaled, "exechost": {}})[1] == ["1.1 all.q@h1=1"]
    formula = {"hosts": ["h1", "h2"], "sched": {"load_formula": "np_load_avg+2*mem_used/mem_total",
                                                "job_load_adjustments": "NONE"},
               "load": {"h1": {"np_load_avg": 0.1, "mem_used": 3 * GIB, "mem_total": 4 * GIB},
                        "h2": {"np_load_avg": 0.5, "mem_used": 1 * GIB, "mem_total": 4 * GIB}},
               "jobs": [{"id": 1}]}
    assert run(formula)[1] == ["1.1 all.q@h2=1"]


def test_job_load_adjustments_move_each_value_its_way():
    """load_formula -mem_free (most free memory first) with mem_free=3G of adjustment per
    job: h1 (8G) gets the first job and then counts 5G, so h2 (6G) gets the second; a
    value compared with >= (np_load_avg) grows instead: 0.5 per job over 2 processors."""
    sc = {"hosts": ["h1", "h2"], "slots": 4,
          "sched": {"load_formula": "-mem_free", "job_load_adjustments": "mem_free=3G"},
          "load": {"h1": {"mem_free": 8 * GIB}, "h2": {"mem_free": 6 * GIB}},
          "jobs": [{"id": 1}, {"id": 2}, {"id": 3}]}
    assert run(sc)[1] == ["1.1 all.q@h1=1", "2.1 all.q@h2=1", "3.1 all.q@h1=1"]
    sc = {"hosts": ["h1", "h2"], "slots": 4, "load": {"h1": {"np_load_avg": 0.0}, "h2": {"np_load_avg": 0.3}},
          "jobs": [{"id": 1}, {"id": 2}, {"id": 3}]}
    assert run(sc)[1] == ["1.1 all.q@h1=1", "2.1 all.q@h1=1", "3.1 all.q@h2=1"]

"""Resource reservation and backfilling (sched_conf(5) max_reservation, default_duration;
qsub -R y), and the scheduler monitoring records of each pass."""

from gridtools.sched import schedule
from schedkit import reasons, reserves, run, snapshot
from gridtools.sched.cycle import cycle

T = 1077903416
LICENSE = {"hosts": ["bilbur", "carc", "es-ergb01-01"], "slots": 1,
           "load": {"carc": {"np_load_avg": 0.0}, "bilbur": {"np_load_avg": 0.1},
                    "es-ergb01-01": {"np_load_avg": 0.2}},
           "complex": ["license lic INT <= YES YES 0 100"],
           "exechost": {"global": {"complex_values": "license=5"}},
           # the guide's example sets N1 Grid Engine 6's weights (8.1.9's differ: sched_conf(5))
           "sched": {"max_reservation": 10, "weight_priority": 1, "weight_urgency": 0.1,
                     "weight_ticket": 0.01, "weight_waiting_time": 0}}
L4 = {"id": 3127, "name": "L4_RR", "qsub": "-R y -l h_rt=30,license=4 -p 100", "submit": 1}
L5 = {"id": 3128, "name": "L5_RR", "qsub": "-R y -l h_rt=30,license=5", "submit": 2}
L1 = {"id": 3129, "name": "L1_RR", "qsub": "-R y -l h_rt=31,license=1", "submit": 3}

#: the seed's six passes; hosts are written as @host (see test_the_license_example_trace)
SEED_TRACE = """\
3127:1:STARTING:1077903416:30:G:global:license:4.000000
3127:1:STARTING:1077903416:30:Q:all.q@host:slots:1.000000
3128:1:RESERVING:1077903446:30:G:global:license:5.000000
3128:1:RESERVING:1077903446:30:Q:all.q@host:slots:1.000000
3129:1:RESERVING:1077903476:31:G:global:license:1.000000
3129:1:RESERVING:1077903476:31:Q:all.q@host:slots:1.000000
::::::::
3127:1:RUNNING:1077903416:30:G:global:license:4.000000
3127:1:RUNNING:1077903416:30:Q:all.q@host:slots:1.000000
3128:1:RESERVING:1077903446:30:G:global:license:5.000000
3128:1:RESERVING:1077903446:30:Q:all.q@host:slots:1.000000
3129:1:RESERVING:1077903476:31:G:global:license:1.000000
3129:1:RESERVING:1077903476:31:Q:all.q@host:slots:1.000000
::::::::
3128:1:STARTING:1077903448:30:G:global:license:5.000000
3128:1:STARTING:1077903448:30:Q:all.q@host:slots:1.000000
3129:1:RESERVING:1077903478:31:G:global:license:1.000000
3129:1:RESERVING:1077903478:31:Q:all.q@host:slots:1.000000
::::::::
3128:1:RUNNING:1077903448:30:G:global:license:5.000000
3128:1:RUNNING:1077903448:30:Q:all.q@host:slots:1.000000
3129:1:RESERVING:1077903478:31:G:global:license:1.000000
3129:1:RESERVING:1077903478:31:Q:all.q@host:slots:1.000000
::::::::
3129:1:STARTING:1077903480:31:G:global:license:1.000000
3129:1:STARTING:1077903480:31:Q:all.q@host:slots:1.000000
::::::::
3129:1:RUNNING:1077903480:31:G:global:license:1.000000
3129:1:RUNNING:1077903480:31:Q:all.q@host:slots:1.000000
::::::::
"""


def _pass(now, jobs, running=()):
    snap = snapshot({**LICENSE, "now": now, "jobs": jobs, "running": list(running)})
    return snap, cycle(snap)


def test_the_license_example_priorities():
    """Seed 004: -p 100 outweighs the license urgency. npprior over the fixed range
    (ppri + 1024) / 2048: 0.54883, 0.5, 0.5; nurg 0.75, 1, 0; ntckts 0.5: prio
    0.54883 + 0.075 + 0.005, 0.5 + 0.1 + 0.005, 0.5 + 0.005 (the guide's 1.08, 0.105,
    0.005 normalize -p over the pending jobs; the order is the same)."""
    _snap, decisions = _pass(T, [L4, L5, L1])
    assert [f"{decisions.order[j].prio:.5f}" for j in (3127, 3128, 3129)] == ["0.62883", "0.60500", "0.50500"]


def test_the_license_example_trace():
    """L4_RR starts; L5_RR (all 5 licenses) is reserved for when L4_RR ends (+30); L1_RR
    would fit beside L4_RR now, but its 31 s would reach into L5_RR's reservation, so it
    is not backfilled and is reserved after L5_RR (+60). The passes continue as the
    seed's trace: L5_RR starts at +32, L1_RR at +64. The host names of the seed's trace
    depend on its hosts' load; here they are checked to be real and free."""
    text, hosts = "", set()
    steps = [(T, [L4, L5, L1], []),
             (T + 2, [L5, L1], [{"job": 3127, "granted": "all.q@carc=1", "l": "h_rt=30,license=4", "start": T}]),
             (T + 32, [L5, L1], []),
             (T + 34, [L1], [{"job": 3128, "granted": "all.q@carc=1", "l": "h_rt=30,license=5", "start": T + 32}]),
             (T + 64, [L1], []),
             (T + 66, [], [{"job": 3129, "granted": "all.q@carc=1", "l": "h_rt=31,license=1", "start": T + 64}])]
    for now, jobs, running in steps:
        snap, decisions = _pass(now, jobs, running)
        block = schedule.block(snap, decisions)
        hosts |= {line.split(":")[6] for line in block.splitlines() if ":Q:" in line}
        text += "\n".join(":".join(p if i != 6 else "all.q@host" for i, p in enumerate(line.split(":")))
                          if ":Q:" in line else line for line in block.splitlines()) + "\n"
    assert text == SEED_TRACE
    assert hosts <= {"all.q@carc", "all.q@bilbur", "all.q@es-ergb01-01"}
    _snap, decisions = _pass(T, [L4, L5, L1])
    assert reserves(decisions) == ["3128.1@1077903446 all.q@bilbur=1", "3129.1@1077903476 all.q@bilbur=1"]
    assert reasons(decisions, 3129) == [
        '(-l slots=1) cannot run in queue "all.q@bilbur" because it offers only qc:slots=0.000000 '
        "due to a reservation",
        "(-l license=1) cannot run globally because it offers only gc:license=0.000000 due to a reservation",
        'queue instance "all.q@carc" dropped because it is full']


def mpi(slots=16, rule="$round_robin"):
    return (f"pe_name mpi\nslots {slots}\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
            f"stop_proc_args NONE\nallocation_rule {rule}\ncontrol_slaves FALSE\n"
            "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")


BUSY = {"hosts": ["h1", "h2"], "slots": 2, "now": 1000, "queue": {"pe_list": "mpi"},
        "objects": {"pe/mpi": mpi()}, "sched": {"max_reservation": 10},
        "running": [{"job": 90, "granted": "all.q@h1=1", "l": "h_rt=100", "start": 1000},
                    {"job": 91, "granted": "all.q@h2=1", "l": "h_rt=300", "start": 1000},
                    {"job": 92, "granted": "all.q@h2=1", "l": "h_rt=300", "start": 1000}]}


def test_a_big_job_is_reserved_and_only_short_jobs_backfill():
    """4 slots, 3 busy (until +100, +300, +300). The 4-slot -R y job is reserved for
    +300; a 500 s job would still hold h1's free slot then, so it waits; a 50 s job and
    a 250 s job end before +300 and are backfilled."""
    sc = {**BUSY, "jobs": [{"id": 1, "qsub": "-R y -pe mpi 4 -l h_rt=1000 -p 10"},
                           {"id": 2, "qsub": "-l h_rt=500 -p 5"}, {"id": 3, "qsub": "-p 4"},
                           {"id": 4, "qsub": "-l h_rt=50"}]}
    decisions, started = run(sc)
    assert reserves(decisions) == ["1.1@1300 all.q@h1=2,all.q@h2=2"]
    assert started == ["4.1 all.q@h1=1"]
    assert reasons(decisions, 2) == ['(-l slots=1) cannot run in queue "all.q@h1" because it offers only '
                                     "qc:slots=0.000000 due to a reservation",
                                     'queue instance "all.q@h2" dropped because it is full']
    assert reasons(decisions, 3) == reasons(decisions, 2)          # no h_rt: default_duration INFINITY
    sc["jobs"][3] = {"id": 4, "qsub": "-l h_rt=250"}
    assert run(sc)[1] == ["4.1 all.q@h1=1"]


def test_without_reservations_small_jobs_take_the_free_slots():
    sc = {**BUSY, "sched": {"max_reservation": 0},
          "jobs": [{"id": 1, "qsub": "-R y -pe mpi 4 -l h_rt=1000 -p 10"}, {"id": 2, "qsub": "-l h_rt=500"}]}
    decisions, started = run(sc)
    assert decisions.reserves == [] and started == ["2.1 all.q@h1=1"]
    sc = {**BUSY, "jobs": [{"id": 1, "qsub": "-pe mpi 4 -l h_rt=1000 -p 10"}, {"id": 2, "qsub": "-l h_rt=500"}]}
    decisions, started = run(sc)                               # no -R y: nothing reserved
    assert decisions.reserves == [] and started == ["2.1 all.q@h1=1"]


def test_max_reservation_bounds_the_reservations_of_a_pass():
    """Three -R y jobs that cannot start; max_reservation 2: the first two get one."""
    sc = {**BUSY, "sched": {"max_reservation": 2},
          "jobs": [{"id": i, "qsub": f"-R y -pe mpi 4 -l h_rt=100 -p {10 - i}"} for i in (1, 2, 3)]}
    decisions, _ = run(sc)
    assert reserves(decisions) == ["1.1@1300 all.q@h1=2,all.q@h2=2", "2.1@1400 all.q@h1=2,all.q@h2=2"]


def test_run_times_default_duration_and_late_tasks():
    """A running task without h_rt lasts default_duration (here 600 s) from its start; one
    already past its end is given one more schedule_interval (15 s)."""
    sc = {"hosts": ["h1"], "slots": 1, "now": 1000, "sched": {"max_reservation": 5, "default_duration": "0:10:0"},
          "running": [{"job": 90, "granted": "all.q@h1=1", "start": 900}],
          "jobs": [{"id": 1, "qsub": "-R y -l h_rt=60"}, {"id": 2, "qsub": "-R y"}]}
    decisions, _ = run(sc)
    assert reserves(decisions) == ["1.1@1500 all.q@h1=1", "2.1@1560 all.q@h1=1"]
    sc["running"] = [{"job": 90, "granted": "all.q@h1=1", "start": 100, "l": "h_rt=60"}]
    assert reserves(run(sc)[0])[0] == "1.1@1015 all.q@h1=1"


def test_reservations_respect_consumables_and_quotas_over_time():
    """lic 2 globally, one held until +200; a -R y job asking lic=2 waits for it; a job
    limited to 1 slot per user by a quota set is reserved after its owner's running task."""
    sc = {"hosts": ["h1"], "slots": 4, "now": 1000, "sched": {"max_reservation": 5},
          "complex": ["lic lic INT <= YES YES 0 0"], "exechost": {"global": {"complex_values": "lic=2"}},
          "objects": {"rqs/one": "{\n name one\n enabled true\n limit users {*} to slots=1\n}\n"},
          "running": [{"job": 90, "owner": "bob", "granted": "all.q@h1=1", "l": "h_rt=200,lic=1", "start": 1000},
                      {"job": 91, "owner": "carol", "granted": "all.q@h1=1", "l": "h_rt=400", "start": 1000}],
          "jobs": [{"id": 1, "qsub": "-R y -l h_rt=60,lic=2"}, {"id": 2, "owner": "carol", "qsub": "-R y -l h_rt=60"}]}
    decisions, started = run(sc)
    assert started == []
    assert reserves(decisions) == ["1.1@1200 all.q@h1=1", "2.1@1400 all.q@h1=1"]


def test_monitoring_records_of_pes_hosts_queues_and_quotas():
    """P for the PE, H for host consumables, Q per queue instance, L per quota counter."""
    sc = {"hosts": ["h1", "h2"], "slots": 2, "now": 1000, "queue": {"pe_list": "mpi"},
          "objects": {"pe/mpi": mpi(), "rqs/u": "{\n name u\n enabled true\n limit users {*} to slots=10\n}\n"},
          "complex": ["mem_c mc MEMORY <= YES YES 0 0"],
          "exechost": {"h1": {"complex_values": "mem_c=8G"}, "h2": {"complex_values": "mem_c=8G"}},
          "jobs": [{"id": 7, "qsub": "-pe mpi 4 -l h_rt=60,mem_c=1G"}]}
    snap = snapshot(sc)
    assert schedule.records(snap, cycle(snap)) == [
        "7:1:STARTING:1000:60:P:mpi:slots:4.000000",
        "7:1:STARTING:1000:60:H:h1:mem_c:2147483648.000000",
        "7:1:STARTING:1000:60:Q:all.q@h1:slots:2.000000",
        "7:1:STARTING:1000:60:L:u:alice/////:2.000000",
        "7:1:STARTING:1000:60:H:h2:mem_c:2147483648.000000",
        "7:1:STARTING:1000:60:Q:all.q@h2:slots:2.000000",
        "7:1:STARTING:1000:60:L:u:alice/////:2.000000"]
    snap = snapshot({"hosts": ["h1"], "now": 1795983510,
                     "running": [{"job": 65, "granted": "all.q@h1=1", "start": 1795983494, "suspended": True}]})
    assert schedule.block(snap, cycle(snap)) == \
        "65:1:SUSPENDED:1795983494:2498983801:Q:all.q@h1:slots:1.000000\n::::::::\n"

"""A stress property: random jobs with consumables, resource quotas, PEs and reservations
on four hosts, run through the real pass in virtual time (gridtools.sim.engine). After
every pass the tasks running then (started in that pass or earlier) are counted here,
independently of the scheduler's own bookkeeping: no queue instance, host consumable,
global consumable, PE or quota limit is ever over its capacity. The pass's plan (running
tasks until their expected end, its starts, its reservations) is checked the same way
over time: a start never takes what a reservation will need."""

import random

from gridtools.sim.engine import Simulation

HOSTS = ["h1", "h2", "h3", "h4"]
SLOTS = 4
MEM = {"h1": 8, "h2": 8, "h3": 4, "h4": 16}          # GiB of mem_c per host
GPUS = {"h1": 2, "h2": 1}
LICENSES = 5                                          # lic, a global JOB consumable
PE_SLOTS = 10
PER_USER = 6                                          # users {*} to slots=6
PER_HOST_USER = 3                                     # users {*} hosts {*} to slots=3
GIB = 1024 ** 3

PE = ("pe_name mpi\nslots 10\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
      "stop_proc_args NONE\nallocation_rule $round_robin\ncontrol_slaves FALSE\n"
      "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")
QUOTAS = ("{\n name per_user\n enabled true\n limit users {*} to slots=6\n}\n",
          "{\n name per_host\n enabled true\n limit users {*} hosts {*} to slots=3\n}\n")


def cell():
    exechost = {h: {"complex_values": f"mem_c={MEM[h]}G" + (f",gpu={GPUS[h]}" if h in GPUS else ",gpu=0")}
                for h in HOSTS}
    exechost["global"] = {"complex_values": f"lic={LICENSES}"}
    return {"hosts": HOSTS, "slots": SLOTS, "queue": {"pe_list": "mpi"},
            "sched": {"max_reservation": 5, "default_duration": "0:30:0"},
            "complex": ["mem_c mc MEMORY <= YES YES 1G 0", "lic lic INT <= YES JOB 0 0",
                        "gpu gpu INT <= YES YES 0 0"],
            "exechost": exechost, "users": ["u0", "u1", "u2", "u3"],
            "objects": {"pe/mpi": PE, "rqs/per_user": QUOTAS[0], "rqs/per_host": QUOTAS[1]}}


def submissions(rng, count):
    found = []
    for i in range(count):
        runtime = rng.choice([30, 60, 120, 300, 600])
        asks = [f"h_rt={runtime + rng.choice([0, 30])}"] if rng.random() < 0.8 else []
        if rng.random() < 0.6:
            asks.append(f"mem_c={rng.choice([1, 2, 3, 4])}G")
        if rng.random() < 0.3:
            asks.append(f"lic={rng.choice([1, 2, 3])}")
        if rng.random() < 0.15:
            asks.append("gpu=1")
        sub = {"time": rng.randrange(0, 3000), "user": f"u{rng.randrange(4)}", "runtime": runtime,
               "l": ",".join(asks), "priority": rng.choice([0, 0, 0, 10, -10]), "R": rng.random() < 0.3}
        if rng.random() < 0.2:
            sub["pe"] = f"mpi {rng.choice(['2', '3', '2-4', '4'])}"
        found.append(sub)
    return found


def _amount(spec, name):
    from gridtools.formats import values
    text = (spec["resources"]["hard"] or {}).get(name)
    if text is None:
        return 1 * GIB if name == "mem_c" else 0
    return values.parse_memory(text) if name == "mem_c" else int(text)


def _uses(spec, granted, pe):
    """(resource key, amount, capacity) of everything a task with ``granted`` holds."""
    found = [(("lic",), _amount(spec, "lic"), LICENSES)]
    owner = spec["owner"]
    if pe:
        found.append((("pe",), sum(n for _q, _h, n in granted), PE_SLOTS))
    for q, h, n in granted:
        found += [(("qi", q, h), n, SLOTS), (("mem", h), n * _amount(spec, "mem_c"), MEM[h] * GIB),
                  (("gpu", h), n * _amount(spec, "gpu"), GPUS.get(h, 0)), (("user", owner), n, PER_USER),
                  (("user_host", owner, h), n, PER_HOST_USER)]
    return found


def _end(spec, start, now):
    text = (spec["resources"]["hard"] or {}).get("h_rt")
    end = start + (int(text) if text else 1800)           # default_duration 0:30:0
    return end if end > now else now + 15                 # late: one more schedule_interval


def check_plan(sim, decisions, now):
    """The pass's plan: running tasks until their expected end, its starts and its
    reservations over their windows never hold more of anything than there is."""
    intervals = []
    for job in sim.jobs.values():
        for task in job.running():
            if task.start_time < now:
                end = _end(job.spec, task.start_time, now)
                intervals += [(now, end, u) for u in _uses(job.spec, task.granted, task.pe)]
    for start in decisions.starts:
        spec = sim.jobs[start.job_id].spec
        intervals += [(now, _end(spec, now, now), u) for u in _uses(spec, start.granted, start.pe)]
    for held in decisions.reserves:
        spec = sim.jobs[held.job_id].spec
        intervals += [(held.start, held.end, u) for u in _uses(spec, held.granted, held.pe)]
    events = {}
    for begin, end, (key, amount, cap) in intervals:
        if amount:
            events.setdefault(key, []).extend([(begin, amount, cap), (end, -amount, cap)])
    for key, items in events.items():
        level = 0
        for _when, delta, cap in sorted(items, key=lambda e: (e[0], e[1])):
            level += delta
            assert level <= cap, (key, level, cap, now)


def check(sim):
    """Count what the running tasks hold and compare with every capacity."""
    qi, mem, gpu, user, user_host = {}, {}, {}, {}, {}
    lic = pe_slots = 0
    for job in sim.jobs.values():
        spec = job.spec
        for task in job.running():
            granted = [tuple(g) for g in task.granted]
            lic += _amount(spec, "lic")
            pe_slots += sum(n for _q, _h, n in granted) if task.pe else 0
            for q, h, n in granted:
                qi[(q, h)] = qi.get((q, h), 0) + n
                mem[h] = mem.get(h, 0) + n * _amount(spec, "mem_c")
                gpu[h] = gpu.get(h, 0) + n * _amount(spec, "gpu")
                user[spec["owner"]] = user.get(spec["owner"], 0) + n
                key = (spec["owner"], h)
                user_host[key] = user_host.get(key, 0) + n
    assert all(n <= SLOTS for n in qi.values()), qi
    assert all(mem[h] <= MEM[h] * GIB for h in mem), mem
    assert all(gpu[h] <= GPUS.get(h, 0) for h in gpu), gpu
    assert lic <= LICENSES and pe_slots <= PE_SLOTS, (lic, pe_slots)
    assert all(n <= PER_USER for n in user.values()), user
    assert all(n <= PER_HOST_USER for n in user_host.values()), user_host


def test_random_jobs_never_oversubscribe_anything():
    rng = random.Random(20260412)
    sim = Simulation({"cell": cell(), "submissions": submissions(rng, 400)})
    starts = reserved = passes = 0
    now = sim._next_event()
    while now is not None:
        decisions = sim.step(now)
        passes += 1
        starts += len(decisions.starts)
        reserved += len(decisions.reserves)
        check(sim)
        check_plan(sim, decisions, now)
        now = sim._next_event()
    assert passes > 100 and reserved > 20
    assert starts == sim.stats.started and sim.stats.ended == starts
    assert sim.pending_left() < 40          # jobs asking more than any host has never start

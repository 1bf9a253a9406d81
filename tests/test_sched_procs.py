"""The procs of one HTCondor cluster that ask for different resources (one job whose tasks
carry their own requests, ``PendingJob.task_requests``, and refuse their own hosts,
``Snapshot.task_refusals``): each task is placed and booked with its own request, as
HTCondor matches each proc on its own ad. Every case is a scenario with worked numbers."""

from dataclasses import replace

import schedkit
from gridtools.sched import matchpass
from gridtools.sched import schedule
from gridtools.sched.cycle import cycle, quick_cycle
from schedkit import reasons, run
from test_matchpass import inputs

GPU = {"complex": ["gpu gpu INT <= YES YES 0 0"]}
LEFT = "hc:gpu="


def test_a_proc_asking_for_less_memory_runs_while_proc_0_waits_for_its_own():
    """The reproduction: proc 0 asks mem_free=99999999M (no host has it), proc 1 10M; proc
    1 starts and proc 0 waits with the reason of its own request."""
    sc = {"hosts": ["h1"], "slots": 4, "load": {"h1": {"mem_free": "4G"}},
          "jobs": [{"id": 1, "tasks": [1, 2], "qsub": "-l mem_free=99999999M",
                    "task_qsub": {2: "-l mem_free=10M"}}]}
    decisions, started = run(sc)
    assert started == ["1.2 all.q@h1=1"]
    assert reasons(decisions, 1) == [
        '(-l mem_free=99999999M) cannot run in queue "all.q@h1" because it offers only hl:mem_free=4294967296']
    alike = {**sc, "jobs": [{**sc["jobs"][0], "task_qsub": {}}]}
    assert run(alike)[1] == []


def test_each_proc_books_its_own_consumables():
    """h1 offers gpu=2. Proc 0 asks 1, proc 1 2, proc 2 1: proc 0 and proc 2 take the two
    GPUs, proc 1 waits (it never runs with proc 0's 1), and a later job asking gpu=1 finds
    none left. The schedule file books each proc's own amount."""
    sc = {**GPU, "hosts": ["h1"], "slots": 4, "exechost": {"h1": {"complex_values": "gpu=2"}},
          "sched": {"params": "MONITOR=1"},
          "jobs": [{"id": 1, "tasks": [1, 2, 3], "qsub": "-l gpu=1", "task_qsub": {2: "-l gpu=2"}},
                   {"id": 2, "qsub": "-l gpu=1", "submit": 5}]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=1", "1.3 all.q@h1=1"]
    assert reasons(decisions, 1) == [f'(-l gpu=2) cannot run at host "h1" because it offers only {LEFT}1.000000']
    assert reasons(decisions, 2) == [f'(-l gpu=1) cannot run at host "h1" because it offers only {LEFT}0.000000']
    gpu_lines = [line for line in schedule.records(schedkit.snapshot(sc), decisions) if ":gpu:" in line]
    booked = [line.split(":")[1] + ":" + line.split(":")[-1] for line in gpu_lines]
    assert booked == ["1:1.000000", "3:1.000000"]


def test_a_proc_asking_for_more_than_proc_0_is_never_booked_with_less():
    """Proc 0 asks gpu=1, proc 1 gpu=3 on a host with 2: proc 1 waits."""
    sc = {**GPU, "hosts": ["h1"], "slots": 4, "exechost": {"h1": {"complex_values": "gpu=2"}},
          "jobs": [{"id": 1, "tasks": [1, 2], "qsub": "-l gpu=1", "task_qsub": {2: "-l gpu=3"}}]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=1"]
    assert reasons(decisions, 1) == [f'(-l gpu=3) cannot run at host "h1" because it offers only {LEFT}1.000000']


def test_a_proc_asking_for_more_cpus_gets_the_smp_slots_it_asks_for():
    """request_cpus=4 of proc 0 is -pe smp 4, which 2 slots cannot hold; proc 1 asks for one
    CPU and runs serial; proc 2 asks for 2 and gets both of h2's slots."""
    sc = {"hosts": ["h1", "h2"], "slots": {"h1": 1, "h2": 2}, "queue": {"pe_list": "smp"},
          "objects": {"pe/smp": "pe_name smp\nslots 99\nuser_lists NONE\nxuser_lists NONE\n"
                      "start_proc_args NONE\nstop_proc_args NONE\nallocation_rule $pe_slots\n"
                      "control_slaves FALSE\njob_is_first_task TRUE\nurgency_slots min\n"
                      "accounting_summary FALSE\nqsort_args NONE\n"},
          "jobs": [{"id": 1, "tasks": [1, 2, 3], "qsub": "-pe smp 4",
                    "task_qsub": {2: "", 3: "-pe smp 2"}}]}
    decisions, started = run(sc)
    assert started == ["1.2 all.q@h1=1", "1.3 all.q@h2=2"]
    assert any("smp" in line for line in reasons(decisions, 1))


def test_procs_whose_requirements_refuse_other_hosts_go_where_their_own_allow():
    """Proc 0's Requirements refuse h1, proc 1's h2 (h1 has two slots, h2 one): both run,
    each on the host its own ad allows, and proc 2 (as proc 0) waits for h2 though h1 has
    a free slot."""
    sc = {"hosts": ["h1", "h2"], "slots": {"h1": 2, "h2": 1},
          "jobs": [{"id": 1, "tasks": [1, 2, 3], "unwanted": ["h1"], "task_unwanted": {2: ["h2"]}}]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h2=1", "1.2 all.q@h1=1"]
    assert reasons(decisions, 1) == ['cannot run in queue instance "all.q@h1" because the job\'s '
                                     'Requirements are false for host "h1"',
                                     'queue instance "all.q@h2" dropped because it is full',
                                     "All queues dropped because of overload or full"]


def test_a_job_whose_first_task_finds_no_room_still_places_a_later_one_in_a_quick_pass():
    """The quick pass after a full one places the same way (a job that asks per task is
    looked at task by task, not given its first task's shared reasons)."""
    sc = {**GPU, "hosts": ["h1"], "slots": 2, "exechost": {"h1": {"complex_values": "gpu=1"}},
          "jobs": [{"id": 1, "tasks": [1, 2], "qsub": "-l gpu=2", "task_qsub": {2: "-l gpu=1"}},
                   {"id": 2, "qsub": "-l gpu=2", "submit": 3}]}
    snap = schedkit.snapshot(sc)
    full = cycle(snap)
    assert schedkit.starts(full) == ["1.2 all.q@h1=1"]
    assert full.memo is not None
    quick = quick_cycle(snap, full.memo, {job.id: job for job in snap.jobs})
    assert schedkit.starts(quick) == ["1.2 all.q@h1=1"]
    assert reasons(quick, 1) == reasons(full, 1)


def test_the_negotiators_match_is_placed_with_the_procs_own_request():
    """With NEGOTIATOR=1 the negotiator matches proc 1 by its own ad; Grid Engine's placement
    on the matched host then uses proc 1's request (gpu=1 of h1's 1), not proc 0's 2."""
    sc = {**GPU, "hosts": ["h1"], "slots": 2, "sched": {"params": "NEGOTIATOR=1"}, "now": 1000.0,
          "exechost": {"h1": {"complex_values": "gpu=1"}},
          "jobs": [{"id": 1, "tasks": [1, 2], "qsub": "-l gpu=2", "task_qsub": {2: "-l gpu=1"}}]}
    snap = schedkit.snapshot(sc)
    decisions = matchpass.match_pass(snap, inputs(snap))
    assert schedkit.starts(decisions) == ["1.2 all.q@h1=1"]
    alike = replace(snap, jobs=(replace(snap.jobs[0], task_requests=()),))
    assert schedkit.starts(matchpass.match_pass(alike, inputs(alike))) == []


def test_requests_held_once_are_booked_once_for_all_the_slots():
    """An HTCondor job of two CPUs asking for one GPU (per_job_requests) runs on a host
    with one GPU and holds it once; the same request made by qsub -pe smp 2 -l gpu=1
    asks for one GPU per slot and waits; a job running that way holds one GPU too."""
    base = {**GPU, "hosts": ["h1"], "slots": 4, "queue": {"pe_list": "smp"},
            "exechost": {"h1": {"complex_values": "gpu=2"}}}
    sc = {**base, "jobs": [{"id": 1, "qsub": "-pe smp 2 -l gpu=1", "per_job": ["gpu"]},
                           {"id": 2, "qsub": "-pe smp 2 -l gpu=1", "submit": 5}]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=2"]
    assert reasons(decisions, 2) == ['cannot run in PE "smp" because it only offers 0 slots']
    held = {**base, "running": [{"job": 9, "granted": "all.q@h1=2", "l": "gpu=1", "pe": "smp",
                                 "per_job": ["gpu"]}],
            "jobs": [{"id": 3, "qsub": "-l gpu=1"}]}
    assert run(held)[1] == ["3.1 all.q@h1=1"]


def test_a_quota_counts_a_request_held_once_once():
    """limit users {*} to gpu=1: the HTCondor job of two CPUs and one GPU (held once) fits
    the quota and starts; the same request made per slot would break it."""
    sc = {**GPU, "hosts": ["h1"], "slots": 4, "queue": {"pe_list": "smp"},
          "exechost": {"h1": {"complex_values": "gpu=2"}},
          "objects": {"rqs/gpus": "{\n name gpus\n enabled true\n limit users {*} to gpu=1\n}\n"},
          "jobs": [{"id": 1, "qsub": "-pe smp 2 -l gpu=1", "per_job": ["gpu"]},
                   {"id": 2, "owner": "bob", "qsub": "-pe smp 2 -l gpu=1", "submit": 5}]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=2"]
    assert reasons(decisions, 2) == ['cannot run in PE "smp" because it only offers 0 slots']


def _qsub_of(pe, hard):
    """The qsub options of a proc's (pe, hard requests)."""
    opts = [f"-pe {pe[0]} {pe[1]}"] if pe else []
    if hard:
        opts.append("-l " + ",".join(f"{k}={v}" for k, v in sorted(hard.items())))
    return " ".join(opts)


SMP = {"queue": {"pe_list": "smp"},
       "objects": {"pe/smp": "pe_name smp\nslots 99\nuser_lists NONE\nxuser_lists NONE\n"
                   "start_proc_args NONE\nstop_proc_args NONE\nallocation_rule $pe_slots\n"
                   "control_slaves FALSE\njob_is_first_task TRUE\nurgency_slots min\n"
                   "accounting_summary FALSE\nqsort_args NONE\n"}}


def test_procs_of_one_text_whose_cpus_depend_on_procid_are_placed_with_their_own(tmp_path):
    """``request_cpus = ifThenElse(ProcId == 0, 3, 2 - ProcId % 2)`` with ``queue 4`` is
    stored as one text; the daemon reads each proc's own requests from it
    (``procasks.task_requests``): on h1 (1 slot) and h2 (2), proc 0 (3 CPUs) fits
    nowhere, proc 1 (1 CPU) starts on h1 and proc 2 on both slots of h2, proc 3 (1)
    finds no slot left. With proc 0's request for all, none would start. Its
    Requirements (``TARGET.Cpus >= RequestCpus``) group the procs by what they ask
    (``procasks.proc_keys``): procs 1 and 3 with each other, proc 2 on its own."""
    from test_condor_units import WHO, cluster_ads
    from gridtools.daemon import procasks
    from gridtools.formats.condor import spec as condor_spec
    ads = cluster_ads("executable = run.sh\nrequest_cpus = ifThenElse(ProcId == 0, 3, 2 - ProcId % 2)\n"
                      "queue 4\n", tmp_path)
    spec = condor_spec.cluster_spec(ads, WHO)
    assert isinstance(spec["condor_ad"], str) and spec["pe"] == ["smp", 3, 3]
    own = procasks.task_requests(spec)
    assert own == {2: (None, {}), 3: (["smp", 2, 2], {}), 4: (None, {})}
    keys = procasks.proc_keys(spec, frozenset())
    assert sorted(keys) == [2, 3, 4] and keys[2] == keys[4] != keys[3]
    sc = {**SMP, "hosts": ["h1", "h2"], "slots": {"h1": 1, "h2": 2},
          "jobs": [{"id": 1, "tasks": [1, 2, 3, 4], "qsub": "-pe smp 3",
                    "task_qsub": {task: _qsub_of(*asks) for task, asks in own.items()}}]}
    decisions, started = run(sc)
    assert started == ["1.2 all.q@h1=1", "1.3 all.q@h2=2"]
    assert any("smp" in line for line in reasons(decisions, 1))
    assert run({**sc, "jobs": [{**sc["jobs"][0], "task_qsub": {}}]})[1] == []


def test_a_cluster_whose_requests_read_no_procid_costs_no_parse(tmp_path, monkeypatch):
    """The common case, ``queue 10000`` of one text whose requests read nothing that
    differs by proc: neither its requests nor its refusals are read per proc (the text is
    not even parsed again)."""
    from test_condor_units import WHO, cluster_ads
    from gridtools import jobads
    from gridtools.daemon import procasks
    from gridtools.formats.condor import spec as condor_spec
    spec = condor_spec.cluster_spec(cluster_ads("executable = run.sh\nrequest_cpus = 2\n"
                                                "queue 3\n", tmp_path), WHO)
    spec = dict(spec, tasks=[1, 10000, 1])
    assert isinstance(spec["condor_ad"], str)

    def no_parse(*_args):
        raise AssertionError("parsed")
    monkeypatch.setattr(jobads, "parsed_ad", no_parse)
    monkeypatch.setattr(jobads, "proc_ad", no_parse)
    assert procasks.task_requests(spec) == {}
    assert procasks.proc_keys(spec, frozenset({"requestcpus"})) == {}

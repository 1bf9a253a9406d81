"""The simulator's virtual clock: submissions, passes, starts and ends of tasks.

A trace (a mapping, from YAML or JSON) describes the cell and the workload::

    cell: {hosts: [h1, h2], slots: 4, sched: {weight_tickets_share: 10000, halftime: 24},
           users: [alice, bob], sharetree: "..."}      # see sim.cellconf
    report_every: 3600          # seconds between the rows of the report
    until: 604800               # end of the run (default: when every job ended)
    submissions:
      - {time: 0, user: alice, count: 100, runtime: 600}
      - {time: 60, user: bob, count: 10, runtime: 60, tasks: 5, project: p1,
         l: "h_vmem=1G,h_rt=120", pe: "smp 2", priority: -10, cpu: 0.5, R: true}

``count`` jobs (of ``tasks`` array tasks each) are submitted at ``time``;
each task runs ``runtime`` seconds and uses ``cpu`` CPU seconds per second
and slot (1 by default), which the share tree counts as usage when it ends;
``R: true`` asks for a reservation (qsub -R y), which needs a run time
(``h_rt`` in ``l``) to be useful. Resource quota sets of the cell apply.

Each event (submissions, ends) is followed by one pass of the real
``sched.cycle.cycle`` over a snapshot built by ``sched.inputs``; its
decisions change the jobs through ``model.transitions``, the same door the
daemon uses.
"""

import heapq
import time as _time
from dataclasses import dataclass, field

from gridtools.accounting.usage import AccountKey, HalfLife, Ledger, Sample, Usage
from gridtools.model import transitions as tr
from gridtools.model.job import Job, TaskState
from gridtools.sched import inputs, rqs
from gridtools.sched.cycle import cycle
from gridtools.sched.policy.inputs import ProjectUsage
from gridtools.sched.snapshot import PolicyView, Snapshot
from gridtools.sim import cellconf

#: load values every simulated host reports
LOAD = {"np_load_avg": 0.0, "load_avg": 0.0, "num_proc": 4}


@dataclass
class Stats:
    """What a run measured."""
    samples: list = field(default_factory=list)     # (time, {user: running slots}, {user: usage})
    waits: dict = field(default_factory=dict)       # user -> [seconds each task waited]
    busy: float = 0.0                               # slot-seconds used
    capacity: int = 0                               # slots of the cell
    passes: list = field(default_factory=list)      # seconds each pass took
    started: int = 0
    ended: int = 0
    end_time: float = 0.0


def _resources(text):
    found = {}
    for item in str(text or "").split(","):
        name, eq, value = item.partition("=")
        if eq and name.strip():
            found[name.strip()] = value.strip()
    return found


def _pe(text):
    if not text:
        return None
    name, _, rng = str(text).partition(" ")
    low, dash, high = rng.strip().partition("-")
    low = int(low or 1)
    return [name, low, int(high) if dash and high else (None if dash else low)]


def _spec(job_id, sub):
    tasks = int(sub.get("tasks") or 0)
    return {"id": job_id, "owner": sub["user"], "group": sub.get("group", sub["user"]),
            "name": sub.get("name", f"sim{job_id}"), "submit_time": float(sub["time"]),
            "priority": int(sub.get("priority") or 0), "project": sub.get("project"),
            "resources": {"hard": _resources(sub.get("l")), "soft": {}},
            "queues": {"hard": [], "soft": []}, "pe": _pe(sub.get("pe")),
            "tasks": [1, tasks, 1] if tasks > 1 else None, "jobshare": int(sub.get("js") or 0),
            "override_tickets": int(sub.get("ot") or 0), "reserve": bool(sub.get("R"))}


class Simulation:
    """One run of a trace."""

    def __init__(self, trace):
        self.trace = trace
        self.conf = cellconf.config(trace.get("cell") or {})
        self.table = inputs.complexes(self.conf)
        self.queues = inputs.queue_instances(self.conf, inputs.hostgroups(self.conf), self.table)
        self.hosts = inputs.hosts(self.conf, {h: LOAD for h in inputs.exec_hosts(self.conf)}, {},
                                  self.table)
        self.config = inputs.sched_config(self.conf)
        self.quotas = rqs.quota_sets(self.conf, self.table)
        self.policy_config = inputs.policy_config(self.conf)
        self.tree = inputs.share_tree(self.conf)
        self.ledger = Ledger(half_life=HalfLife(*self.policy_config.half_lives()))
        self.jobs = {}
        self.runtime = {}            # job id -> (runtime, cpu per second and slot)
        self.ends = []               # heap of (end time, job id, task)
        self.arrivals = sorted(enumerate(trace.get("submissions") or ()),
                               key=lambda item: (float(item[1]["time"]), item[0]))
        self.next_id = 1
        self.stats = Stats(capacity=sum(q.slots for q in self.queues))

    # ------------------------------------------------------------ events
    def _submit(self, now):
        while self.arrivals and float(self.arrivals[0][1]["time"]) <= now:
            _, sub = self.arrivals.pop(0)
            for _ in range(int(sub.get("count") or 1)):
                job = Job(_spec(self.next_id, sub))
                self.jobs[job.id] = job
                self.runtime[job.id] = (float(sub.get("runtime") or 60.0), float(sub.get("cpu", 1.0)))
                self.next_id += 1

    def _end(self, now):
        ended = False
        while self.ends and self.ends[0][0] <= now:
            end, job_id, number = heapq.heappop(self.ends)
            job = self.jobs[job_id]
            task = job.task(number)
            runtime, cpu = self.runtime[job_id]
            used = Usage(cpu * runtime * task.slots, 0.0, 0.0)
            self.ledger.finish(Sample(job_id, number, job.spec["owner"], job.spec.get("project"),
                                      used, end))
            tr.finish(job, number, {"exit_status": 0, "end_time": end}, end)
            self.stats.ended += 1
            ended = True
        return ended

    def _start(self, decisions, now):
        for start in decisions.starts:
            job = self.jobs[start.job_id]
            tr.dispatch(job, start.task, start.granted, now, pe=start.pe)
            runtime = self.runtime[job.id][0]
            heapq.heappush(self.ends, (now + runtime, job.id, start.task))
            slots = sum(g[2] for g in start.granted)
            self.stats.busy += runtime * slots
            self.stats.waits.setdefault(job.spec["owner"], []).append(now - job.spec["submit_time"])
            self.stats.started += 1

    # ------------------------------------------------------------ the pass
    def _usage_of(self, now):
        ledger = self.ledger

        def of(kind, name):
            key = AccountKey.user(name) if kind == "user" else AccountKey.of_project(name)
            extra = ()
            if kind == "user":
                extra = tuple(ProjectUsage(p, ledger.usage(AccountKey.user_in(name, p), now),
                                           ledger.long_term(AccountKey.user_in(name, p)))
                              for p in ledger.projects_of(name))
            return ledger.usage(key, now), ledger.long_term(key), extra
        return of

    def snapshot(self, now):
        pending, running, ad_done = [], [], {}
        live = frozenset(j.id for j in self.jobs.values() if not j.is_finished())
        for job_id in live:
            job = self.jobs[job_id]
            req = job.cache.get("simreq")
            if req is None:
                req = job.cache["simreq"] = inputs.request(job.spec, self.conf, self.table)
            for task in job.running():
                running.append(inputs.running_record(job, task, self.table, req))
            if job.pending_numbers():
                pending.append(inputs.pending_job(job, self.conf, self.table, req, len(job.running())))
        users = sorted({k.name for k in self.ledger.accounts if k.holder.value != "project"})
        members = inputs.members(self.conf, self._usage_of(now), users)
        return Snapshot(now=now, jobs=tuple(pending), running=tuple(running), queues=self.queues,
                        hosts=self.hosts, complexes=self.table, config=self.config,
                        pes=inputs.pes(self.conf), global_values=inputs.global_values(self.conf, self.table),
                        live=live, ad_done=ad_done, quotas=self.quotas,
                        policy=PolicyView(self.policy_config, members, self.tree))

    def step(self, now):
        """Submissions and ends due at ``now``, then one pass; returns the decisions."""
        self._submit(now)
        self._end(now)
        snap = self.snapshot(now)
        self.ledger.end_pass()          # (usage counted per pass: this pass read it)
        began = _time.perf_counter()
        decisions = cycle(snap)
        self.stats.passes.append(_time.perf_counter() - began)
        self._start(decisions, now)
        return decisions

    # ------------------------------------------------------------ the run
    def _next_event(self):
        times = []
        if self.arrivals:
            times.append(float(self.arrivals[0][1]["time"]))
        if self.ends:
            times.append(self.ends[0][0])
        return min(times) if times else None

    def sample(self, now):
        slots, usage = {}, {}
        for job in self.jobs.values():
            for task in job.running():
                slots[job.spec["owner"]] = slots.get(job.spec["owner"], 0) + task.slots
        weights = self.policy_config.usage_weights
        for key in self.ledger.accounts:
            if key.holder.value == "user":
                usage[key.name] = self.ledger.usage(key, now).combined(weights)
        self.stats.samples.append((now, slots, usage))

    def run(self):
        """Run the trace to its end; returns the Stats."""
        every = float(self.trace.get("report_every") or 3600)
        until = self.trace.get("until")
        until = float(until) if until is not None else None
        next_report = 0.0
        now = self._next_event()
        while now is not None and (until is None or now <= until):
            while next_report <= now:
                self.sample(next_report)
                next_report += every
            self.step(now)
            now = self._next_event()
        last = until if until is not None else next_report
        while next_report <= last:
            self.sample(next_report)
            next_report += every
        self.stats.end_time = last
        return self.stats

    def pending_left(self):
        return sum(1 for job in self.jobs.values()
                   for n in job.pending_numbers() if job.state_of(n) is TaskState.PENDING)

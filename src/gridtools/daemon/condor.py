"""The HTCondor side of the daemon: configuration, slots, user priorities, negotiation.

``Condor`` is what the loop calls at its phases:

- ``recover``  at start-up: condor_config, the slots' states, the priorities;
- ``refresh``  the condor_config when it changed (or on condor_reconfig);
- ``decide``   the scheduler's pass: Grid Engine's order (``sched.cycle``)
               with each host's START leaving out the jobs it refuses and
               each HTCondor job's Requirements the hosts it refuses, or,
               with sched_conf ``params NEGOTIATOR=1``, the negotiator's
               (``sched.matchpass``) with the slots and the priorities, floors
               and ceilings of now,
               taking claimed slots only in a pass NEGOTIATOR_INTERVAL seconds
               after the last that did (HTCondor's cycle; free slots are
               matched at every pass); in either order, what one owner's
               matching takes of a pass, with the concurrency limits of its
               jobs that read the machine, is bounded in evaluation steps
               (``sched.evalbudget``), and the jobs a pass puts off go
               first in the next;
- ``follow``   after starts and ends: the slots follow the running tasks,
               their policies are evaluated when due, the negotiator's
               preemptions are carried out, and the accountant is charged;
- ``save``, ``published``  what goes to the spool and to the status.

Nothing here decides anything itself: the startd's transitions are
``sched.startd``'s, the matches ``sched.negotiator``'s, the priorities
``accounting.userprio``'s.
"""

import time
from dataclasses import replace

from gridtools.daemon import condorjob, patterncost, slotads, userprio
from gridtools.daemon.condorconf import CondorConf
from gridtools.daemon.hostfacts import Facts
from gridtools.daemon.machines import Machines
from gridtools.errors import ConfigError
from gridtools.sched import matchpass
from gridtools.sched.evalbudget import Budget, mark
from gridtools.sched.cycle import cycle, quick_cycle
from gridtools.sched.negotiator import NegotiatorConfig, accounting_name

#: most seconds the published slot ads may be older than now when nothing changed
PUBLISH_SLOTS_EVERY = 5.0
#: least seconds between two writes of the slots' states (a restart rebuilds claims from
#: the running tasks, so a busy cell writes them at this pace, not at every pass)
SAVE_SLOTS_EVERY = 0.25


#: the concurrency limit a job whose limits' expression went over its budget waits on
TOO_COSTLY = "concurrencylimits-too-costly"


#: HTCondor's default MAX_NEXT_JOB_START_DELAY: ten minutes
MAX_NEXT_JOB_START_DELAY = 600.0


class Condor:
    """The daemon's HTCondor side (see the module docstring)."""

    def __init__(self):
        self.conf = CondorConf()
        self.facts = Facts()
        self.machines = Machines()
        self.priorities = userprio.Priorities()
        self.ctx = None
        self.negotiated = 0.0          # when the negotiator last ran
        self.cycle = {}                # the last pass's figures (condor_status -negotiator)
        self.preempted = None          # when a negotiation cycle last preempted
        self.negotiate_at = None       # when the next cycle may preempt, while passes wait for it
        self.submitters = {}           # name -> SubmitterReport of the last negotiation
        self.groups = {}               # accounting group -> its quotas in the last negotiation
        self._published = None         # (configuration key, time, {host: slot rows}) last published
        self.slots_saved = 0.0         # when the slots' states were last written
        self.remote_plugins = {}       # host -> PoolPlugins its execution daemon reported
        self._plugin_rows = {}         # host -> the row it came from
        self.put_off = ()              # the jobs (procs) whose matching the last pass put off

    def plugins_reported(self, host, row):
        """What the pool's plugins offer on ``host`` as its execution daemon reported it
        (``exec.poolplugins``; None: asked here); True when that changed."""
        if row == self._plugin_rows.get(host):
            return False
        from gridtools.exec import poolplugins
        found = poolplugins.from_row(row) if row is not None else None
        if found is None:
            self._plugin_rows.pop(host, None)
            return self.remote_plugins.pop(host, None) is not None
        self._plugin_rows[host] = row
        self.remote_plugins[host] = found
        return True

    # ------------------------------------------------------------ life
    def recover(self, state):
        self.facts.log = state.log
        self.conf.refresh(state.log, force=True)
        self.publish_config(state)
        self.machines.restore(state.log)
        self.priorities.load(state.log, userprio.settings_of(self.conf))

    def refresh(self, state, force=False, now=None):
        """Read condor_config again when it changed; True when it did."""
        if not self.conf.refresh(state.log, force=force, now=now):
            return False
        self.publish_config(state)
        self.priorities.configure(userprio.settings_of(self.conf))
        state.need_schedule = True
        state.need_publish = True
        self.machines.all_due(now or 0.0)     # (a policy that changed applies at once)
        return True

    def publish_config(self, state):
        """Publish the configuration just read, for condor_config_val's daemon targets
        (``spool.daemonconf``); a spool that cannot be written is logged."""
        from gridtools.daemon import confset, view
        from gridtools.errors import SpoolError
        from gridtools.spool import daemonconf
        try:
            full = confset.snapshot(self.conf, view.exec_hosts(state.config), state.started)
            daemonconf.publish(full, confset.public(full, self.conf.main))
        except (SpoolError, OSError) as exc:
            state.log(f"E|the configuration in use is not published: {exc}")
        self.mark_checks(state)

    def mark_checks(self, state):
        """Mark in the spool whether the daemon checks new jobs against rules the
        submitting commands do not check in full (``spool.daemonconf.mark_checks``), after
        either dialect's configuration was read."""
        from gridtools.errors import SpoolError
        from gridtools.spool import daemonconf
        conf = state.config.objects["conf"].get("global") if state.config is not None else None
        try:
            daemonconf.mark_checks(self.conf.main, conf)
        except (SpoolError, OSError) as exc:
            state.log(f"E|the mark of the submit checks is not written: {exc}")

    def context(self, state, dispatcher, loads, now):
        self.ctx = slotads.Context(state, dispatcher, self.conf, self.facts, self.machines, loads, now)
        return self.ctx

    # ------------------------------------------------------------ the pass
    def decide(self, state, dispatcher, snap, loads, now, memo=None, pending_of=None):
        """The decisions of one pass (see the module docstring); with ``memo`` (a
        ``sched.cycle.Memo`` still valid) a quick pass when Grid Engine's order decides.
        Its figures are kept for the negotiator's ad (``cycle``)."""
        began = time.monotonic()
        decisions = self._decide(state, dispatcher, snap, loads, now, memo, pending_of)
        self.cycle = {"end": now, "duration": time.monotonic() - began, "slots": len(self.machines.slots),
                      "submitters": len(decisions.submitters) or len({job.owner for job in snap.jobs}),
                      "jobs": sum(len(job.tasks) for job in snap.jobs), "matches": len(decisions.starts),
                      "rejections": len(decisions.reasons)}
        return decisions

    def _decide(self, state, dispatcher, snap, loads, now, memo=None, pending_of=None):
        ctx = self.context(state, dispatcher, loads, now)
        self.machines.update(ctx, now)
        rules, most = self._slotless_rules(), self._max_jobs_running(state)
        if most is not None:
            self._within(ctx, snap, max(0, most), now)
        budget = Budget.of(snap.config, self.put_off)
        snap = self._machine_limits(ctx, snap, budget)
        snap = patterncost.charge(snap, budget)     # (long request patterns, compiled at the owner's cost)
        limits = self._concurrency(snap)
        if rules != snap.config.slotless_start or most != snap.config.max_jobs_running or \
                limits != snap.config.concurrency:
            snap = replace(snap, config=replace(snap.config, slotless_start=rules, max_jobs_running=most,
                                                concurrency=limits))
        snap = self._throttles(state, snap)
        if not matchpass.enabled(snap.config):
            condor_jobs = memo.condor_jobs if memo is not None else True
            refused, unwanted, by_task, condor_jobs, put_off = slotads.refusals(ctx, snap.jobs, condor_jobs,
                                                                                budget)
            self.put_off = tuple(budget.put_off)
            snap = replace(snap, refused=refused, unwanted=unwanted, task_refusals=by_task,
                           put_off={**snap.put_off, **put_off} if snap.put_off else put_off)
            decisions = quick_cycle(snap, memo, pending_of) if memo is not None else None
            if decisions is None:
                decisions = cycle(snap)
                if decisions.memo is not None:
                    decisions.memo.condor_jobs = condor_jobs
            if condor_jobs and self.machines.pick_slots(ctx, decisions):
                state.need_schedule = True      # what the taken back starts had booked is free
            return decisions
        self._charge(ctx, now)
        config = self._negotiator_config(state)
        held = config.consider_preemption and not self._may_preempt(config.interval, now)
        if held:
            config = replace(config, consider_preemption=False)
        inputs = matchpass.Inputs(slotads.negotiator_slots(ctx), self._job_ad(state, ctx),
                                  self._priorities(state, ctx, snap.jobs), config,
                                  frozenset(self.machines.preempting()), self.machines.claims(),
                                  self.put_off, budget.spent, *self._floors_ceilings())
        decisions = matchpass.match_pass(snap, inputs)
        self.put_off = tuple(budget.put_off) + decisions.put_off
        self.negotiated, self.submitters, self.groups = now, decisions.submitters, decisions.groups
        if decisions.preempts:
            self.preempted = now
        self.negotiate_at = self.preempted + config.interval if decisions.preempts or held else None
        return decisions

    def _may_preempt(self, interval, now):
        """True when this pass is a negotiation cycle that may preempt: NEGOTIATOR_INTERVAL
        seconds have passed since the last one that preempted (or the clock went back)."""
        return self.preempted is None or not self.preempted <= now < self.preempted + interval

    def negotiation_due(self, now):
        """True (once) when passes held back from preempting may now preempt: the loop
        then runs a pass."""
        if self.negotiate_at is None or now < self.negotiate_at:
            return False
        self.negotiate_at = None
        return True

    @staticmethod
    def _job_ad(state, ctx):
        def job_ad(job_id, task):
            return ctx.job_ad(state.jobs[job_id], task)
        return job_ad

    def _priorities(self, state, ctx, pending):
        """Effective priorities of every accounting name with a record or a pending job."""
        names = set(self.priorities.accountant.records)
        for item in pending:
            job = state.jobs.get(item.id)
            if job is not None and item.tasks:
                names.add(accounting_name(ctx.job_ad(job, next(iter(item.tasks)))))
        return self.priorities.effective(names)

    def _floors_ceilings(self):
        """(floors, ceilings): accounting name -> the floor and the ceiling set with
        condor_userprio, of the names that have one."""
        acc = self.priorities.accountant
        floors, ceilings = {}, {}
        for name in acc.records:
            floor, ceiling = acc.floor(name), acc.ceiling(name)
            if floor > 0:
                floors[name] = floor
            if ceiling >= 0:
                ceilings[name] = ceiling
        return floors, ceilings

    def _slotless_rules(self):
        """condor_config's START_LOCAL_UNIVERSE and START_SCHEDULER_UNIVERSE, HTCondor's
        defaults where unset (``SchedConfig.slotless_start``)."""
        from gridtools.sched.local import KNOBS
        from gridtools.sched.snapshot import SchedConfig
        found = []
        for universe, default in SchedConfig().slotless_start:
            text = (self.conf.get(KNOBS[universe]) or "").strip()
            found.append((universe, text or default))
        return tuple(found)

    def _within(self, ctx, snap, most, now):
        """MAX_JOBS_RUNNING lowered below the HTCondor jobs running on execute hosts: the
        last started of them are vacated (evicted and queued again, as the schedd aborts
        them) until as many run as it allows; those leaving already count as gone."""
        shadows = sorted((r for r in snap.running if r.shadow), key=lambda r: (r.start_time, r.job_id, r.task))
        if len(shadows) <= most:
            return
        leaving = {r.task for r in self.machines.slots.values()
                   if r.task is not None and r.slot.state.value == "Preempting"}
        staying = [r for r in shadows if (r.job_id, r.task) not in leaving]
        victims = staying[most:]
        names = [name for name, r in self.machines.slots.items()
                 if r.task is not None and any(r.task == (v.job_id, v.task) for v in victims)]
        if names:
            self.machines.vacate(ctx, names, False, now)

    def _concurrency(self, snap):
        """The capacities of the concurrency limits the snapshot's jobs use (sorted): each
        name's ``<NAME>_LIMIT``, else (a ``set.member`` name) its set's
        ``CONCURRENCY_LIMIT_DEFAULT_<SET>``, else ``CONCURRENCY_LIMIT_DEFAULT``; a name
        with none of them is free (left out). Limits that need the machine count with
        the names they give on each host (``_machine_limits``)."""
        names = {name for job in snap.jobs for name, _amount in job.limits}
        names.update(name for r in snap.running for name, _amount in r.limits)
        names.update(name for by_host in snap.host_limits.values() for limits in by_host.values()
                     for name, _amount in limits)
        if not names:
            return ()
        found = []
        for name in sorted(names):
            capacity = 0.0 if name == TOO_COSTLY else self._capacity(name)
            if capacity is not None:
                found.append((name, capacity))
        return tuple(found)

    def _machine_limits(self, ctx, snap, budget):
        """The snapshot with the concurrency limits that need the machine worked out
        (``sched.inputs.limits_need_machine``): for each pending job that has them, on
        each host (its ad as MY, the host's free slot's as TARGET: ``host_limits``);
        for each running task of such a job, on the slot it holds. An expression whose
        evaluation went over its budget (classad(5), COST) is not evaluated again until
        the job changes: the job waits on the limit ``TOO_COSTLY``, whose capacity is 0.

        The steps these evaluations take count against the job's owner in ``budget``
        (``sched.evalbudget``), before its matching; once an owner's took them, its
        other pending jobs with such limits are put off (``Snapshot.put_off``, and
        ``budget.put_off`` for the next pass to take them first)."""
        from gridtools.sched import inputs
        pending = [job for job in snap.jobs if job.machine_limits and not job.held_all]   # (held: not placed)
        needing = {r.job_id for r in snap.running if r.shadow and not r.limits
                   and _task_limits(ctx, r) is None}
        needing = {jid for jid in needing if jid in ctx.state.jobs
                   and inputs.limits_need_machine(ctx.state.jobs[jid].spec)}
        if not pending and not needing:
            return snap
        machines = {host: slotads.free_ad(ctx, host) for host in ctx.hosts()}
        by_job, put_off = {}, {}
        for job in budget.first(pending, _job_id):
            model = ctx.state.jobs.get(job.id)
            if model is None or not job.tasks:
                continue
            if model.cache.get("limits_too_costly") != model.version:
                if budget.over(job.owner):
                    put_off[job.id] = None
                    budget.put_off.append(job.id)
                    continue
                found = _limits_on(ctx, model, min(job.tasks), machines, job.owner, budget)
                if found is not None:
                    by_job[job.id] = found
                    continue
                model.cache["limits_too_costly"] = model.version
            by_job[job.id] = {host: ((TOO_COSTLY, 1.0),) for host in machines}
        running = []
        for r in snap.running:
            if r.job_id in needing and ctx.state.jobs[r.job_id].cache.get("limits_too_costly") is None \
                    and _task_limits(ctx, r) is None:
                slot = self.machines.slot_of((r.job_id, r.task))
                machine = ctx.slot_ad(slot) if slot is not None else machines.get(r.granted[0][1]) \
                    if r.granted else None
                if machine is not None:
                    model, since = ctx.state.jobs[r.job_id], mark()
                    r = replace(r, limits=inputs.limits_in(ctx.job_ad(model, r.task), machine))
                    budget.charge(model.spec["owner"], since, matching=False)
                    task = model.tasks.get(r.task)
                    if task is not None:        # (what its run holds from now on, whatever edits say)
                        task.limits = [list(pair) for pair in r.limits]
                        ctx.state.touch(model)
            running.append(r)
        if put_off:
            put_off = {**snap.put_off, **put_off} if snap.put_off else put_off
            return replace(snap, host_limits=by_job, running=tuple(running), put_off=put_off)
        return replace(snap, host_limits=by_job, running=tuple(running))

    def _capacity(self, name):
        """A concurrency limit's capacity from condor_config, once per reading (None: free)."""
        def read():
            knobs = [f"{name}_LIMIT"]
            if "." in name:
                knobs.append(f"CONCURRENCY_LIMIT_DEFAULT_{name.partition('.')[0]}")
            knobs.append("CONCURRENCY_LIMIT_DEFAULT")
            for knob in knobs:
                text = (self.conf.get(knob.upper()) or "").strip()
                if text:
                    return _number(text)
            return None
        return self.conf.derived(("concurrency", name), read)

    def _throttles(self, state, snap):
        """``snap`` with the start throttles: each host's MAX_STARTERS, and the holds
        starts with NextJobStartDelay put on the next start of their owners' HTCondor
        jobs (owner -> time, capped by MAX_NEXT_JOB_START_DELAY), with the tasks that set
        them."""
        starters = self.max_starters(state)
        if any(starters.get(name, 0) != host.max_starters for name, host in snap.hosts.items()):
            snap = replace(snap, hosts={name: replace(host, max_starters=starters.get(name, 0))
                                        for name, host in snap.hosts.items()})
        cap = self.max_start_delay(state)
        if state.next_job_start != snap.config.start_hold or cap != snap.config.max_start_delay or \
                state.next_job_starter != snap.config.start_holders:
            snap = replace(snap, config=replace(snap.config, start_hold=dict(state.next_job_start),
                                                start_holders=dict(state.next_job_starter),
                                                max_start_delay=cap))
        return snap

    def max_starters(self, state):
        """host -> condor_config's MAX_STARTERS as the host reads it (an integer
        expression; LoadLeveler's startd runs at most that many jobs at once) for the
        hosts that set one above 0, once per reading."""
        if self.conf.main is None:
            self.refresh(state)
        from gridtools.daemon import view
        hosts = tuple(view.exec_hosts(state.config))

        def read():
            found = {}
            for host in hosts:
                text = (self.conf.host(host).get("MAX_STARTERS") or "").strip()
                if not text:
                    continue
                value = _number(text)
                if value is None:
                    state.log(f"E|MAX_STARTERS ({text}) of host {host} is not an integer: no limit")
                elif value >= 1:
                    found[host] = int(value)
            return found
        return self.conf.derived(("max_starters", hosts), read)

    def max_start_delay(self, state):
        """condor_config's MAX_NEXT_JOB_START_DELAY: the most seconds a job's
        NextJobStartDelay holds back the next start (default 600; 0: no cap)."""
        if self.conf.main is None:
            self.refresh(state)

        def read():
            text = (self.conf.get("MAX_NEXT_JOB_START_DELAY") or "").strip()
            if not text:
                return MAX_NEXT_JOB_START_DELAY
            value = _number(text)
            if value is None:
                state.log(f"E|MAX_NEXT_JOB_START_DELAY ({text}) is not an integer: "
                          f"{MAX_NEXT_JOB_START_DELAY} stands")
                return MAX_NEXT_JOB_START_DELAY
            return float(max(0, int(value)))
        return self.conf.derived("max_start_delay", read)

    def start_delay(self, job, number):
        """The seconds task ``number`` of ``job``, which has just started, holds back its
        owner's next start (NextJobStartDelay): evaluated as HTCondor's schedd evaluates
        it when it spawns the task's shadow, with the task's ad and the ad of the slot it
        was matched with as TARGET (EvalInteger: a real cut to an integer, a boolean 0
        or 1; anything else, or below 0, is none). 0 when the job names none."""
        from gridtools.sched.inputs import delay_seconds, job_names_start_delay, start_delay
        if not job_names_start_delay(job):
            return 0.0
        slot = self.machines.slot_of((job.id, number))
        machine = self.ctx.slot_ad(slot) if self.ctx is not None and slot else None
        if machine is None:
            return start_delay(job.spec, number)
        try:
            value = condorjob.proc_ad(job, number).eval("NextJobStartDelay", machine)
        except Exception:  # noqa: BLE001 - an ad that does not read: no delay
            return 0.0
        return delay_seconds(value)

    def _max_jobs_running(self, state):
        """condor_config's MAX_JOBS_RUNNING (an integer expression; HTCondor's default, the
        machine's memory in megabytes up to 10000), once per reading (the first pass of a
        daemon may come before anything read it)."""
        if self.conf.main is None:
            self.refresh(state)

        def read():
            text = (self.conf.get("MAX_JOBS_RUNNING") or "").strip()
            if not text and self.conf.main is not None:
                from gridtools.formats import condor_params
                text = self.conf.main.expand(condor_params.default("MAX_JOBS_RUNNING")).strip()
            value = _number(text)
            if value is not None:
                return int(value)
            state.log(f"E|MAX_JOBS_RUNNING ({text}) is not an integer: no limit")
            return None
        return self.conf.derived("max_jobs_running", read)

    def _negotiator_config(self, state):
        try:
            return self.conf.derived("negotiator", lambda: NegotiatorConfig.from_config(self.conf.main))
        except ConfigError as exc:
            state.log(f"E|the negotiator's configuration cannot be read, defaults used: {exc}")
            return NegotiatorConfig()

    def follow(self, state, dispatcher, loads, now, decisions=None):
        """After a pass's starts (or a tick's ends): slots, preemptions, priorities."""
        ctx = self.context(state, dispatcher, loads, now)
        self.machines.update(ctx, now, decisions.slots if decisions is not None else None)
        if state.starting:
            condorjob.started_events(state, self.machines.slot_of)
        for preempt in (decisions.preempts if decisions is not None else ()):
            if self.machines.preempt(ctx, preempt.slot, (preempt.by, preempt.by_task), now):
                state.log(f"I|job {preempt.job_id}.{preempt.task} preempted from {preempt.slot} "
                          f"by job {preempt.by}.{preempt.by_task} ({preempt.kind})")
        self._charge(ctx, now)
        if self.machines.changed:
            state.need_publish = True

    def claim_started(self, state, now, hints=None):
        """The tasks just started take their slots now (``follow`` would take them after
        the pass), so that their shepherds know them (``daemon.jobside``); ``hints``:
        the slots the pass chose for some (``Decisions.slots``)."""
        if self.ctx is not None:
            self.machines.claim_new(self.ctx, now, hints)

    def due(self, now):
        wake = self.machines.next_wake
        return wake is not None and wake <= now

    def next_wake(self):
        """The next time the loop must run a tick for this side: a slot's policy is due,
        the priorities wait to be written, or the next negotiation cycle may preempt."""
        slots_due = self.slots_saved + SAVE_SLOTS_EVERY if self.machines.dirty else None
        times = [t for t in (self.machines.next_wake, self.priorities.save_due(), slots_due, self.negotiate_at)
                 if t is not None]
        return min(times) if times else None

    def _charge(self, ctx, now):
        in_use = {}
        for job, task in ctx.state.running_tasks():
            if not task.granted or not sum(g[2] for g in task.granted):
                continue
            name = accounting_name(ctx.job_ad(job, task.number))
            in_use[name] = in_use.get(name, 0.0) + float(sum(g[2] for g in task.granted))
        self.priorities.charge(in_use, now)

    # ------------------------------------------------------------ output
    def save(self, state, now, force=False, publishing=False):
        """Write the slots' states and the priorities that are due (``publishing``: a
        status snapshot follows, which must not show more than they do)."""
        try:
            if force or now - self.slots_saved >= SAVE_SLOTS_EVERY:
                if self.machines.dirty:
                    self.slots_saved = now
                self.machines.save()
            self.priorities.save(now, force, publishing)
        except OSError as exc:
            state.log(f"E|cannot write the slot states or user priorities, retrying: {exc}")

    def published(self, state, dispatcher, loads, now):
        """The status snapshot's HTCondor part: slot ads and the negotiator's facts. A
        host's slot ads are built again when one of its slots changed, the configuration
        was read again, or after PUBLISH_SLOTS_EVERY seconds (as a startd updates its
        collector)."""
        key = (self.conf.generation, state.config_generation)
        if self._published is None or self._published[0] != key or now - self._published[1] >= PUBLISH_SLOTS_EVERY:
            self._published = (key, now, {})
        rows_of = self._published[2]
        for host in list(rows_of):
            if host in self.machines.changed:
                del rows_of[host]
        self.machines.changed = set()
        ctx = self.context(state, dispatcher, loads, now)
        shown = state.host_display or {}
        closed = self.machines.closed_owners()
        rows = []
        for host in ctx.hosts():
            if shown.get(host) == "Down" or state.host_states.get(host) == "flush":
                continue                # a startd that is gone (or off: flushed) has no ads in the collector
            if host not in rows_of:
                rows_of[host] = [slotads.plain(ad) for ad in ctx.host_ads(host).values()]
            found = _closed_rows(rows_of[host], closed) if closed else rows_of[host]
            admin = state.host_states.get(host)
            rows.extend(_host_state_rows(found, admin) if admin in ("drain", "suspend") else found)
        schedd = self.facts.schedd_cron() if self.facts.schedd_cron is not None else ()
        return {"slots": rows, "schedd": [[name, expr.unparse(True)] for name, expr in schedd], "negotiator": {
            "time": self.negotiated, "mode": "negotiator" if self._negotiating(state) else "sge",
            "cycle": self.cycle,
            "uid_domain": (self.conf.get("UID_DOMAIN") or "").strip(),
            "submitters": {n: [r.priority, r.share, r.usage] for n, r in self.submitters.items()},
            "groups": self.groups}}

    @staticmethod
    def _negotiating(state):
        from gridtools.daemon import view
        return matchpass.enabled(view.config_parts(state)["config"])



def _job_id(job):
    return job.id


def _limits_on(ctx, model, task, machines, owner, budget):
    """host -> the concurrency limits of a job's ``task`` on each of ``machines`` (host ->
    its free slot's ad), the steps taken charged to ``owner`` in ``budget``; None when an
    evaluation went over its budget (classad(5), COST)."""
    from gridtools.classad.budget import over_budget
    from gridtools.sched import inputs
    over, since = over_budget(), mark()
    ad = ctx.job_ad(model, task)
    found = {host: inputs.limits_in(ad, machine) for host, machine in machines.items() if machine is not None}
    budget.charge(owner, since, matching=False)
    return found if over_budget() == over else None


def _closed_rows(rows, closed):
    """The slot rows (``[literal values, expression texts]``) with Start false in those of
    ``closed``, the free slots in the Owner state because Grid Engine can start no job in
    them (``Machines.closed_owners``): HTCondor's view of a startd whose START is false,
    so that no client counts them as able to run a job."""
    out = []
    for values, exprs in rows:
        if values.get("Name") in closed and values.get("Start") is not False:
            values = {**values, "Start": False}
            exprs = {k: v for k, v in exprs.items() if k != "Start"}
        out.append([values, exprs])
    return out


def _host_state_rows(rows, admin):
    """The slot rows of a host an operator drained or suspended (``llctl``, ``gridtools
    host``), as a startd shows them: draining, its claimed slots retire and the others
    are Drained; suspended, its claimed slots' jobs are Suspended and the others take
    no job (Owner). Either way START is false."""
    out = []
    for values, exprs in rows:
        state = values.get("State")
        if state == "Claimed" and values.get("Activity") == "Busy":
            values = {**values, "Activity": "Retiring" if admin == "drain" else "Suspended"}
        elif state in ("Unclaimed", "Owner"):
            values = {**values, "State": "Drained" if admin == "drain" else "Owner", "Activity": "Idle"}
        values = {**values, "Start": False}
        exprs = {k: v for k, v in exprs.items() if k != "Start"}
        out.append([values, exprs])
    return out


def _number(text):
    """The number a configuration value gives (an integer expression, say), or None."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        pass
    from gridtools.classad import ClassAdSyntaxError, parse
    try:
        value = parse(text).eval()
    except ClassAdSyntaxError:
        return None
    return float(value) if type(value) in (int, float) and value == value else None


def _task_limits(ctx, r):
    """The concurrency limits the running task of Running record ``r`` noted when they
    were worked out on its machine (None: not yet)."""
    model = ctx.state.jobs.get(r.job_id)
    task = model.tasks.get(r.task) if model is not None else None
    return task.limits if task is not None else None


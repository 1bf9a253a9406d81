"""The slot ads of the cell's execution hosts, built for one pass.

A ``Context`` holds what one pass of the daemon knows: its state, the
condor_config (``daemon.condorconf``), host facts (``daemon.hostfacts``),
the load samples and the time. From them it builds each host's slot ads
(``ads.machine_ads`` with the slots' states and claims from
``daemon.machines``, then the STARTD_FACTS_FILE overlay and the ads of the
host's startd cron jobs, ``daemon.startdcron``), once per host
until a slot of the host changes. The same ads serve:

- ``negotiator_slots``: the negotiator's slots (``sched.negotiator.Slot``);
- ``refusals``: in Grid Engine's order, the hosts whose START (their free
  slot's Requirements) refuses a job, and the hosts an HTCondor job's own
  Requirements refuse (matched against the host's totals of CPUs, memory
  and disk: Grid Engine's placement counts what is free), which the pass
  leaves out for it (the job's Rank plays no part there: Grid Engine's
  queue sort places it). Requirements that read an attribute that tells
  the slots of a host apart (``SLOT_ATTRIBUTES``: Name, SlotID, ...) are
  matched against each free slot's ad in turn, and the task that starts
  takes the first free slot they are true for (``Context.wanted_slot``) that
  no earlier start of the pass was given (``Machines.pick_slots``: a start
  left without one waits); a task of several slots (a parallel universe
  job's nodes, ``request_cpus = 2``) takes only slots they are true for, on
  every host it was granted, and waits when there are not that many
  (``Context.wanted_slots``);
- ``published``: condor_status's slot ads in the status snapshot, each as
  ``[literal values, expression texts]``.

``Context.open_slots`` tells, for the hosts where Grid Engine cannot start a job
in every queue instance now, how many free slots those that can have: the
startd shows the others' free slots in the Owner state (``daemon.machines``).
``Context.unread`` tells why the startd of a host cannot read its policy: its
slot ads then have Start false, and its policy is ``UNREAD_POLICY``.

Job ads are ``ads.job_ad`` of a task, cached on the job by version.
"""

import time

from gridtools import ads, cell, jobads
from gridtools.classad import ClassAd, parse
from gridtools.classad.nodes import Literal
from gridtools.classad.budget import over_budget
from gridtools.daemon import devices, qcontrol, view
from gridtools.formats.sge import states as state_letters
from gridtools.sched import autocluster as acl
from gridtools.sched import groups as grp
from gridtools.sched.evalbudget import Budget, mark
from gridtools.sched import inputs, queue_state
from gridtools.sched import negotiator as N
from gridtools.sched import startd
from gridtools.sched.snapshot import HostState


class Context:
    """One pass's view of the machines (see the module docstring)."""

    def __init__(self, state, dispatcher, conf, facts, machines, loads, now=None):
        self.state, self.dispatcher, self.conf, self.facts = state, dispatcher, conf, facts
        self.machines, self.loads = machines, loads
        self.now = time.time() if now is None else now
        self.log = state.log
        self._hosts = None
        self._layout, self._ads, self._facts = {}, {}, {}
        self._stale = set()                   # hosts whose cached ads predate a change of a slot
        self._busy_cpus = None
        self._stand_in = None
        self._open = None                     # host -> free slots that take jobs (``open_slots``)
        self.schedd = cell.hostname()        # the machine jobs are submitted to (ClientMachine)

    # ------------------------------------------------------------ hosts
    def hosts(self):
        if self._hosts is None:
            self._hosts = view.exec_hosts(self.state.config)
        return self._hosts

    def _ge_slots(self):
        found = self.state.view_cache.get("host_slots")
        if found is None or found[0] != self.state.config_generation:
            slots = {}
            for inst in qcontrol.instances(self.state):
                slots[inst.host] = slots.get(inst.host, 0) + inst.slots
            found = self.state.view_cache["host_slots"] = (self.state.config_generation, slots)
        return found[1]

    def _busy(self):
        """host -> CPUs its running, not suspended tasks use (once per pass)."""
        if self._busy_cpus is None:
            busy = {}
            for _job, task in self.state.running_tasks():
                if not task.suspended:
                    for _queue, host, slots in task.granted:
                        busy[host] = busy.get(host, 0) + slots
            self._busy_cpus = busy
        return self._busy_cpus

    def open_slots(self):
        """host -> how many free slots its queue instances that can take a job now have,
        for each host with a queue instance that cannot (``_open_slots``); a host not
        named takes jobs in every instance. Worked out once per pass."""
        if self._open is None:
            self._open = _open_slots(self.state, self.loads)
        return self._open

    def host_facts(self, host):
        found = self._facts.get(host)
        if found is None:
            found = self._facts[host] = self.facts.of(host, self.conf.host(host), self.loads.get(host) or {},
                                                      self._ge_slots().get(host, 0), self._busy().get(host, 0),
                                                      self.now, devices.capacity(self.state.config, host),
                                                      devices.countable(self.state.config, host))
        return found

    def layout(self, host):
        """The host's slot layout, made again only when its configuration or size changed."""
        found = self._layout.get(host)
        if found is None:
            facts = self.host_facts(host)[0]
            key = (facts.name, facts.cpus, facts.memory, facts.disk, facts.gpus, facts.resources)
            kept = self.conf.derived("layouts", dict)       # host -> (key, layout), per reading
            if host not in kept or kept[host][0] != key:
                kept[host] = (key, ads.layout(facts, self.conf.host(host)))
            found = self._layout[host] = kept[host][1]
        return found

    def partitionable(self, host):
        return any(lay.partitionable for lay in self.layout(host))

    def policy(self, host):
        """The startd policy of ``host``: that of its configuration, or, when its startd
        cannot read it (``unread``), one whose START is false."""
        def make():
            if self.unread(host) is not None:
                return UNREAD_POLICY
            return startd.Policy.from_config(self.conf.host(host))
        return self.conf.derived(("policy", host), make)

    def unread(self, host):
        """Why the startd of ``host`` cannot read its policy (``_unread``), or None; said
        in the daemon's messages once per reading of the configuration."""
        return self.conf.derived(("unread", host), lambda: _unread(self.conf, host, self.log))

    # ------------------------------------------------------------ ads
    def host_ads(self, host):
        """The slot ads of ``host``, by slot name (dynamic slots after their parent)."""
        found = self._ads.get(host)
        if found is None or host in self._stale:
            self._stale.discard(host)
            facts, overlay = self.host_facts(host)
            views, claims = self.machines.views(host)
            matched = self.machines.matched_in(host)
            built = ads.machine_ads(facts, self.conf.host(host), self.now, views, claims)
            cron = self.facts.cron(host) if self.facts.cron is not None else ()
            plugins = self.plugins(host)
            found = {}
            for ad in built:
                self._offer(ad, plugins)
                for name, expr in overlay.items():
                    ad[name] = expr
                for extra in cron:
                    if extra.merges_into(ad):
                        for name, expr in extra.merged():
                            ad[name] = expr
                name = ad.eval("Name")
                if ad.lookup("RemoteUser") is not None:
                    ad["ClientMachine"] = self.schedd
                    self._matched(ad, matched.get(name), claims.get(name))
                found[name] = ad
            self._latch(host, found)
            if self.unread(host) is not None:
                for ad in found.values():
                    ad["Start"] = False
            self._ads[host] = found
        return found

    def _matched(self, ad, matched, claim):
        """RemoteNegotiatingGroup, RemoteAutoregroup and, with group quotas, RemoteGroup of
        a claimed slot, as HTCondor's startd publishes them from its claim: those of the
        match the claim came from (``Machines.matched_in``: under autoregroup a job of a
        group may have been matched in the round of the group ``<none>``); for a claim
        without one (a start in Grid Engine's order) those of its job's own group's round."""
        if matched is None:
            if claim is None:
                return
            matched = self._own_round(claim.user)
        negotiating, regroup, group = matched
        ad["RemoteNegotiatingGroup"] = negotiating
        ad["RemoteAutoregroup"] = bool(regroup)
        if group:
            ad["RemoteGroup"] = group

    def _own_round(self, user):
        """(negotiating group, autoregroup, group) of the round of accounting name
        ``user``'s own group, by the group quotas of the configuration."""
        def read():
            return grp.build(grp.GroupsConfig.as_negotiator_reads(self.conf))
        root = self.conf.derived("negotiator_groups", read)
        if not root.children:
            return (grp.ROOT, False, "")
        group = grp.group_of(root, user)
        return (group.name, bool(group is root and root.spec.autoregroup), group.name)

    def _latch(self, host, found):
        """STARTD_LATCH_EXPRS in the slot ads of ``host`` (``ads.latch``), each slot's
        latches kept by the startd from one pass to the next (those of slots gone go)."""
        names = self.conf.derived(("latches", host), lambda: ads.latch_names(self.conf.host(host)))
        kept = self.machines.latches
        for gone in [n for n in kept if n.endswith("@" + host) and n not in found]:
            del kept[gone]
        for name, ad in found.items() if names else ():
            ads.latch(ad, names, kept.setdefault(name, {}), self.now)

    def plugins(self, host):
        """The pool's file transfer plugins on ``host`` (``exec.poolplugins``)."""
        from gridtools.exec import poolplugins
        return poolplugins.for_host(self.state.condor, host, self.state.log)

    @staticmethod
    def _offer(ad, plugins):
        """Publish in ``ad`` the URL schemes the pool's plugins and gridtools move (none
        when URL transfers are off), and the attributes the plugins give it."""
        methods = plugins.methods_text()
        if methods is None:
            for name in ("HasFileTransferPluginMethods", "HasJobTransferPlugins"):
                if name in ad:
                    del ad[name]
        elif methods != ads.PLUGIN_METHODS:
            ad["HasFileTransferPluginMethods"] = methods
        for name, expr in plugins.attrs.items():
            ad[name] = expr

    def invalidate(self, host):
        self._stale.add(host)

    def replaces(self, host, name):
        """True when the host's STARTD_FACTS_FILE or a startd cron ad sets attribute ``name``
        of its slot ads."""
        low = name.lower()
        if any(key.lower() == low for key in self.host_facts(host)[1]):
            return True
        return self.facts.cron is not None and any(low in extra.lower for extra in self.facts.cron(host))

    def stand_in(self):
        """The ad a step of a constant policy is evaluated with (``machines._constant``):
        Start as a policy of constants has it, nothing else."""
        if self._stand_in is None:
            self._stand_in = ClassAd({"Start": True})
        return self._stand_in

    def constant_rank(self, name):
        """The Rank of slot ``name`` when it is a constant (its host's ads are built once
        per pass for it: a claim changes no constant), else None."""
        host = name.rpartition("@")[2]
        if not self.replaces(host, "Rank"):     # the configured one, without building the ads
            expr = self.conf.derived(("rank", host), lambda: ads.policy_expression(self.conf.host(host), "Rank"))
        else:
            found = self._ads.get(host)
            ad = (found if found is not None else self.host_ads(host)).get(name)
            expr = ad.lookup("Rank") if ad is not None else None
        if expr.__class__ is Literal and type(expr.value) in (int, float, bool):
            return float(expr.value)
        return None

    def picks_slot(self, job_ad):
        """True when the job's Requirements read an attribute that tells slots apart."""
        return _slot_specific(job_ad)

    def wanted_slot(self, host, job_ad, given=()):
        """The first unclaimed static slot of ``host``, not in ``given``, whose ad (with
        the host's totals, as ``refusals`` matches it) the job's Requirements are true
        for, when they read an attribute that tells slots apart; else None."""
        names = self.wanted_slots(host, job_ad, 1, given)
        return names[0] if names else None

    def wanted_slots(self, host, job_ad, count, given=()):
        """The first ``count`` (or fewer: all there are) unclaimed static slots of
        ``host``, not in ``given``, that the job's Requirements are true for (as
        ``wanted_slot``), when they read an attribute that tells slots apart; else None."""
        if not _slot_specific(job_ad):
            return None
        totals, found = None, []
        for name, ad in self.host_ads(host).items():
            if len(found) >= count:
                break
            if name not in given and ad.lookup("RemoteUser") is None and ad.eval("DynamicSlot") is not True:
                totals = _host_ad(self, host) if totals is None else totals
                if job_ad.eval("Requirements", _with_totals(ad, totals)) is True:
                    found.append(name)
        return found

    def slot_ad(self, name, rec=None):
        host = rec.host if rec is not None else name.rpartition("@")[2]
        return self.host_ads(host).get(name)

    def job_ad(self, job, number):
        """The ad of task ``number`` of ``job``, cached on the job by its version."""
        cache = job.cache.get("condor_ads")
        if cache is None or cache[0] != job.version:
            cache = job.cache["condor_ads"] = (job.version, {})
        ad = cache[1].get(number)
        if ad is None:
            ad = cache[1][number] = _job_ad(job, number, self.log)
        return ad


def _job_ad(job, number, log):
    """``ads.job_ad`` of a task, with what the daemon keeps of its runs (the memory and
    disk its starter last reported, which the startd policy reads: MemoryUsage ...; the
    edits of a qsub job) and the DeferralTime the daemon gave it (its cron schedule's
    next time, ``condorjob.schedule_crons``); a job whose HTCondor ad does not parse gets
    the ad of its Grid Engine requests (and the daemon's messages say why)."""
    try:
        ad = ads.job_ad(job.spec, job.tasks.get(number), number, job.hold, job.deleted, condor=job.condor)
        jobads.deferral_overlay(ad, ((job.condor or {}).get("tasks") or {}).get(str(number)))
        return ad
    except Exception as exc:  # noqa: BLE001 - a client's ad must not stop the pass
        log(f"W|job {job.id}: its HTCondor ad cannot be read, its requests stand in: {exc}")
        spec = {k: v for k, v in job.spec.items() if k != "condor_ad"}
        return ads.job_ad(spec, job.tasks.get(number), number, job.hold, job.deleted)


# ---------------------------------------------------------------- a policy that does not read

#: the expressions a startd reads from its configuration when it starts, in the order
#: HTCondor's reads them (its ResMgr::init_config_classad), as (knob, attribute) or, for
#: the attributes an older knob stands in for, ((knob, older knob), attribute)
STARTD_EXPRESSIONS = (
    ("START", "START"), ("SUSPEND", "SUSPEND"), ("CONTINUE", "CONTINUE"), ("PREEMPT", "PREEMPT"),
    ("KILL", "KILL"), ("WANT_SUSPEND", "WANT_SUSPEND"), ("WANT_VACATE", "WANT_VACATE"),
    ("WANT_HOLD", "WANT_HOLD"), ("WANT_HOLD_REASON", "WANT_HOLD_REASON"),
    ("WANT_HOLD_SUBCODE", "WANT_HOLD_SUBCODE"), ("MaxJobRetirementTime", "MaxJobRetirementTime"),
    ("PERIODIC_CHECKPOINT", "PERIODIC_CHECKPOINT"), ("Rank", "Rank"),
    ("SUSPEND_VANILLA", "SUSPEND_VANILLA"), ("CONTINUE_VANILLA", "CONTINUE_VANILLA"),
    ("PREEMPT_VANILLA", "PREEMPT_VANILLA"), ("KILL_VANILLA", "KILL_VANILLA"),
    ("WANT_SUSPEND_VANILLA", "WANT_SUSPEND_VANILLA"), ("WANT_VACATE_VANILLA", "WANT_VACATE_VANILLA"),
    (("IsOwner", "IS_OWNER"), "IsOwner"), (("CpuBusy", "CPU_BUSY"), "CpuBusy"),
)
#: the policy of a host whose startd cannot read its own: it starts no job, and leaves
#: the jobs running there alone
UNREAD_POLICY = startd.Policy((("START", parse("false")),))


def _unread(conf, host, log):
    """Why the startd of ``host`` cannot read its policy, or None. HTCondor's startd
    stops at start-up (or at a reconfiguration) when its configuration does not read or
    one of its policy expressions (``STARTD_EXPRESSIONS``) does not parse ("Syntax error
    in START expression: '...'"): the host runs no startd and takes no job. Here its
    slots stay listed, their START false (``UNREAD_POLICY``), and the daemon's messages
    say why. A host's configuration that does not read while the cell's does is one
    whose own files (its LOCAL_CONFIG_FILE, say) do not; when the cell's does not
    either, the built-in defaults stand in for every host (``daemon.condorconf``)."""
    from gridtools.errors import ConfigError
    config = conf.host(host)
    why = None
    try:
        if config is not conf.main:             # (the cell's, standing in: the host's did not read)
            why = _syntax_error(config)
        elif conf.unread is None:
            from gridtools.daemon import condorconf
            condorconf.read_for(host)
    except ConfigError as exc:
        why = f"its configuration does not read: {exc}"
    if why is not None:
        log(f"E|the startd of {host} cannot read its policy, its slots take no job: {why}")
    return why


def _syntax_error(config):
    """HTCondor's words for the first of ``STARTD_EXPRESSIONS`` set in ``config`` whose
    text does not parse, or None."""
    from gridtools.classad import ClassAdSyntaxError
    for knobs, attr in STARTD_EXPRESSIONS:
        texts = (config.get(knob) for knob in (knobs if isinstance(knobs, tuple) else (knobs,)))
        text = next((t for t in texts if t is not None), None)
        if text is None or not text.strip():
            continue
        try:
            parse(text)
        except (ClassAdSyntaxError, ValueError, RecursionError):
            return f"Syntax error in {attr} expression: '{text.strip()}'"
    return None


# ---------------------------------------------------------------- queue instances that take no job

def _open_slots(state, loads):
    """host -> the free slots of its queue instances that can take a job now, for the hosts
    with an instance that cannot: one in a state Grid Engine starts no job in (disabled,
    suspended, in error, disabled or suspended by its calendar, subordinated, unknown,
    ambiguous, in suspend alarm: ``QState.blocking``), one whose load crosses one of its
    load thresholds (load alarm, ``_load_alarms``), or any on a host an operator closed
    (drained, flushed, suspended). Only such hosts cost any work."""
    insts = qcontrol.instances(state)
    alarms = _load_alarms(state, loads, insts)
    shut = {host for host, word in state.host_states.items()
            if (inputs.HOST_STATES.get(word) or HostState.NORMAL).closed}
    if not (state.queue_states or state.derived_states or alarms or shut):
        return {}
    blocked = {inst.name for inst in insts
               if inst.name in alarms or inst.host in shut or _blocking(state, inst.name)}
    if not blocked:
        return {}
    used, _tasks = qcontrol.used_slots(state)
    free = {inst.host: 0 for inst in insts if inst.name in blocked}
    for inst in insts:
        if inst.host in free and inst.name not in blocked:
            free[inst.host] += max(0, inst.slots - used.get(inst.name, 0))
    return free


def _blocking(state, name):
    """True when queue instance ``name`` is in a state that keeps jobs out."""
    text = state.queue_states.get(name, "") + state.derived_states.get(name, "")
    return bool(text) and state_letters.from_letters(text).blocking() is not None


def _load_alarms(state, loads, insts):
    """The names of the queue instances whose host's load (``loads``, host -> load values)
    crosses one of their load thresholds, as the daemon's queue control finds them (no
    job's load adjustment counted); kept until the load sample or configuration changes."""
    watched = [inst for inst in insts if inst.load_thresholds]
    if not watched:
        return frozenset()
    cached = state.view_cache.get("load_alarms")
    if cached is not None and cached[0] is loads and cached[1] is state.global_load \
            and cached[2] == state.config_generation:
        return cached[3]
    table = view.config_parts(state)["complexes"]
    overall = inputs.numeric_load(state.global_load, table)
    numeric, found = {}, set()
    for inst in watched:
        if inst.host not in numeric:
            numeric[inst.host] = inputs.numeric_load(loads[inst.host], table) if inst.host in loads else None
        if queue_state.exceeded(inst.load_thresholds, numeric[inst.host], table, overall, inst.values):
            found.add(inst.name)
    alarms = frozenset(found)
    state.view_cache["load_alarms"] = (loads, state.global_load, state.config_generation, alarms)
    return alarms


# ---------------------------------------------------------------- uses of the ads

def negotiator_slots(ctx):
    """Every slot of the cell as the negotiator sees it (with the claim of its job). A
    slot a preemption keeps for a job matches no other (its Requirements are false, as
    a Matched slot's): it is offered to that job alone (``sched.matchpass``), and counts
    for that job's submitter from the preemption on (the claim it holds), not for the
    victim's while it leaves (else the next cycle would preempt again for the share the
    claim already has)."""
    slots = []
    reserved = ctx.machines.reserved_slots()
    for host in ctx.hosts():
        _views, claims = ctx.machines.views(host)
        for name, ad in ctx.host_ads(host).items():
            claim = claims.get(name)
            if name in reserved:
                ad = ad.copy()
                ad["Requirements"] = False
                claim = reserved[name] or claim
            slots.append(N.Slot(name, ad, claim))
    return slots


def _constant_true(expr):
    return expr is None or (expr.__class__ is Literal and expr.value is True)


def free_ad(ctx, host):
    """The ad a new job of the host would be matched against: a slot without a claim
    (the partitionable one), else the first slot."""
    found = list(ctx.host_ads(host).values())
    free = [ad for ad in found if ad.lookup("RemoteUser") is None and ad.eval("DynamicSlot") is not True]
    return (free or found or [None])[0]


def refusals(ctx, jobs, condor_jobs=True, budget=None):
    """(refused, unwanted, task refusals, an HTCondor job is pending, put off) in Grid
    Engine's order, each job id -> frozenset of hosts, for each job's first pending
    task: hosts whose START (their free slot's Requirements) refuses the job, and hosts
    an HTCondor job's own Requirements refuse (the match is symmetric in either order).
    The task refusals (``Snapshot.task_refusals``) hold the pending procs of a cluster
    whose stored ads differ that refuse other hosts than its first pending proc. Empty
    when every host's START is ``True`` and no HTCondor job waits (``condor_jobs``
    False: the caller knows none does, and the jobs are not looked at).

    ``budget`` (a ``sched.evalbudget.Budget``) bounds the evaluation steps each owner's
    jobs take in the pass: once an owner's took them, its other jobs (or procs) are not
    evaluated, and the last item (``Snapshot.put_off``) names them: job id -> None for a
    whole job, else the frozenset of the task numbers of its procs put off;
    ``budget.put_off`` lists them in order (job ids; (job id, task) for procs), for the
    next pass to take first. The jobs it already lists (put off before, by the caller)
    are not evaluated."""
    hosts = _starting_hosts(ctx)
    if not hosts and not condor_jobs:
        return {}, {}, {}, False, {}
    found = _Refusals(ctx, hosts, budget if budget is not None else Budget(0))
    budget = found.budget
    condor, already = False, frozenset(budget.put_off)     # (put off before: not evaluated)
    for pending in budget.first(jobs, _pending_id):
        job = ctx.state.jobs.get(pending.id)
        if job is None:
            continue
        texts = job.spec.get("condor_ad")
        condor = condor or bool(texts)
        if not pending.tasks or pending.held_all or not (hosts or texts) or pending.id in already:
            continue                    # a held job is not placed: nothing to leave out for it
        if budget.spent_out(pending.owner):
            found.put_off[pending.id] = None
            budget.put_off.append(pending.id)
            continue
        found.job(job, pending, texts)
    return found.refused, found.unwanted, found.by_task, condor, found.put_off


def _pending_id(pending):
    return pending.id


class _Refusals:
    """What ``refusals`` works out in one pass, and the memos it shares between jobs."""

    def __init__(self, ctx, hosts, budget):
        self.ctx, self.hosts, self.budget = ctx, hosts, budget
        self.names = {h: tuple(sorted(acl.ad_references(ad, ("requirements",)))) for h, ad in hosts.items()}
        self.start_names = frozenset().union(*self.names.values())
        self.memo, self.job_memo, self.frees = {}, {}, None
        self.refused, self.unwanted, self.by_task, self.put_off = {}, {}, {}, {}

    def job(self, job, pending, texts):
        """The refusals of one job's first pending task, and of its procs that differ (the
        steps of their evaluations counted against the owner's budget)."""
        ctx, since = self.ctx, mark()
        ad = ctx.job_ad(job, next(iter(pending.tasks)))
        found = _refusing(job, ad, self.hosts, self.names, self.memo)
        if found:
            self.refused[pending.id] = found
        if texts:
            if self.frees is None:
                self.frees = _free_ads(ctx)
            mine = _unwanted(job, ad, self.frees, self.job_memo, ctx=ctx)
            if mine:
                self.unwanted[pending.id] = mine
        self.budget.charge(pending.owner, since)
        if texts and (isinstance(texts, str) or len(texts) > 1):
            own = self.tasks(job, pending, (found, mine))
            if own:
                self.by_task[pending.id] = own

    def tasks(self, job, pending, first_found):
        """task -> (refused, unwanted) of the pending procs of a cluster whose stored ads
        differ (``spec["condor_ad"]`` a list), or whose Requirements or the hosts' START
        read what differs in every proc (ProcId), that refuse other hosts than the first
        pending proc (``first_found``). Procs whose ads agree in what the Requirements
        and the hosts' START read (``_refusal_keys``) share one answer. Once the owner's
        budget is spent, the procs that would need an evaluation are put off."""
        keys = _refusal_keys(job, self.start_names)
        if not keys:
            return {}
        tasks = iter(pending.tasks)
        first = next(tasks)
        known = {keys.get(first, ()): first_found}
        found, budget, owner, later = {}, self.budget, pending.owner, []
        for number in budget.first(list(tasks), lambda n: (job.id, n)):
            key = keys.get(number, ())
            mine = known.get(key)
            if mine is None:
                if budget.spent_out(owner):
                    later.append(number)
                    budget.put_off.append((job.id, number))
                    continue
                since = mark()
                ad = self.ctx.job_ad(job, number)
                mine = known[key] = (_refusing(job, ad, self.hosts, self.names, self.memo),
                                     _unwanted(job, ad, self.frees, self.job_memo, f"requirements_key:{number}",
                                               self.ctx))
                budget.charge(owner, since)
            if mine != first_found:
                found[number] = mine
        if later:
            self.put_off[job.id] = frozenset(later)
        return found


def _refusal_keys(job, start_names):
    """task -> what its stored ad changes of proc 0's in the attributes its Requirements
    and the hosts' START (``start_names``) read, for the procs that change any (the
    others are as proc 0); kept with the description. Empty when no proc does. A
    cluster stored as one text: ``daemon.procasks.proc_keys``."""
    held = job.spec_cache()
    cached = held.refusal_keys
    if cached is not None and cached[0] == start_names:
        return cached[1]
    from gridtools.daemon.procasks import proc_keys
    texts = job.spec["condor_ad"]
    values = proc_keys(job.spec, start_names)       # what differs by ProcId
    if isinstance(texts, str):
        held.refusal_keys = (start_names, values)
        return values
    from gridtools.classad import parse_ad
    from gridtools.jobads import parsed_ad
    base = parsed_ad(texts[0])
    relevant = set(start_names) | acl.ad_references(base, ("requirements",)) | {"requirements"}
    keys = {}
    for number, text in enumerate(texts[1:], 2):
        if not text:
            continue
        diff = parse_ad(text)
        changed = sorted((name.lower(), diff.lookup(name).unparse()) for name in diff
                         if name.lower() in relevant)
        if any(name == "requirements" for name, _text in changed):
            changed = [("", text)]          # its own Requirements: the whole change counts
        if changed:
            keys[number] = tuple(changed)
    for number, value in values.items():
        keys[number] = keys.get(number, ()) + value
    held.refusal_keys = (start_names, keys)
    return keys


def _starting_hosts(ctx):
    """host -> its free slot's ad, for the hosts whose START may refuse a job."""
    hosts = {}
    for host in ctx.hosts():
        policy = ctx.policy(host)
        if _constant_true(policy.expr("START", False)) and policy.expr("IS_OWNER", False) is None:
            continue                    # START = True: nothing to refuse, no ad to build
        ad = free_ad(ctx, host)
        if ad is not None and not (_constant_true(ad.lookup("Start")) and ad.eval("Requirements") is True
                                   and ad.eval("State") != "Owner"):
            hosts[host] = ad
    return hosts


def _refusing(job, ad, hosts, names, memo):
    """Hosts whose START refuses the job. One whose evaluation went over its budget
    (reading the job's attributes: classad(5), COST) refuses it on every host until
    the job changes."""
    if job.cache.get("start_too_costly") == job.version:
        return frozenset(hosts)
    refused = set()
    for host, machine in hosts.items():
        key = (host, acl.job_key(ad, names[host]))
        ok = memo.get(key)
        if ok is None:
            over = over_budget()
            ok = memo[key] = machine.eval("Requirements", ad) is True
            if over_budget() != over:
                job.cache["start_too_costly"] = job.version
                return frozenset(hosts)
        if not ok:
            refused.add(host)
    return frozenset(refused)


#: slot attributes a host ad for a job's Requirements holds the host's totals of (and of
#: the other resources its MachineResources name)
HOST_TOTALS = ("Cpus", "Memory", "Disk", "GPUs")
#: attributes (lower case) whose values tell the slots of one host apart: Requirements
#: that read one are matched against each free slot's ad, not the host's
SLOT_ATTRIBUTES = frozenset(("name", "slotid", "slottype", "dynamicslot", "partitionableslot",
                             "parentslotname", "dslotid"))


def _slot_specific(job_ad):
    """True when the job's Requirements read an attribute that tells slots apart."""
    return not SLOT_ATTRIBUTES.isdisjoint(acl.ad_references(job_ad, ("requirements",)))


def _free_slot_ads(ctx, host, free):
    """Each unclaimed static slot's ad of ``host`` (every static slot's when none is
    free: the host is full anyway) with the host's totals of ``free`` (the host's ad
    for Requirements): what slot-specific Requirements are matched to."""
    statics = [ad for ad in ctx.host_ads(host).values() if ad.eval("DynamicSlot") is not True]
    unclaimed = [ad for ad in statics if ad.lookup("RemoteUser") is None]
    return [_with_totals(ad, free) for ad in unclaimed or statics]


def _totals_named(ad):
    """The attributes a host's ad holds the totals of: HOST_TOTALS and the other
    resources its MachineResources name."""
    named = ad.eval("MachineResources")
    return HOST_TOTALS + tuple(n for n in (named.split() if isinstance(named, str) else ()) if n not in HOST_TOTALS)


def _with_totals(ad, free):
    """A copy of slot ``ad`` with the host's totals of ``free`` (its ``_host_ad``)."""
    ad = ad.copy()
    for name in _totals_named(free):
        if free.lookup(name) is not None:
            ad[name] = free.lookup(name)
    return ad


def _host_ad(ctx, host):
    """The ad a job's Requirements are matched against in Grid Engine's order: the
    host's free slot's, with the host's totals of CPUs, memory, disk and GPUs (Grid
    Engine's placement counts what is free, across slots for a parallel job); None
    for a host without slots."""
    ad = free_ad(ctx, host)
    if ad is None:
        return None
    ad = ad.copy()
    slots = ctx.host_ads(host).values()
    for name in _totals_named(ad):
        values = [slot.eval(name) for slot in slots]
        if values and all(type(v) in (int, float) for v in values):
            ad[name] = sum(values)
    return ad


def _free_ads(ctx):
    """host -> its ``_host_ad``, for every host with slots."""
    found = {}
    for host in ctx.hosts():
        ad = _host_ad(ctx, host)
        if ad is not None:
            found[host] = ad
    return found


def _unwanted(job, ad, frees, memo, slot="requirements_key", ctx=None):
    """Hosts whose free slot the job's Requirements are not true for (whose every free
    slot, when they read an attribute that tells slots apart); the job's part
    of the memo's key (its Requirements and what they read of the job) is kept on
    the job by its version. Requirements whose evaluation went over its budget
    (classad(5), COST) want no host until the job is changed: they are not evaluated
    again at every pass."""
    cache = job.cache.get(slot)
    if cache is None or cache[0] != job.version:
        req = ad.lookup("Requirements")
        refs = acl.ad_references(ad, ("requirements",))
        own = tuple(sorted(refs))
        cache = job.cache[slot] = (job.version, None if _constant_true(req) else acl.job_key(ad, own),
                                   not SLOT_ATTRIBUTES.isdisjoint(refs))
    if cache[1] is None:
        return frozenset()
    if job.cache.get("requirements_too_costly") == job.version:
        return frozenset(frees)
    out = set()
    for host, machine in frees.items():
        key = (host, cache[1])
        ok = memo.get(key)
        if ok is None:
            over = over_budget()
            if cache[2] and ctx is not None:
                ok = any(ad.eval("Requirements", free) is True for free in _free_slot_ads(ctx, host, machine))
            else:
                ok = ad.eval("Requirements", machine) is True
            memo[key] = ok
            if over_budget() != over:
                job.cache["requirements_too_costly"] = job.version
                return frozenset(frees)
        if not ok:
            out.add(host)
    return frozenset(out)


def plain(ad):
    """A slot ad as plain data: [{name: literal value}, {name: expression text}]."""
    values, exprs = {}, {}
    for name in ad:
        expr = ad.lookup(name)
        if expr.__class__ is Literal and isinstance(expr.value, (bool, int, float, str)):
            values[name] = expr.value
        else:
            exprs[name] = expr.unparse()
    return [values, exprs]


def published(ctx):
    """Every slot ad, host by host, as plain data for the status snapshot."""
    rows = []
    for host in ctx.hosts():
        for ad in ctx.host_ads(host).values():
            rows.append(plain(ad))
    return rows

"""The startd inside the daemon: every execution host's slots and their policy.

Each host has the slots its condor_config lays out (``ads.layout``: one per
CPU by default, ``SLOT_TYPE_<n>`` and partitionable slots where configured;
its CPUs are its queue instances' slots, see ``daemon.hostfacts``). Every
running task holds slots of its host: a static slot per granted slot, or a
dynamic slot ``slotN_M@host`` carved from a partitionable one. A scheduler
or local universe job (a DAG manager) holds none: it runs beside the schedd. The state
and activity of each slot follow HTCondor's startd (``sched.startd.step``):

- a task that starts claims its slots (Unclaimed -> Claimed/Busy), one that
  ends releases them (back to Owner or Unclaimed as START says);
- every POLLING_INTERVAL (UPDATE_INTERVAL for slots without a job) the
  host's START, SUSPEND, CONTINUE, PREEMPT, KILL, WANT_SUSPEND and
  WANT_VACATE are evaluated with the slot ad as MY and the job's ad as
  TARGET, and what they decide is carried out through ``daemon.apply``:
  a suspension (reason letter ``P``, the machine's policy), its end, or the
  job's eviction (it is requeued and waits to run again);
- a free slot Grid Engine cannot start a job in now (its host's queue instances
  that can take one have fewer free slots than the host has free: they are
  disabled, suspended, in error or alarm, closed by a calendar, unknown ...,
  ``Context.open_slots``) is in the Owner state, as HTCondor's startd puts a
  slot whose START is false; it is evaluated at once when that begins and
  when it ends (back to Unclaimed unless its START is false) (``_close``).
  An unknown instance's host is Down: its startd is gone, and condor_status
  shows none of its slots (``daemon.condor``) until it is served again;
- a host whose startd cannot read its policy (its configuration or one of its
  policy expressions, ``Context.unread``) has START false and nothing else:
  its free slots are Owner, its running jobs are left alone;
- a negotiator preemption (``preempt``) retires the claim, vacates the job
  and claims the slot for the proc that won the match: once the job has
  gone the slot is Claimed/Idle, held by that proc (``claims``), which
  alone may start there; the claim is released when the proc leaves the
  queue, is held, starts elsewhere or does not start within MATCH_TIMEOUT
  (``_expire_claims``). Claims are kept in memory only.

A claim keeps the group round of the negotiator's match it came from (a
``MatchedSlot`` hint: RemoteNegotiatingGroup, RemoteAutoregroup, RemoteGroup,
which the claimed slot's ad publishes, ``matched_in``); a preemption's claim
keeps its match's until its task starts on the slot.

Slot states, and the claims of the running tasks with their rounds, survive a
restart of the daemon in ``spool/startd.json``.
Building the slot ads of a host (for the negotiator, START checks and
condor_status) is ``daemon.slotads``.
"""

import re
from dataclasses import asdict, dataclass, replace

from gridtools import ads
from gridtools.daemon import apply, condorjob, devices
from gridtools.errors import ConfigError, GridError
from gridtools.model.job import TaskState
from gridtools.sched import startd
from gridtools.sched.local import SLOTLESS
from gridtools.sched.negotiator import MatchedSlot, accounting_name
from gridtools.spool import condorstate

#: the suspension reason letter of a task stopped by its machine's policy
POLICY_LETTER = "P"
#: most seconds between two evaluations of a slot, whatever its policy says
LONGEST_WAIT = 300.0
#: slots due this many seconds from now are evaluated with those due now (fewer wake-ups)
COALESCE = 1.0
_DYNAMIC = re.compile(r"slot(\d+)_(\d+)@")


@dataclass
class SlotRec:
    """One slot as the daemon remembers it."""
    host: str
    slot: startd.Slot
    task: tuple | None = None             # (job id, task number) it serves
    claim: ads.Claim | None = None        # set on the task's first slot only
    due: float = 0.0                      # when its policy is evaluated next
    reason: str = ""                      # why it entered its state
    reserved: tuple | None = None         # (job id, task) a preemption cleared it for
    dynamic: bool = False                 # a dynamic slot, gone when released
    holder: ads.Claim | None = None       # the claim of ``reserved``'s job on the slot
    idle_since: float = 0.0               # when a reserved slot was left to its claimant
    #: (RemoteNegotiatingGroup, RemoteAutoregroup, RemoteGroup or "") of the match the claim
    #: of its task came from (None: no match recorded), and of the match ``holder``'s came from
    matched: tuple | None = None
    holder_matched: tuple | None = None
    closed: bool = False                  # free, and Grid Engine can start no job in it now


def slotless(job):
    """True for a scheduler or local universe job (a DAG manager): it runs beside the
    schedd, claims no slot and is no slot's job in condor_status."""
    return job.spec.get("universe") in SLOTLESS


def _granted_hosts(task):
    """(host, slots) of a task's grant, its master host first, each host once."""
    found = {task.host: 0}
    for _queue, host, slots in task.granted:
        found[host] = found.get(host, 0) + int(slots)
    return [(host, count or 1) for host, count in found.items()]


def _plain(rec):
    data = asdict(rec.slot)
    data["state"], data["activity"] = rec.slot.state.value, rec.slot.activity.value
    data["destination"] = rec.slot.destination.value
    return {"host": rec.host, "slot": data, "task": list(rec.task) if rec.task else None,
            "reason": rec.reason, "dynamic": rec.dynamic,
            "claim": asdict(rec.claim) if rec.claim else None,
            "matched": list(rec.matched) if rec.matched else None}


def _from_plain(data):
    s = dict(data["slot"])
    s["state"], s["activity"] = startd.State(s["state"]), startd.Activity(s["activity"])
    s["destination"] = startd.State(s["destination"])
    claim = ads.Claim(**data["claim"]) if data.get("claim") else None
    task = tuple(data["task"]) if data.get("task") else None
    rec = SlotRec(str(data["host"]), startd.Slot(**s), task, claim, 0.0, str(data.get("reason", "")),
                  None, bool(data.get("dynamic")))
    matched = data.get("matched")
    if isinstance(matched, list) and len(matched) == 3:
        rec.matched = (str(matched[0]), bool(matched[1]), str(matched[2]))
    return rec


class Machines:
    """Every slot of the cell, and the tasks in them."""

    def __init__(self):
        self.slots = {}            # slot name -> SlotRec
        self.tasks = {}            # (job id, task) -> [slot names]
        self._serving = set()      # hosts with a slot running a task (their slots poll)
        self.next_wake = None
        self.dirty = False
        self.changed = set()       # hosts with a slot that changed since the last publish
        self._claims_end = None    # when the first claim of a preemption on a free slot times out
        self.latches = {}          # slot name -> its STARTD_LATCH_EXPRS (``ads.latch``)
        self.closed = set()        # free slots Grid Engine can start no job in (``_close``)

    # ------------------------------------------------------------ persistence
    def restore(self, log):
        data = condorstate.load(condorstate.STARTD)
        if not isinstance(data, dict):
            return
        for name, item in (data.get("slots") or {}).items():
            try:
                rec = _from_plain(item)
            except (KeyError, TypeError, ValueError) as exc:
                log(f"W|slot {name} of {condorstate.path(condorstate.STARTD)} not read: {exc!r}")
                continue
            self.slots[name] = rec
            if rec.task:
                self.tasks.setdefault(rec.task, []).append(name)

    def save(self):
        if self.dirty:
            condorstate.save(condorstate.STARTD, {"slots": {n: _plain(r) for n, r in self.slots.items()}})
            self.dirty = False

    # ------------------------------------------------------------ the pass
    def update(self, ctx, now, hints=None):
        """Follow the running tasks and evaluate the policy of the slots that are due.

        ``ctx``: a ``daemon.slotads.Context`` (state, configuration, facts of this
        pass); ``hints``: (job id, task) -> the slot a negotiator match chose."""
        self._layout(ctx, now)
        self._sync(ctx, now, hints or {})
        self._close(ctx, now)
        self._poll_free_slots(ctx, now)
        for name in sorted(self.slots):
            rec = self.slots.get(name)
            if rec is not None and rec.due <= now + COALESCE and self._evaluated(name, rec):
                self._evaluate(ctx, name, rec, now)
        # (only the slots evaluated count: another slot of a task keeps the due of its claim,
        # which would leave the loop a wake-up in the past for the task's whole run)
        self.next_wake = min((r.due for n, r in self.slots.items() if self._evaluated(n, r)), default=None)
        if self._claims_end is not None:
            self.next_wake = self._claims_end if self.next_wake is None else min(self.next_wake, self._claims_end)

    def all_due(self, now):
        """Make every slot's policy due at ``now`` (the configuration was read again)."""
        for rec in self.slots.values():
            rec.due = min(rec.due, now)
        self.next_wake = now

    def claim_new(self, ctx, now, hints=None):
        """Only the claims of the tasks that started (``update`` without evaluating the
        policies of the slots that are due)."""
        self._layout(ctx, now)
        self._sync(ctx, now, hints or {})

    def _evaluated(self, name, rec):
        """Whether the policy is evaluated on slot ``name``: a free slot, or the first of the
        slots a task holds (the others follow it)."""
        return rec.task is None or name == self.tasks[rec.task][0]

    def _layout(self, ctx, now):
        """Records for every configured slot; slots no longer configured go when free."""
        wanted = set()
        for host in ctx.hosts():
            for lay in ctx.layout(host):
                wanted.add(lay.name)
                if lay.name not in self.slots:
                    self.slots[lay.name] = SlotRec(host, startd.Slot(entered_state=now, entered_activity=now))
                    self.dirty = True
                    self.changed.add(host)
        for name, rec in list(self.slots.items()):
            if name not in wanted and rec.task is None and not rec.dynamic:
                del self.slots[name]
                self.dirty = True
                self.changed.add(rec.host)

    def _sync(self, ctx, now, hints):
        running = {(job.id, task.number): (job, task) for job, task in ctx.state.running_tasks()
                   if not slotless(job)}
        for key in [k for k in self.tasks if k not in running]:
            self._release(ctx, key, now)
        new = [key for key in running if key not in self.tasks]
        hinted = {hints[key] for key in new if hints.get(key)}     # no other new task takes these
        for key in new:
            job, task = running[key]
            hint = hints.get(key)
            self._claim(ctx, job, task, hint, now, hinted - {hint})
        self._expire_claims(ctx, now)
        for name, rec in list(self.slots.items()):
            if rec.task is None and rec.slot.state is startd.State.CLAIMED and not rec.reserved:
                self._event(ctx, name, rec, startd.Event.RELEASE, now)

    def _close(self, ctx, now):
        """Mark the free slots Grid Engine can start no job in now: on a host whose queue
        instances that can take a job have ``n`` free slots (``Context.open_slots``), its
        free static slots beyond the first ``n`` in slot order, and its partitionable slot
        when ``n`` is 0. A slot whose mark changed is evaluated at once (``_step``)."""
        found = ctx.open_slots()
        if not found and not self.closed:
            return
        free = {}
        for name, rec in self.slots.items():
            if rec.host in found and rec.task is None and not rec.reserved and not rec.dynamic:
                free.setdefault(rec.host, []).append(name)
        closed = set()
        for host, names in free.items():
            left = found[host]
            whole = {lay.name for lay in ctx.layout(host) if lay.partitionable}
            for name in sorted(names, key=_slot_number):
                if left <= 0:
                    closed.add(name)
                elif name not in whole:
                    left -= 1
        for name in closed ^ self.closed:
            rec = self.slots.get(name)
            if rec is not None:
                rec.closed = name in closed
                rec.due = min(rec.due, now)
        self.closed = closed

    # ------------------------------------------------------------ claims
    def _claim(self, ctx, job, task, hint, now, avoid=frozenset()):
        """A task that started takes slots of its hosts: of the master host first, then
        of every other host a parallel job was granted slots on (each claimed as
        HTCondor's startd claims the slots of a parallel job's nodes). ``hint``: the
        slot chosen for it (a negotiator match, ``pick_slots``); ``avoid``: slots
        chosen for other tasks that start with it."""
        ad = ctx.job_ad(job, task.number)
        taken = []
        for host, count in _granted_hosts(task):
            master = host == task.host
            wanted = (hint or ctx.wanted_slot(host, ad, avoid)) if master else None   # Requirements that pick a slot
            if ctx.partitionable(host):
                names = self._dynamic(ctx, host, task, ad)
            else:
                names = self._free_static(host, count, wanted, avoid, (job.id, task.number))
                picked = ctx.wanted_slots(host, ad, count, set(avoid) | self._taken(host)) \
                    if count > 1 and ctx.picks_slot(ad) else None
                if picked is not None and len(picked) == count:     # every slot one they accept
                    names = sorted(picked, key=lambda n: n != wanted)
            if names:
                taken.append((host, names))
            elif master:
                return
        if not taken:
            return
        self.tasks[(job.id, task.number)] = [name for _host, names in taken for name in names]
        if condorjob.took_slot(job, task.number, taken[0][1][0], self.tasks[(job.id, task.number)]):
            ctx.state.need_publish = True       # (kept in memory and published, not written:
            #                                      a restarted daemon's claims record it again)
        matched = _matched_in(hint)
        for host, names in taken:
            claim = self._claim_of(ctx, job, task, ad, names[0], now, host)
            ctx.invalidate(host)
            for n, name in enumerate(names):
                rec = self.slots[name]
                rec.task, rec.claim = (job.id, task.number), claim if n == 0 else None
                rec.reserved, rec.holder, rec.holder_matched = None, None, None
                rec.matched, rec.closed = matched, False
                if rec.slot.state is startd.State.OWNER:       # started although the owner has it
                    rec.slot = replace(rec.slot, state=startd.State.UNCLAIMED)
                for event in (startd.Event.CLAIM, startd.Event.ACTIVATE):
                    self._event(ctx, name, rec, event, now, evaluate=False)
                rec.due = now
        self._unreserve((job.id, task.number), "job started on another slot", ctx.log)

    def pick_slots(self, ctx, decisions):
        """Give each start of a Grid Engine order pass whose task's Requirements pick a
        slot (``Context.picks_slot``) the first free static slot of its master host they
        are true for that no earlier start of the pass was given, as its hint (its claim
        takes that slot, no other task's claim does). The pass counts a host's free
        slots, not which ones: a start left without such a slot is taken back before it
        is carried out (its task waits, as HTCondor never runs a job on a slot its
        Requirements refuse; the next pass, which sees the slots claimed, says why).
        A start of several slots (a parallel universe job, ``request_cpus = 2``) needs
        as many such slots on each host it was granted, as HTCondor matches every slot
        a job takes against its Requirements; its claim takes them.
        True when a start was taken back because an earlier start of the pass was given
        its slot (another pass then books again what it had booked)."""
        given, kept, again = set(), [], False
        for start in decisions.starts:
            key = (start.job_id, start.task)
            job = ctx.state.jobs.get(start.job_id)
            host = start.granted[0][1] if start.granted else None
            if job is None or host is None or not job.spec.get("condor_ad") or key in decisions.slots \
                    or ctx.partitionable(host):
                kept.append(start)
                continue
            ad = ctx.job_ad(job, start.task)
            if not ctx.picks_slot(ad):
                kept.append(start)
                continue
            counts = {}
            for _queue, where, slots in start.granted:
                counts[where] = counts.get(where, 0) + int(slots)
            counts = {where: max(1, n) for where, n in counts.items()
                      if where == host or not ctx.partitionable(where)}
            picked = {where: ctx.wanted_slots(where, ad, n, given | self._taken(where))
                      for where, n in counts.items()}
            if any(len(names) < counts[where] for where, names in picked.items()):
                again = again or (bool(given) and all(
                    len(ctx.wanted_slots(where, ad, n, self._taken(where))) >= n for where, n in counts.items()))
                continue
            for names in picked.values():
                given.update(names)
            decisions.slots[key] = picked[host][0]
            kept.append(start)
        if len(kept) != len(decisions.starts):
            decisions.starts[:] = kept
        return again

    def _taken(self, host):
        """The slots of ``host`` a running task holds (also those its claim is not on)."""
        return {n for n, r in self.slots.items() if r.host == host and r.task is not None}

    def _claim_of(self, ctx, job, task, ad, name, now, host=None):
        host = host or task.host
        rank = ctx.constant_rank(name)
        if rank is None:
            rank = ads_rank(ctx.slot_ad(name), ad)
        cpus = sum(g[2] for g in task.granted if g[1] == host) or 1
        memory = _number(ad.eval("RequestMemory"))
        disk = _number(ad.eval("RequestDisk"))
        gpus = _number(ad.eval("RequestGPUs"))
        m = _DYNAMIC.match(name)
        if m:
            memory, disk = modified_requests(ctx.conf.host(host), ad, ctx.slot_ad(f"slot{m.group(1)}@{host}"),
                                             memory, disk)
        others = tuple((res, _number(ad.eval("Request" + res))) for res, _amount in
                       ctx.host_facts(host)[0].resources)
        ids = devices.of_task(ctx.state, job, task, host) if gpus else ()
        return ads.Claim(f"{job.id}.{task.number - 1}", job.spec["owner"], accounting_name(ad), rank,
                         task.start_time or now, cpus, memory, disk, gpus, others,
                         _text(ad.eval("User")), _text(ad.eval("AccountingGroup")),
                         _text(ad.eval("GlobalJobId")), ids)

    def _free_static(self, host, count, hint, avoid=frozenset(), key=None):
        """The first ``count`` free static slots of ``host`` for task ``key``: ``hint``
        first, a slot a preemption keeps for another task last (only when there are no
        others: Grid Engine's placement counted it free)."""
        free = [n for n, r in self.slots.items() if r.host == host and r.task is None and not r.dynamic
                and r.slot.state not in (startd.State.PREEMPTING,) and n not in avoid]
        free.sort(key=lambda n: (n != hint, self.slots[n].reserved not in (None, key), _slot_number(n)))
        return free[:count]

    def _dynamic(self, ctx, host, task, ad):
        parent = next((lay for lay in ctx.layout(host) if lay.partitionable), None)
        if parent is None:
            return []
        used = {int(m.group(2)) for n in self.slots for m in [_DYNAMIC.match(n)]
                if m and int(m.group(1)) == parent.slot_id and n.endswith("@" + host)}
        number = next(i for i in range(1, len(used) + 2) if i not in used)
        name = f"slot{parent.slot_id}_{number}@{host}"
        self.slots[name] = SlotRec(host, startd.Slot(state=startd.State.UNCLAIMED), dynamic=True)
        return [name]

    def _release(self, ctx, key, now):
        """A task that ended gives its slots back."""
        job = ctx.state.jobs.get(key[0])
        if job is not None:
            condorjob.left_slot(job, key[1])
        for name in self.tasks.pop(key, []):
            rec = self.slots.get(name)
            if rec is None:
                continue
            self._event(ctx, name, rec, startd.Event.JOB_EXIT, now, job=False)
            rec.task = rec.claim = rec.matched = None
            if rec.reserved:
                rec.idle_since = now            # the claimant has MATCH_TIMEOUT to start here
            if rec.slot.state is startd.State.CLAIMED and not rec.reserved:
                self._event(ctx, name, rec, startd.Event.RELEASE, now, job=False)
            if rec.dynamic:
                del self.slots[name]
            self.dirty = True
            self.changed.add(rec.host)
            ctx.invalidate(rec.host)

    def _unreserve(self, key, why="", log=None):
        """Give up the claim a preemption made for task ``key`` (its slot, when free, is
        released at once: back to Owner or Unclaimed)."""
        for name, rec in self.slots.items():
            if rec.reserved == key:
                rec.reserved, rec.holder, rec.idle_since = None, None, 0.0
                rec.holder_matched = None
                self.dirty = True
                self.changed.add(rec.host)
                if log is not None:
                    log(f"I|the claim of {name} for job {key[0]}.{key[1]} is released ({why})")

    def _expire_claims(self, ctx, now):
        """Release the claims of preemptions whose job left the queue, was held, no longer
        waits (it ended, or started elsewhere), or did not start on its free slot within
        MATCH_TIMEOUT."""
        self._claims_end = None
        for name, rec in list(self.slots.items()):
            if not rec.reserved:
                continue
            why = _claim_lapsed(ctx.state.jobs.get(rec.reserved[0]), rec.reserved[1])
            if why is None and rec.task is None and rec.idle_since:
                try:
                    timeout = ctx.policy(rec.host).match_timeout
                except ConfigError:
                    timeout = startd.MATCH_TIMEOUT
                if now - rec.idle_since >= timeout:
                    why = "not started within MATCH_TIMEOUT"
                else:
                    end = rec.idle_since + timeout
                    self._claims_end = end if self._claims_end is None else min(self._claims_end, end)
            if why is not None:
                self._unreserve(rec.reserved, why, ctx.log)
                ctx.invalidate(rec.host)

    # ------------------------------------------------------------ policy
    def _event(self, ctx, name, rec, event, now, job=True, evaluate=True):
        """Step a slot with a protocol event (and, with ``evaluate``, its policy)."""
        result = self._step(ctx, name, rec, now, event, job)
        if result is not None and evaluate:
            self._carry_out(ctx, rec, result, now)

    def _evaluate(self, ctx, name, rec, now):
        result = self._step(ctx, name, rec, now, startd.Event.NONE, True)
        if result is not None:
            self._carry_out(ctx, rec, result, now)

    def _poll_free_slots(self, ctx, now):
        """While a slot of a host runs a task, its other slots are evaluated every
        POLLING_INTERVAL too (UPDATE_INTERVAL paces the slots of a host without jobs), as
        HTCondor's startd polls all its slots while one is claimed."""
        self._serving = {rec.host for rec in self.slots.values() if rec.task is not None}
        for rec in self.slots.values():
            if rec.task is None and rec.host in self._serving:
                try:
                    policy = ctx.policy(rec.host)
                except ConfigError:
                    continue
                if not fixed(policy):
                    rec.due = min(rec.due, now + policy.polling_interval)

    def _step(self, ctx, name, rec, now, event, with_job):
        try:
            policy = ctx.policy(rec.host)
        except ConfigError as exc:
            ctx.log(f"E|the startd policy of {rec.host} cannot be evaluated: {exc}")
            rec.due = now + LONGEST_WAIT
            return None
        if rec.closed and rec.task is None and event is startd.Event.NONE \
                and rec.slot.state in (startd.State.UNCLAIMED, startd.State.OWNER):
            result = _closed_step(rec.slot, now)
        else:
            result = self._policy_step(ctx, name, rec, now, event, with_job, policy)
        if result.slot != rec.slot:
            self.dirty = True
            self.changed.add(rec.host)
            ctx.invalidate(rec.host)
            if result.reason and (result.slot.state, result.slot.activity) != (rec.slot.state, rec.slot.activity):
                rec.reason = result.reason
        rec.slot = result.slot
        rec.due = min(result.next_check, now + LONGEST_WAIT)
        if fixed(policy) and rec.slot.state is not startd.State.PREEMPTING \
                and rec.slot.activity is not startd.Activity.RETIRING:
            rec.due = now + LONGEST_WAIT        # nothing in the policy can change by itself
            # (a retiring slot keeps the end of its retirement: a deadline of its own)
        elif rec.host in self._serving:         # a host running a job polls all its slots
            rec.due = min(rec.due, now + policy.polling_interval)
        return result

    @staticmethod
    def _policy_step(ctx, name, rec, now, event, with_job, policy):
        """``startd.step`` of a slot under its host's policy."""
        constant = _constant(ctx, rec, policy, event)
        job_ad = None
        if with_job and rec.task is not None:
            job = ctx.state.jobs.get(rec.task[0])
            if job is None:
                pass
            elif constant and not job.spec.get("condor_ad"):
                job_ad = _GRID_ENGINE_JOB       # constants read nothing of it but its universe
            else:
                job_ad = ctx.job_ad(job, rec.task[1])
        machine = ctx.stand_in() if constant else ctx.slot_ad(name, rec)
        return startd.step(rec.slot, machine, job_ad, policy, now, event)

    def _carry_out(self, ctx, rec, result, now):
        if not result.actions or rec.task is None:
            return
        job = ctx.state.jobs.get(rec.task[0])
        task = job.tasks.get(rec.task[1]) if job is not None else None
        if task is None:
            return
        for action in result.actions:
            if action is startd.Action.SUSPEND:
                apply.suspend(ctx.state, ctx.dispatcher, job, task, POLICY_LETTER, True)
                ctx.log(f"I|job {job.id}.{task.number} suspended by the policy of {rec.host} ({result.reason})")
            elif action is startd.Action.CONTINUE:
                apply.suspend(ctx.state, ctx.dispatcher, job, task, POLICY_LETTER, False)
                ctx.log(f"I|job {job.id}.{task.number} continued by the policy of {rec.host}")
            elif action is startd.Action.CHECKPOINT:
                self._ask_checkpoint(ctx, job, task, rec.host)
            elif result.hold and job.spec.get("condor_ad"):
                reason, subcode = result.hold
                if apply.condor_hold(ctx.state, ctx.dispatcher, job, task.number,
                                     [reason, startd.HOLD_CODE_STARTD, subcode], now,
                                     hard=action is startd.Action.KILL, mail=True):
                    ctx.log(f"I|job {job.id}.{task.number} held by the policy of {rec.host} ({reason})")
            else:
                apply.vacate(ctx.state, ctx.dispatcher, job, task,
                             f"evicted by the policy of {rec.host} ({result.reason or action.value})",
                             hard=action is startd.Action.KILL)

    # ------------------------------------------------------------ negotiator preemption
    def preempt(self, ctx, slot_name, by, now):
        """A better match wants ``slot_name``: its job is vacated and the slot is claimed
        for task ``by`` ((job id, task number)), the proc that matched: no other job may
        take it (``claims``), until that task starts there or the claim is released
        (``_expire_claims``)."""
        names = next((ns for ns in self.tasks.values() if slot_name in ns), None)
        job = ctx.state.jobs.get(by[0])
        if not names or job is None:
            return False
        self._unreserve(by)                     # (a claim it held elsewhere)
        rec = self.slots[names[0]]
        ad = ctx.job_ad(job, by[1])
        rec.reserved, rec.idle_since = tuple(by), 0.0
        rec.holder = ads.Claim("", job.spec["owner"], accounting_name(ad), job_user=_text(ad.eval("User")),
                               group=_text(ad.eval("AccountingGroup")))
        rec.holder_matched = _matched_in(slot_name)
        self.dirty = True
        self._event(ctx, names[0], rec, startd.Event.PREEMPT_CLAIM, now)
        return True

    def _ask_checkpoint(self, ctx, job, task, host):
        """A checkpoint the startd asked of a running task: only an HTCondor job that
        wants its checkpoint signal (WantCheckpointSignal) is told, through its shepherd,
        which sends the signal unless one is still being answered. True when told."""
        if not job.spec.get("condor_ad") or ctx.job_ad(job, task.number).eval("WantCheckpointSignal") is not True:
            return False
        if ctx.dispatcher is None or not ctx.dispatcher.signal_task(job, task, "checkpoint"):
            return False
        ctx.log(f"I|job {job.id}.{task.number} on {host} asked to checkpoint")
        return True

    def checkpoint(self, ctx, names, now):
        """condor_checkpoint of slots ``names`` (a partitionable slot's dynamic slots with
        it): the startd's checkpoint event for each slot whose task runs; how many jobs
        were asked (``_ask_checkpoint``)."""
        count = 0
        for name, rec in self._running_in(names):
            if name == self.tasks[rec.task][0]:
                result = self._step(ctx, name, rec, now, startd.Event.CHECKPOINT, True)
                job = ctx.state.jobs.get(rec.task[0])
                task = job.tasks.get(rec.task[1]) if job is not None else None
                if result is not None and startd.Action.CHECKPOINT in result.actions and task is not None:
                    count += self._ask_checkpoint(ctx, job, task, rec.host)
        return count

    def _running_in(self, names):
        """(name, record) of each slot of ``names`` (a partitionable slot with its dynamic
        slots) that runs a task."""
        chosen = set(names)
        for name, rec in list(self.slots.items()):
            parent = name.partition("@")[0].partition("_")[0] + "@" + name.partition("@")[2]
            if (name in chosen or parent in chosen) and rec.task is not None:
                yield name, rec

    def vacate(self, ctx, names, fast, now):
        """condor_vacate of slots ``names`` (a partitionable slot's dynamic slots with it):
        the startd's vacate event for each claimed one; how many it vacated."""
        count = 0
        for name, rec in self._running_in(names):
            before = rec.slot
            self._event(ctx, name, rec, startd.Event.VACATE_FAST if fast else startd.Event.VACATE, now)
            count += rec.slot != before
        self.dirty = self.dirty or bool(count)
        return count

    def preempting(self):
        """(job id, task) of the tasks waiting for a slot a preemption is clearing."""
        return {r.reserved for r in self.slots.values() if r.reserved and r.task is not None}

    def claims(self):
        """(job id, task) -> the free slot a preemption claimed for it, which only that task
        may take (``sched.matchpass``): with the round of the match that preempted
        (``MatchedSlot``), which the task's claim keeps when it starts there."""
        return {r.reserved: MatchedSlot(n, *r.holder_matched) if r.holder_matched else n
                for n, r in self.slots.items() if r.reserved and r.task is None
                and r.slot.state is startd.State.CLAIMED}

    def reserved_slots(self):
        """Slot name -> the claim a preemption holds on it for a task (no other match may
        take the slot; the task's submitter is charged for it from the match on, as the
        negotiator charged it when it preempted, while its victim leaves too)."""
        return {n: r.holder for n, r in self.slots.items() if r.reserved}

    # ------------------------------------------------------------ views
    def views(self, host):
        """slot name -> SlotView, and slot name -> Claim, of one host."""
        views, claims = {}, {}
        for name, rec in self.slots.items():
            if rec.host == host:
                views[name] = rec.slot.view
                if rec.task is not None:
                    claims[name] = rec.claim or self._secondary_claim(rec)
                elif rec.holder is not None and rec.slot.state is startd.State.CLAIMED:
                    claims[name] = rec.holder       # Claimed/Idle, held by the match that won
        return views, {n: c for n, c in claims.items() if c is not None}

    def closed_owners(self):
        """The names of the free slots in the Owner state because Grid Engine can start no
        job in them (``_close``)."""
        return {n for n in self.closed if n in self.slots and self.slots[n].slot.state is startd.State.OWNER}

    def matched_in(self, host):
        """slot name -> (RemoteNegotiatingGroup, RemoteAutoregroup, RemoteGroup or "") of
        the match the claim on it came from, for the claimed slots of ``host`` whose match
        is recorded (every slot of a task tells its first slot's)."""
        found = {}
        for name, rec in self.slots.items():
            if rec.host != host:
                continue
            if rec.task is not None:
                first = self.slots.get(self.tasks.get(rec.task, [name])[0])
                matched = rec.matched or (first.matched if first is not None else None)
            elif rec.holder is not None and rec.slot.state is startd.State.CLAIMED:
                matched = rec.holder_matched
            else:
                continue
            if matched:
                found[name] = matched
        return found

    def _secondary_claim(self, rec):
        first = self.slots.get(self.tasks.get(rec.task, [None])[0])
        return first.claim if first is not None else None

    def slot_devices(self, ctx, key):
        """host -> the GPU device indices of the static slots a task holds there (their
        AssignedGPUs), in slot order ({} when they have none)."""
        found = {}
        for name in self.tasks.get(key, ()):
            host = name.rpartition("@")[2]
            lay = next((lay for lay in ctx.layout(host) if lay.name == name and not lay.partitionable), None)
            if lay is not None and lay.gpu_ids:
                found.setdefault(host, []).extend(lay.gpu_ids)
        return found

    def slot_of(self, key):
        """The first slot a task (``key``: (job id, task number)) holds, or None."""
        names = self.tasks.get(key)
        return names[0] if names else None


#: what a step under a constant policy reads of a Grid Engine job's ad: its universe
_GRID_ENGINE_JOB = ads.ClassAd({"JobUniverse": ads.VANILLA})
#: policy object -> fixed(policy), for the policies in use
_FIXED = {}


def fixed(policy):
    """True for a policy of constants that never suspend, preempt or refuse (the default
    of a dedicated cluster): its slots need no periodic evaluation."""
    found = _FIXED.get(id(policy))
    if found is None or found[0] is not policy:
        if len(_FIXED) > 256:
            _FIXED.clear()
        found = _FIXED[id(policy)] = (policy, _fixed(policy))
    return found[1]


def _fixed(policy):
    from gridtools.classad.nodes import Literal
    if any(expr.__class__ is not Literal for _name, expr in policy.exprs):
        return False
    values = {name: policy.expr(name, False) for name in ("START", "SUSPEND", "PREEMPT", "PERIODIC_CHECKPOINT")}
    return values["START"].value is True and values["SUSPEND"].value is False \
        and values["PREEMPT"].value is False and values["PERIODIC_CHECKPOINT"].value is False \
        and policy.expr("IS_OWNER", False) is None


#: protocol events whose step reads nothing of the slot ad under a constant policy
_PLAIN_EVENTS = frozenset({startd.Event.NONE, startd.Event.CLAIM, startd.Event.ACTIVATE,
                           startd.Event.JOB_EXIT, startd.Event.RELEASE})


def _constant(ctx, rec, policy, event):
    """True when a step of ``rec`` cannot depend on its slot ad, which then need not be
    built: the policy is constant (``fixed``), the host's facts leave Start as configured,
    and the slot neither retires nor preempts (a retirement time is the job's expression,
    which may read the machine)."""
    slot = rec.slot
    return event in _PLAIN_EVENTS and fixed(policy) and not ctx.replaces(rec.host, "Start") \
        and not (slot.preempt_was_true or slot.preempting_claim) \
        and slot.activity is not startd.Activity.RETIRING and slot.state is not startd.State.PREEMPTING


#: why a free slot Grid Engine can start no job in entered the Owner state
CLOSED_REASON = "no queue instance takes a job"


def _closed_step(slot, now):
    """The step of a free slot Grid Engine can start no job in (``Machines._close``): it is
    Owner/Idle, as HTCondor's startd puts an Unclaimed slot whose START is false (IS_OWNER),
    entered at ``now`` when it was not; nothing else in its policy is looked at."""
    if slot.state is startd.State.OWNER and slot.activity is startd.Activity.IDLE:
        return startd.Step(slot, next_check=now + LONGEST_WAIT)
    entered = slot.entered_state if slot.state is startd.State.OWNER else now
    owner = replace(slot, state=startd.State.OWNER, activity=startd.Activity.IDLE,
                    entered_state=entered, entered_activity=now)
    return startd.Step(owner, reason=CLOSED_REASON, next_check=now + LONGEST_WAIT,
                       path=((startd.State.OWNER, startd.Activity.IDLE),))


def ads_rank(machine, job):
    from gridtools.classad.match import rank
    return float(rank(machine, job)) if machine is not None and job is not None else 0.0


def _claim_lapsed(job, number):
    """Why the claim of task ``number`` of ``job`` (None: removed) no longer stands, or None."""
    if job is None or job.deleted:
        return "job removed"
    state, task = job.state_of(number), job.tasks.get(number)
    if state is TaskState.RUNNING:
        return "job started on another slot"
    if state is TaskState.FINISHED:
        return "job left the queue"            # removed, or ended
    if state is not TaskState.PENDING:
        return "job no longer idle"
    if task is not None and task.deleting:
        return "job removed"
    if job.holds_of(number):
        return "job held"
    return None


def _text(value):
    return value if isinstance(value, str) else ""


def _matched_in(slot):
    """The round a slot name handed on by a match tells (``MatchedSlot``), or None."""
    return slot.matched_in() if isinstance(slot, MatchedSlot) else None


#: the defaults of MODIFY_REQUEST_EXPR_REQUESTMEMORY and ..._REQUESTDISK (HTCondor 24's)
MODIFY_REQUEST = (("RequestMemory", "quantize(RequestMemory,{128})"), ("RequestDisk", "quantize(RequestDisk,{1024})"))


def modified_requests(conf, job, parent, memory, disk):
    """(memory, disk) of the dynamic slot a job (``job``, asking ``memory`` MiB and
    ``disk`` KiB) is given of the partitionable slot whose ad is ``parent`` (what it has
    left), as HTCondor's startd sizes one: its requests as MODIFY_REQUEST_EXPR_<name> of
    ``conf`` (the host's configuration) make them, evaluated with the job's ad as MY and
    the slot's as TARGET (a value that is not a number leaves the request as it was;
    HTCondor's defaults round memory up to 128 MiB and disk to 1024 KiB); the requests
    as asked when the modified ones no longer fit in what the slot has left, as HTCondor
    tries without its edits then (MUST_MODIFY_REQUEST_EXPRS is not read)."""
    found = {"RequestMemory": memory, "RequestDisk": disk}
    edited = None
    for attr, default in MODIFY_REQUEST:
        text = conf.get("MODIFY_REQUEST_EXPR_" + attr.upper())
        text = default if text is None else text
        if not text.strip():
            continue
        if edited is None:
            edited = job.copy()
        try:
            edited.set_expr("ModifiedRequest", text)
        except GridError:               # (one that does not parse edits nothing, as in HTCondor)
            continue
        value = edited.eval("ModifiedRequest", parent)
        if type(value) in (int, float) and value - value == 0:
            found[attr] = max(int(value), 0)
    if parent is not None:
        for attr, mine in (("RequestMemory", "Memory"), ("RequestDisk", "Disk")):
            left = parent.eval(mine)
            if type(left) is int and found[attr] > left:
                return memory, disk
    return found["RequestMemory"], found["RequestDisk"]


def _number(value):
    """A positive amount of an ad's value (0 for anything else, infinity and NaN too)."""
    return int(value) if type(value) in (int, float) and value > 0 and value - value == 0 else 0


def _slot_number(name):
    m = re.match(r"slot(\d+)", name)
    return int(m.group(1)) if m else 0

"""condor_q -analyze and -better-analyze: why jobs do not run.

The text comes from ``sched.analysis`` (a job ad against slot ads);
-better-analyze analyses the match of running and held jobs too. The
slot ads are the ones the daemon publishes (what condor_status shows:
states, claims, GPUs); before the daemon has published any, those every
execution host of the cell offers (``ads.machine_ads``), made from the
hosts' published load values, GPUs and the cell's condor_config, with the
slots that run tasks Claimed/Busy by the owners of those tasks and the
others Unclaimed/Idle. ``-slotads FILE`` replaces them by a file's,
``-machine`` and ``-mconstraint`` narrow them (``slots``); ``-userprios``
weighs the submitters; ``-reverse-analyze`` analyses the slots' side and
``-unmatchable`` keeps the jobs no slot matches, in HTCondor's layouts. An idle
job that the last pass held back by a start throttle (a host at MAX_STARTERS, a
next_job_start_delay) is told so (``analysis.start_throttles``).
"""

import shutil

from gridtools.cli.condor import queue as Q
from gridtools.errors import GridError


def _config():
    from gridtools import cell
    from gridtools.formats import condor_config

    class Empty:
        def get(self, name, default=None):
            return default
    try:
        return condor_config.load(condor_config.locate(cell.etc("condor_config")))
    except Exception:  # noqa: BLE001 - an unreadable configuration: the defaults
        return Empty()


def _free_disk_kib():
    from gridtools import cell
    try:
        return shutil.disk_usage(cell.root()).free // 1024
    except OSError:
        return 0


def _gpus(values):
    """The GPUs of a host's published complex values (its ``gpu`` consumable)."""
    from gridtools.formats.sge.complex import whole_amount
    return whole_amount((values or {}).get("gpu", 0))


def slot_ads(snap, everyone, now):
    """The slot ads of every execution host of the cell."""
    from gridtools import ads
    config = _config()
    hosts = snap.get("hosts") or {}
    names = list(snap.get("exechosts") or sorted(hosts))
    disk = _free_disk_kib()
    found = []
    for name in names:
        facts = ads.HostFacts.from_load(name, hosts.get(name) or {}, disk=disk,
                                        gpus=_gpus((snap.get("host_values") or {}).get(name)))
        running = [p for p in everyone if p.host == name and p.status in (Q.RUNNING, Q.SUSPENDED)]
        views, claims = {}, {}
        busy = iter(running)
        for lay in ads.layout(facts, config):
            proc = next(busy, None)
            if proc is None:
                break
            views[lay.name] = ads.SlotView("Claimed", "Busy", proc.start, proc.start)
            claims[lay.name] = ads.Claim(proc.id, proc.owner, proc.owner, start=proc.start)
        found.extend(ads.machine_ads(facts, config, now, views, claims))
    return found


def read_userprios(path):
    """submitter -> priority of a file of user priorities, read as HTCondor's condor_q
    reads it: the ``NameN = "..."`` and ``PriorityN = ...`` lines of the accountant's ad
    (``condor_userprio -l`` of HTCondor), the lines without a number passed over; the
    cell's own ``condor_userprio -l`` (an ad per submitter, its ``Name`` and
    ``Priority``) is read too. A name ``user@domain`` counts for ``user`` as well."""
    import re
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        raise GridError(f"Can't open file of user priorities: {path}", 1) from None
    numbered, plain, pending = {}, [], {}
    for line in text.splitlines() + [""]:
        m = re.match(r"\s*(Name|Priority)(\d*)\s*=\s*(.*?)\s*$", line)
        if not line.strip():
            if "Name" in pending and "Priority" in pending:
                plain.append((pending["Name"], pending["Priority"]))
            pending = {}
        elif m:
            value = m.group(3)[1:-1] if m.group(3).startswith('"') else m.group(3)
            if m.group(2) and int(m.group(2)) > 0:
                numbered.setdefault(int(m.group(2)), {})[m.group(1)] = value
            elif not m.group(2):
                pending[m.group(1)] = value
    found = {}
    pairs = [(e.get("Name"), e.get("Priority", "0")) for _n, e in sorted(numbered.items())] + plain
    for name, prio in pairs:
        if name:
            number = re.match(r"\s*[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+)", prio)  # (C's atof)
            found[name] = float(number.group(0)) if number else 0.0
            found.setdefault(name.partition("@")[0], found[name])
    return found


def _is_slot_name(text):
    """True for a -mconstraint that HTCondor takes as a slot name, not an expression:
    letters, digits and ``-._@`` only, with more than one dot."""
    return bool(text) and all(c.isalnum() or c in "-._@" for c in text) and text.count(".") > 1


def slots(snap, everyone, now, opts):
    """The slot ads the analysis looks at: those of -slotads FILE, else the cell's
    (published, or made from its hosts: ``slot_ads``), narrowed to the slot or machine
    -machine names and the slots -mconstraint matches. Of the cell's slots, the
    dynamic ones are left out, as HTCondor's condor_q leaves them out of the slots
    it asks the collector for, unless -machine names a slot (a name with ``@``) or
    the -mconstraint looks at the kind of the slots (PartitionableSlot,
    DynamicSlot, SlotType, DSlotId)."""
    if opts.slotads:
        from gridtools.cli.condor.qjobads import read_ads
        machines = read_ads(opts.slotads, form=opts.slotads_form)
    elif snap.get("slots") is not None:     # (none: every startd is gone or flushed)
        from gridtools.cli.condor import adformat
        machines = [adformat.full(adformat.from_plain(item)) for item in snap["slots"]]
    else:
        machines = slot_ads(snap, everyone, now)
    name, constraint = opts.machine, opts.mconstraint
    if constraint is not None and name is None and _is_slot_name(constraint):
        name, constraint = constraint, None
    if name is not None:
        wanted = name.lower()               # (== of strings ignores case)
        machines = [m for m in machines if any(isinstance(v, str) and v.lower() == wanted
                                               for v in (m.eval("Name"), m.eval("Machine")))]
    exprs = Q.compile_constraints([constraint]) if constraint is not None else []
    if not opts.slotads and not (name is not None and "@" in name) and \
            not any(_names(e) & _SLOT_KINDS for e in exprs):
        machines = [m for m in machines if m.eval("DynamicSlot") is not True]
    if exprs:
        machines = [m for m in machines if Q.matches_all(m, exprs)]
    return machines


#: the attributes a -mconstraint that chooses slots by their kind names
_SLOT_KINDS = {"partitionableslot", "dynamicslot", "slottype", "dslotid"}


def _names(expr):
    """The (lower case) names of the attributes an expression refers to."""
    found = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        key = getattr(node, "key", None)
        if isinstance(key, str):
            found.add(key)
        stack.extend(node.children())
    return found


def _both_match(job, machines, now):
    """(the job's Requirements match some slot, some slot and the job match each other)."""
    from gridtools.classad.match import accepts
    from gridtools.sched import analysis
    job = analysis.at(job, now)
    wanted = [m for m in machines if accepts(job, m)]
    return bool(wanted), any(accepts(m, job) for m in wanted)


def unmatchable(chosen, everyone, source, opts):
    """-unmatchable without an analysis: the chosen procs no slot matches (the job's
    Requirements and the slot's both true)."""
    import time
    from gridtools.cli import status
    now = time.time()
    machines = slots(status.load(), everyone, now, opts)
    return [p for p in chosen if not _both_match(source.ad(p), machines, now)[1]]


def _autoclusters(ads):
    """[(autocluster id, its ads)]: the ads by their AutoClusterId in order of the id,
    those without one (-1) first, each alone."""
    groups, alone = {}, []
    for ad in ads:
        ident = ad.eval("AutoClusterId")
        if type(ident) is int:
            groups.setdefault(ident, []).append(ad)
        else:
            alone.append(ad)
    return [(-1, [ad]) for ad in alone] + sorted(groups.items())


def _job_id(ad):
    return f"{ad.eval('ClusterId')}.{ad.eval('ProcId')}"


def _unmatchable_report(ads, machines, now):
    """-better-analyze -unmatchable: a line for each autocluster no slot matches."""
    out = []
    for ident, members in _autoclusters(ads):
        wanted, both = _both_match(members[0], machines, now)
        if not both:
            out.append(f"{'All slots reject' if wanted else 'No slots match'} autocluster {ident}, jobs :"
                       + "".join(f" {_job_id(ad)}" for ad in members) + "\n")
    return "".join(out)


def _slot_type(machine):
    if machine.eval("DynamicSlot") is True:
        return "Dyn"
    if machine.eval("PartitionableSlot") is True:
        return "Part"
    return "Stat"


def _text(value):
    return value if isinstance(value, str) else ""


def _slot_counts(machine, ads, now):
    """(jobs the slot's Requirements accept, jobs whose Requirements accept the slot,
    both) of the jobs ``ads``."""
    from gridtools.classad.match import accepts
    from gridtools.sched import analysis
    offer = req = both = 0
    for ad in ads:
        job = analysis.at(ad, now)
        slot_ok, job_ok = accepts(machine, job), accepts(job, machine)
        offer, req, both = offer + slot_ok, req + job_ok, both + (slot_ok and job_ok)
    return offer, req, both


def _reverse_report(ads, machines, opts, now):
    """-reverse-analyze: the slots' side of the match against the jobs, in HTCondor's
    layouts: a table of the slots (one row each), or for a single slot or
    -better-analyze:reverse the analysis of each slot."""
    if not machines:
        return ""
    if opts.summary or (len(machines) > 1 and not opts.better):
        if len(ads) <= 1:
            head = "".join(f"{_job_id(ad)}: Analyzing matches for 1 job\n" for ad in ads)
        else:
            head = f"Analyzing matches for {len(ads)} jobs\n"
        width = max(max(len(_text(m.eval("Machine"))) for m in machines) + 7,
                    max(len(_text(m.eval("Name"))) for m in machines), 16)

        def line(*cells):
            return f"{cells[0][:width]:<{width}} {cells[1]:>4} {cells[2][:12]:>12} {cells[3][:12]:>12} {cells[4][:10]:>10}\n"
        out = [head, line("", "Slot", "Slot's Req ", "  Job's Req ", "Both   "),
               line("Name", "Type", "Matches Job", "Matches Slot", "Match %"),
               line("-" * 24, "----", "-" * 12, "-" * 12, "-" * 10)]
        for machine in machines:
            name = _text(machine.eval("Name"))
            if machine.eval("Offline") is True:
                out.append(f"{name[:24]:<24}  is offline\n")
                continue
            offer, req, both = _slot_counts(machine, ads, now)
            share = 100.0 * both / len(ads) if ads else 0.0
            out.append(f"{name[:width]:<{width}} {_slot_type(machine):<4} {offer:12d} {req:12d} {share:10.2f}\n")
        return "".join(out)
    out = []
    for machine in machines:
        name = _text(machine.eval("Name"))
        if machine.eval("Offline") is True:
            out.append(f"{name[:24]:<24}  is offline\n")
            continue
        out.append(f"\n-- Slot: {name} : Analyzing matches for {len(ads)} Jobs in "
                   f"{len(_autoclusters(ads))} autoclusters\n")
        out.append(_slot_steps(machine, ads, now, opts.detail))
        offer, req_ok, both = _slot_counts(machine, ads, now)
        share = 100.0 * both / len(ads) if ads else 0.0
        out.append(f"\n{name}: Run analysis summary of {len(ads)} jobs.\n"
                   f"{both:5d} ({share:.2f} %) match both slot and job requirements.\n"
                   f"{offer:5d} match the requirements of this slot.\n"
                   f"{req_ok:5d} have job requirements that match this slot.\n")
    return "".join(out)


def _slot_steps(machine, ads, now, detail=0):
    """A slot's Requirements for -reverse-analyze of it: the expression (with its
    START and WithinResourceLimits), its numbered steps, the slot's attributes they
    refer to (and those of the job, when there is one job or autocluster), and the
    table of the steps against the jobs, one of each autocluster (``detail``: the
    qualifiers' flags of ``steps``)."""
    from gridtools.sched import analysis, steps
    req = machine.lookup("Requirements")
    if req is None:
        return ""
    text, inline = req.unparse(), ["Requirements"]
    for attr in ("START", "WithinResourceLimits"):
        expr = machine.lookup(attr)
        if expr is not None:
            text += f"\n\n  {attr} is\n    {expr.unparse()}"
            inline.append(attr)
    jobs = [analysis.at(members[0], now) for _ident, members in _autoclusters(ads)]
    out = [f"\nThe Requirements expression for this slot is\n\n    {text}\n\n",
           steps.numbered(machine, "Requirements", inline, detail), "\n",
           "This slot defines the following attributes:\n\n"]
    mine, theirs = steps.referenced(machine, "Requirements", inline)
    out.append(mine)
    if len(jobs) == 1:
        title, values = steps.target_values(theirs, machine, jobs[0])
        if values:
            out.append(f"\n{title} has the following attributes:\n\n{values}")
    out.append("\nThe Requirements expression for this slot reduces to these conditions:\n\n")
    out.append(steps.reduced(machine, "Requirements", ["START", "WithinResourceLimits"], jobs, "Cluster",
                             detail))
    return "".join(out)


def report(snap, chosen, everyone, source, opts, now):
    """The analysis of every chosen proc (``opts``: condor_q's options: -better-analyze,
    -reverse-analyze, -unmatchable, -machine, -mconstraint, -slotads, -userprios)."""
    from gridtools.sched import analysis
    machines = slots(snap, everyone, now, opts)
    if opts.reverse:
        return _reverse_report([source.ad(p) for p in chosen], machines, opts, now)
    if opts.unmatchable:
        return _unmatchable_report([source.ad(p) for p in chosen], machines, now)
    if opts.summary:
        return _summary_report([source.ad(p) for p in chosen], machines, opts, now)
    priorities = None
    if opts.prios:
        priorities = read_userprios(opts.userprios) if opts.userprios else _cell_prios()
        machines = [_with_prio(m, priorities) for m in machines]
    named = opts.mconstraint is None or (opts.machine is None and _is_slot_name(opts.mconstraint))
    single = len(machines) == 1 or ((opts.machine is not None or opts.mconstraint is not None) and named)
    out = []
    preq = _preemption_requirements()
    published = snap.get("reasons") or {}
    for proc in chosen:
        ad = source.ad(proc)
        status = ""
        # (the start throttles of the last pass, for an idle job: MAX_STARTERS, next_job_start_delay)
        reasons = (published.get(proc.cluster) or ()) if ad.eval("JobStatus") == Q.IDLE else ()
        if opts.better and ad.eval("JobStatus") != Q.IDLE:   # -better-analyze looks at the match anyway
            status = job_status(ad)
            ad = ad.copy()
            ad["JobStatus"] = Q.IDLE
        values = _slot_values(ad, machines, now) if opts.better and single else ""
        out.append(analysis.analyze(ad, machines, priorities, preq, better=opts.better, now=now,
                                    values=values, reasons=reasons) + status)
    return "".join(out)


#: what -better-analyze says of a job that is not idle, by JobStatus (HTCondor's
#: doJobRunAnalysis: running, transferring output and suspended are "running")
_JOB_STATUS = {2: "Job is running.", 6: "Job is running.", 7: "Job is running.", 5: "Job is held.",
               3: "Job is removed.", 4: "Job is completed."}


def job_status(ad):
    """The status block -better-analyze adds to the match analysis of a job that is not
    idle (``NNN.NNN:  Job is held.``, then the hold reason), so that the counts of
    slots that could run it are not read as its state."""
    text = _JOB_STATUS.get(ad.eval("JobStatus"))
    if text is None:
        return ""
    reason = ad.eval("HoldReason")
    if text == "Job is held." and isinstance(reason, str) and reason:
        text += f"\n\nHold reason: {reason}"
    cluster, proc = (n if type(n) is int else 0 for n in (ad.eval("ClusterId"), ad.eval("ProcId")))
    return f"\n{cluster:03d}.{proc:03d}:  {text}\n\n"


def _preemption_requirements():
    """PREEMPTION_REQUIREMENTS of the configuration as an expression (HTCondor's default,
    False, when it is not set): a slot serving a user of a worse priority is one that
    "will not currently preempt" unless it holds, as HTCondor's condor_q counts it. None
    for a value that does not parse (the slots then count as available)."""
    from gridtools.classad import parse
    from gridtools.cli.condor.machineviews import client_config
    from gridtools.sched.negotiator import NegotiatorConfig
    text = client_config().get("PREEMPTION_REQUIREMENTS")
    try:
        return parse(text if text is not None and text.strip() else NegotiatorConfig().preemption_requirements)
    except Exception:  # noqa: BLE001 - any syntax error
        return None


def _cell_prios():
    """submitter -> effective priority of the cell's accountant (what its
    condor_userprio shows), each as ``user`` and ``user@UID_DOMAIN``."""
    import time
    from gridtools.cli.condor import machineviews, userprio
    acc = userprio.accountant()
    domain = machineviews.identity().domain
    found = {}
    for row in acc.rows(acc.last_update or time.time(), all_users=True):
        found[row.name] = row.effective
        if not row.is_group:
            found[f"{row.name}@{domain}"] = row.effective
    return found


def _summary_report(ads, machines, opts, now):
    """-analyze:summary: HTCondor's line per autocluster (or job without one) of how
    the slots stand toward its first job, the user priorities not weighed."""
    from gridtools.classad.match import accepts
    from gridtools.sched import analysis
    name, constraint = opts.machine, opts.mconstraint
    if constraint is not None and name is None and _is_slot_name(constraint):
        name, constraint = constraint, None
    head = (f"{name}: " if name is not None and constraint is None else "")
    line = "{:<13} {:>12} {:>12} {:>11} {:>11} {:>10} {:>9} {}\n".format
    out = [f"{head}Analyzing matches for {len(machines)} slots\n",
           line("", " Autocluster", "   Matches  ", "  Machine  ", "  Running  ", "  Serving ", "", ""),
           line(" JobId", "Members/Idle", "Requirements", "Rejects Job", " Users Job ", "Other User",
                "Available", "Owner"),
           line("-------------", "------------", "------------", "-----------", "-----------",
                "----------", "---------", "-----")]
    for ident, members in _autoclusters(ads):
        job = analysis.at(members[0], now)
        states = [m.eval("JobStatus") for m in members]
        idle, running = states.count(Q.IDLE), sum(states.count(s) for s in (Q.RUNNING, Q.SUSPENDED, 6))
        user = job.eval("User")
        user = user if isinstance(user, str) else None
        matching = rejecting = busy = mine = available = 0
        for machine in machines:
            if not accepts(job, machine):
                continue
            matching += 1
            if not accepts(machine, job):
                rejecting += 1
                continue
            remote = machine.eval("RemoteUser")
            if not isinstance(remote, str):
                available += 1
                continue
            busy += 1
            mine += remote == user
        owner = job.eval("Owner")
        out.append("{:<13} {:<12} {:12d} {:11d} {:>11} {:10d} {:9d} {}\n".format(
            _job_id(job), f"{len(members)}/{idle}" if ident >= 0 else "", matching, rejecting,
            f"{running}/{mine}" if running else str(mine), busy - mine, available,
            owner if isinstance(owner, str) else ""))
    return "".join(out)


def _slot_values(job, machines, now):
    """-better-analyze of one slot or machine: for each slot, ``<Name> has the following
    attributes:`` and the values of its attributes the job's Requirements refer to."""
    from gridtools.sched import analysis, steps
    job = analysis.at(job, now)
    req = job.lookup("Requirements")
    if req is None:
        return ""
    theirs = steps.references(job, req)[1]
    if len(machines) > 1:           # (the dynamic slots but for a single slot)
        machines = [m for m in machines if m.eval("DynamicSlot") is not True]
    out = []
    for machine in machines:
        title, values = steps.target_values(theirs, job, machine)
        if values:
            out.append(f"\n{title} has the following attributes:\n\n{values}")
    return "".join(out)


def _with_prio(machine, priorities):
    """The slot ad with the RemoteUserPrio of its RemoteUser's priority of the file."""
    user = machine.eval("RemoteUser")
    if not isinstance(user, str) or user not in priorities:
        return machine
    machine = machine.copy()
    machine["RemoteUserPrio"] = float(priorities[user])
    return machine

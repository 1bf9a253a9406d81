"""What HTCondor's starter gives a job besides its own environment.

An HTCondor job (one with an ad: condor_submit's, vanilla or parallel
universe) sees, as under HTCondor's starter:

- ``BATCH_SYSTEM=HTCondor``;
- the thread-count variables (condor_config's STARTER_NUM_THREADS_ENV_VARS,
  HTCondor 24's list by default) set to the number of CPUs the job was given
  on its host (its slot's Cpus: request_cpus), each one the job's own
  ``environment`` (or ``getenv``) does not set already;
- ``_CONDOR_SLOT``, the name of its slot without the host (``slot1``,
  ``slot1_1`` for a dynamic slot);
- ``_CONDOR_JOB_AD`` and ``_CONDOR_MACHINE_AD``: files ``.job.ad`` and
  ``.machine.ad`` in its scratch directory (``_CONDOR_SCRATCH_DIR``, its
  TMPDIR) holding its ad as ``condor_q -l`` shows it to its owner and its
  slot's ad as ``condor_status -l`` shows it, both as of its start.

It is also held to its slot's memory, as the starter holds a job's cgroup
to it (``memory_limit``): its shepherd puts it in a memory cgroup of that
limit where it can (``exec.cgroups``), else ends it when its processes'
resident memory goes over; the job is then held (``condorjob.memory_hold``).

The daemon claims the slots of the HTCondor jobs a pass starts before their
shepherds are started (``Dispatcher.start_all``), so that the slot's name and
ad are known (and a job in static slots with GPUs gets their devices,
``slot_devices``); the shepherd writes the two files into the TMPDIR it made,
owned by the job's owner and readable by nobody else, before the job runs,
and removes them when the job is over (``exec.shepherd``).
"""

#: HTCondor 24's default STARTER_NUM_THREADS_ENV_VARS
THREAD_VARS = ("CUBACORES", "GOMAXPROCS", "JULIA_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
               "OMP_NUM_THREADS", "OMP_THREAD_LIMIT", "OPENBLAS_NUM_THREADS", "ROOT_MAX_THREADS",
               "TF_LOOP_PARALLEL_ITERATIONS", "TF_NUM_THREADS")
#: the files of the job's scratch directory, and the variables that name their paths
JOB_AD, MACHINE_AD = ".job.ad", ".machine.ad"
VARIABLES = {JOB_AD: "_CONDOR_JOB_AD", MACHINE_AD: "_CONDOR_MACHINE_AD"}


#: CGROUP_MEMORY_LIMIT_POLICY's default: a job's memory is held to its slot's
MEMORY_POLICY = "hard"
#: STARTER_ALWAYS_HOLD_ON_OOM's default: the hold names the limit as the usage measured last
HOLD_AT_LIMIT = True
#: LOCAL_UNIVERSE_CGROUP_ENFORCEMENT's default: local universe jobs have no memory limit
LOCAL_ENFORCEMENT = False
#: USE_CGROUPS_FOR_LOCAL_UNIVERSE's default: a local universe job may have a cgroup
LOCAL_CGROUPS = True
#: BASE_CGROUP's and DISABLE_SWAP_FOR_JOB's defaults (exec.cgroups)
BASE_CGROUP, NO_SWAP = "htcondor", True


def memory_limit(conf, machine, job_ad):
    """The limits of a job's memory in the slot whose ad is ``machine`` (``conf``: the
    configuration of the slot's host), as HTCondor's starter sets its cgroup's. The hard
    limit, by CGROUP_MEMORY_LIMIT_POLICY: ``hard`` (the default), the slot's Memory;
    ``custom``, CGROUP_HARD_MEMORY_LIMIT_EXPR evaluated with the slot's ad as MY and the
    job's (``job_ad``) as TARGET (no limit when that is no number); any other (``soft``,
    ``none``), no limit. The low limit: CGROUP_LOW_MEMORY_LIMIT, evaluated so, whatever
    the policy. A job without a slot (``machine`` None) has none, but a local universe
    job when LOCAL_UNIVERSE_CGROUP_ENFORCEMENT is true (and USE_CGROUPS_FOR_LOCAL_UNIVERSE
    not false), whose RequestMemory stands for the slot's Memory. An empty BASE_CGROUP
    means no cgroups, so no limits. A plan's ``memory_limit``: {"mb": the hard limit in
    MiB or None, "low_mb": the low one or None, "slot_mb": the slot's Memory,
    "at_limit": STARTER_ALWAYS_HOLD_ON_OOM, "no_swap": DISABLE_SWAP_FOR_JOB}, or None
    when there is neither limit (nor when the job gets no cgroup, ``cgroup_plan``)."""
    if cgroup_plan(conf, machine, job_ad) is None:
        return None
    slot = machine.eval("Memory") if machine is not None else None
    if type(slot) is not int:
        # a job without a slot (a local universe job: it has a cgroup): its RequestMemory
        # when LOCAL_UNIVERSE_CGROUP_ENFORCEMENT is true, as the local starter takes it
        local = _flag(conf, "LOCAL_UNIVERSE_CGROUP_ENFORCEMENT", LOCAL_ENFORCEMENT)
        slot = job_ad.eval("RequestMemory") if local else None
        if type(slot) is float and slot == slot and abs(slot) != float("inf"):
            slot = int(slot)
        if type(slot) is not int:
            return None
        from gridtools.classad import ClassAd
        machine = ClassAd()
    policy = (conf.get("CGROUP_MEMORY_LIMIT_POLICY") or MEMORY_POLICY).strip().lower()
    limit = slot if policy == "hard" else None
    if policy == "custom":
        limit = _custom_limit(conf.get("CGROUP_HARD_MEMORY_LIMIT_EXPR"), machine, job_ad)
    low = _custom_limit(conf.get("CGROUP_LOW_MEMORY_LIMIT"), machine, job_ad)
    limit = limit if limit is not None and limit > 0 else None
    low = low if low is not None and low > 0 else None
    if limit is None and low is None:
        return None
    return {"mb": limit, "low_mb": low, "slot_mb": slot, "at_limit": _flag(conf, "STARTER_ALWAYS_HOLD_ON_OOM",
                                                                          HOLD_AT_LIMIT),
            "no_swap": _flag(conf, "DISABLE_SWAP_FOR_JOB", NO_SWAP)}


def _base(conf):
    """BASE_CGROUP ("" when empty: no cgroups)."""
    base = conf.get("BASE_CGROUP")
    return BASE_CGROUP if base is None else base.strip()


def cgroup_plan(conf, machine, job_ad):
    """The cgroup a job gets, as HTCondor's starter makes one (``exec.cgroups``): {"base":
    BASE_CGROUP, "cpus": the CPUs its share of the machine's is counted in}, for a job in
    the slot whose ad is ``machine`` (its Cpus) and for a local universe job unless
    USE_CGROUPS_FOR_LOCAL_UNIVERSE is false (1 CPU, its RequestCpus under
    LOCAL_UNIVERSE_CGROUP_ENFORCEMENT); None without a BASE_CGROUP, and for other jobs
    without a slot (the scheduler universe's)."""
    base = _base(conf)
    if not base:
        return None
    cpus = machine.eval("Cpus") if machine is not None else None
    if type(cpus) is not int:
        from gridtools.formats.condor.jobattrs import LOCAL
        if job_ad.eval("JobUniverse") != LOCAL or not _flag(conf, "USE_CGROUPS_FOR_LOCAL_UNIVERSE", LOCAL_CGROUPS):
            return None
        asked = job_ad.eval("RequestCpus")
        enforced = _flag(conf, "LOCAL_UNIVERSE_CGROUP_ENFORCEMENT", LOCAL_ENFORCEMENT)
        cpus = int(asked) if enforced and type(asked) in (int, float) and 1 <= asked < 1 << 20 else 1
    return {"base": base, "cpus": max(cpus, 1)}


def _flag(conf, name, default):
    from gridtools.formats.condor_config import boolean_or
    return boolean_or(conf, name, default)


def _custom_limit(text, machine, job_ad):
    """The value (MiB) of a limit's expression (CGROUP_HARD_MEMORY_LIMIT_EXPR,
    CGROUP_LOW_MEMORY_LIMIT) for the slot ``machine`` and the job ``job_ad``: a whole
    number (a real's whole part), else None."""
    if not text or not text.strip():
        return None
    from gridtools.errors import GridError
    ad = machine.copy()
    try:
        ad.set_expr("CgroupHardMemoryLimit", text)
    except GridError:
        return None
    value = ad.eval("CgroupHardMemoryLimit", job_ad)
    if type(value) is float and value == value and abs(value) != float("inf"):
        value = int(value)
    return value if type(value) is int else None


def thread_names(condor):
    """The thread-count variables: condor_config's STARTER_NUM_THREADS_ENV_VARS (names
    split at commas and blanks), HTCondor's default list where it is unset."""
    text = condor.conf.get("STARTER_NUM_THREADS_ENV_VARS") if condor is not None else None
    if text is None:
        return THREAD_VARS
    return tuple(name for name in text.replace(",", " ").split() if name)


def job_cpus(job, granted):
    """The CPUs a task (granted ``granted``) was given on its (first) host: its slot's
    Cpus; 1 for each node of a parallel universe job (a slot per node)."""
    from gridtools.formats.condor.jobattrs import PARALLEL
    if not granted or job.spec.get("universe") == PARALLEL:
        return 1
    host = granted[0][1]
    return sum(int(slots) for _queue, where, slots in granted if where == host) or 1


def environment(env, own, cpus, names=THREAD_VARS):
    """Add the starter's variables to ``env`` (a job's environment; ``own``: the names
    the job's ``environment`` sets, which win over the thread counts)."""
    env["BATCH_SYSTEM"] = "HTCondor"
    for name in names:
        if name not in own:
            env[name] = str(cpus)


def slot_variable(slot):
    """``_CONDOR_SLOT`` of slot ``slot1_1@host``: ``slot1_1``."""
    return slot.partition("@")[0]


def long_form(ad):
    """``Name = value`` lines, sorted by name as condor_status -l prints them."""
    return "".join(f"{name} = {ad.lookup(name).unparse(True)}\n" for name in sorted(ad, key=str.lower))


#: how deep the references of an execute event's attributes are followed
_DEPTH = 50


def execute_props(machine, scratch, wanted=None):
    """What HTCondor's shadow writes into a run's execute event (001) after the slot's
    name (``ExecuteProps``), from ``machine``, the slot's ad as the run starts: the
    job's scratch folder ``scratch`` (CondorScratchDir; None: left out); each resource
    the slot's MachineResources names (CPUs, Disk and Memory when it names none), and
    its ``Available<name>`` with the attributes of the slot that refers to; then the
    attributes of the slot the job's ``ulog_execute_attrs`` names (``wanted``: its
    UserLogExecuteEventAttrs, names split at commas and blanks), with those of the slot
    their values refer to, each taken only when not taken before. Name -> the value's
    text, each name spelled as the list or the expression spells it."""
    from gridtools.classad.values import unparse_value
    props = {} if scratch is None else {"CondorScratchDir": unparse_value(scratch, old=True)}
    taken = {name.lower() for name in props}

    def take(name):
        tree = machine.lookup(name)
        if tree is not None and name.lower() not in taken:
            taken.add(name.lower())
            props[name] = tree.unparse(True)

    from gridtools.formats.condor.usagetable import resource_names
    for tag in resource_names(machine.eval("MachineResources")):
        if machine.lookup(tag) is not None:
            taken.discard(tag.lower())          # (a resource's amount is its own)
            take(tag)
        if machine.lookup("Available" + tag) is not None:
            taken.discard(("Available" + tag).lower())
            take("Available" + tag)
            for name in _internal_refs(machine, machine.lookup("Available" + tag)):
                take(name)
    for name in wanted.replace(",", " ").split() if isinstance(wanted, str) else ():
        if machine.lookup(name) is not None:
            take(name)
            for ref in _internal_refs(machine, machine.lookup(name)):
                take(ref)
    return props


def provisioned(machine):
    """What a job's ad takes from its slot's ad ``machine`` as a run starts, as HTCondor's
    starter writes it there: ProvisionedResources (the slot's MachineResources),
    ``<Name>Provisioned`` (the slot's amount) of each resource that names (CPUs, Disk
    and Memory when it names none), and the devices the slot was assigned
    (``Assigned<Name>``). Name -> value."""
    from gridtools.formats.condor.usagetable import resource_names
    found = {}
    listed = machine.eval("MachineResources")
    if isinstance(listed, str):
        found["ProvisionedResources"] = listed
    for tag in resource_names(listed):
        value = machine.eval(tag)
        if type(value) in (bool, int, float, str):
            found[tag + "Provisioned"] = value
        assigned = machine.eval("Assigned" + tag)
        if isinstance(assigned, str):
            found["Assigned" + tag] = assigned
    return found


def _internal_refs(ad, tree):
    """The names of ``ad``'s attributes that ``tree`` refers to, followed through their
    own values (each as the expression spells it, in the order found)."""
    from gridtools.classad.nodes import Attr, Scoped
    found, seen = [], set()

    def walk(expr, depth):
        cls = expr.__class__
        if cls is Attr or (cls is Scoped and expr.scope.lower() == "my"):
            inner = ad.lookup(expr.name)
            if inner is not None and expr.key not in seen and depth:
                seen.add(expr.key)
                found.append(expr.name)
                walk(inner, depth - 1)
            return
        if cls is Scoped:
            return
        for child in expr.children():
            walk(child, depth)

    walk(tree, _DEPTH)
    return found


#: the amounts of the static slots a job holds on one host that it has together
_HELD_TOGETHER = ("Cpus", "Memory", "Disk", "GPUs")


def _held_together(machine, others):
    """The slot a job holding several static slots of one host (``machine``: the first
    one's ad, ``others``: the others') runs in, as the ad of one slot: their Cpus,
    Memory, Disk and GPUs added up (a job given N Grid Engine slots is provisioned N
    CPUs, as a dynamic slot cut to its request is). ``machine`` when it holds one."""
    others = [ad for ad in others if ad is not None]
    if not others:
        return machine
    whole = machine.copy()
    for name in _HELD_TOGETHER:
        amounts = [ad.eval(name) for ad in [machine] + others]
        if all(type(a) in (int, float) for a in amounts):
            whole[name] = sum(amounts)
    return whole


def add_files(plan, job, number, condor, slot, first=True, node=None):
    """Give the plan of task ``number`` of HTCondor job ``job`` (which holds ``slot``,
    its first slot, or None) its ad files (``plan["ad_files"]``: [name, the variable
    naming it, text] each, for the shepherd to write) and ``_CONDOR_SLOT``; for the
    ``first`` of its slots (not a parallel universe job's other nodes), note the
    properties its execute event will name (``execute_props``, kept in the task's
    bookkeeping till the event is written: ``condorjob.started``) and what its ad
    takes from the slot (``provisioned``, kept till its next run); for another
    ``node`` of a parallel universe job, the properties its node execute event (014)
    will name (node 0's are the first slot's)."""
    from gridtools import jobads
    from gridtools.daemon import condorjob
    ad = condorjob.proc_ad(job, number)
    files = {JOB_AD: str(ad)}
    ctx = condor.ctx if condor is not None else None
    machine = ctx.slot_ad(slot) if ctx is not None and slot else None
    if machine is not None and first and node is None and job.spec.get("universe") != jobads.PARALLEL_UNIVERSE:
        machine = _held_together(machine, [ctx.slot_ad(name) for name in condor.machines.tasks.get(
            (job.id, number), ()) if name != slot and name.endswith("@" + slot.rpartition("@")[2])])
    if machine is not None:
        files[MACHINE_AD] = long_form(machine)
    if machine is not None and (first or node is not None):
        scratch = plan["env"].get("_CONDOR_SCRATCH_DIR")
        try:
            props = execute_props(machine, scratch if isinstance(scratch, str) else None,
                                  ad.eval("UserLogExecuteEventAttrs"))
        except (RecursionError, ValueError, TypeError):
            props = {}              # (a slot attribute nested past reading: the event names the slot alone)
        mine = condorjob.task_info(job, number)
        if first:
            mine[condorjob.EXECUTE_PROPS], mine[condorjob.PROVISIONED] = props, provisioned(machine)
        else:
            mine.setdefault(condorjob.NODE_PROPS, {})[str(node)] = props
    if slot:
        plan["env"]["_CONDOR_SLOT"] = slot_variable(slot)
    limit = group = None
    if condor is not None:
        granted = plan.get("granted") or ()
        host = slot.rpartition("@")[2] if slot else granted[0][1] if granted else None
        conf = condor.conf.host(host) if host else condor.conf.main
        conf = conf if conf is not None else {}
        limit, group = memory_limit(conf, machine, ad), cgroup_plan(conf, machine, ad)
    for key, value in (("memory_limit", limit), ("cgroup", group)):
        if value is not None:
            plan[key] = value
        else:
            plan.pop(key, None)
    plan["ad_files"] = [[name, VARIABLES[name], text] for name, text in files.items()]


def slot_devices(state, condor, ready):
    """Give the HTCondor jobs of ``ready`` that hold static slots with GPUs those slots'
    devices (``daemon.devices.follow_slots``) and tell their plans."""
    from gridtools.daemon import condorjob, devices, view
    if condor.ctx is None:
        return
    starts, plans = [], []
    for job, number, plan, _tdir in ready:
        mine = condor.machines.slot_devices(condor.ctx, (job.id, number)) if condorjob.is_condor(job) else {}
        if mine and devices.of_task(state, job, job.task(number), plan["granted"][0][1]):
            starts.append((job, number, plan["granted"], mine))
            plans.append(plan)
    if not starts:
        return
    table = view.config_parts(state)["complexes"]
    for plan, chosen in zip(plans, devices.follow_slots(state, starts, table)):
        given = devices.environment(chosen, plan["granted"][0][1])
        for env in (plan["env"], plan["proc_env"]):
            for name in devices.VARIABLES:
                env.pop(name, None)
            env.update(given)


def finish_plans(state, ready, now, slots=None):
    """The last touches of the plans of a pass's starts (``ready``: (job, number, plan,
    task folder) each): the slots of its HTCondor jobs are claimed now, before their
    shepherds start, so that each gets its slot's name and its ad files (``add_files``),
    and its plan is written again when an execution daemon reads it. ``slots``: the
    slots the pass chose for some starts (``Decisions.slots``)."""
    from gridtools.daemon import condorjob, execd
    condor = state.condor
    if condor is None or not any(condorjob.is_condor(job) for job, *_rest in ready):
        return
    try:
        condor.claim_started(state, now, slots)
    except Exception as exc:  # noqa: BLE001 - the next pass claims them then
        state.log(f"E|cannot claim the slots of the jobs starting now: {exc!r}")
    try:
        slot_devices(state, condor, ready)
    except Exception as exc:  # noqa: BLE001 - the jobs keep the devices first picked
        state.log(f"E|cannot give the jobs starting now their slots' devices: {exc!r}")
    for job, number, plan, tdir in ready:
        if not condorjob.is_condor(job):
            continue
        try:
            add_files(plan, job, number, condor, condor.machines.slot_of((job.id, number)))
            if execd.registered(plan["granted"][0][1]):
                from gridtools.exec import launch
                launch.write_plan(tdir, plan)    # written again, with them
        except Exception as exc:  # noqa: BLE001 - the job runs without them
            state.log(f"E|job {job.id}.{number}: cannot make its ad files: {exc!r}")

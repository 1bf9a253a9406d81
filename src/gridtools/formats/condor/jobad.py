"""Job ads from a submit description: macro expansion per job and the
attributes every job carries.

``build_jobs`` walks the statements; at each queue statement it expands
the queue arguments, reads the items, and for every item and every count
step makes one ad with these macros defined: ``Cluster``/``ClusterId``,
``Process``/``ProcId``, ``Step``, ``ItemIndex``/``Row``, in the parallel
universe ``Node`` (a placeholder each node's number replaces when the job
runs) and the queue's variables (``Item`` by default). A queue statement whose executable
differs from the previous one starts a new cluster, as condor_submit does.
A description that refers to no macro and queues by a plain count (the
common one-job description) is built without the macros and queue modules,
which are imported for the others.
"""


from gridtools import ospaths
from gridtools.classad.draft import DraftAd
from gridtools.errors import InputError, lines
from gridtools.formats.condor import PLATFORM, VERSION
from gridtools.formats.condor import jobattrs as A
from gridtools.formats.condor.submit import (
    ATTRIBUTE, COMMAND, Assignment, QueueStatement, SubmitDescription, error_at, plain_count,
)

# JobSubmitMethod values: how a job entered the queue.
SUBMIT_METHOD_CONDOR_SUBMIT = 0
SUBMIT_METHOD_PYTHON = 2
DEFAULT_VERSION = VERSION
DEFAULT_PLATFORM = PLATFORM
#: what the tools' -version prints (HTCondor's version and platform lines)
VERSION_TEXT = f"{DEFAULT_VERSION}\n{DEFAULT_PLATFORM}\n"
#: a queue count at or above this is out of range (HTCondor's INT_MAX)
INT_MAX = 2 ** 31 - 1
#: the most procs one submission makes, HTCondor's default MAX_JOBS_PER_SUBMISSION
MAX_JOBS_PER_SUBMISSION = 20000
#: the most procs in the queue, and of one owner: HTCondor's MAX_JOBS_SUBMITTED and
#: MAX_JOBS_PER_OWNER defaults (``daemon.intake`` holds to them, condor_submit checks them)
MAX_JOBS_SUBMITTED, MAX_JOBS_PER_OWNER = INT_MAX, 100000


def max_jobs(value):
    """The MAX_JOBS_PER_SUBMISSION a configuration's value (text, or None) sets."""
    try:
        return int(str(value).strip()) if value not in (None, "") else MAX_JOBS_PER_SUBMISSION
    except ValueError:
        return MAX_JOBS_PER_SUBMISSION


#: SubmitContext's default environment: a fresh empty one
EMPTY = object()
#: submit commands that may also be written as the job attribute they set, as
#: condor_submit accepts (``RequestCpus = 2`` is ``request_cpus = 2``), or by another
#: name HTCondor gives them (``preferences`` for ``rank``)
ALIASES = {
    "request_cpus": "requestcpus", "request_memory": "requestmemory",
    "request_disk": "requestdisk", "request_gpus": "requestgpus", "priority": "jobprio",
    "machine_count": "machinecount",
    "notification": "jobnotification", "max_retries": "jobmaxretries",
    "on_exit_remove": "onexitremove", "on_exit_hold": "onexithold",
    "on_exit_hold_reason": "onexitholdreason", "on_exit_hold_subcode": "onexitholdsubcode",
    "periodic_hold": "periodichold", "periodic_hold_reason": "periodicholdreason",
    "periodic_hold_subcode": "periodicholdsubcode", "periodic_release": "periodicrelease",
    "periodic_remove": "periodicremove",
    "periodic_vacate": "periodicvacate", "kill_sig": "killsig", "leave_in_queue": "leavejobinqueue",
    "batch_name": "jobbatchname", "notify_user": "notifyuser", "success_exit_code": "jobsuccessexitcode",
    "input": "stdin", "output": "stdout", "error": "stderr",
    "stream_input": "streamin", "stream_output": "streamout", "stream_error": "streamerr",
    "transfer_input": "transferin", "transfer_output": "transferout", "transfer_error": "transfererr",
    "transfer_input_files": "transferinputfiles", "transfer_output_files": "transferoutputfiles",
    "rank": "preferences",
}
# Counters and usage every new job starts with (name, value), in HTCondor's types.
ZEROS = (
    ("CommittedSlotTime", 0), ("CommittedSuspensionTime", 0), ("CommittedTime", 0),
    ("CumulativeRemoteSysCpu", 0.0), ("CumulativeRemoteUserCpu", 0.0),
    ("CumulativeSlotTime", 0), ("CumulativeSuspensionTime", 0), ("CurrentHosts", 0),
    ("ExitBySignal", False), ("ExitStatus", 0), ("LastSuspensionTime", 0),
    ("LeaveJobInQueue", False), ("NumCkpts", 0), ("NumJobCompletions", 0),
    ("NumJobStarts", 0), ("NumRestarts", 0), ("NumSystemHolds", 0),
    ("RemoteSysCpu", 0.0), ("RemoteUserCpu", 0.0), ("RemoteWallClockTime", 0.0),
    ("TotalSuspensions", 0), ("TransferInputSizeMB", 0),
)
#: ... when the description gives disk_usage (HTCondor then counts no input files' size)
ZEROS_GIVEN_DISK = tuple(pair for pair in ZEROS if pair[0] != "TransferInputSizeMB")


class SubmitContext:
    """What a submission depends on besides its text:

    - ``cwd``, ``owner``, ``now`` (the submission's time);
    - ``files``: see fsview.LocalFiles; None: no file access;
    - ``environ``: the submitter's environment (default empty; None: this process's);
    - ``variables``: NAME=value from the command line, read as if they stood at the top
      of the description (``MY.Name`` or ``+Name``: an attribute), which may set them again;
    - ``arch``, ``opsys``, ``filesystem_domain``, ``condor_version``, ``condor_platform``,
      ``submit_method``: what the ads say of the submitting host and program;
    - ``seed``: of $RANDOM_CHOICE and $RANDOM_INTEGER;
    - ``batch_name``: -batch-name;
    - ``next_cluster``: () -> the id of a further cluster (None: the last one + 1);
    - ``max_jobs``: the most procs one submission makes (MAX_JOBS_PER_SUBMISSION);
    - ``warnings``: what building found worth a WARNING line (filled by the build);
    - ``factories``: None (no cluster is materialized late), or a mapping the build
      fills with the clusters materialized late: cluster -> (the most of its procs in
      the queue at once, JobMaterializeLimit; its items, 0 for a queue of a count).
      As HTCondor's submit decides, the first queue statement makes its cluster one
      when the commands before it give max_materialize or max_idle, or ``factory``
      asks for it; the limit is max_materialize, none (0 or less) meaning all, and
      never more than the queue statement's procs nor fewer than 1;
    - ``factory``: 0 (a cluster materialized late only when its description asks), 1
      (every cluster: condor_submit -factory, or a DAG node under
      SUBMIT_FACTORY_JOBS_BY_DEFAULT) or 3 (a cluster of more than one proc:
      condor_submit under SUBMIT_FACTORY_JOBS_BY_DEFAULT);
    - ``one_queue``: anything but comments after the first queue statement is an
      error (SUBMIT_PREVENT_MULTI_QUEUE), as it is for a cluster materialized late;
    - ``setting``: name -> a setting of the submitting host's configuration, or None
      (asked only for what few descriptions need: SCHEDD_INTERVAL, the knobs
      SUBMIT_ATTRS names);
    - ``admin``: the knobs the submitting host's configuration sets (name -> text),
      of which those of ``ADMIN_KNOBS`` are kept (see ``jobattrs_rare.admin_attributes``).
    """

    def __init__(self, cwd, owner, now, files=None, environ=EMPTY, variables=None, arch="X86_64",
                 opsys="LINUX", filesystem_domain="localhost", condor_version=DEFAULT_VERSION,
                 condor_platform=DEFAULT_PLATFORM, submit_method=SUBMIT_METHOD_CONDOR_SUBMIT, seed=0,
                 batch_name=None, next_cluster=None, max_jobs=MAX_JOBS_PER_SUBMISSION, setting=None,
                 admin=None):
        self.cwd, self.owner, self.now, self.files = cwd, owner, now, files
        self.environ = {} if environ is EMPTY else environ
        self.variables = {} if variables is None else variables
        self.arch, self.opsys, self.filesystem_domain = arch, opsys, filesystem_domain
        self.condor_version, self.condor_platform = condor_version, condor_platform
        self.submit_method, self.seed = submit_method, seed
        self.batch_name, self.next_cluster = batch_name, next_cluster
        self.max_jobs = max_jobs
        self.warnings = []
        self.factories = None
        self.factory, self.one_queue = 0, False
        self.setting = setting or _no_setting
        self.admin = {name: text for name, text in admin.items() if name in ADMIN_KNOBS} if admin else {}

    def environment(self):
        """The submitter's environment: ``environ``, or this process's when that is
        None (copied when first asked for: only getenv and $ENV() need it)."""
        if self.environ is None:
            self.environ = ospaths.environment()
        return self.environ


def _no_setting(_name):
    return None


class _Jobs:
    """The running state of one build: definitions so far, ids."""

    def __init__(self, desc, cluster_id, ctx, procid):
        self.desc, self.ctx = desc, ctx
        self.cluster, self.proc = cluster_id, procid
        self.defs = {}
        self.rng = None                     # random.Random of the draws, made at the first (random)
        self.verbatim = _verbatim(desc)
        self.last_exe = None
        self.queued = None                  # after the first queue statement: whether it made a factory
        self.ads = []
        self.spellings = None               # (kind, name in lower case) -> as last written

    def spelling(self, lowered, kind=ATTRIBUTE):
        """The spelling of a custom attribute (or, of ``kind`` COMMAND, a submit command)
        as last written in the description (``lowered`` when none is), from a table made
        at the first call (each proc's ad spells them)."""
        if self.spellings is None:
            self.spellings = {(statement.kind, statement.name.lower()): statement.name
                              for statement in self.desc.statements if isinstance(statement, Assignment)}
        return self.spellings.get((kind, lowered), lowered)

    def lookup(self, live):
        def find(name):
            key = name.lower()
            if key in live:
                return live[key]
            return self.defs.get(key)
        return find

    def expand(self, live):
        """The function that expands a text with the ``live`` macros defined (``macros``);
        the text itself when nothing in the description refers to a macro."""
        if self.verbatim:
            return _itself
        from gridtools.formats.condor.macros import Expander
        return Expander(self.lookup(live), self.ctx.environment, self.random).expand

    def random(self):
        """The ``random.Random`` all the build's expansions draw from, seeded with the
        context's seed, made at the first draw."""
        if self.rng is None:
            import random
            self.rng = random.Random(self.ctx.seed)
        return self.rng


#: the longest text taken as it is when nothing refers to a macro (far below the longest
#: expansion the macros module allows, MAX_LENGTH, which a test checks)
VERBATIM_MAX = 1 << 16


def _verbatim(desc):
    """True when no text of the description refers to a macro (holds a ``$``) and none is
    longer than VERBATIM_MAX: every text expands to itself, and the macros module is not
    needed."""
    texts = []
    for statement in desc.statements:
        texts.append(statement.value if isinstance(statement, Assignment) else statement.args)
    return all("$" not in text and len(text) <= VERBATIM_MAX for text in texts)


def _itself(text):
    return text


def build_jobs(desc, cluster_id, ctx, procid=0):
    """All job ads of ``desc`` (a SubmitDescription), as ``DraftAd``s; InputError on
    errors."""
    if ctx.variables:
        desc = SubmitDescription(_settings(ctx.variables) + desc.statements, desc.source)
    jobs = _Jobs(desc, cluster_id, ctx, procid)
    factory = False
    for statement in desc.statements:
        if factory:             # (a cluster materialized late has its one queue statement only)
            raise error_at(statement.line, "Extra data was provided to STDIN after queue statement"
                           if desc.source == "(stdin)" else "Extra data found after queue statement", desc.source)
        if isinstance(statement, Assignment):
            key = statement.name.lower()
            if statement.kind == ATTRIBUTE:
                key = "my." + key
            value = statement.value
            if "$" in value and (statement.kind == COMMAND or key in jobs.defs):
                from gridtools.formats.condor.macros import expand_self
                value = expand_self(value, key, jobs.defs.get(key))   # (foo = $(foo) more)
            jobs.defs[key] = value
        elif isinstance(statement, QueueStatement):
            factory = _queue(jobs, statement) or ctx.one_queue
    _chain(jobs.ads)
    return jobs.ads


def _settings(variables):
    """The statements of NAME=value settings, in their order: ``MY.Name`` (and ``+Name``)
    an attribute, any other name a submit command or macro."""
    found = []
    for name, value in variables.items():
        if name[:1] == "+":
            found.append(Assignment(name[1:], value, ATTRIBUTE))
        elif name[:3].lower() == "my.":
            found.append(Assignment(name[3:], value, ATTRIBUTE))
        else:
            found.append(Assignment(name, value, COMMAND))
    return found


def _chain(ads):
    """Each later proc of a cluster takes from proc 0 what it does not set itself (a
    batch name, a log, ... its own macros made empty), as HTCondor chains a proc's ad
    to its cluster's, which holds proc 0's."""
    first = {}
    for ad in ads:
        base = first.setdefault(ad.eval("ClusterId"), ad)
        if base is not ad:
            ad.inherit(base)


def _queue(jobs, statement):
    base = _live(jobs, 0, 0, {})
    exe = jobs.expand(base)(jobs.defs.get("executable", ""))
    if jobs.last_exe is not None and exe != jobs.last_exe:
        more = jobs.ctx.next_cluster
        jobs.cluster, jobs.proc = (more() if more else jobs.cluster + 1), 0
    jobs.last_exe = exe
    args = jobs.expand(base)(statement.args)
    count, rows, bindings = _items(jobs, statement, args)
    factory = jobs.queued is None and _is_factory(jobs, count * len(rows))
    jobs.queued = jobs.queued or factory
    if factory:
        items = 0 if rows == [(0, None)] and statement.inline is None and plain_count(args) is not None \
            else len(rows)
        limit = _factory(jobs, base)
        jobs.ctx.factories[jobs.cluster] = (max(min(limit if limit > 0 else INT_MAX, count * len(rows)), 1),
                                            items)
    if count >= INT_MAX:
        raise error_at(statement.line, "Queue count out of range", jobs.desc.source)
    if len(jobs.ads) + count * len(rows) > jobs.ctx.max_jobs:
        raise InputError(lines("ERROR: Failed to create proc",
                               "Number of submitted jobs would exceed MAX_JOBS_PER_SUBMISSION"))
    for index, row in rows:
        for step in range(count):
            live = _live(jobs, step, index, bindings(row))
            jobs.ads.append(make_ad(jobs, live))
            jobs.proc += 1
    return factory


def _is_factory(jobs, procs):
    """True when the first queue statement, of ``procs`` procs, makes its cluster one
    materialized late (see SubmitContext)."""
    if jobs.ctx.factories is None:
        return False
    defs, mode = jobs.defs, jobs.ctx.factory
    return "max_materialize" in defs or "max_idle" in defs or "materialize_max_idle" in defs \
        or mode == 1 or (mode == 3 and procs > 1)


def _factory(jobs, live):
    """``max_materialize``: the most procs of the cluster in the queue at once (late
    materialization, ``daemon.factory``), 0 when not given (the proc ads do not carry
    it: HTCondor keeps it in the cluster's own ad)."""
    text = jobs.expand(live)(jobs.defs.get("max_materialize", "")).strip()
    if not text:
        return 0
    from gridtools.formats.condor.moreattrs import integer
    return integer("max_materialize", text)


def _items(jobs, statement, args):
    """(count, [(item index, item row)], row -> variable bindings) of a queue statement
    whose arguments expanded to ``args``."""
    count = plain_count(args) if statement.inline is None else None
    if count is not None:
        return count, [(0, None)], _no_bindings
    from gridtools.formats.condor.queue import parse_queue
    try:
        spec, _ = parse_queue(args)
    except InputError as exc:
        raise error_at(statement.line, str(exc), jobs.desc.source) from None
    if statement.inline is not None:        # (after what the queue line has after its "(")
        spec.inline = (spec.inline or []) + statement.inline
    try:
        rows = spec.rows(jobs.ctx.files)
    except InputError as exc:       # the items' file or command: where its statement is
        if str(exc).startswith("ERROR"):
            raise
        raise error_at(statement.line, str(exc), jobs.desc.source) from None
    return spec.count, rows, spec.bindings


def _no_bindings(row):
    """A queue of a count binds ``Item`` to nothing (see queue.QueueSpec.bindings)."""
    return {"item": ""}


#: what ``$(Node)`` stands for in a parallel universe job's commands: the node number,
#: put in per node when the job starts (``daemon.parnodes``), as HTCondor's shadow does
NODE_PLACEHOLDER = "#pArAlLeLnOdE#"


def _live(jobs, step, index, bindings):
    live = {k.lower(): v for k, v in bindings.items()}
    live.update({"cluster": str(jobs.cluster), "clusterid": str(jobs.cluster),
                 "process": str(jobs.proc), "procid": str(jobs.proc), "step": str(step),
                 "itemindex": str(index), "row": str(index)})
    universe = jobs.defs.get("universe")
    if universe and "node" not in live and (universe.strip().lower() == "parallel" or (
            "$" in universe and jobs.expand(live)(universe).strip().lower() == "parallel")):
        live["node"] = NODE_PLACEHOLDER
    return live


def make_ad(jobs, live):
    """One job's ad (a DraftAd) with ``live`` macros defined."""
    ctx = jobs.ctx
    expand = jobs.expand(live)
    if expand is _itself:
        cmd = _commands(jobs.defs).get          # (no call of ours for each command read)
    else:
        def cmd(key):
            """The expanded value of submit command ``key`` (its name in lower case, as
            jobattrs asks for them), or None."""
            raw = jobs.defs.get(key)
            if raw is None and key in ALIASES:
                raw = jobs.defs.get(ALIASES[key])
            return None if raw is None else expand(raw)
    ad = DraftAd()
    _identity(ad, jobs, ctx)
    pinned = ()
    if ctx.admin:
        from gridtools.formats.condor.jobattrs_rare import admin_attributes
        pinned = admin_attributes(ad, ctx)
    universe = A.set_universe(ad, cmd)
    topping = ""
    if not A.CONTAINER_COMMANDS.isdisjoint(jobs.defs) or "universe" in jobs.defs:
        name = (cmd("universe") or "").strip().lower()
        if name in ("container", "docker") or not A.CONTAINER_COMMANDS.isdisjoint(jobs.defs):
            from gridtools.formats.condor import container
            topping = container.topping(ad, cmd, name, universe)
    iwd = A.initial_dir(cmd, ctx)
    A.set_executable(ad, cmd, ctx, iwd, bool(topping))
    ad["Iwd"] = iwd
    A.set_streams(ad, cmd, ctx)
    A.set_arguments(ad, cmd)
    if "env" in jobs.defs:                  # (the old keyword: Env rather than Environment)
        from gridtools.formats.condor import argsenv
        argsenv.set_environment(ad, cmd, ctx)
    else:
        A.set_environment(ad, cmd, ctx)
    A.set_log(ad, cmd, iwd)
    custom = [(key, jobs.spelling(key, COMMAND)[len("request_"):])
              for key in jobs.defs if key.startswith("request_") and key not in A.REQUESTS and key != "request_"]
    asked = A.set_requests(ad, cmd, custom, ctx.admin)
    should = A.set_transfer(ad, cmd, universe, ctx)
    if universe == A.JAVA:
        from gridtools.formats.condor.moreattrs import java_transfer
        java_transfer(ad, cmd, should, ctx)
    machine = ()
    if topping:
        if topping == "container":
            container.transfer(ad, cmd, ctx, should)
        machine = container.requirement_terms(ad, topping)
    deferred, terms = _NOT_DEFERRED
    if not A.DEFERRAL_COMMANDS.isdisjoint(jobs.defs):
        from gridtools.formats.condor import deferral
        deferred, terms = deferral.attributes(cmd, universe, ctx.setting("SCHEDD_INTERVAL"))
    rare = not A.MORE_COMMANDS.isdisjoint(jobs.defs)
    forced = jobs.defs.get("my.requirements")
    if forced is not None and expand(forced).strip():
        from gridtools.formats.condor.jobattrs_rare import forced_requirements
        forced_requirements(ad, cmd, ctx)     # (the ad takes them with the other attributes)
    else:
        A.set_requirements(ad, cmd, universe, should, ctx, asked, terms, rare, machine)
    for name, value in deferred.items():
        ad[name] = value
    _rest(ad, cmd, ctx, universe)
    if rare:
        from gridtools.formats.condor import moreattrs
        moreattrs.apply(ad, cmd, jobs.defs, iwd, ctx.warnings, ctx.environment)
    _input_size(ad, jobs, ctx)
    for name, value in pinned:
        ad[name] = value
    _custom(ad, jobs, expand)
    return ad


def _input_size(ad, jobs, ctx):
    """TransferInputSizeMB, as HTCondor 24.0's condor_submit computes it: (the
    executable's KiB + the input files' KiB) / 1024, rounded down (a later HTCondor
    rounds up), both counted in DiskUsage by then; not when the description gives
    disk_usage, nor without access to the files."""
    if "disk_usage" in jobs.defs or ctx.files is None:
        return
    used = ad.eval("DiskUsage")
    if type(used) is int:
        ad["TransferInputSizeMB"] = used // 1024


#: the knobs of the submitting host's configuration that shape every job ad, as
#: HTCondor's condor_submit reads them (a SubmitContext's ``admin``)
ADMIN_KNOBS = ("SUBMIT_ATTRS", "SUBMIT_EXPRS", "SYSTEM_SUBMIT_ATTRS", "APPEND_REQUIREMENTS",
               "APPEND_REQ_VANILLA", "APPEND_RANK", "APPEND_RANK_VANILLA", "DEFAULT_RANK",
               "DEFAULT_RANK_VANILLA", "JOB_DEFAULT_REQUESTCPUS", "JOB_DEFAULT_REQUESTDISK",
               "JOB_DEFAULT_REQUESTMEMORY", "JOB_DEFAULT_REQUESTGPUS", "SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES",
               "SUBMIT_ALLOW_GETENV")


#: the deferral attributes and Requirements terms of a job that gives none
_NOT_DEFERRED = ({}, ())


def _commands(defs):
    """The submit commands of ``defs`` by their names in lower case, each alias (ALIASES)
    standing for the attribute it names when the command itself is not set: what ``cmd``
    reads when no text refers to a macro."""
    found = dict(defs)
    for alias, name in ALIASES.items():
        if alias not in found and name in found:
            found[alias] = found[name]
    return found


def _identity(ad, jobs, ctx):
    ad["MyType"] = "Job"
    ad["TargetType"] = "Machine"
    ad["ClusterId"] = jobs.cluster
    ad["ProcId"] = jobs.proc
    ad["Owner"] = ctx.owner
    ad["QDate"] = ctx.now
    ad["CondorVersion"] = ctx.condor_version
    ad["CondorPlatform"] = ctx.condor_platform
    ad["JobSubmitMethod"] = ctx.submit_method
    ad["MaxHosts"] = ad["MinHosts"] = 1
    ad.update(ZEROS if "disk_usage" not in jobs.defs else ZEROS_GIVEN_DISK)


def _rest(ad, cmd, ctx, universe):
    A.set_priority(ad, cmd)
    A.set_accounting(ad, cmd, ctx.owner, ctx.warnings)
    A.set_notification(ad, cmd)
    A.set_hold(ad, cmd, ctx.now)
    A.set_policy(ad, cmd)
    A.set_misc(ad, cmd)
    if ctx.batch_name:
        ad["JobBatchName"] = ctx.batch_name
    if universe in A.ON_EXECUTE_HOSTS:
        ad["JobLeaseDuration"] = A.DEFAULT_LEASE


#: the attributes the queue sets itself, whatever the description says (HTCondor's
#: condor_submit sends the job's own id for them and leaves the description's out: the
#: claimed cluster id and the proc numbers stand)
QUEUE_SET = ("my.clusterid", "my.procid")


def _custom(ad, jobs, expand):
    for key, raw in jobs.defs.items():
        if key.startswith("my.") and key not in QUEUE_SET:
            name = jobs.spelling(key[3:])
            text = expand(raw).strip()
            ad[name] = A.expr(name, text or "undefined")    # an empty value is UNDEFINED


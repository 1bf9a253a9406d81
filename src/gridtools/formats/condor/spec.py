"""HTCondor job ads as gridtools jobs: one cluster is one job description.

A cluster of procs ``C.0 .. C.(n-1)`` becomes job ``C`` with tasks ``1..n``
(proc P is task P+1; an array job when n > 1). ``cluster_spec`` writes the
job description in the form every gridtools job has (see
gridtools_spool(5)): the command and its arguments run directly (``-b y
-shell no``), the working directory (``Iwd``), the environment, the
standard streams, the slots and resource requests the scheduler places
(``RequestCpus`` > 1 becomes the parallel environment ``smp``, a parallel
universe job's ``machine_count`` the parallel environment ``mpi``,
``RequestMemory`` a ``mem_free`` request (when the user asked for memory), ``RequestGPUs`` a ``gpu``
request, a ``Request<name>`` of a countable consumable of the cell a request of it, the
local universe the submit host), a hold, and under
``condor_ad`` the ads themselves: the long form of proc 0's ad, or a list
whose later entries hold only what differs from proc 0 (``ads.job_ad``
lays them over the first). The slots and requests are proc 0's; the daemon places
a proc whose ad asks otherwise with its own (``requests_of``). ``run_facts`` reads back from one proc's ad
what its execution needs (the same for the description and the daemon's
plan).
"""

from gridtools import ospaths
from gridtools.formats.condor import args
from gridtools.formats.condor.jobattrs import DEFAULT_REQUEST_MEMORY, JAVA, LOCAL, PARALLEL, VANILLA

#: parallel environment of jobs asking for more than one CPU on one host
SMP_PE = "smp"
#: parallel environment of parallel universe jobs (machine_count slots)
PARALLEL_PE = "mpi"
#: the most slots a job description may ask for (formats.jobcheck's bound, MAX_JOB_ID)
MAX_SLOTS = 9_999_999
#: the Grid Engine request a job's RequestMemory (MB) becomes
MEMORY_REQUEST = "mem_free"
#: the Grid Engine request a job's RequestGPUs becomes
GPU_REQUEST = "gpu"
#: the largest memory request (MB) and other amount a description holds (formats.values'
#: MEMORY_MAX bytes; a 63-bit count): larger requests, infinite ones too, are these
MAX_MEMORY_MB = (2 ** 63 - 1) >> 20
MAX_AMOUNT = 2 ** 63 - 1
#: characters a Grid Engine job name may not hold (and the control characters), replaced
#: in names made from ads
_NAME_BAD = frozenset("/:@\\*?\x7f")


def _text(ad, name, default=""):
    value = ad.eval(name)
    return value if isinstance(value, str) else default


def _slots(value):
    """The slots a number of CPUs or nodes asks for: at least 1 (a machine_count or
    request_cpus of 0 or below runs on one), at most MAX_SLOTS (more than any cell has:
    the job waits)."""
    if not value >= 1:                          # (below 1, or NaN)
        return 1
    return int(min(value, MAX_SLOTS))


def _number(ad, name, default=0, later=None):
    """The number ``name`` evaluates to (``default`` when it is none). ``later``: a list
    that takes ``name`` instead, and ``default`` is returned, when the value is an
    expression (an ad that is a ``DraftAd``: see ``cluster_spec``)."""
    if later is not None and not ad.plain(name):
        later.append(name)
        return default
    value = ad.eval(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    return value


def universe_of(ad):
    """The number of the ad's universe (JobUniverse; vanilla when it names none)."""
    return int(_number(ad, "JobUniverse", VANILLA))


def arguments(ad, new="Arguments", old="Args"):
    """The job's arguments as a list (``Arguments``, the V2 form, before ``Args``; or
    another pair of the same forms)."""
    if new in ad and _text(ad, new):
        return args.split_v2_args(_text(ad, new))
    if old in ad and _text(ad, old):
        return args.split_old_args(_text(ad, old))
    return []


def _environment(ad):
    """NAME -> value of the job's environment: its ``Environment``, else its ``Env``
    (the old form, entries separated by its ``EnvDelim``): each evaluated once, ``Env``
    only when there is no ``Environment``."""
    if ad.eval("Environment") == "":
        return {}                           # (what most jobs carry: nothing to parse)
    from gridtools.formats.condor import argsenv
    return argsenv.environment_of(ad)


def _path(iwd, path):
    """``path`` read from the folder ``iwd``; a trailing slash stays (in
    transfer_input_files it sends a folder's contents, not the folder)."""
    if path.startswith("/"):
        return path
    found = ospaths.normpath(ospaths.join(iwd, path))
    return found + "/" if path.endswith("/") and not found.endswith("/") else found


def _file_list(text):
    """The names of a file list (TransferInput, TransferOutput ...): separated by commas
    only, blanks around each trimmed, as HTCondor splits them (a name may hold blanks)."""
    return [name.strip() for name in text.split(",") if name.strip()] if text else []


def kill_signal(ad, name="KillSig", default="SIGTERM"):
    """The signal that ends the proc (``KillSig``; ``RemoveKillSig`` when it is removed):
    a signal's name, with or without SIG, or its number; ``default`` when it is anything else. Only ever a signal: a job's ad
    never chooses a command for the shepherd to run (``signal_of`` then checks that
    the signal exists)."""
    value = ad.eval(name)
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    return text if text and (text.isdigit() or (text.isascii() and text.isalnum())) else default


def signal_of(text, default="SIGTERM"):
    """The name of the signal ``text`` names (``term``, ``SIGTERM``, ``15``), else ``default``."""
    import signal
    text = str(text or "").strip()
    if text.isdigit():
        try:
            return signal.Signals(int(text)).name
        except ValueError:
            return default
    name = text.upper()
    name = name if name.startswith("SIG") else "SIG" + name
    return name if name in signal.Signals.__members__ else default


def run_facts(ad):
    """What running one proc needs, read from its ad: ``command``, ``args``, ``iwd``,
    ``env``, ``stdin``, ``stdout``, ``stderr`` (paths), ``kill_sig``, ``universe``,
    ``scratch`` (it runs in a scratch folder with copies of its input files),
    ``transfer_input`` (paths, and URLs as written), ``transfer_output`` (names; None: every new file of
    the scratch folder), ``on_evict`` (ON_EXIT_OR_EVICT), ``transfer_executable``
    (TransferExecutable, true unless false), ``preserve_paths`` (PreserveRelativePaths;
    then ``input_places``: the folder each input keeps, ``specmore.input_places``) and
    ``on_success`` (when_to_transfer_output = ON_SUCCESS: the
    exit code of a success, JobSuccessExitCode or 0, without which nothing comes back;
    else None) and ``self_checkpoint`` (checkpoint_exit_code: {"code", "files": its
    TransferCheckpoint, else TransferOutput, names; None: what the job made or changed};
    else None), and ``checkpoint_signal`` (WantCheckpointSignal: {"signal": its
    CheckpointSig, else its KillSig; "success": [by a signal, the signal or exit code]
    of the exit that ends a checkpoint, from SuccessCheckpointExit*, an exit code of 0
    by default; "promised": the same from CheckpointExit*, as HTCondor's starter words
    a failure}; else None)."""
    iwd = _text(ad, "Iwd", "/") or "/"
    should = _text(ad, "ShouldTransferFiles", "IF_NEEDED").upper()
    output = _text(ad, "TransferOutput", None)     # (None: every new file; "": none)
    facts = {"command": _path(iwd, _text(ad, "Cmd")), "args": arguments(ad), "iwd": iwd,
             "env": _environment(ad),
             "kill_sig": kill_signal(ad), "remove_kill_sig": kill_signal(ad, "RemoveKillSig", None),
             "universe": universe_of(ad), "scratch": should == "YES",
             "transfer_input": [f if "://" in f else _path(iwd, f) for f in _file_list(_text(ad, "TransferInput"))],
             "transfer_output": _file_list(output) if output is not None else None,
             "on_success": None, "self_checkpoint": None, "checkpoint_signal": None,
             "on_evict": _text(ad, "WhenToTransferOutput").upper() == "ON_EXIT_OR_EVICT",
             "transfer_executable": ad.eval("TransferExecutable") is not False,
             "preserve_paths": ad.eval("PreserveRelativePaths") is True}
    if facts["preserve_paths"]:
        from gridtools.formats.condor.specmore import input_places
        facts["input_places"] = input_places(_file_list(_text(ad, "TransferInput")))
    if facts["universe"] == JAVA:
        from gridtools.formats.condor.specmore import java_command
        facts["command"], facts["args"] = java_command(ad, iwd)
    code = ad.eval("SuccessCheckpointExitCode")
    if ad.eval("WantFTOnCheckpoint") is True and type(code) is int:
        listed = _text(ad, "TransferCheckpoint", None)
        listed = listed if listed is not None else output
        facts["self_checkpoint"] = {"code": code, "files": _file_list(listed) if listed is not None else None}
    if ad.eval("WantCheckpointSignal") is True:
        from gridtools.formats.condor.specmore import exit_of
        facts["checkpoint_signal"] = {"signal": signal_of(kill_signal(ad, "CheckpointSig", facts["kill_sig"]),
                                                          signal_of(facts["kill_sig"])),
                                      "success": exit_of(ad, "SuccessCheckpoint"),
                                      "promised": exit_of(ad, "Checkpoint")}
    if _text(ad, "WhenToTransferOutput").upper() == "ON_SUCCESS":
        facts["on_success"] = int(_number(ad, "JobSuccessExitCode", 0))
    for attr, key in (("In", "stdin"), ("Out", "stdout"), ("Err", "stderr")):
        facts[key] = _path(iwd, _text(ad, attr, "/dev/null") or "/dev/null")
    return facts


def job_name(ad):
    """A Grid Engine name for the cluster: its batch name, else its command's base name."""
    name = _text(ad, "JobBatchName") or ospaths.basename(_text(ad, "Cmd")) or "condor_job"
    name = "".join("_" if ch in _NAME_BAD or ch < " " else ch for ch in name)
    return name[:512] or "condor_job"


def stored_ads(ads):
    """``condor_ad`` of a cluster: one text when the procs differ only in ProcId,
    else proc 0's text followed by what each later proc changes."""
    base = str(ads[0])
    if len(ads) == 1:
        return base
    from gridtools.formats.condor.specmore import diff
    diffs = [diff(ads[0], ad) for ad in ads[1:]]
    if not any(diffs):
        return base
    return [base] + diffs


def _asked(ad, name):
    """True when the ad's memory request is the user's own, not HTCondor's default."""
    expr = ad.lookup(name)
    return expr is not None and expr.unparse() != DEFAULT_REQUEST_MEMORY.new


#: the requests ``_requests`` reads by name (in lower case)
_OWN_REQUESTS = frozenset(("requestcpus", "requestmemory", "requestdisk", "requestgpus"))


def custom_requests(ad):
    """The names (after ``Request``) of the other resources an ad asks for: its
    ``request_<name>`` commands (and ``+Request<name>`` attributes)."""
    return [name[7:] for name in ad if name[:1] in "rR" and name[:7].lower() == "request" and len(name) > 7
            and name.lower() not in _OWN_REQUESTS]     # (only r lowers to r: most names end there)


def _requests(ad, facts, submit_host, counted=None, later=None):
    """(pe, hard resources) of one cluster's first ad; ``counted`` and ``later``: see
    cluster_spec."""
    hard, pe = {}, None
    cpus = _slots(_number(ad, "RequestCpus", 1, later))
    if facts["universe"] == PARALLEL:
        count = _slots(_number(ad, "MaxHosts", 1, later))
        pe = [PARALLEL_PE, count, count]
    elif cpus > 1:
        pe = [SMP_PE, cpus, cpus]
    memory = _number(ad, "RequestMemory", 0, later) if _asked(ad, "RequestMemory") else 0
    if memory > 0:
        hard[MEMORY_REQUEST] = f"{_whole(memory, MAX_MEMORY_MB)}M"
    gpus = _number(ad, "RequestGPUs", 0, later)
    if gpus > 0:
        hard[GPU_REQUEST] = str(_whole(gpus, MAX_AMOUNT))
    if facts["universe"] == LOCAL:
        hard["hostname"] = submit_host
    for name in custom_requests(ad) if counted else ():
        complex_name = counted.get(name.lower())
        amount = _number(ad, "Request" + name, 0, later)
        if complex_name and amount > 0:
            whole = amount >= MAX_AMOUNT or amount == int(amount)
            hard[complex_name] = str(_whole(amount, MAX_AMOUNT)) if whole else str(amount)
    return pe, hard


def _prio(value):
    """JobPrio as the description holds it: a 32-bit int (a real cut to one)."""
    if value != value:
        return 0
    return int(max(-2 ** 31, min(2 ** 31 - 1, value)))


def _whole(value, limit):
    """A positive amount as a whole number: rounded up (a slot must hold at least what the
    ad asks for, as its ``TARGET.Memory >= RequestMemory`` says), at most ``limit``
    (infinity too): a request no host can meet leaves the job waiting, as HTCondor leaves
    a job no machine matches idle, instead of a description that cannot be stored."""
    if value >= limit:
        return limit
    whole = int(value)
    return whole + 1 if whole < value else whole


def per_job_requests(pe, hard, counted=None):
    """The names of the requests (of ``hard``) that a job of several CPUs on one host holds
    once, not on each slot: its gpu request and its requests of machine resources
    (``counted``), which HTCondor counts for the job where Grid Engine counts a request
    for each slot (see ``model.resources.per_job``)."""
    if not pe or pe[0] != SMP_PE:
        return []
    names = {GPU_REQUEST, *(counted or {}).values()}
    return sorted(name for name in hard if name in names)


def requests_of(ad, submit_host, counted=None):
    """(pe, hard resources) of one proc's ad, as ``cluster_spec`` reads proc 0's (the
    daemon places a proc that asks otherwise with its own)."""
    return _requests(ad, {"universe": universe_of(ad)}, submit_host, counted)


def cluster_spec(ads, submitter, counted=None, defer=False, factory=None):
    """The job description of one cluster (``ads``: its procs in order). ``submitter``:
    owner, uid, gid, sge_o, submit_host and submit_time, as every job carries them.
    ``counted``: the cell's countable consumables (name in lower case -> complex name);
    a ``request_<name>`` of one of them is also a Grid Engine request of it.

    ``defer`` (``ads`` are ``DraftAd``s): the requests whose values are expressions
    (``RequestCpus = MY.Cores``) are left out, and ``requests_pending`` tells the daemon
    to read the requests from proc 0's ad when it takes the job in, as HTCondor's
    condor_submit evaluates none of them: so a submission needs no evaluator.

    ``factory``: (its JobMaterializeLimit, its items) of a cluster materialized late
    (``SubmitContext.factories``; ``daemon.factory``), else None."""
    first = ads[0]
    facts = run_facts(first)
    later = [] if defer else None
    pe, hard = _requests(first, facts, submitter["submit_host"], counted, later)
    spec = dict(submitter)
    spec.update({
        "id": int(_number(first, "ClusterId")), "name": job_name(first), "binary": True,
        "shell_wrap": False, "command": facts["command"], "args": facts["args"],
        "script_name": facts["command"], "cwd": facts["iwd"], "env": facts["env"],
        "stdout": [[None, facts["stdout"]]], "stderr": [[None, facts["stderr"]]],
        "stdin": [[None, facts["stdin"]]], "join": False,
        "resources": {"hard": hard, "soft": {}}, "queues": {"hard": [], "soft": []},
        "pe": pe, "user_hold": _number(first, "JobStatus") == 5,
        "condor_ad": stored_ads(ads), "job_prio": _prio(_number(first, "JobPrio", 0)),
        "batch_name": _text(first, "JobBatchName") or None, "universe": facts["universe"],
    })
    if len(ads) > 1:
        spec["tasks"] = [1, len(ads), 1]
    if later:
        spec["requests_pending"] = True
    if factory:
        spec["materialize"], spec["materialize_items"] = factory
    held_once = per_job_requests(pe, hard, counted)
    if held_once:
        spec["per_job_requests"] = held_once
    return spec

"""The attributes of one job ad, from a submit description's expanded
commands. Each ``set_*`` function reads some commands through ``cmd`` (a
command's name in lower case -> its expanded value, or None) and writes
attributes into the ad (a ``classad.draft.DraftAd``), as
HTCondor 24 names and types them. ``jobad`` calls them in order.

The expressions HTCondor adds (the default Requirements, RequestMemory and
RequestDisk) go into the ad as their texts; what the user wrote is parsed
(``expr``), and the ClassAd parser is loaded only then. What only rarer
descriptions or configurations need (other universes, GPUs, input files, the
configuration's knobs ...) is in ``jobattrs_rare``, imported where it is used.
"""

from gridtools import ospaths
from gridtools.classad.draft import Text, read_text
from gridtools.classad.values import ERROR, UNDEFINED, unparse_value
from gridtools.errors import InputError
from gridtools.formats.condor import args

HELD_AT_SUBMIT = "submitted on hold at user's request"
HOLD_CODE_SUBMITTED_ON_HOLD = 15  # HoldReasonCode of a job submitted with hold = true
DEFAULT_LEASE = 2400  # JobLeaseDuration, seconds, for jobs that run on execute hosts
#: RequestMemory and RequestDisk of a job that does not ask (HTCondor's defaults)
DEFAULT_REQUEST_MEMORY = Text("ifthenelse(MemoryUsage isnt undefined,MemoryUsage,(ImageSize + 1023) / 1024)",
                              "ifthenelse(MemoryUsage =!= undefined,MemoryUsage,(ImageSize + 1023) / 1024)")
DEFAULT_REQUEST_DISK = Text("DiskUsage")


# The universes gridtools runs, by HTCondor's JobUniverse number (plain constants: a class
# costs a submission more than setting most attributes does).
SCHEDULER = 7
VANILLA = 5
PARALLEL = 11
LOCAL = 12
JAVA = 10


#: the universes by their names in a submit description
UNIVERSES = {"scheduler": SCHEDULER, "vanilla": VANILLA, "parallel": PARALLEL,
             "local": LOCAL, "container": VANILLA, "docker": VANILLA, "java": JAVA}
#: the commands of container jobs (formats.condor.container, loaded only for a description
#: that gives one of them or names the container or docker universe)
CONTAINER_COMMANDS = frozenset(("container_image", "docker_image"))
#: the universes HTCondor no longer runs, by number
RETIRED = {1: "Standard", 2: "Pipe", 3: "Linda", 4: "PVM", 6: "PVMD"}
#: the universes whose jobs run on execute hosts
ON_EXECUTE_HOSTS = (VANILLA, PARALLEL, JAVA)


NOTIFICATION = {"never": 0, "always": 1, "complete": 2, "error": 3, "start": 4}
#: the commands moreattrs sets an attribute for each (loaded only for a description that
#: gives one of them)
MORE_COMMANDS = frozenset((
    "allowed_execute_duration", "allowed_job_duration", "append_files", "aws_access_key_id_file", "aws_region",
    "aws_secret_access_key_file", "batch_id", "buffer_block_size", "buffer_files", "buffer_size",
    "checkpoint_exit_code", "cuda_version",
    "checkpoint_destination", "compress_files", "concurrency_limits", "concurrency_limits_expr", "container_target_dir", "core_size",
    "coresize", "dag_node_name", "dagman_job_id", "dagman_log", "description", "disk_usage",
    "docker_network_type", "docker_override_entrypoint", "docker_pull_policy", "dont_encrypt_input_files",
    "dont_encrypt_output_files", "email_attributes", "encrypt_execute_directory", "encrypt_input_files",
    "encrypt_output_files", "erase_output_and_error_on_restart", "fetch_files", "file_remaps",
    "gs_access_key_id_file", "gs_secret_access_key_file", "hold_kill_sig", "image_size", "jar_files",
    "job_ad_information_attrs", "job_lease_duration", "job_machine_attrs", "job_machine_attrs_history_length",
    "job_max_vacate_time", "jobset", "keep_claim_idle", "kill_sig_timeout", "load_profile", "local_files",
    "log_xml", "manifest", "manifest_dir", "match_list_length", "materialize_max_idle", "max_idle",
    "max_job_retirement_time", "max_transfer_input_mb", "max_transfer_output_mb", "mount_under_scratch",
    "next_job_start_delay", "noop_job", "noop_job_exit_code", "noop_job_exit_signal", "output_destination",
    "output_directory", "parallel_script_shadow", "parallel_script_starter", "periodic_vacate",
    "preserve_relative_paths", "primary_unix_group", "public_input_files", "remote_initialdir",
    "remove_kill_sig", "run_as_owner", "s3_access_key_id_file", "s3_secret_access_key_file", "scitokens_file",
    "skip_if_dataflow", "stack_size", "starter_debug", "starter_log",
    "tool_daemon_cmd", "tool_daemon_input", "tool_daemon_output", "tool_daemon_error",
    "delegate_job_gsi_credentials_lifetime", "docker_send_credentials", "use_scitokens", "use_scitoken",
    "use_oauth_services", "useoauthservices", "java_vm_args", "java_vm_arguments", "java_vm_arguments2", "submit_event_notes", "submit_event_user_notes",
    "transfer_checkpoint_files", "transfer_container", "transfer_output_remaps", "transfer_plugins",
    "ulog_execute_attrs", "want_graceful_removal", "want_io_proxy", "want_job_networking"))
#: the commands of job deferral and cron schedules (formats.condor.deferral, loaded only
#: for a description that gives one of them), by their names in lower case
DEFERRAL_COMMANDS = frozenset((
    "deferral_time", "deferraltime", "deferral_window", "deferralwindow", "cron_window", "cronwindow",
    "deferral_prep_time", "deferralpreptime", "cron_prep_time", "cronpreptime",
    "cron_minute", "cron_hour", "cron_day_of_month", "cron_month", "cron_day_of_week"))
#: JobMaxRetries of a job that gives success_exit_code or retry_until but not max_retries
#: (HTCondor's DEFAULT_JOB_MAX_RETRIES)
DEFAULT_MAX_RETRIES = 2


def flag(name, value):
    """The boolean of submit command ``name`` (False when not given): an expression
    that must evaluate to a boolean, or to a number (true unless 0), as HTCondor reads
    it; InputError in its words otherwise ("hold=yes is invalid, must eval to a
    boolean.")."""
    if value is None or not value.strip():
        return False
    text = value.strip()
    found = _KEYWORDS.get(text.lower())
    if type(found) is bool:
        return found
    from gridtools.formats.condor.moreattrs import boolean
    return boolean(name, text)


def unquoted(text):
    """``text`` without one pair of double quotes around it, when it has them (a lone
    double quote counts as the pair, as in HTCondor; None: None)."""
    return text[1:-1] if text and text[0] == text[-1] == '"' else text


def fail(message):
    return InputError(f"ERROR: {message}")


def expr(name, text, names=None):
    """A parsed expression for attribute ``name``; InputError if bad. A lone literal
    (``true``, ``undefined``, ``42``, ``"text"``: what most submit files write) is its
    plain value, which a DraftAd keeps and prints as the parser's literal, read without
    loading the parser; the commonest expressions (``MY.Cores``, ``floor(x / 1024)``,
    ``(OpSys == "LINUX") && ...``) are their ``Text``, also read without it
    (``draft.read_text``, which appends the references it reads to ``names``). The
    parser reads the old ClassAd syntax, as HTCondor reads a submit description."""
    value = _plain_literal(text)
    if value is not _NOT_PLAIN:
        return value
    if "\\" not in text:
        value = read_text(text, names)  # (most expressions, without the parser)
        if value is not None:
            return value
    from gridtools.classad.parser import parse
    try:
        return parse(text, old=True)        # (its strings as the old syntax reads them)
    except Exception:
        raise fail(f"Parse error in expression: {name} = {text}") from None


#: _plain_literal's answer for a text that is no plain literal
_NOT_PLAIN = object()
#: the keywords that are literals, by their lower-case spelling
_KEYWORDS = {"true": True, "false": False, "undefined": UNDEFINED, "error": ERROR}


def _plain_literal(text):
    """The value of ``text`` when it is a keyword literal (any case), a decimal integer
    without sign or leading zero that fits 64 bits, or a string with no escape and no
    inner quote; else _NOT_PLAIN."""
    found = _KEYWORDS.get(text.lower(), _NOT_PLAIN)
    if found is not _NOT_PLAIN:
        return found
    if text.isascii() and text.isdigit() and len(text) <= 18 and (text[0] != "0" or text == "0"):
        return int(text)
    if len(text) >= 2 and text[0] == text[-1] == '"' and '"' not in text[1:-1] and "\\" not in text:
        return text[1:-1]
    return _NOT_PLAIN


def set_universe(ad, cmd):
    name = (cmd("universe") or "vanilla").strip().lower()
    universe = UNIVERSES.get(name)
    if universe is None:                # (a number, or a universe gridtools does not run)
        from gridtools.formats.condor.jobattrs_rare import universe_of
        universe = universe_of(name)
    ad["JobUniverse"] = universe
    if universe == PARALLEL:
        from gridtools.formats.condor.jobattrs_rare import set_parallel
        set_parallel(ad, cmd)
    if universe not in ON_EXECUTE_HOSTS or universe in (PARALLEL, JAVA):
        ad["KillSig"] = "SIGTERM"
    return universe


#: the program of a job given as a ``shell`` command line
SHELL = "/bin/sh"


def set_executable(ad, cmd, ctx, iwd, optional=False):
    """Cmd and the sizes of the executable: a relative name from the directory
    condor_submit runs in, or, when the executable is not transferred (a program of the
    execute host, its name kept as written), from the initial directory ``iwd``. A
    ``shell`` command line is run by SHELL instead, as HTCondor runs it (the executable
    and its transfer are then not read). ``optional``: a container job, whose image has
    a command of its own (Cmd "" when none is given)."""
    shell = cmd("shell")
    if shell is not None and shell.strip():
        ad["TransferExecutable"] = False
        ad["Cmd"] = SHELL
        size = (ctx.files.size_kib(SHELL) if ctx.files else 0) or 0
        ad["ExecutableSize"] = ad["ImageSize"] = ad["DiskUsage"] = size
        return
    exe = cmd("executable")
    if (not exe or not exe.strip()) and optional:
        ad["TransferExecutable"] = False
        ad["Cmd"] = ""
        ad["ExecutableSize"] = ad["ImageSize"] = ad["DiskUsage"] = 0
        return
    if not exe or not exe.strip():
        raise fail("No 'executable' parameter was provided")
    exe = exe.strip()
    transfer, kept = cmd("transfer_executable"), False
    if transfer is not None:                    # (a rare command, read in moreattrs)
        kept = transfer.strip()[:1] in ("f", "F")   # (as condor_submit reads it: a word starting with F)
    if kept:
        ad["TransferExecutable"] = False
        ad["Cmd"] = exe
        size = (ctx.files.size_kib(ospaths.join(iwd, exe)) if ctx.files else 0) or 0
    else:
        path = ospaths.join(ctx.cwd, exe)      # (as written: HTCondor does not tidy it)
        ad["Cmd"] = path
        size = ctx.files.size_kib(path) if ctx.files else 0
        if size is None:
            raise fail(f"Can't access executable file {path}: No such file or directory")
    ad["ExecutableSize"] = ad["ImageSize"] = ad["DiskUsage"] = size


def initial_dir(cmd, ctx):
    """The job's initial directory (Iwd): ``initialdir`` joined to the directory
    condor_submit runs in, as written, or that directory; it must exist."""
    iwd = (cmd("initialdir") or cmd("initial_dir") or cmd("iwd") or cmd("job_iwd") or "").strip()
    path = ospaths.join(ctx.cwd, iwd) if iwd else ctx.cwd
    if iwd and ctx.files and not ctx.files.is_dir(path):
        raise fail(f"No such directory: {path}")
    return path


def set_streams(ad, cmd, ctx):
    """In, Out, Err from input (stdin), output (stdout), error (stderr); StreamIn ...
    from stream_input (StreamIn) ...; a stream given with transfer_input (TransferIn)
    ... false is not streamed: TransferIn ... is false instead (the aliases: jobad.ALIASES)."""
    for key, attr, stream in (("input", "In", "StreamIn"), ("output", "Out", "StreamOut"),
                              ("error", "Err", "StreamErr")):
        value = cmd(key)
        value = value.strip() if value is not None else ""
        streamed = flag("stream_" + key, cmd("stream_" + key))
        given = cmd("transfer_" + key)
        transfer = flag("transfer_" + key, given) if given is not None and given.strip() else True
        if value and value != "/dev/null":
            ad[attr] = value
            if not transfer:
                ad["Transfer" + attr] = False
                continue
            ad[stream] = streamed
            if key == "input":
                from gridtools.formats.condor.jobattrs_rare import add_input
                add_input(ad, ctx, (value,))
        else:
            ad[attr] = "/dev/null"
            ad["Transfer" + attr] = False


def set_arguments(ad, cmd):
    shell = cmd("shell")
    if shell is not None and shell.strip():     # (a shell command line: SHELL -c line)
        ad["Arguments"] = args.join_v2(["-c", shell.strip()])
        return
    value = cmd("arguments")
    if value is None:
        value = cmd("args")
    second = cmd("arguments2")
    if second is not None and second.strip():  # (the new syntax only; it wins)
        from gridtools.formats.condor import argsenv
        ad["Arguments"] = argsenv.second_form(second.strip(), "arguments", value, cmd("allow_arguments_v1"))
        return
    if value is None or not value.strip():
        if ad.eval("JobUniverse") == JAVA:
            _no_class()
        # (blanks only, as macros that expand to nothing leave: arguments of the old syntax)
        ad["Args" if value else "Arguments"] = ""
        return
    attr, text = args.parse_arguments(value.strip())
    if not text.strip() and ad.eval("JobUniverse") == JAVA:
        _no_class()
    ad[attr] = text


def _no_class():
    from gridtools.errors import lines
    raise InputError(lines("ERROR: In Java universe, you must specify the class name to run.", "Example:", "",
                           "arguments = MyClass"))


#: SUBMIT_ALLOW_GETENV's default: getenv = true is taken
GETENV_ALLOWED = True


def set_environment(ad, cmd, ctx):
    env = {}
    getenv = cmd("getenv")
    if getenv is not None and getenv.strip():
        from gridtools.formats.condor.moreattrs import boolean_param, getenv_variables
        allowed = ctx.admin.get("SUBMIT_ALLOW_GETENV")
        allowed = boolean_param(allowed.strip()) if allowed and allowed.strip() else GETENV_ALLOWED
        if allowed is False and boolean_param(getenv.strip()) is True:
            raise fail("getenv = true command not allowed because administrator has set SUBMIT_ALLOW_GETENV = false")
        env.update(getenv_variables(getenv.strip(), ctx.environment()))
    value = cmd("environment")
    if value is None:
        value = cmd("env")
    text = value.strip() if value is not None else ""
    second = cmd("environment2")
    if second is not None and second.strip():  # (the new syntax only; it wins)
        from gridtools.formats.condor import argsenv
        text = argsenv.second_form(second.strip(), "environment", value, cmd("allow_environment_v1"))
    if not (text or env):
        ad["Environment"] = ""              # (without loading argsenv)
        return
    from gridtools.formats.condor import argsenv
    if text:
        env.update(argsenv.parse_environment(text))
    ad["Environment"] = argsenv.render_environment(env)


def set_log(ad, cmd, iwd):
    log = cmd("log")
    if log is not None and log.strip():
        ad["UserLog"] = ospaths.join(iwd, log.strip())


# -------------------------------------------------------------- resources

_SCALE = {"k": 1, "m": 2, "g": 3, "t": 4}
_UNITS = "kKmMgGtT"
_C_SPACE = " \t\n\v\f\r"                    # (C's isspace)


def quantity(text, base_power):
    """An amount in units of 1024**base_power bytes, read as condor_submit reads one: an
    integer (a sign allowed), maybe a dot and digits (the first three count), blanks,
    maybe a K, M, G or T (any case, a ``B`` after it allowed), blanks; the bytes
    rounded up to the unit as C does it (towards zero: ``-2`` MB is -1). None when
    ``text`` is no such amount (an expression)."""
    body, base = text.lstrip(_C_SPACE), 1024 ** base_power
    end = len(body)
    i = 1 if body[:1] in ("+", "-") else 0
    j = i
    while j < end and "0" <= body[j] <= "9":
        j += 1
    whole, p = (int(body[:j]), j) if j > i else (0, 0)
    fraction = 0.0
    if body[p:p + 1] == ".":
        p += 1
        for place in (10.0, 100.0, 1000.0):
            if p < end and "0" <= body[p] <= "9":
                fraction += int(body[p]) / place
                p += 1
        while p < end and "0" <= body[p] <= "9":
            p += 1
    if p == 0:
        return None
    rest = body[p:].strip(_C_SPACE)
    unit = base
    if rest:
        if rest[0] not in _UNITS or rest[1:] not in ("", "b", "B"):
            return None
        unit = 1024 ** _SCALE[rest[0].lower()]
    scaled = int((whole + fraction) * unit + base - 1)
    return scaled // base if scaled >= 0 else -(-scaled // base)


#: the requests that ``undefined`` leaves out of the ad (and their terms out of Requirements)
_UNDEFINED_DROPS = frozenset(("request_cpus", "request_disk", "request_memory", "request_gpus"))


def _request(ad, cmd, key, attr, base_power, default):
    text = cmd(key)
    if text is None or not text.strip():
        if default is not None and attr not in ad:      # (one SUBMIT_ATTRS set stays)
            ad[attr] = default
        return
    if key in _UNDEFINED_DROPS and text.strip().lower() == "undefined":
        return                                  # (as condor_submit: no such attribute)
    amount = quantity(text, base_power) if base_power is not None else None
    ad[attr] = amount if amount is not None else expr(attr, text.strip())


#: the requests set_requests reads itself (any other ``request_<name>`` asks for a custom
#: machine resource)
REQUESTS = frozenset(("request_cpus", "request_disk", "request_memory", "request_gpus"))


def set_requests(ad, cmd, custom=(), admin=None):
    """RequestCpus, RequestMemory (MB), RequestDisk (KB), RequestGPUs, and the custom
    resources ``custom`` names: (command, its name as written after ``request_``), each
    ``Request<name>``, an expression (a name of fewer than two characters, or starting
    with ``_``, is no resource: HTCondor sets nothing for it). A request the description
    does not give, nor SUBMIT_ATTRS set, is the configuration's JOB_DEFAULT_REQUEST<name>
    when ``admin`` (a SubmitContext's) has it, read as the command would be. Returns the
    names of the custom ones set, for the requirements (``jobattrs_rare.request_term``)."""
    if admin:
        from gridtools.formats.condor.jobattrs_rare import with_defaults
        cmd = with_defaults(ad, cmd, admin)
    _request(ad, cmd, "request_cpus", "RequestCpus", None, 1)
    _request(ad, cmd, "request_disk", "RequestDisk", 1, DEFAULT_REQUEST_DISK)
    _request(ad, cmd, "request_memory", "RequestMemory", 2, DEFAULT_REQUEST_MEMORY)
    _request(ad, cmd, "request_gpus", "RequestGPUs", None, None)
    if "RequestGPUs" in ad:
        from gridtools.formats.condor.jobattrs_rare import gpu_properties
        gpu_properties(ad, cmd)
    asked = []
    for key, name in custom:
        text = cmd(key)
        if text is not None and text.strip() and len(name) >= 2 and name[0] != "_":
            ad["Request" + name] = expr("Request" + name, text.strip())
            asked.append(name)
    return asked


def set_transfer(ad, cmd, universe, ctx):
    asked = (cmd("should_transfer_files") or "").strip()
    given = None if asked else (cmd("when_to_transfer_output") or "").strip()
    default = ""
    if not asked and ctx.admin:
        from gridtools.formats.condor.jobattrs_rare import default_should
        default = default_should(ctx.admin)
    if asked or given or default:
        from gridtools.formats.condor.moreattrs import transfer_modes
        should, when = transfer_modes(cmd, asked, given, default)
    else:
        should, when = "IF_NEEDED", "ON_EXIT"
    ad["ShouldTransferFiles"] = should
    if should != "NO":
        ad["WhenToTransferOutput"] = when
    if should != "YES":
        ad["FileSystemDomain"] = ctx.filesystem_domain
    for key, attr in (("transfer_input_files", "TransferInput"),
                      ("transfer_output_files", "TransferOutput")):
        value = cmd(key)
        value = value.strip() if value is not None else ""
        # (a list in double quotes loses them, as HTCondor 24 reads it; an output list
        # given with no name in it asks for no file back: TransferOutput is "")
        names = [name.strip() for name in unquoted(value).split(",") if name.strip()]
        if value and not names and attr == "TransferOutput":
            ad[attr] = ""
        if names and should == "NO":
            raise fail(f'you specified files you want Condor to transfer via "{key}", but you disabled '
                       "should_transfer_files.")
        if names:
            ad[attr] = ",".join(names)
            if attr == "TransferInput":
                from gridtools.formats.condor.jobattrs_rare import add_input
                add_input(ad, ctx, names)
    return should


def set_requirements(ad, cmd, universe, should, ctx, custom=(), more=(), rare=False, machine=()):
    """Requirements: the user's, and the terms HTCondor adds for what the user's do not
    refer to already (``reqrefs``), then ``more`` (a deferred job's). Without the
    user's, the texts of the terms joined; with it, what the parser makes of them all.
    ``rare``: the description gives some of the rarer commands (moreattrs), which may
    add terms of their own (``moreattrs.requirement_extras``); ``machine``: a container
    job's terms, which stand for the operating system's (``container``)."""
    user = cmd("requirements")
    user = user.strip() if user is not None else ""
    if ctx.admin:                               # APPEND_REQUIREMENTS, as if the user wrote it too
        from gridtools.formats.condor.jobattrs_rare import knob
        append = knob(ctx.admin, "APPEND_REQUIREMENTS", universe == VANILLA)
        if append:
            user = f"{user}) && ({append}" if user else append
    refs = set()
    if user:
        from gridtools.formats.condor.moreattrs import requirement_references
        refs = requirement_references(user)
    terms = []                                  # (canonical text, long form text)
    if universe == JAVA:
        machine = ("TARGET.HasJava",)           # (in place of the platform's terms)
    if "arch" not in refs and universe != JAVA:
        terms.append((f"(TARGET.Arch == {unparse_value(ctx.arch)})",
                      f"(TARGET.Arch == {unparse_value(ctx.arch, True)})"))
    if machine:
        terms.extend(_same(term) for term in machine)
    elif refs.isdisjoint(OPSYS_NAMES):
        terms.append((f"(TARGET.OpSys == {unparse_value(ctx.opsys)})",
                      f"(TARGET.OpSys == {unparse_value(ctx.opsys, True)})"))
    if "RequestDisk" not in ad:                 # (request_disk = undefined)
        if "disk" not in refs:
            terms.append(_same("(TARGET.Disk >= DiskUsage)"))
    elif "disk" in refs or not _at_most(ad, "RequestDisk", 0):
        terms.append(_same("(TARGET.Disk >= RequestDisk)"))
    if not _at_most(ad, "RequestMemory"):
        terms.append(_same("(TARGET.Memory >= RequestMemory)"))
    if not _at_most(ad, "RequestCpus") and "cpus" not in refs:
        terms.append(_same("(TARGET.Cpus >= RequestCpus)"))
    resources = list(custom) + (["GPUs"] if "RequestGPUs" in ad else [])
    if resources:
        from gridtools.formats.condor.jobattrs_rare import request_term
        for name in sorted(resources, key=str.lower):
            term = request_term(ad, name) if name.lower() not in refs else None
            if term is not None:
                terms.append(_same(term))
    check, extra, after = "TARGET.HasFileTransfer", "", ()
    if rare:
        from gridtools.formats.condor.moreattrs import requirement_extras
        before, check, extra, after = requirement_extras(cmd, refs)
        terms.extend(_same(term) for term in before)
    if should != "NO" and ad.eval("WhenToTransferOutput") == "ON_SUCCESS" and VERSION_TERM not in extra:
        extra += VERSION_TERM
    transfer = None
    if universe in ON_EXECUTE_HOSTS:
        if should != "NO":
            extra += _plugin_terms(ad, cmd, refs, rare)
        transfer = _transfer_term(should, refs, check, extra)
    if transfer:
        terms.append(_same(transfer))
    terms.extend(_same(term) for term in more)
    terms.extend(_same(term) for term in after)
    if user:
        ad["Requirements"] = expr("Requirements", " && ".join([f"({user})"] + [new for new, _old in terms]))
    else:
        ad["Requirements"] = Text(" && ".join(new for new, _old in terms),
                                  " && ".join(old for _new, old in terms))
    _set_rank(ad, cmd, ctx.admin)


def _set_rank(ad, cmd, admin):
    """Rank: the description's, else the configuration's DEFAULT_RANK, with its
    APPEND_RANK added (``(rank) + (append)``), each of a vanilla universe job from
    DEFAULT_RANK_VANILLA and APPEND_RANK_VANILLA when they are set; 0.0 when none is."""
    rank = cmd("rank")
    rank = rank.strip() if rank and rank.strip() else None
    if admin:
        from gridtools.formats.condor.jobattrs_rare import knob
        vanilla = ad.eval("JobUniverse") == VANILLA
        default = knob(admin, "DEFAULT_RANK", vanilla)
        append = knob(admin, "APPEND_RANK", vanilla)
        rank = rank or default
        if append:
            rank = f"({rank}) + ({append})" if rank else append
    ad["Rank"] = expr("Rank", rank) if rank else 0.0


#: the machine attributes whose reference counts as checking the operating system
OPSYS_NAMES = frozenset(("opsys", "opsysandver", "opsyslongname", "opsysshortname", "opsysname", "opsyslegacy"))


def _same(text):
    return text, text


def _plugin_terms(ad, cmd, refs, rare):
    """The URL schemes the job's files need (``WantTransferPluginMethods``) and the terms
    that ask the machine for them, which end the file transfer term: those of its input
    files and, with the rarer commands, of its output destination and remaps, but those
    its own transfer_plugins bring (``moreattrs.url_schemes``)."""
    text = ad.eval("TransferInput") if "TransferInput" in ad else None
    urls = isinstance(text, str) and "://" in text
    if not (urls or rare):
        return ""
    from gridtools.formats.condor.jobattrs_rare import plugin_terms
    return plugin_terms(ad, cmd, refs, rare, text if urls else "")


#: what HTCondor adds to the file transfer term when the transfer needs a starter of 8.9.7
#: or later (checkpoint files, relative paths kept, output on success only)
VERSION_TERM = ' && versioncmp(split(TARGET.CondorVersion)[1],"8.9.7") >= 0'


def _transfer_term(should, refs, check="TARGET.HasFileTransfer", extra=""):
    """The term that lets the job reach its files (a shared file system, file transfer
    (``check``, then ``extra``), or either), but what the user's own requirements already
    refer to (``refs``, the machine's attributes they name) (None)."""
    shared = None if "filesystemdomain" in refs else "(TARGET.FileSystemDomain == MY.FileSystemDomain)"
    checks_transfer = "hasfiletransfer" in refs or "hasjobtransferplugins" in refs
    transfer = None if checks_transfer else f"({check}{extra})"
    if should == "YES":
        return transfer
    if should == "NO":
        return shared
    if transfer is None or shared is None:
        return transfer
    return f"({shared} || {transfer})"


def _at_most(ad, attr, limit=1):
    """True when ``attr`` is missing, or a literal number (a boolean counts as 1 or 0)
    no greater than ``limit``: a request for which condor_submit adds no term (an
    expression, even ``1 + 0`` or `` -2``, gets one)."""
    if attr not in ad:
        return True
    text = ad.lookup(attr).unparse().lower()    # (a negation prints with a blank first)
    if text in ("true", "false"):
        return (text == "true") <= limit
    body = text[1:] if text[:1] == "-" else text
    digits = body.replace(".", "", 1).replace("e+", "", 1).replace("e-", "", 1)
    return digits.isascii() and digits.isdigit() and float(text) <= limit


# ---------------------------------------------------------------- policy

def set_priority(ad, cmd):
    name, prio = "priority", cmd("priority")
    if prio is None:
        name, prio = "prio", cmd("prio")    # (HTCondor's other name for it)
    if prio is not None and prio.strip():
        from gridtools.formats.condor.moreattrs import integer
        ad["JobPrio"] = integer(name, prio.strip())
    else:
        ad["JobPrio"] = 0


def set_accounting(ad, cmd, owner, warnings=None):
    group, user = cmd("accounting_group"), cmd("accounting_group_user")
    nice = cmd("nice_user") if group is None and user is None else ""
    if group is not None or user is not None or nice is not None:
        from gridtools.formats.condor.moreattrs import set_accounting as given
        given(ad, cmd, owner, group, user, nice, warnings)


def set_notification(ad, cmd):
    value = cmd("notification")
    if value is not None and value.strip():
        key = value.strip().lower()
        if key not in NOTIFICATION:
            raise fail("Notification must be 'Never', 'Always', 'Complete', 'Start', or 'Error'")
        ad["JobNotification"] = NOTIFICATION[key]
    else:
        ad["JobNotification"] = NOTIFICATION["never"]
    user = cmd("notify_user")
    if user is not None and user.strip():
        ad["NotifyUser"] = user.strip()


def set_hold(ad, cmd, now):
    ad["JobStatus"] = 1
    if flag("hold", cmd("hold")):
        ad["JobStatus"] = 5
        ad["HoldReason"] = HELD_AT_SUBMIT
        ad["HoldReasonCode"] = HOLD_CODE_SUBMITTED_ON_HOLD
    ad["EnteredCurrentStatus"] = now


def _optional_expr(ad, cmd, key, attr):
    value = cmd(key)
    if value is not None and value.strip():
        ad[attr] = expr(attr, value.strip())
        return True
    return False


def _given(cmd, key):
    value = cmd(key)
    return value.strip() if value is not None else ""


def set_policy(ad, cmd):
    """on_exit_*, periodic_*, and the retry commands: max_retries, success_exit_code and
    retry_until (either of the last two alone retries DEFAULT_MAX_RETRIES times), which
    make OnExitRemove remove a job once it has run out of retries, has exited with the
    success code (default 0), meets retry_until (an exit code, or an expression), or
    meets the user's own on_exit_remove."""
    retries, success, until = _given(cmd, "max_retries"), _given(cmd, "success_exit_code"), \
        _given(cmd, "retry_until")
    if not (retries or success or until):
        _optional_expr(ad, cmd, "on_exit_remove", "OnExitRemove")
    else:
        from gridtools.formats.condor.moreattrs import set_retries
        set_retries(ad, cmd, retries, success, until)
    _optional_expr(ad, cmd, "on_exit_hold", "OnExitHold")
    for key, attr in (("on_exit_hold_reason", "OnExitHoldReason"),
                      ("on_exit_hold_subcode", "OnExitHoldSubCode"),
                      ("periodic_hold", "PeriodicHold"),
                      ("periodic_hold_reason", "PeriodicHoldReason"),
                      ("periodic_hold_subcode", "PeriodicHoldSubCode"),
                      ("periodic_release", "PeriodicRelease"),
                      ("periodic_remove", "PeriodicRemove"),
                      ("periodic_vacate", "PeriodicVacate")):
        _optional_expr(ad, cmd, key, attr)


def set_misc(ad, cmd):
    leave = cmd("leave_in_queue")
    if leave is not None and leave.strip():
        ad["LeaveJobInQueue"] = expr("LeaveJobInQueue", leave.strip())
    kill = cmd("kill_sig")
    if kill is not None and kill.strip():
        from gridtools.formats.condor.moreattrs import signal_name
        ad["KillSig"] = signal_name(kill)
    batch = cmd("batch_name")
    if batch is not None and batch.strip():
        ad["JobBatchName"] = unquoted(batch.strip())

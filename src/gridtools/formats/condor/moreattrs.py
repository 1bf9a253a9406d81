"""What fewer submit descriptions need, loaded only for one that needs it (a plain
description is built without it, see jobattrs):

- the commands that each set one job attribute, as HTCondor 24 sets them: ``apply``
  writes those a description gives (``COMMANDS``, their names in lower case;
  jobattrs reads the others). Many only record what HTCondor records
  (containers, file encryption, cloud credentials ...): gridtools' own runs do not
  act on them, and add no requirement on machine attributes its hosts do not
  publish (as HTCondor adds for file encryption or transfer plugins);
- the retry commands (``set_retries``), a ``transfer_executable`` read
  (``is_false``), the strings of expressions in the old ClassAd syntax
  (``old_strings``), and the evaluation of integers and booleans (``integer``,
  ``boolean``);
- what jobattrs reads only for a description that gives it: the file transfer
  modes, the accounting group and nice_user, the user's own requirements, a
  priority, ``getenv``, a signal's name (kill_sig).

How each kind of value is written:

- ``EXPR``: the expression as written;
- ``INTEGER``, ``BOOLEAN``: an expression that must evaluate, on its own, to an
  integer (a real is cut to one) or a boolean (a number is true unless 0), stored
  as that value; anything else is refused ("core_size=abc is invalid, must eval
  to an integer.");
- ``TEXT``: the text as written, quotes and all; ``UNQUOTED``: without one pair
  of surrounding double quotes;
- ``NAMES``: a list of names split at commas and blanks, joined with commas;
  ``LIMITS`` the same in lower case and sorted (concurrency limits), each
  ``name[.sub][:amount]`` with names as HTCondor's attribute names, else refused
  ("Invalid concurrency limit '5'");
- ``SIGNAL``: a signal by name (``SIGKILL``), from a name or a number (its leading
  digits, as C's ``atoi`` reads it);
- ``LEADING``: the integer its text starts with (0 when none), as C's ``atoi``
  reads it;
- ``SIZE``: an amount in KiB with an optional K/M/G/T suffix (rounded up), which
  must be positive; ``DISK`` the same, refused in disk_usage's own words;
- ``PATH``: a file name, relative ones taken from the job's initial directory.
"""

from gridtools import ospaths
from gridtools.classad.draft import Text
from gridtools.errors import InputError, lines
from gridtools.formats.condor import url_scheme
from gridtools.formats.condor.jobattrs import DEFAULT_MAX_RETRIES, expr, fail, flag, quantity, unquoted

EXPR, INTEGER, BOOLEAN, TEXT, UNQUOTED, NAMES, LIMITS, SIGNAL, LEADING, SIZE, PATH, DISK, FILES, CUDA, LOG, STRTOL, \
    SERVICES = range(17)

#: command -> (attribute, kind)
COMMANDS = {
    "allowed_execute_duration": ("AllowedExecuteDuration", EXPR),
    "allowed_job_duration": ("AllowedJobDuration", EXPR),
    "append_files": ("AppendFiles", TEXT),
    "buffer_block_size": ("BufferBlockSize", EXPR),
    "buffer_size": ("BufferSize", EXPR),
    "checkpoint_exit_code": ("SuccessCheckpointExitCode", INTEGER),
    "concurrency_limits": ("ConcurrencyLimits", LIMITS),
    "cuda_version": ("CUDAVersion", CUDA),
    "concurrency_limits_expr": ("ConcurrencyLimits", EXPR),
    "core_size": ("CoreSize", INTEGER),
    "coresize": ("CoreSize", INTEGER),
    "dagman_log": ("DAGManNodesLog", PATH),
    "disk_usage": ("DiskUsage", DISK),
    "description": ("JobDescription", TEXT),
    "email_attributes": ("EmailAttributes", NAMES),
    "hold_kill_sig": ("HoldKillSig", SIGNAL),
    "image_size": ("ImageSize", SIZE),
    "job_ad_information_attrs": ("JobAdInformationAttrs", TEXT),
    "job_lease_duration": ("JobLeaseDuration", EXPR),
    "job_machine_attrs": ("JobMachineAttrs", TEXT),
    "job_machine_attrs_history_length": ("JobMachineAttrsHistoryLength", INTEGER),
    "job_max_vacate_time": ("JobMaxVacateTime", EXPR),
    "keep_claim_idle": ("KeepClaimIdle", EXPR),
    "kill_sig_timeout": ("KillSigTimeout", LEADING),
    "load_profile": ("LoadProfile", BOOLEAN),
    "log_xml": ("UserLogUseXML", BOOLEAN),
    "match_list_length": ("LastMatchListLength", INTEGER),
    "max_idle": ("JobMaterializeMaxIdle", EXPR),
    "max_job_retirement_time": ("MaxJobRetirementTime", EXPR),
    "max_transfer_input_mb": ("MaxTransferInputMB", EXPR),
    "max_transfer_output_mb": ("MaxTransferOutputMB", EXPR),
    "next_job_start_delay": ("NextJobStartDelay", EXPR),
    "periodic_vacate": ("PeriodicVacate", EXPR),
    "remove_kill_sig": ("RemoveKillSig", SIGNAL),
    "run_as_owner": ("RunAsOwner", BOOLEAN),
    "submit_event_notes": ("SubmitEventNotes", TEXT),
    "transfer_output_remaps": ("TransferOutputRemaps", UNQUOTED),
    "want_graceful_removal": ("WantGracefulRemoval", EXPR),
    # recorded as HTCondor records them; gridtools' own runs do not act on them
    "aws_access_key_id_file": ("EC2AccessKeyId", TEXT),
    "aws_region": ("AWSRegion", TEXT),
    "aws_secret_access_key_file": ("EC2SecretAccessKey", TEXT),
    "batch_id": ("JobBatchId", UNQUOTED),
    "buffer_files": ("BufferFiles", EXPR),
    "checkpoint_destination": ("CheckpointDestination", TEXT),
    "compress_files": ("CompressFiles", TEXT),
    "container_target_dir": ("ContainerTargetDir", UNQUOTED),
    "dagman_job_id": ("DAGManJobId", INTEGER),
    "dag_node_name": ("DAGNodeName", TEXT),
    "docker_network_type": ("DockerNetworkType", TEXT),
    "docker_override_entrypoint": ("DockerOverrideEntrypoint", BOOLEAN),
    "docker_pull_policy": ("DockerPullPolicy", TEXT),
    "dont_encrypt_input_files": ("DontEncryptInputFiles", TEXT),
    "dont_encrypt_output_files": ("DontEncryptOutputFiles", TEXT),
    "encrypt_execute_directory": ("EncryptExecuteDirectory", BOOLEAN),
    "encrypt_input_files": ("EncryptInputFiles", TEXT),
    "encrypt_output_files": ("EncryptOutputFiles", TEXT),
    "erase_output_and_error_on_restart": ("EraseOutputAndErrorOnRestart", BOOLEAN),
    "fetch_files": ("FetchFiles", TEXT),
    "file_remaps": ("FileRemaps", EXPR),
    "gs_access_key_id_file": ("EC2AccessKeyId", TEXT),
    "gs_secret_access_key_file": ("EC2SecretAccessKey", TEXT),
    "jar_files": ("JarFiles", TEXT),
    "jobset": ("JobSetName", UNQUOTED),
    "local_files": ("LocalFiles", TEXT),
    "manifest": ("ManifestDesired", BOOLEAN),
    "manifest_dir": ("ManifestDir", TEXT),
    "materialize_max_idle": ("JobMaterializeMaxIdle", EXPR),
    "mount_under_scratch": ("MountUnderScratch", UNQUOTED),
    "noop_job": ("IsNoopJob", EXPR),
    "noop_job_exit_code": ("NoopJobExitCode", EXPR),
    "noop_job_exit_signal": ("NoopJobExitSignal", EXPR),
    "output_destination": ("OutputDestination", TEXT),
    "output_directory": ("OutputDirectory", PATH),
    "public_input_files": ("PublicInputFiles", FILES),
    "scitokens_file": ("ScitokensFile", PATH),
    "parallel_script_shadow": ("ParallelScriptShadow", TEXT),
    "parallel_script_starter": ("ParallelScriptStarter", TEXT),
    "preserve_relative_paths": ("PreserveRelativePaths", BOOLEAN),
    "primary_unix_group": ("PrimaryUnixGroup", TEXT),
    "remote_initialdir": ("RemoteIwd", TEXT),
    "s3_access_key_id_file": ("EC2AccessKeyId", TEXT),
    "s3_secret_access_key_file": ("EC2SecretAccessKey", TEXT),
    "skip_if_dataflow": ("SkipIfDataflow", BOOLEAN),
    "stack_size": ("StackSize", EXPR),
    "starter_debug": ("JobStarterDebug", UNQUOTED),
    "starter_log": ("JobStarterLog", LOG),
    "docker_send_credentials": ("DockerSendCredentials", BOOLEAN),
    "use_oauth_services": ("OAuthServicesNeeded", SERVICES),
    "useoauthservices": ("OAuthServicesNeeded", SERVICES),
    "tool_daemon_cmd": ("ToolDaemonCmd", TEXT),
    "tool_daemon_input": ("ToolDaemonInput", TEXT),
    "tool_daemon_output": ("ToolDaemonOutput", TEXT),
    "tool_daemon_error": ("ToolDaemonError", TEXT),
    "delegate_job_gsi_credentials_lifetime": ("DelegateJobGSICredentialsLifetime", STRTOL),
    "submit_event_user_notes": ("SubmitEventUserNotes", TEXT),
    "transfer_checkpoint_files": ("TransferCheckpoint", TEXT),
    "transfer_container": ("TransferContainer", BOOLEAN),
    "transfer_plugins": ("TransferPlugins", TEXT),
    "ulog_execute_attrs": ("UserLogExecuteEventAttrs", TEXT),
    "want_io_proxy": ("WantIOProxy", BOOLEAN),
    "want_job_networking": ("WantJobNetworking", BOOLEAN),
}
#: the commands ``apply`` reads besides those of COMMANDS (they set no attribute of their own,
#: or one of two by their syntax)
READ_ALSO = frozenset(("use_scitokens", "use_scitoken", "java_vm_args", "java_vm_arguments", "java_vm_arguments2"))

#: other spellings of a command -> the command, which wins when both are given, and is
#: the name messages give
_SPOKEN = {"coresize": "core_size", "materialize_max_idle": "max_idle", "useoauthservices": "use_oauth_services"}


def apply(ad, cmd, keys, iwd, warnings=None, environment=dict):
    """Set the attributes of the commands of ``keys`` (the description's names in lower
    case) that COMMANDS holds, from their values (``cmd``); what HTCondor warns of goes
    into ``warnings`` (a list, once each); ``environment()``: the submitter's."""
    given = COMMANDS.keys() & set(keys)
    if {"concurrency_limits", "concurrency_limits_expr"} <= given and \
            (cmd("concurrency_limits") or "").strip() and (cmd("concurrency_limits_expr") or "").strip():
        raise fail("concurrency_limits and concurrency_limits_expr can't be used together")
    for key in sorted(given):
        if _SPOKEN.get(key) in given:
            continue
        if key.startswith("tool_daemon_") and not (cmd("tool_daemon_cmd") or "").strip():
            continue                            # (read only beside a tool daemon's command)
        if key == "scitokens_file" and not READ_ALSO.isdisjoint(keys):
            continue                            # (use_scitokens decides: _scitokens)
        text = cmd(key)
        if text is None or not text.strip():
            continue
        attr, kind = COMMANDS[key]
        if kind == FILES and ad.eval("ShouldTransferFiles") == "NO":
            continue                            # (as HTCondor: no transfer, no public files)
        value = _value(_SPOKEN.get(key, key), attr, kind, text.strip(), iwd)
        if key in _BOUNDS:
            _BOUNDS[key](key, text.strip(), value)
        if value is not None:
            ad[attr] = value
    if "SuccessCheckpointExitCode" in ad:
        ad["WantFTOnCheckpoint"] = True         # (what has the starter act on the code)
    if "JobStarterLog" in ad and "JobStarterDebug" not in ad:
        ad["JobStarterDebug"] = True
    if ad.eval("DockerSendCredentials") is True:
        _docker_credentials(environment())
    if {"use_scitokens", "use_scitoken"} & set(keys):
        _scitokens(ad, cmd, environment(), iwd)
    if {"java_vm_args", "java_vm_arguments", "java_vm_arguments2"} & set(keys):
        _java_vm_arguments(ad, cmd)
    _lease_at_least(ad, warnings)


def _java_vm_arguments(ad, cmd):
    """java_vm_args or java_vm_arguments (the old or the new syntax, as arguments) and
    java_vm_arguments2 (the new only): JavaVMArgs or JavaVMArguments."""
    from gridtools.formats.condor import args
    first = cmd("java_vm_arguments")
    if first is None:
        first = cmd("java_vm_args")
    second = (cmd("java_vm_arguments2") or "").strip()
    if second:                                  # (the new syntax only; anything else sets none)
        if args.is_new_syntax(second):
            ad["JavaVMArguments"] = args.join_v2(args.split_new(second))
        return
    if first is not None and first.strip():
        attr, text = args.parse_arguments(first.strip())
        ad["JavaVM" + ("Arguments" if attr == "Arguments" else "Args")] = text


def java_transfer(ad, cmd, should, ctx):
    """A java universe job whose files may be transferred: its class file (the
    executable) and jar_files count in DiskUsage and join the input files the job
    names (none named: TransferInput stays unset), and its command is ``java``, as
    HTCondor 24 makes it."""
    if should == "NO":
        return
    listed = ad.eval("TransferInput") if "TransferInput" in ad else None
    files = listed.split(",") if isinstance(listed, str) and listed else []
    added = []
    program = ad.eval("Cmd")
    if isinstance(program, str) and program != "java" and program not in files:
        added.append(program)
    jars = (cmd("jar_files") or "").strip()
    added += [name.strip() for name in jars.split(",") if name.strip()]
    if files and added:
        ad["TransferInput"] = ",".join(files + added)
    if ctx.files is not None:
        iwd = ad.eval("Iwd")
        sizes = [ctx.files.size_kib(ospaths.join(iwd, name)) for name in added]
        ad["DiskUsage"] = ad.eval("DiskUsage") + sum(size for size in sizes if size)
    ad["Cmd"] = "java"
    ad["TransferExecutable"] = False


def _docker_credentials(environ):
    """docker_send_credentials: the submitter's docker credentials must be there."""
    home = environ.get("HOME")
    if not home:
        raise fail("ERROR: DOCKER_CONFIG directory is not defined")
    path = ospaths.join(home, ".docker/config.json")
    try:
        import os
        os.stat(path)
    except OSError as exc:
        raise fail(f"ERROR: Cannot locate docker credentials file {path}: {exc.strerror}") from None


def _scitokens(ad, cmd, environ, iwd):
    """use_scitokens: true, false or auto (a token file given, or BEARER_TOKEN_FILE in the
    submitter's environment); the token file (ScitokensFile) must be named when used."""
    given = (cmd("use_scitokens") or cmd("use_scitoken") or "").strip()
    token = (cmd("scitokens_file") or "").strip()
    if given.lower() == "auto":
        use = bool(token) or bool(environ.get("BEARER_TOKEN_FILE"))
    else:
        use = boolean_param(given) if given else bool(token)
        if use is None:
            raise fail("use_scitokens error. Value should be true, false, or auto.")
    if not use:
        return
    token = token or environ.get("BEARER_TOKEN_FILE") or ""
    if not token:
        raise fail("No Scitokens filename specified. Expected either scitokens_file command or the "
                   "BEARER_TOKEN_FILE environment variable to be set.")
    ad["ScitokensFile"] = ospaths.join(iwd, token)


def _not_negative(name, text, value):
    if value < 0:
        raise fail(f"{name}={text} is invalid, must eval to a non-negative integer.")


def _history_length(name, text, value):
    if not 0 <= value <= 2 ** 31 - 1:
        raise fail(f"{name}={text} is out of bounds 0 to {2 ** 31 - 1}")


#: the integer commands whose values HTCondor bounds, with their checks
_BOUNDS = {"dagman_job_id": _not_negative, "job_machine_attrs_history_length": _history_length}


#: the shortest JobLeaseDuration HTCondor takes (a literal number below it, above 0, is raised)
SHORTEST_LEASE = 20


def _lease_at_least(ad, warnings):
    """A JobLeaseDuration written as a number (or boolean) above 0 and below 20 seconds is
    20, with HTCondor's warning."""
    if "JobLeaseDuration" not in ad:
        return
    if ad.plain("JobLeaseDuration"):
        value = ad.eval("JobLeaseDuration")
    else:                                       # (a literal real is kept as its text)
        try:
            value = float(ad.lookup("JobLeaseDuration").unparse())
        except (AttributeError, ValueError):
            return                              # (an expression is left as written)
    if type(value) in (int, float, bool) and 0 < int(value) < SHORTEST_LEASE:
        ad["JobLeaseDuration"] = SHORTEST_LEASE
        line = "JobLeaseDuration less than 20 seconds is not allowed, using 20 instead"
        if warnings is not None and line not in warnings:
            warnings.append(line)


def _value(name, attr, kind, text, iwd):
    if kind == EXPR:
        return expr(attr, text)
    if kind == INTEGER:
        return integer(name, text)
    if kind == BOOLEAN:
        return boolean(name, text)
    if kind == TEXT:
        return text
    if kind == CUDA:
        return cuda_version(text)
    if kind == SERVICES:                        # (once each, sorted as HTCondor sorts names)
        names = {}
        for word in text.replace(",", " ").split():
            names.setdefault(word.lower(), word)
        return ",".join(names[key] for key in sorted(names)) or None
    if kind == LOG:
        return ospaths.join(iwd, unquoted(text))
    if kind == STRTOL:
        import re
        if re.fullmatch(r"\s*[+-]?\d+", text) is None:
            raise fail(f"invalid integer setting {name} = {text}")
        return int(text)
    if kind == FILES:
        names = [name.strip() for name in text.split(",") if name.strip()]
        return ",".join(names) or None
    if kind == UNQUOTED:
        return unquoted(text)
    if kind in (NAMES, LIMITS):
        names = text.replace(",", " ").split()
        if kind == LIMITS:
            names = [n.lower() for n in names]
            bad = next((n for n in names if not _limit_name(n)), None)
            if bad is not None:
                raise fail(f"Invalid concurrency limit '{bad}'")
        return ",".join(sorted(names) if kind == LIMITS else names)
    if kind == SIGNAL:
        return signal_name(text)
    if kind == LEADING:
        return leading_int(text)
    if kind == SIZE:
        size = quantity(text, 1)
        if size is None or size <= 0:
            raise fail("Image Size must be positive")
        return size
    if kind == DISK:
        size = quantity(text, 1)
        if size is None or size < 1:
            raise fail(f"'{text}' is not valid for {name}. It must be >= 1")
        return size
    return ospaths.join(iwd, text)


def _attr_name(text):
    """True for an attribute name as HTCondor's IsValidAttrName takes one."""
    return bool(text) and (text[0].isascii() and (text[0].isalpha() or text[0] == "_")) and \
        all(c.isascii() and (c.isalnum() or c == "_") for c in text[1:])


def _limit_name(limit):
    """True for a concurrency limit HTCondor takes: ``name[.sub][:amount]``."""
    name = limit.partition(":")[0]
    top, dot, sub = name.partition(".")
    return _attr_name(top) and (not dot or _attr_name(sub))


def evaluated(text):
    """The value of an expression evaluated on its own."""
    value = expr("", text)
    if value.__class__ is Text:
        value = value.expr()
    return value.eval() if hasattr(value, "eval") else value


def integer(name, text):
    """The integer an expression evaluates to (a real cut to one; decimal digits, with a
    sign or leading zeros, are read as a decimal number); InputError in HTCondor's words
    otherwise."""
    digits = text[1:] if text[:1] in "+-" else text
    if digits.isascii() and digits.isdigit():
        value = int(text)
    else:
        try:
            value = evaluated(text)
        except InputError:
            value = None
    if not _finite_number(value) or not _INT64[0] <= value <= _INT64[1]:
        raise fail(f"{name}={text} is invalid, must eval to an integer.")
    return int(value)


#: the integers a ClassAd holds (64 bits): one beyond is no integer of a job's ad
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _finite_number(value):
    """True for an integer, a boolean (HTCondor reads one as 0 or 1) or a finite real."""
    return type(value) in (int, float, bool) and value == value and value not in (float("inf"), float("-inf"))


def boolean(name, text):
    """The boolean an expression evaluates to (a number is true unless 0)."""
    try:
        value = evaluated(text)
    except InputError:
        value = None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value == value:
        return value != 0
    raise fail(f"{name}={text} is invalid, must eval to a boolean.")


def leading_int(text):
    """The integer ``text`` starts with, as C's ``atoi`` reads it (0 when none)."""
    text = text.lstrip()
    sign = text[:1] if text[:1] in "+-" else ""
    digits = ""
    for ch in text[len(sign):]:
        if not ("0" <= ch <= "9"):
            break
        digits += ch
    return int(sign + digits) if digits else 0


def set_retries(ad, cmd, retries, success, until):
    """The retry commands' attributes (see jobattrs.set_policy): JobMaxRetries (given,
    else DEFAULT_MAX_RETRIES), JobSuccessExitCode, and OnExitRemove, which removes a job
    once it has run out of retries, has exited with the success code (default 0), meets
    retry_until, or meets the user's own on_exit_remove."""
    if success:
        ad["JobSuccessExitCode"] = integer("success_exit_code", success)
    ad["JobMaxRetries"] = integer("max_retries", retries) if retries else DEFAULT_MAX_RETRIES
    terms = ["NumJobCompletions > JobMaxRetries",
             "ExitCode =?= " + ("JobSuccessExitCode" if success else "0")]
    if until:
        terms.append(retry_until(until))
    user_remove = cmd("on_exit_remove")
    if user_remove is not None and user_remove.strip():
        terms.append(user_remove.strip())
    ad["OnExitRemove"] = expr("OnExitRemove", " || ".join(terms))
    if cmd("on_exit_hold") is None:
        ad["OnExitHold"] = False


def retry_until(text):
    """The OnExitRemove term of retry_until: an exit code (a number, cut to an integer),
    else the expression."""
    try:
        value = evaluated(text)
    except InputError:
        raise fail(f"retry_until={text} is invalid, it must be an integer or boolean expression.") from None
    if _finite_number(value):
        return f"ExitCode =?= {int(value)}"
    return text


def is_false(text):
    """True when ``text`` evaluates to false or 0 (transfer_container: anything else,
    even what is no boolean, keeps the default)."""
    try:
        value = evaluated(text.strip()) if text.strip() else True
    except InputError:
        return False
    return value is False or (type(value) in (int, float) and value == 0)


def old_strings(text):
    """``classad.grammar.old_to_new`` (how HTCondor reads the strings of the old syntax)."""
    from gridtools.classad.grammar import old_to_new
    return old_to_new(text)


# ---------------------------------------------------------------- what jobattrs reads rarely

#: the values of should_transfer_files and when_to_transfer_output
TRANSFER_MODES = ("YES", "NO", "IF_NEEDED")
TRANSFER_WHEN = ("ON_EXIT", "ON_EXIT_OR_EVICT", "ON_SUCCESS", "NONE")
#: the other names HTCondor reads for them
TRANSFER_MODE_NAMES = {"TRUE": "YES", "ALWAYS": "YES", "FALSE": "NO", "NEVER": "NO", "AUTO": "IF_NEEDED"}
#: when_to_transfer_output's other words, as HTCondor 24 reads them (NONE: only beside
#: should_transfer_files = NO, which transfers nothing)
TRANSFER_WHEN_NAMES = {"ALWAYS": "ON_EXIT_OR_EVICT", "TRUE": "ON_EXIT_OR_EVICT", "YES": "ON_EXIT_OR_EVICT",
                       "ONEXIT": "ON_EXIT", "FALSE": "ON_EXIT", "NO": "ON_EXIT", "NEVER": "ON_EXIT",
                       "ONSUCCESS": "ON_SUCCESS", "NULL": "NONE"}
NICE_USER_GROUP = "nice-user"  # the accounting group of nice_user jobs
NICE_CONFLICT = "nice_user conflicts with accounting_group. nice_user will be ignored"


#: the commands whose attributes ask for a machine that encrypts files one by one
ENCRYPTION_COMMANDS = ("encrypt_input_files", "encrypt_output_files", "dont_encrypt_input_files",
                       "dont_encrypt_output_files")


def cuda_version(text):
    """CUDAVersion of a cuda_version: ``x.y`` is x * 1000 + y % 100, ``x`` x * 1000 (below
    1000, else x itself), as HTCondor reads them; InputError otherwise."""
    import re
    found = re.fullmatch(r"([+-]?\d+)(?:\.([+-]?\d+))?", text.strip())     # (C's %u takes a sign)
    if found is None:
        raise fail("cuda_version must be of the form 'x' or 'x.y', where x and y are positive integers.")
    major = int(found.group(1)) % 2 ** 32                  # (unsigned: -1 is 4294967295)
    if found.group(2) is not None:
        return (major * 1000 + int(found.group(2)) % 2 ** 32 % 100) % 2 ** 32
    return major * 1000 if major < 1000 else major


def requirement_extras(cmd, refs):
    """What the rarer commands add to the Requirements HTCondor makes, but what the user's
    requirements refer to already (``refs``): (the terms that come before the file
    transfer term, the check for file transfer in that term, what follows the check,
    the terms that end the requirements)."""
    def given(key):
        return (cmd(key) or "").strip()

    def true(key):
        try:
            return bool(given(key)) and boolean(key, given(key))
        except InputError:
            return False                        # (refused where its attribute is set)
    before = []
    if "hastdp" not in refs and given("tool_daemon_cmd"):
        before.append("TARGET.HasTDP")
    if "encryptexecutedirectory" not in refs and true("encrypt_execute_directory"):
        before.append("TARGET.HasEncryptExecuteDirectory")
    check = "TARGET.HasJobTransferPlugins" if given("transfer_plugins") else "TARGET.HasFileTransfer"
    extra = ""
    if "hasperfileencryption" not in refs and any(given(key) for key in ENCRYPTION_COMMANDS):
        extra += " && TARGET.HasPerFileEncryption"
    if given("transfer_checkpoint_files") or true("preserve_relative_paths"):
        from gridtools.formats.condor.jobattrs import VERSION_TERM
        extra += VERSION_TERM
    after = []
    if given("checkpoint_exit_code") and "hasselfcheckpointtransfers" not in refs:
        after.append("TARGET.HasSelfCheckpointTransfers")
    if given("cuda_version"):
        cuda_version(given("cuda_version"))     # (refused here, before any term is made)
        after.append("CUDAVersion <= TARGET.CUDAMaxSupportedVersion")
    return before, check, extra, after


def url_schemes(inputs, cmd=None):
    """The URL schemes of the input file list ``inputs`` and (``cmd`` given) of
    output_destination and transfer_output_remaps, less those transfer_plugins brings,
    once each in HTCondor's order (case ignored)."""
    found = {}
    urls = [name.strip() for name in inputs.split(",")]
    brought = set()
    if cmd is not None:
        urls.append((cmd("output_destination") or "").strip())
        for remap in (cmd("transfer_output_remaps") or "").strip().strip('"').split(";"):
            urls.append(remap.partition("=")[2].strip())
        for plugin in (cmd("transfer_plugins") or "").split(";"):
            names, eq, _path = plugin.partition("=")
            if eq:
                brought.update(name.lower() for name in names.replace(",", " ").split())
    for url in urls:
        scheme = url_scheme(url)
        if scheme and scheme.lower() not in brought:
            found.setdefault(scheme.lower(), scheme)
    return [found[key] for key in sorted(found)]


def signing_keys(cmd):
    """s3:// and gs:// URLs are signed with the job's keys: refused, in HTCondor's two
    lines, when it names no key files (SIGN_S3_URLS being true, as by default)."""
    missing = []
    for what, spelling in (("access_key_id_file", "URLs"), ("secret_access_key_file", "URLS")):
        if not any((cmd(f"{kind}_{what}") or "").strip() for kind in ("aws", "s3", "gs")):
            missing.append(f"ERROR: [s3|gs]:// {spelling} require [s3|aws|gs]_{what} to be set.")
    if missing:
        raise InputError(lines(*missing))


def transfer_modes(cmd, asked, given, default=""):
    """(ShouldTransferFiles, WhenToTransferOutput) of a description that gives
    should_transfer_files (``asked``, stripped) or when_to_transfer_output (``given``,
    stripped; None: not read yet, as it is read once should_transfer_files is found
    good), or of one that gives neither under the configuration's default (``default``:
    SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES, which counts as no choice of the user's);
    InputError in HTCondor's words for a value or pair it refuses."""
    should = asked.upper() or default or "IF_NEEDED"
    should = TRANSFER_MODE_NAMES.get(should, should)
    if should not in TRANSFER_MODES:
        raise fail(f"invalid value ({asked}) for ShouldTransferFiles. Please either specify YES, NO, "
                   "or IF_NEEDED and try again.")
    if given is None:
        given = (cmd("when_to_transfer_output") or "").strip()
    when = given.upper() or "ON_EXIT"
    when = TRANSFER_WHEN_NAMES.get(when, when)
    if when not in TRANSFER_WHEN:
        raise fail(f"invalid value ({given}) for WhenToTransferOutput. Please either specify ON_EXIT, "
                   "or ON_EXIT_OR_EVICT and try again.")
    if (given and should == "NO" and when != "NONE") or (when == "NONE" and should != "NO"):
        raise fail(f"WhenToTransferOutput specified as {when} yet ShouldTransferFiles defined as {should}. "
                   "Please remove this contradiction from your submit file and try again.")
    if when == "ON_EXIT_OR_EVICT":
        if asked:
            if should == "IF_NEEDED":
                raise fail('"when_to_transfer_output = ON_EXIT_OR_EVICT" and "should_transfer_files = '
                           'IF_NEEDED" are incompatible. If you really want "IF_NEEDED", set '
                           '"when_to_transfer_output = ON_EXIT". If you really want "ON_EXIT_OR_EVICT", '
                           'please set "should_transfer_files = YES".')
        should = "YES"                          # (what output on eviction needs)
    return should, when


def set_accounting(ad, cmd, owner, group, user, nice, warnings=None):
    """AcctGroup, AcctGroupUser, AccountingGroup and a nice user's MaxJobRetirementTime
    of a description that gives accounting_group (``group``), accounting_group_user
    (``user``) or nice_user (``nice``: its value, read before when neither of the others
    is given, else "": read here once they are found good). A nice user with an
    accounting group of another name is warned that the group wins (into ``warnings``,
    once), as HTCondor's condor_submit does."""
    read = group is not None or user is not None
    group = (group or "").strip()
    user = (user or "").strip()
    for key, name in (("accounting_group", group), ("accounting_group_user", user)):
        if name and (" " in name or not name.isprintable()):      # (blanks and control characters)
            raise fail(f"Invalid {key}: {name}")
    if read:
        nice = cmd("nice_user")
    if flag("nice_user", nice):
        ad["MaxJobRetirementTime"] = 0
        if group and group != NICE_USER_GROUP and warnings is not None and NICE_CONFLICT not in warnings:
            warnings.append(NICE_CONFLICT)
        group = group or NICE_USER_GROUP
    if group:
        ad["AcctGroup"] = group
        ad["AcctGroupUser"] = user or owner
        ad["AccountingGroup"] = f"{group}.{user or owner}"
    elif user:
        ad["AcctGroupUser"] = user
        ad["AccountingGroup"] = user


def requirement_references(user):
    """The machine attributes the user's own requirements (``user``, stripped, not empty)
    refer to, in lower case (jobattrs.set_requirements adds a term for none of them);
    InputError for requirements that do not parse or refer to themselves."""
    names = []
    own = expr("Requirements", f"({user})", names)      # its own error first
    if own.__class__ is Text:
        from gridtools.formats.condor.reqrefs import from_names as references
        refs, job_refs = references(names)
    else:
        from gridtools.formats.condor.reqrefs import from_tree as references
        refs, job_refs = references(own)
    if "requirements" in refs or "requirements" in job_refs:
        raise InputError(lines(f"ERROR: Requirements = ({user})",
                               "Is Circular. Did you intend to use $(Requirements) ?"))
    return refs


def boolean_param(text):
    """The boolean a setting's ``text`` is, as HTCondor reads one that may be a boolean or
    something else (getenv): ``true``, ``1``, ``false`` or ``0`` (any case) and blanks,
    else an expression that evaluates to a boolean or a number (true unless 0); None
    when it is none of these."""
    lowered = text.strip().lower()
    for word, value in (("true", True), ("1", True), ("false", False), ("0", False)):
        if lowered.startswith(word) and not lowered[len(word):].strip():
            return value
    try:
        found = evaluated(text.strip())
    except InputError:
        return None
    if type(found) is bool:
        return found
    if type(found) in (int, float) and found == found:
        return found != 0
    return None


def getenv_variables(spec, environ):
    """The variables of the submitter's environment ``getenv`` takes: all, none, or those
    whose names match its patterns; never one whose value has several lines (as an
    exported bash function's), which HTCondor's condor_submit leaves out too."""
    given = boolean_param(spec)
    if given is False:
        return {}
    if given is True:
        return {name: value for name, value in environ.items() if "\n" not in value}
    import fnmatch
    patterns = spec.replace(",", " ").split()
    return {name: value for name, value in environ.items()
            if "\n" not in value and any(fnmatch.fnmatchcase(name, p) for p in patterns)}


def signal_name(text):
    """A signal's name (``SIGKILL``) from a number (read as C's atoi reads it: the digits
    it starts with, ``9x`` is 9) or a name."""
    import signal
    text = text.strip()
    if text[:1].isdigit():
        digits = text[:len(text) - len(text.lstrip("0123456789"))]
        try:
            return signal.Signals(int(digits)).name
        except ValueError:
            raise fail(f"invalid signal {text}") from None
    name = text.upper()
    name = name if name.startswith("SIG") else "SIG" + name
    if name not in signal.Signals.__members__:
        raise fail(f"invalid signal {text}")
    return name

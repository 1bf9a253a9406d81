"""The rarer paths of a job ad's attributes (``jobattrs``, ``jobad``): a universe
given by its number or a name gridtools does not run, the parallel universe's
machine count, the attributes and request defaults of the configuration's knobs
(SUBMIT_ATTRS, JOB_DEFAULT_REQUEST*, APPEND_REQUIREMENTS, DEFAULT_RANK ...), GPU
properties, input files counted in DiskUsage, the Requirements a description sets
itself, the terms of GPU and custom resource requests and of transfer plugins. A
plain description (a vanilla job, its streams, log, requests, literal values) needs
none of them, so this module is imported only where one is needed, and a plain
submission's start-up does not read it.
"""

from gridtools import ospaths
from gridtools.classad.values import ERROR, UNDEFINED
from gridtools.errors import InputError
from gridtools.formats.condor import c_atoi
from gridtools.formats.condor.jobattrs import RETIRED, UNIVERSES, _set_rank, expr, fail, quantity

#: the universes HTCondor no longer runs, by their names in upper case
_RETIRED_NAMES = {text.upper(): text for text in RETIRED.values()}


def universe_of(name):
    """The universe number of ``name`` (a submit description's universe in lower case) that
    is none of ``UNIVERSES``' names: a number, read as C's atoi reads it; InputError in
    condor_submit's words for a universe gridtools does not run."""
    number = c_atoi(name)
    universe = None
    if number:                          # (a universe by its number)
        universe = number if number in UNIVERSES.values() else None
        if universe is None and number in RETIRED:
            raise fail(f"'{RETIRED[number]}' is not a supported universe.")
        if universe is None and not 1 <= number <= 13:
            raise fail("'Unknown' is not a supported universe.")
    if universe is None and name.upper() in _RETIRED_NAMES:     # (a retired universe by its name)
        raise fail(f"'{_RETIRED_NAMES[name.upper()]}' is not a supported universe.")
    if universe is None:
        raise fail(f"I don't know about the '{name}' universe.")
    return universe


def set_parallel(ad, cmd):
    """MaxHosts and MinHosts of a parallel universe job (machine_count, or its other names),
    and the sandbox and I/O proxy it requires."""
    count = cmd("machine_count")
    if count is None:                       # (its other names, as condor_submit reads them)
        count = cmd("node_count") if cmd("node_count") is not None else cmd("nodecount")
    if count is None or not count.strip():
        raise fail("No machine_count specified!")
    ad["MaxHosts"] = ad["MinHosts"] = c_atoi(count)
    ad["JobRequiresSandbox"] = True
    ad["WantIOProxy"] = True


def with_defaults(ad, cmd, admin):
    """``cmd`` with the JOB_DEFAULT_REQUEST<name> knobs of ``admin`` standing for the
    request commands the description leaves out (those whose attribute SUBMIT_ATTRS put
    in the ad keep it)."""
    defaults = {}
    for key, attr in (("request_cpus", "RequestCpus"), ("request_disk", "RequestDisk"),
                      ("request_memory", "RequestMemory"), ("request_gpus", "RequestGPUs")):
        text = admin.get("JOB_DEFAULT_" + attr.upper())
        if text is not None and text.strip() and attr not in ad:
            defaults[key] = text

    def read(key):
        value = cmd(key)
        if (value is None or not value.strip()) and key in defaults:
            return defaults[key]
        return value
    return read if defaults else cmd


def default_should(admin):
    """SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES of ``admin`` (a SubmitContext's) when it is a
    value should_transfer_files takes, else "" (a value that is not is passed over, as
    HTCondor's condor_submit passes it over: its users could not mend it)."""
    from gridtools.formats.condor.moreattrs import TRANSFER_MODE_NAMES, TRANSFER_MODES
    text = (admin.get("SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES") or "").strip().upper()
    text = TRANSFER_MODE_NAMES.get(text, text)
    return text if text in TRANSFER_MODES else ""


#: the commands of the properties a job's GPUs must have: (command, attribute, the
#: property of a GPU's ad it bounds, the comparison), as HTCondor reads them
GPU_LIMITS = (("gpus_minimum_capability", "GPUsMinCapability", "Capability", ">="),
              ("gpus_maximum_capability", "GPUsMaxCapability", "Capability", "<="),
              ("gpus_minimum_memory", "GPUsMinMemory", "GlobalMemoryMb", ">="),
              ("gpus_minimum_runtime", "GPUsMinRuntime", "MaxSupportedVersion", ">="))


def _gpu_command(cmd, key, attr):
    """The value of a GPU command (or of the attribute it sets, written as a command)."""
    text = cmd(key)
    if text is None or not text.strip():
        text = cmd(attr.lower())
    return text.strip() if text is not None and text.strip() else None


def gpu_properties(ad, cmd):
    """RequireGPUs and the GPU property bounds of a job that requests GPUs: the
    expression ``require_gpus`` gives, with a term for each bound (gpus_minimum_memory in
    MB, gpus_minimum_runtime as major * 1000 + minor * 10) whose property it does not
    itself refer to, as HTCondor's condor_submit makes it; each GPU the job gets must
    match it (the ``countMatches`` term of Requirements)."""
    import re
    require = _gpu_command(cmd, "require_gpus", "RequireGPUs")
    if require is not None:
        ad["RequireGPUs"] = expr("RequireGPUs", require)
    clauses = []
    refs = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", require.lower())) if require else set()
    for key, attr, prop, op in GPU_LIMITS:
        text = _gpu_command(cmd, key, attr)
        if text is None:
            continue
        value = None
        if key == "gpus_minimum_memory":
            value = quantity(text, 2)
        elif key == "gpus_minimum_runtime":
            value = _runtime_version(text)
        ad[attr] = value if value is not None else expr(attr, text)
        if prop.lower() not in refs:
            clauses.append(f"{prop} {op} {attr}")
    if clauses:
        if require is not None:
            wrapped = f"({require})" if _or_at_top(ad.lookup("RequireGPUs")) else require
            clauses.insert(0, wrapped)
        ad["RequireGPUs"] = expr("RequireGPUs", " && ".join(clauses))


def _runtime_version(text):
    """A CUDA runtime version ``x`` or ``x.y`` as major * 1000 + minor * 10 (a number above
    1000 already is one); None for anything else (kept as an expression)."""
    import re
    match = re.fullmatch(r"(\d+)(?:\.(\d{1,2}))?", text)
    if not match:
        return None
    major = int(match.group(1))
    if match.group(2) is None:
        return major if major > 1000 else major * 1000
    return major * 1000 + int(match.group(2)) * 10


def _or_at_top(tree):
    """True when an expression's outermost operator binds less tightly than ``&&`` (an
    ``||`` or ``?:``): it is put in parentheses before ``&&`` joins it to more."""
    text = tree.unparse() if tree is not None else ""
    depth, quote, i = 0, None, 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and (text.startswith("||", i) or ch == "?"):
            return True
        i += 1
    return False


def add_input(ad, ctx, names):
    """Count the input files (``names``, relative ones from the initial directory) in
    DiskUsage, each in KiB rounded up; a missing one counts nothing. One the caller
    cannot read (or that is missing) is warned of, once, in HTCondor's words: the job
    is submitted all the same, and held if the file still cannot be read when it
    starts."""
    if ctx.files is None:
        return
    iwd = ad.eval("Iwd")
    sizes = [ctx.files.size_kib(ospaths.join(iwd, name)) for name in names]
    ad["DiskUsage"] = ad.eval("DiskUsage") + sum(size for size in sizes if size)
    readable = getattr(ctx.files, "readable", None)
    for name in names if readable is not None else ():
        path = ospaths.join(iwd, name)
        warning = f"\nWARNING: File {path} is not readable by condor."
        if "://" not in name and warning not in ctx.warnings and not readable(path):
            ctx.warnings.append(warning)


#: HTCondor's warning when both requirements and MY.Requirements (+Requirements) are given
FORCED_REQUIREMENTS = ("Use of MY.Requirements or +Requirements  overrides requirements. "
                       "You should remove one of these statements from your submit file.")


def forced_requirements(ad, cmd, ctx):
    """A description that sets the Requirements attribute itself (``MY.Requirements`` or
    ``+Requirements``): as HTCondor's condor_submit, no Requirements are made (nor
    checked: no "Is Circular", the requirements command not even parsed), and a given
    requirements command is warned of (once a proc). Rank is made as ever."""
    if cmd("requirements") is not None:
        ctx.warnings.append(FORCED_REQUIREMENTS)
    _set_rank(ad, cmd, ctx.admin)


def request_term(ad, name):
    """The term of Requirements for a request of resource ``name`` (GPUs or a custom one),
    by the type of the request's value, as HTCondor makes it: a number above 0, or
    undefined, asks for as many; a string that is not empty for a match of the machine's
    (regexp); anything else (0 or less, a boolean, a list ...) for nothing (None)."""
    value = ad.eval("Request" + name) if ad.plain("Request" + name) else _evaluated(ad, "Request" + name)
    if value is UNDEFINED or type(value) in (int, float):
        if not (value is UNDEFINED or value > 0):
            return None
        if "Require" + name in ad:              # (each one must match: require_gpus)
            return f"(countMatches(MY.Require{name},TARGET.Available{name}) >= Request{name})"
        return f"(TARGET.{name} >= Request{name})"
    if type(value) is str:
        return f"regexp(Request{name},TARGET.{name})" if value else None
    return None


def _evaluated(ad, name):
    """The value of an expression attribute of a DraftAd (ERROR when it cannot be)."""
    try:
        return ad.eval(name)
    except Exception:  # noqa: BLE001 - any failure of an evaluation is HTCondor's ERROR
        return ERROR


def knob(admin, name, vanilla):
    """The text of knob ``name`` in ``admin`` (a SubmitContext's), of its ``_VANILLA``
    form for a ``vanilla`` universe job when that is set (APPEND_REQUIREMENTS's is
    APPEND_REQ_VANILLA), or None when neither is set."""
    text = None
    if vanilla:
        text = admin.get("APPEND_REQ_VANILLA" if name == "APPEND_REQUIREMENTS" else name + "_VANILLA")
    if text is None or not text.strip():
        text = admin.get(name)
    return text.strip() if text is not None and text.strip() else None


def admin_attributes(ad, ctx):
    """Put into a new job ad the attributes SUBMIT_ATTRS, SUBMIT_EXPRS and
    SYSTEM_SUBMIT_ATTRS name (names separated by commas or blanks), each the
    expression of the configuration's knob of that name (one that is not set, or does
    not read, is left out): before anything of the description, which may set it
    again. A name written ``+Name`` or ``MY.Name`` is forced: [(name, value)] to put
    into the ad after the description's commands (its own ``MY.`` attributes still come
    last), as HTCondor's condor_submit does."""
    forced = []
    names = " ".join(ctx.admin.get(knob) or "" for knob in ("SUBMIT_ATTRS", "SUBMIT_EXPRS", "SYSTEM_SUBMIT_ATTRS"))
    for name in dict.fromkeys(names.replace(",", " ").split()):
        wanted = name[1:] if name.startswith("+") else name[3:] if name[:3].lower() == "my." else None
        attr = wanted or name
        text = ctx.setting(attr) if attr.isascii() and attr.isidentifier() else None
        if text is None or not text.strip():
            continue
        if wanted:
            forced.append((wanted, expr(wanted, text.strip())))
            continue
        try:
            ad[name] = expr(name, text.strip())
        except InputError:
            continue                    # (HTCondor's condor_submit leaves it out, and says nothing)
    return forced


def plugin_terms(ad, cmd, refs, rare, urls):
    """``jobattrs._plugin_terms`` of a job whose input files name URLs (``urls``: their
    list, else "") or that gives some of the rarer commands (``rare``)."""
    from gridtools.formats.condor.moreattrs import url_schemes
    schemes = url_schemes(urls, cmd if rare else None)
    if not schemes:
        return ""
    if any(scheme.lower() in ("s3", "gs") for scheme in schemes):
        from gridtools.formats.condor.moreattrs import signing_keys
        signing_keys(cmd)
    ad["WantTransferPluginMethods"] = ",".join(schemes)
    if "hasfiletransferpluginmethods" in refs:
        return ""
    return "".join(f' && stringListIMember("{scheme}",TARGET.HasFileTransferPluginMethods)' for scheme in schemes)

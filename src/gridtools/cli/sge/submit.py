"""Assembling a job description from options, request files and a script.

Shared by qsub, qrsh and qalter. Precedence, lowest first: the cell's
``etc/sge_request``, ``~/.sge_request``, ``./.sge_request``, ``#$``
directives in the script, then the command line; ``-clear`` discards
everything before it. Path aliases (``etc/sge_aliases``, then
``~/.sge_aliases``) that apply to the working directory travel with the job.

Quick checks that need only directory listings and a few lines of the
configuration are done here, with Grid Engine's messages; nothing here
imports the configuration parsers.
"""

import posix
import time

from gridtools import cell, ospaths
from gridtools import wildcards
from gridtools.cli import ask
from gridtools.cli.identity import submitter  # noqa: F401 - qsub names it submit.submitter
from gridtools.cli.sge.optvalues import Rejected
from gridtools.cli.sge.tokens import read_option_file, read_own_option_file, read_user_option_file, split_words
from gridtools.errors import GridError, InputError


def default_request_words(cwd):
    """The words of the sge_request files, lowest first, each line's ended by
    ``tokens.LINE_END`` (Grid Engine parses them a line at a time)."""
    home = ospaths.user_home()
    words = read_option_file(cell.etc("sge_request"), by_line=True)
    words += read_user_option_file(".sge_request", by_line=True)
    local = ospaths.join(cwd, ".sge_request")
    if ospaths.abspath(local) != ospaths.abspath(ospaths.join(home, ".sge_request")):
        words += read_own_option_file(local, by_line=True)
    return words


def read_script(path, stdin):
    """The script bytes from a file or stdin, with Grid Engine's error messages."""
    if path is None or path == "-":
        data = stdin.read() if stdin is not None else b""
        if not data:
            raise GridError("Unable to read script file because of error: no input read from stdin", 4)
        return data
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except (OSError, ValueError) as exc:     # (a NUL in a name from an option file: no such file)
        reason = exc.strerror if isinstance(exc, OSError) else "No such file or directory"
        raise GridError("Unable to read script file because of error: "
                        f"error opening {path}: {reason}", 14) from None


def path_aliases(cwd, submit_host):
    """Applicable (source, exec host, replacement) entries for ``cwd`` (sge_aliases(5))."""
    lines = []
    for path in (cell.etc("sge_aliases"), ospaths.join(ospaths.user_home(), ".sge_aliases")):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines.extend(fh.read().splitlines())
        except OSError:
            continue
    stored = []
    for line in lines:
        words = split_words(line)
        if len(words) != 4:
            continue
        src, sub_host, exec_host, dest = words
        if sub_host != "*" and sub_host.lower() != submit_host.lower():
            continue
        if (cwd + "/").startswith(src) or any(d.startswith(src) for _, _, d in stored):
            stored.append([src, exec_host, dest])
    return stored


def alias_path(path, aliases, host):
    """``path`` aliased by the ``aliases`` entries whose exec host is ``*`` or ``host`` (as
    Grid Engine aliases SGE_O_WORKDIR on the submit host; the execution host's aliasing
    is ``exec.plan.apply_aliases``)."""
    for src, exec_host, dest in aliases:
        if not wildcards.match(host, exec_host, fold=True) or not (path + "/").startswith(src):
            continue
        path = (dest + (path + "/")[len(src):]).replace("//", "/")
        if len(path) > 1:
            path = path.rstrip("/")
    return path


# ---------------------------------------------------------------- config checks

def _etc_names(folder):
    try:
        return set(posix.listdir(cell.etc(folder)))
    except FileNotFoundError:
        return set()


def complex_table():
    """name -> (shortcut, type, requestable, consumable) from etc/complex, read by hand (fast)."""
    table = {}
    try:
        with open(cell.etc("complex"), encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("#"):
                    continue
                parts = line.split()
                if len(parts) >= 8:
                    table[parts[0]] = (parts[1], parts[2], parts[4], parts[5])
    except FileNotFoundError:
        pass
    return table


def _attr_line(text, name):
    """Value of attribute ``name`` in an SGE object text (continuations joined)."""
    joined = text.replace("\\\n", " ")
    for line in joined.splitlines():
        parts = line.split(None, 1)
        if parts and parts[0] == name:
            return parts[1].strip() if len(parts) > 1 else ""
    return ""


def queue_hosts(qname):
    """Hosts of a cluster queue's hostlist, host groups resolved."""
    try:
        with open(cell.etc("queues", qname), encoding="utf-8") as fh:
            hostlist = _attr_line(fh.read(), "hostlist")
    except OSError:
        return set()
    return _resolve(hostlist.replace(",", " ").split(), set())


def _resolve(entries, seen):
    hosts = set()
    for entry in entries:
        if not entry.startswith("@"):
            if entry.upper() != "NONE":
                hosts.add(entry)
            continue
        if entry in seen:
            continue
        try:
            with open(cell.etc("hostgroups", entry), encoding="utf-8") as fh:
                members = _attr_line(fh.read(), "hostlist")
        except OSError:
            continue
        hosts |= _resolve(members.replace(",", " ").split(), seen | {entry})
    return hosts


def check_queues(specs):
    """Refuse queue requests naming no existing queue or queue instance."""
    if not specs:
        return
    queues = _etc_names("queues")
    for spec in specs:
        qpart, at, hpart = spec.partition("@")
        names = [q for q in queues if wildcards.match(q, qpart or "*")]
        if not names:
            raise Rejected(f'Job was rejected because job requests unknown queue "{spec}"')
        if at and not hpart.startswith("@"):
            if not any(wildcards.match(h, hpart, fold=True) for q in names for h in queue_hosts(q)):
                raise Rejected(f'Job was rejected because job requests unknown queue "{spec}"')


def check_path_lists(req):
    """Refuse a -o, -e, -i or -S list that gives two paths for one host (or two
    without a host): which one applies would be a guess."""
    for field in ("stdout", "stderr", "stdin", "shell"):
        hosts = [(host or "").lower() for host, _ in req.get(field) or ()]
        if len(set(hosts)) < len(hosts):
            raise Rejected("ERROR! two files are specified for the same host")


def check_request(req, new_job=False, what="job"):
    """Validate names and values a job refers to, with Grid Engine's messages.
    ``new_job``: the request of a job being submitted (qsub, qrsh), not a probe of
    qalter's or qrsub's: a master queue (-masterq) without a parallel environment is
    refused, as Grid Engine's qmaster refuses it at submission (and only there).
    ``what``: the object the refusal of an ambiguous PE request names ("job", or
    "advance_reservation" for qrsub)."""
    check_path_lists(req)
    if new_job and req["masterq"] and not req["pe"]:
        raise Rejected("job rejected: specification of master queue is not allowed for non-parallel jobs")
    check_queues(req["queues"]["hard"] + req["queues"]["soft"] + req["masterq"])
    if req["pe"]:
        if not any(wildcards.match(p, req["pe"][0]) for p in _etc_names("pe")):
            raise Rejected(f'job rejected: the requested parallel environment "{req["pe"][0]}" does not exist')
        check_pe_urgency(req["pe"], what)
    if req["ckpt"] and req["ckpt"] not in _etc_names("ckpt"):
        raise Rejected(f'job rejected: the requested checkpointing environment "{req["ckpt"]}" does not exist')
    if new_job:
        check_ckpt_when(req)
    if req["project"] and req["project"] not in _etc_names("projects"):
        raise Rejected(f'job rejected: the requested project "{req["project"]}" does not exist')
    check_resources(req)


def check_ckpt_when(req):
    """Refuse ``-c`` that cannot apply, as Grid Engine's qmaster refuses it at submission:
    ``n`` with other letters or with ``-ckpt``; letters other than ``n``, or an interval,
    without ``-ckpt``."""
    when = req.get("ckpt_when") or ""
    interval = when[:1].isdigit() or when[:1] == ":"
    letters = set() if interval else set(when)
    if "n" in letters and (len(letters) > 1 or req["ckpt"]):
        raise Rejected('job rejected: checkpointing with "-c n" requested')
    if not req["ckpt"] and (interval or letters - {"n"}):
        raise Rejected("checkpointing denied")


def check_pe_urgency(pe, what="job"):
    """Refuse a wildcard PE with a slot range when the PEs it matches would assume
    different slot counts for the job's urgency (their urgency_slots), as Grid Engine
    refuses it at submit. Reads the PE files only for a wildcard and a range."""
    if wildcards.WILDCARDS.isdisjoint(str(pe[0])) or (len(pe) == 3 and pe[1] == pe[2]):
        return
    objects = {}
    for name in _etc_names("pe"):
        if wildcards.match(name, pe[0]):
            try:
                with open(cell.etc("pe", name), encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                continue
            slots = _attr_line(text, "slots")
            objects[name] = {"urgency_slots": _attr_line(text, "urgency_slots") or "min",
                             "slots": int(slots) if slots.isdigit() else 0}
    from gridtools.sched import urgency
    if urgency.ambiguous(pe, objects):
        raise Rejected(urgency.AMBIGUOUS.format(what))


def check_resources(req):
    """Resolve shortcuts of -l names; refuse unknown or non-requestable resources and
    values that are not of the resource's type (Grid Engine's messages)."""
    if not (req["resources"]["hard"] or req["resources"]["soft"]):
        return
    table = complex_table()
    by_short = {v[0]: k for k, v in table.items()}
    for kind in ("hard", "soft"):
        fixed = {}
        for name, value in req["resources"][kind].items():
            full = name if name in table else by_short.get(name)
            if full is None:
                raise Rejected(f'unknown resource "{name}"')
            fixed[full] = _check_value(full, table[full], value)
        req["resources"][kind] = fixed


def _check_value(name, row, value):
    """The value to store for a request (a time in seconds, as Grid Engine stores it:
    ``h_rt=00:10:00`` is ``h_rt=600``); refuses a value that does not suit the type."""
    from gridtools.formats import values
    _short, ctype, requestable, consumable = row
    if requestable.upper() == "NO":
        raise Rejected(f'resource "{name}" configured as non requestable')
    try:
        number = values.parse_typed(ctype, value)
    except InputError as exc:
        reason = f": {exc}" if "out of range" in str(exc) else ""
        raise Rejected(values.not_a_value(name, ctype) + reason) from None
    if consumable.upper() not in ("NO", "N") and isinstance(number, (int, float)) \
            and not isinstance(number, bool) and number < 0:
        raise Rejected(f'attribute "{name}" is consumable but has a negative value')
    if ctype == "TIME" and isinstance(value, str) and number != values.INFINITY:
        return f"{number:.0f}"
    return value


# ---------------------------------------------------------------- -l slots=N

def slots_as_pe(req):
    """Turn a hard ``-l slots=N`` (N > 1) of a job without ``-pe`` into ``-pe <pe> N`` with
    the cell's single-host parallel environment (``single_host_pe``): N slots on one host,
    what clients that ask for a job's threads so (snakemake's SGE executor) mean. Grid
    Engine refuses every slots request; here a job with -pe keeps the PE's count, and
    ``slots=1`` asks for what a job has anyway. A cell without such a PE refuses the job
    with Grid Engine's words."""
    text = req["resources"]["hard"].get("slots")
    if text is None or req["pe"]:
        return
    from gridtools.formats import values
    try:
        count = values.parse_typed("INT", str(text))
    except InputError:
        return                          # (check_resources refused it already)
    if count <= 1:
        return
    name = single_host_pe()
    if name is None:
        from gridtools.formats.sge.pe import NO_DIRECT_SLOTS
        raise Rejected(NO_DIRECT_SLOTS)
    req["pe"] = [name, count, count]


def single_host_pe():
    """The parallel environment a ``-l slots=N`` job gets (``formats.sge.pe.single_host_pe``),
    read from the cell's PE and queue files; None when there is none."""
    from gridtools.formats.sge import pe
    rules, listed = {}, set()
    for name in _etc_names("pe"):
        try:
            with open(cell.etc("pe", name), encoding="utf-8", errors="replace") as fh:
                rules[name] = _attr_line(fh.read(), "allocation_rule")
        except OSError:
            continue
    for qname in _etc_names("queues"):
        try:
            with open(cell.etc("queues", qname), encoding="utf-8", errors="replace") as fh:
                text = _attr_line(fh.read(), "pe_list")
        except OSError:
            continue
        for ch in ",[]=":
            text = text.replace(ch, " ")
        listed.update(text.split())
    return pe.single_host_pe(rules, listed)


# ---------------------------------------------------------------- the daemon's checks

def exported(environ):
    """The variables of ``environ`` -V passes on: those whose names are printable (one
    with a line break or another control character in its name, which no job could be
    given, is left out)."""
    return {name: value for name, value in environ.items() if name.isprintable()}


def global_value(name, default=None, conf=None):
    """An attribute of the global configuration (etc/conf/global), read by hand (fast);
    from ``conf`` (the file's attributes, as ``cellfacts.attributes`` reads them) when
    the caller has read it already."""
    if conf is not None:
        return conf.get(name) or default
    try:
        with open(cell.etc("conf", "global"), encoding="utf-8", errors="replace") as fh:
            value = _attr_line(fh.read(), name)
    except OSError:
        return default
    return value if value else default


def check_spec(spec, script=None, conf=None):
    """Refuse, as the daemon would, a job description it would not accept (formats.jobcheck):
    names with control characters, more tasks than max_aj_tasks, a script too large.
    ``conf``: the global configuration's attributes, when the caller has read them."""
    from gridtools.formats import jobcheck
    limit = global_value("max_aj_tasks", "75000", conf)
    try:
        jobcheck.check(spec, max_tasks=int(limit) if limit.isdigit() else 0)
    except jobcheck.Invalid as exc:
        raise Rejected(str(exc)) from None
    if script is not None and len(script) > max_script(conf):
        raise Rejected(f"the job script is larger than {max_script(conf)} bytes "
                       "(qmaster_params MAX_SCRIPT_SIZE)")


def max_script(conf=None):
    """Largest job script the daemon takes (qmaster_params MAX_SCRIPT_SIZE)."""
    from gridtools.spool.requests import MAX_SCRIPT
    params = (global_value("qmaster_params", "", conf) or "").replace(",", " ").split()
    for item in params:
        name, _, text = item.partition("=")
        if name == "MAX_SCRIPT_SIZE":
            from gridtools.formats import values
            try:
                return int(min(values.parse_memory(text), 1 << 40))
            except InputError:
                break
    return MAX_SCRIPT


def check_like_daemon(req):
    """Refuse, with Grid Engine's words, what the daemon refuses when it takes the job in
    (and Grid Engine at submit): a positive priority from a user who is neither operator
    nor manager, a -hold_jid_ad for a job that is no array or that names jobs with
    another task range (those found in the published status). Nothing is read unless
    the job asks for either."""
    if (req.get("priority") or 0) > 0:
        from gridtools.cli.sge import cellfacts
        from gridtools.formats.sge import admission
        why = admission.priority_refusal(req["priority"], cellfacts.is_operator(_owner()))
        if why:
            raise Rejected(why)
    if req.get("hold_jid_ad"):
        _check_array_dependency(req, _owner())


def _owner():
    return submitter(posix.getcwd())["owner"]


def _check_array_dependency(req, owner):
    from gridtools.cli import status
    from gridtools.model import predecessors
    tasks = []
    if req.get("tasks"):
        snap = status.load()
        found = status.resolve_predecessors(snap, {"hold_jid_ad": req["hold_jid_ad"], "owner": owner, "id": 0})
        tasks = [(snap["jobs"].get(p) or {}).get("tasks") for p in found["ad_predecessors"]]
    why = predecessors.ad_refusal(req["hold_jid_ad"], req.get("tasks"), tasks)
    if why:
        raise Rejected(why)


# ---------------------------------------------------------------- identity

def finish_spec(req, job_id, script_name, cwd, args, command=None):
    """The job description to spool: the request plus identity and bookkeeping."""
    spec = dict(req)
    spec.update(submitter(cwd))
    spec["id"] = job_id
    spec["submit_time"] = time.time()
    spec["script_name"] = script_name
    spec["args"] = list(args)
    if command is not None:
        spec["command"] = command
    if not spec.get("name"):
        base = ospaths.basename(command if command is not None else script_name) or "STDIN"
        spec["name"] = base
    if spec.get("export_all"):
        spec["submit_env"] = exported(ospaths.environ())
    spec["aliases"] = path_aliases(cwd, spec["submit_host"])
    if spec["aliases"]:                 # (SGE_O_WORKDIR is the aliased path, as job_initialize_env)
        spec["sge_o"]["WORKDIR"] = alias_path(cwd, spec["aliases"], spec["submit_host"])
    if spec.get("mail_list") == []:
        spec["mail_list"] = [f"{spec['owner']}@{spec['submit_host']}"]
    return spec


def server_verifies(conf=None):
    """True when the cell's global configuration names a server JSV (jsv_url): then the
    daemon may change or refuse a job, and the submitting command waits for its word."""
    text = (global_value("jsv_url", "none", conf) or "none").strip()
    return bool(text) and text.lower() != "none"


def send(spec, script=None, conf=None, wait=False):
    """Queue the job ``spec`` for the daemon. With ``wait`` (qrsh, which then waits for
    the job itself), with a server JSV (``server_verifies``), or while the cell's
    condor_config sets rules the daemon checks each new job against
    (``ask.checks_marked``: submit requirements, job limits, admission rules), wait for the
    daemon's answer: ``spec`` then takes the name and tasks the JSV left the job, and a
    refusal raises ``Refused`` (its words already written on stderr, the id given back
    by the daemon)."""
    if not wait and not server_verifies(conf) and not ask.checks_marked():
        ask.tell("submit", {"job": spec}, script=script)
        return
    import json
    import sys
    from gridtools.spool import requests, wake
    ask.ensure_daemon()
    name = requests.write("submit", {"job": spec}, script=script, reply=True)
    wake.poke()
    # (the JSV may take its timeout twice, as the daemon starts a silent one again)
    from gridtools.formats.sge.conf import jsv_timeout
    code, out, err = requests.wait_reply(name, ask.REPLY_TIMEOUT + 2 * jsv_timeout(global_value("qmaster_params",
                                                                                               None, conf)))
    if code:
        sys.stderr.write(err or out)
        sys.stderr.flush()
        raise Refused()
    try:
        final = json.loads(out) if out.strip() else {}
    except ValueError:
        final = {}
    if isinstance(final, dict):
        spec.update({key: final[key] for key in ("name", "tasks") if key in final})


class Refused(Exception):
    """The daemon refused a job and said why (on stderr): exit 1."""

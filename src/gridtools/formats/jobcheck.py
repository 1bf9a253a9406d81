"""The job description a client sends, checked field by field before anything uses it.

A submit request carries a job description (a mapping; its fields are listed
in gridtools_spool(5)). The daemon trusts nothing in it: ``check(spec)``
returns a clean copy that holds only known fields, each of the right type and
within range, or raises ``InputError`` with one line naming the first
problem. Fields only the daemon may set (owner, uid, group, resolved
dependencies, version, ...) and fields nobody knows are left out; the daemon
fills in the identity from the request file's owner. qsub runs the same check
before it queues anything, so a job the daemon would refuse is refused at
once, with the same words.

Names follow sge_types(1): a job name or account string may not contain a
control character (a newline would forge log and accounting lines, an escape
sequence would reach other users' terminals) nor ``/ : @ \\ * ?``. Resource
values of the limits (``h_rt``, ``h_vmem``, ...) and of complexes whose type
the caller passes are read with ``gridtools.formats.values``.

Standard library only: qsub imports this on every submission.
"""

from gridtools.errors import InputError
from gridtools.formats.safetext import escape

#: highest job id; ids count up to it and start again at 1, as in Grid Engine
MAX_JOB_ID = 9_999_999
#: highest task number of an array job (qsub(1) -t)
MAX_TASK_ID = 2 ** 31 - 1
#: longest name (job name, account) Grid Engine accepts (MAX_VERIFY_STRING)
MAX_NAME = 512
#: longest text of any other single field (a job argument, an environment variable's
#: value): far above what one exec takes (Linux: 128 KiB a string)
MAX_TEXT = 1 << 20
#: most items of any list or mapping in a job description (job arguments, environment
#: variables, -hold_jid jobs): as many as the strings of the largest command line and
#: environment an exec takes (Linux: ARG_MAX, 2 MiB, of pointers and strings)
MAX_ITEMS = 131072
#: what the limits' messages call a field's items (others: 'field "NAME" ...')
ITEM_NAMES = {"args": ("job arguments", "a job argument"),
              "env": ("environment variables", "an environment variable value"),
              "submit_env": ("environment variables", "an environment variable value"),
              "sge_o": ("environment variables", "an environment variable value"),
              "hold_jid": ("-hold_jid jobs", "a -hold_jid job"),
              "hold_jid_ad": ("-hold_jid_ad jobs", "a -hold_jid_ad job")}
#: characters sge_types(1) forbids in job names and account strings, with their names
NAME_FORBIDDEN = {"/": "Slash", ":": "Colon", "@": "At", "\\": "Backslash", "*": "Asterisk",
                  "?": "Questionmark"}
#: names of the control characters Grid Engine names itself
CONTROL_NAMES = {"\n": "Return", "\t": "Tabulator", "\r": "Carriagereturn"}
#: type of the resource limits every queue knows (queue_conf(5) RESOURCE LIMITS)
LIMIT_TYPES = dict.fromkeys(("s_rt", "h_rt", "s_cpu", "h_cpu"), "TIME") | dict.fromkeys(
    ("s_fsize", "h_fsize", "s_data", "h_data", "s_stack", "h_stack", "s_core", "h_core",
     "s_rss", "h_rss", "s_vmem", "h_vmem"), "MEMORY")
#: fields the daemon sets itself; a client's values are dropped
DAEMON_FIELDS = frozenset({"owner", "uid", "group", "predecessors", "ad_predecessors", "version",
                           "pe_granted", "has_shebang", "department", "uid_domain"})
#: the submitter's environment facts a job carries (qsub's SGE_O_* variables)
SGE_O_KEYS = frozenset({"HOME", "LOGNAME", "PATH", "SHELL", "TZ", "WORKDIR", "HOST", "MAIL"})
#: message of a job array larger than the configuration's max_aj_tasks (Grid Engine's words)
TOO_MANY_TASKS = "job rejected: You try to submit a job with more than {} tasks"

#: the latest time a job description may name (seconds since the epoch: the last day of
#: the year 9999 in every time zone, the latest qsub -a can name and the latest the
#: listings can print): a bound that also refuses infinity and NaN without ``math``,
#: whose import costs a qsub 50 microseconds
MAX_MOMENT = 253402214399


class Invalid(InputError):
    """A job description field that cannot be accepted; ``str()`` is one line."""


def shown(text, limit=60):
    """``text`` as it may appear in a message: control characters escaped, shortened."""
    text = str(text)
    return escape(text[:limit]) + ("..." if len(text) > limit else "")


def control_char(text):
    """The first control character (C0, DEL, C1) in ``text``, or None."""
    if text.isprintable():              # (none of them is printable: no need to look further)
        return None
    for ch in text:
        code = ord(ch)
        if code < 32 or code == 127 or 0x80 <= code < 0xA0:
            return ch
    return None


def check_name(text, what="job name"):
    """Refuse a job name or account string as Grid Engine does (sge_types(1))."""
    if not isinstance(text, str) or not text:
        raise Invalid(f"{what} must not be empty")
    if len(text) > MAX_NAME:
        raise Invalid(f"{what} is longer than {MAX_NAME} characters")
    bad = control_char(text)
    if bad is not None:
        label = CONTROL_NAMES.get(bad, "control character")
        raise Invalid(f'{what} "{shown(text)}" is not valid: {label} ({shown(bad)}) not allowed')
    if not text.isprintable():          # (a line or paragraph separator, a bidi control ...)
        bad = next((ch for ch in text if not ch.isprintable() and not "\udc80" <= ch <= "\udcff"), None)
        if bad is not None:             # (a byte that is not UTF-8 comes as it came: sge_types(1))
            raise Invalid(f'{what} "{shown(text)}" is not valid: non-graphic character (U+{ord(bad):04X}) '
                          "not allowed")
    for ch, label in NAME_FORBIDDEN.items():
        if ch in text:
            raise Invalid(f'{what} "{shown(text)}" is not valid: {label} (\'{ch}\') not allowed')
    return text


# ---------------------------------------------------------------- value checkers
# each checker(value, field) returns the accepted value or raises Invalid

def _bad(field, problem):
    return Invalid(f'field "{field}" {problem}')


def boolean(value, field):
    if type(value) is not bool:
        raise _bad(field, "must be true or false")
    return value


def integer(lo, hi):
    def check(value, field):
        if type(value) is not int or not lo <= value <= hi:
            raise _bad(field, f"must be a whole number from {lo} to {hi}")
        return value
    return check


def moment(value, field):
    """A time in seconds since the epoch."""
    if type(value) not in (int, float) or not 0 <= value <= MAX_MOMENT:       # (not NaN either)
        raise _bad(field, "must be a time in seconds")
    return value


def text(value, field, single_line=False, empty=True):
    if isinstance(value, str) and len(value) > MAX_TEXT:
        one = ITEM_NAMES.get(field, (None, None))[1]
        raise Invalid(f"{one} is longer than {MAX_TEXT} characters" if one else
                      f'field "{field}" is longer than {MAX_TEXT} characters')
    if not isinstance(value, str) or (not empty and not value):
        raise _bad(field, "must be a text" + ("" if empty else " that is not empty"))
    if "\0" in value or (single_line and control_char(value) is not None):
        raise _bad(field, f'must not contain control characters ("{shown(value)}")')
    return value


def line(value, field):
    """One line of text: no control characters."""
    return text(value, field, single_line=True)


#: longest value of a -l resource request: the scheduler matches it with the hosts'
#: values at every pass (a pattern of many alternatives costs each time)
MAX_REQUEST = 16384
#: most queue specs one -q (hard or soft) or -masterq list may hold (each a wildcard pattern
#: the scheduler matches with every queue instance, every pass)
MAX_QUEUE_SPECS = 1024


def request_value(value, field):
    """The value of a -l resource request: one line of at most MAX_REQUEST characters."""
    line(value, field)
    if len(value) > MAX_REQUEST:
        raise Invalid(f"a -l resource request value is longer than {MAX_REQUEST} characters")
    return value


def word(value, field):
    """A name, pattern or id: one line, not empty, no blanks."""
    text(value, field, single_line=True, empty=False)
    if any(c.isspace() for c in value):
        raise _bad(field, f'must not contain blanks ("{shown(value)}")')
    return value


def attr_name(value, field):
    """A ClassAd attribute name as HTCondor takes one in an edit (IsValidAttrName): a
    letter or an underscore, then letters, digits and underscores."""
    word(value, field)
    if not (value[0].isascii() and (value[0].isalpha() or value[0] == "_")) or \
            not all(c.isascii() and (c.isalnum() or c == "_") for c in value):
        raise _bad(field, f'is no attribute name ("{shown(value)}")')
    return value


#: characters no object name (PE, project, checkpointing environment) holds (sge_types(1))
OBJECT_FORBIDDEN = frozenset("/:@\\,=\"'{}")


def name_or_pattern(value, field):
    """A job id, job name or pattern of -hold_jid: one line, not empty (names may hold blanks)."""
    return text(value, field, single_line=True, empty=False)


#: most patterns (items with a wildcard) of one job's -hold_jid or -hold_jid_ad: each is
#: matched with the names of the owner's jobs at every submission and change
MAX_HOLD_PATTERNS = 256


def hold_list(value, field):
    """The items of -hold_jid or -hold_jid_ad: ids, names and at most MAX_HOLD_PATTERNS
    patterns."""
    items = list_of(name_or_pattern)(value, field)
    from gridtools import wildcards
    if sum(1 for item in items if not wildcards.WILDCARDS.isdisjoint(item)) > MAX_HOLD_PATTERNS:
        option = "-hold_jid_ad" if field == "hold_jid_ad" else "-hold_jid"
        raise Invalid(f"{option} names more than {MAX_HOLD_PATTERNS} job name patterns")
    return items


def object_name(value, field):
    """A configuration object (PE, project, checkpointing environment) or a pattern of them."""
    word(value, field)
    if OBJECT_FORBIDDEN.intersection(value) or value in (".", ".."):
        raise _bad(field, f'is not an object name ("{shown(value)}")')
    return value


def path(value, field):
    """An absolute path: the daemon never resolves a relative one."""
    line(value, field)
    if not value.startswith("/"):
        raise _bad(field, f'must be an absolute path ("{shown(value)}")')
    return value


def optional(check):
    def checked(value, field):
        return None if value is None else check(value, field)
    return checked


def one_of(*choices):
    def check(value, field):
        if value not in choices or not isinstance(value, str):
            raise _bad(field, f"must be one of {', '.join(choices)}")
        return value
    return check


def _too_many(field, max_items):
    many = ITEM_NAMES.get(field, (None, None))[0]
    return Invalid(f"too many {many} (more than {max_items})" if many else
                   f'field "{field}" has more than {max_items} items')


def list_of(check, max_items=MAX_ITEMS):
    def checked(value, field):
        if not isinstance(value, list):
            raise _bad(field, "must be a list")
        if len(value) > max_items:
            raise _too_many(field, max_items)
        return [check(item, field) for item in value]
    return checked


def mapping(check_key, check_value, max_items=MAX_ITEMS):
    def checked(value, field):
        if not isinstance(value, dict):
            raise _bad(field, "must be a mapping")
        if len(value) > max_items:
            raise _too_many(field, max_items)
        return {check_key(k, field): check_value(v, field) for k, v in value.items()}
    return checked


def hard_soft(check, empty):
    """``{"hard": ..., "soft": ...}`` (queues, resources); a missing part is ``empty()``."""
    def checked(value, field):
        if not isinstance(value, dict) or set(value) - {"hard", "soft"}:
            raise _bad(field, 'must be a mapping with "hard" and "soft"')
        return {part: check(value.get(part, empty()), f"{field}.{part}")
                for part in ("hard", "soft")}
    return checked


def env_name(value, field):
    text(value, field, empty=False)
    if "=" in value:
        raise _bad(field, f'holds a variable name with "=" ("{shown(value)}")')
    if not value.isprintable():     # (a line break would pass for lines of its own: to a JSV, say)
        raise _bad(field, f'holds a variable name with a control character ("{shown(value)}")')
    return value


def env_value(value, field):
    return text(value, field)


def shell_entry(value, field):
    """``[host or None, path]`` of -S: an absolute path, or one that starts with a
    pseudo variable ($HOME/bin/zsh), expanded on the execution host."""
    host, target = path_entry(value, field)
    if not target.startswith(("/", "$")):
        raise _bad(field, f'must hold absolute paths ("{shown(target)}")')
    return [host, target]


def shell_list(value, field):
    """The -S list; a job spooled before -S kept host names holds its one path as text."""
    if isinstance(value, str):
        return path(value, field)
    return list_of(shell_entry)(value, field)


def path_entry(value, field):
    """``[host or None, path]`` of -o, -e, -i."""
    if not isinstance(value, list) or len(value) != 2:
        raise _bad(field, "must hold [host, path] pairs")
    host = optional(word)(value[0], field)
    target = line(value[1], field)
    if not target:
        raise _bad(field, "holds an empty path")
    return [host, target]


def alias(value, field):
    if not isinstance(value, list) or len(value) != 3:
        raise _bad(field, "must hold [source, host, replacement] triples")
    return [line(value[0], field), word(value[1], field), line(value[2], field)]


def task_range(value, field):
    """``[first, last, step]`` of -t: 1 <= first <= last <= MAX_TASK_ID, step >= 1."""
    if (not isinstance(value, list) or len(value) != 3
            or any(type(n) is not int for n in value)):
        raise _bad(field, "must be [first, last, step]")
    first, last, step = value
    if not 1 <= first <= last <= MAX_TASK_ID or not 1 <= step <= MAX_TASK_ID:
        raise _bad(field, f"must name tasks from 1 to {MAX_TASK_ID} with a positive step")
    return [first, first + (last - first) // step * step, step]


#: the most ranges a -pe slot list may hold (1,2,4,8,... is a handful in practice)
MAX_PE_RANGES = 64


def pe_request(value, field):
    """``[name, min slots, max slots]`` (max 0: no upper bound), or a slot list
    ``[name, [[min, max], ...]]`` of ``-pe mpi 1,2,4,8``."""
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], list):
        ranges = value[1]
        if not 1 <= len(ranges) <= MAX_PE_RANGES or not all(isinstance(r, list) and len(r) == 2
                                                              for r in ranges):
            raise _bad(field, f"must hold 1 to {MAX_PE_RANGES} [min, max] slot ranges")
        return [object_name(value[0], field), sorted(_slot_range(r[0], r[1], field) for r in ranges)]
    if not isinstance(value, list) or len(value) != 3:
        raise _bad(field, "must be [name, min, max]")
    return [object_name(value[0], field), *_slot_range(value[1], value[2], field)]


def _slot_range(low, high, field):
    low = integer(1, MAX_JOB_ID)(low, field)
    high = integer(0, MAX_JOB_ID)(high, field)
    if high and high < low:
        raise _bad(field, "has a slot range whose maximum is below its minimum")
    return [low, high]


def mail_letters(value, field):
    """-m's letters; ``n`` among them means no mail (Grid Engine's NO_MAIL clears the others)."""
    if not isinstance(value, str) or set(value) - set("beasn"):
        raise _bad(field, "must hold the letters b, e, a, s, n")
    return "" if "n" in value else value


def account(value, field):
    return check_name(value, "account string")


def job_name(value, field):
    return check_name(value, "job name")


def job_id(value, field):
    return integer(1, MAX_JOB_ID)(value, field)



#: most bytes of all the ad texts of one HTCondor cluster together (room for the
#: arguments and environment of the largest command line an exec takes, twice over)
MAX_CONDOR_AD = 4 << 20


def condor_ads(value, field):
    """An HTCondor cluster's ads (condor_submit): one text, or a list of texts (the
    first whole, each later one what a proc changes); their content is read by the
    daemon. At most MAX_CONDOR_AD bytes in all, no NUL."""
    texts = value if isinstance(value, list) else [value]
    if not texts or any(not isinstance(t, str) or "\0" in t for t in texts) or not texts[0]:
        raise _bad(field, "must hold the texts of job ads")
    if sum(len(t) for t in texts) > MAX_CONDOR_AD:
        raise _bad(field, f"holds more than {MAX_CONDOR_AD} bytes of job ads")
    return list(texts) if isinstance(value, list) else value


def client(value, field):
    """The qrsh process an interactive job's streams lead to (exec.client): its pid,
    that process's start time in clock ticks, and the machine it runs on."""
    if not isinstance(value, dict) or set(value) != {"pid", "start", "machine"}:
        raise _bad(field, "must hold the pid, start and machine of the client")
    return {"pid": integer(1, 2 ** 31 - 1)(value["pid"], field),
            "start": integer(0, 2 ** 63 - 1)(value["start"], field),
            "machine": word(value["machine"], field)}


#: field -> checker; the job description's fields as qsub, qrsh and qalter write them
FIELDS = {
    "id": job_id, "name": job_name, "binary": boolean, "shell_wrap": boolean,
    "shell": optional(shell_list), "cwd": optional(path), "stdout": list_of(path_entry),
    "stderr": list_of(path_entry), "stdin": list_of(path_entry), "join": boolean,
    "env": mapping(env_name, env_value), "export_all": boolean,
    "submit_env": mapping(env_name, env_value), "priority": integer(-1023, 1024),
    "user_hold": boolean, "hold_jid": hold_list,
    "hold_jid_ad": hold_list,
    "start_at": optional(moment), "deadline": optional(moment), "tasks": optional(task_range),
    "tc": optional(integer(0, MAX_TASK_ID)), "queues": hard_soft(list_of(word, MAX_QUEUE_SPECS), list),
    "resources": hard_soft(mapping(word, request_value), dict), "masterq": list_of(word, MAX_QUEUE_SPECS),
    "pe": optional(pe_request), "project": optional(object_name), "account": account,
    "ar": optional(integer(1, MAX_JOB_ID)), "reserve": boolean, "notify": boolean,
    "rerun": optional(boolean), "mail_options": mail_letters, "mail_list": list_of(line),
    "ckpt": optional(object_name), "ckpt_when": optional(word),
    "jobshare": integer(0, 2 ** 31 - 1), "context": mapping(word, line), "now": boolean,
    "verify": one_of("e", "w", "n", "v", "p"), "binding": optional(line), "jsv": optional(line),
    "override_tickets": integer(0, 2 ** 31 - 1), "hard_errors": boolean,
    "gid": integer(0, 2 ** 32 - 2), "sge_o": mapping(one_of(*sorted(SGE_O_KEYS)), env_value),
    "submit_host": word, "submit_time": moment, "script_name": line,
    "args": list_of(env_value), "command": optional(line), "aliases": list_of(alias),
    "job_script": one_of("QRSH"), "interactive": boolean, "client": client,
    "condor_ad": condor_ads, "job_prio": integer(-2 ** 31, 2 ** 31 - 1),
    "batch_name": optional(line), "universe": integer(1, 20), "requests_pending": boolean,
    "per_job_requests": list_of(word), "materialize": integer(-2 ** 31, 2 ** 31 - 1),  # (daemon.factory)
    "materialize_items": integer(0, 2 ** 31 - 1),
}
#: fields every job description has
REQUIRED = ("id", "name", "submit_time")


def check(spec, types=None, max_tasks=0):
    """A clean copy of job description ``spec``, or Invalid naming the first problem.

    ``types`` maps complex names (and shortcuts) to their types (``TIME``,
    ``MEMORY``, ``INT``, ``DOUBLE``, ``BOOL``) for the resource values; the
    limits are always checked. ``max_tasks`` > 0 caps the tasks of an array.
    """
    if not isinstance(spec, dict):
        raise Invalid("the job description must be a mapping")
    for field in REQUIRED:
        if field not in spec:
            raise Invalid(f'field "{field}" is missing')
    _check_array_size(spec.get("tasks"), max_tasks)
    clean = {}
    for field, value in spec.items():
        checker = FIELDS.get(field) if isinstance(field, str) else None
        if checker is not None and field not in DAEMON_FIELDS:
            clean[field] = checker(value, field)
    _check_whole(clean, types, max_tasks)
    return clean


def _check_whole(spec, types, max_tasks):
    """Checks that look at several fields, or at values with a meaning of their own."""
    if spec.get("binary") and not spec.get("command"):
        raise Invalid('field "command" is missing for a binary job (-b y)')
    for part, requests in (spec.get("resources") or {}).items():
        for name, value in requests.items():
            check_resource(name, value, (types or {}).get(name) or LIMIT_TYPES.get(name))


def _check_array_size(rng, max_tasks):
    """Refuse an array of more than ``max_tasks`` tasks (before its range is checked:
    ``-t 1-99999999999`` is too large before it is out of range)."""
    if max_tasks <= 0 or not isinstance(rng, list) or len(rng) != 3:
        return
    first, last, step = rng
    if all(type(n) is int for n in rng) and step >= 1 and last >= first \
            and (last - first) // step + 1 > max_tasks:
        raise Invalid(TOO_MANY_TASKS.format(max_tasks))


#: complex type -> the name of its parser in ``formats.values`` (imported when a job
#: requests resources)
_PARSERS = {"TIME": "parse_time", "MEMORY": "parse_memory", "INT": "parse_number",
            "DOUBLE": "parse_number", "BOOL": "parse_bool"}


def check_resource(name, value, ctype):
    """Refuse a resource request whose value does not read as its complex's type."""
    if ctype not in _PARSERS:
        return
    from gridtools.formats import values
    parse = getattr(values, _PARSERS[ctype])
    try:
        number = parse(value)
    except InputError:
        raise Invalid(f'invalid value "{shown(value)}" for resource "{name}"') from None
    if isinstance(number, float) and number != number:                      # NaN
        raise Invalid(f'invalid value "{shown(value)}" for resource "{name}"')


# ---------------------------------------------------------------- the cell's names

class CellNames:
    """The names of the cell's objects a job's requests may name, as ``names_refusal``
    looks them up: qsub can read them from etc/, the daemon gives those of its loaded
    configuration. A plain class (see ``formats.sge.admission.CellView``)."""

    __slots__ = ("queues", "queue_hosts", "pes", "ckpts", "complex_name")

    def __init__(self, queues, queue_hosts, pes, ckpts, complex_name):
        self.queues = queues            # the cluster queues' names
        self.queue_hosts = queue_hosts  # queue name -> the hosts of its hostlist (groups resolved)
        self.pes = pes                  # the parallel environments' names
        self.ckpts = ckpts              # the checkpointing environments' names (a container)
        self.complex_name = complex_name    # a request's name or shortcut -> complex name, or None


#: Grid Engine's refusal of a -q or -masterq naming no queue or queue instance of the cell
UNKNOWN_QUEUE = 'Job was rejected because job requests unknown queue "{}"'


def names_refusal(req, names, new_job=False):
    """Why Grid Engine refuses a job whose requests (``req``: a job description, or the
    fields a qalter changes) name what the cell (``names``, a ``CellNames``) does not
    have, in the words of qsub's ``check_request``: two -o/-e/-i/-S paths for one host,
    a master queue without a PE (``new_job`` only: qmaster refuses it at submit), an
    unknown queue, PE, checkpointing environment or resource, and -c letters that cannot
    apply (``new_job`` only). None when there is nothing to refuse. Projects, values and
    access are checked elsewhere (``formats.sge.admission``, ``check``)."""
    for field in ("stdout", "stderr", "stdin", "shell"):
        hosts = [str(entry[0] or "").lower() for entry in req.get(field) or ()]
        if len(set(hosts)) < len(hosts):
            return "ERROR! two files are specified for the same host"
    queues = req.get("queues") or {}
    masterq, pe = req.get("masterq") or [], req.get("pe")
    if new_job and masterq and not pe:
        return "job rejected: specification of master queue is not allowed for non-parallel jobs"
    specs = list(queues.get("hard") or ()) + list(queues.get("soft") or ()) + list(masterq)
    if specs:
        from gridtools import wildcards
        for spec in specs:
            qpart, at, hpart = spec.partition("@")
            matched = [q for q in names.queues if wildcards.match(q, qpart or "*")]
            if not matched or (at and not hpart.startswith("@") and not any(
                    wildcards.match(h, hpart, fold=True) for q in matched for h in names.queue_hosts(q))):
                return UNKNOWN_QUEUE.format(spec)
    if pe:
        from gridtools import wildcards
        if not any(wildcards.match(p, pe[0]) for p in names.pes):
            return f'job rejected: the requested parallel environment "{pe[0]}" does not exist'
    ckpt = req.get("ckpt")
    if ckpt and ckpt not in names.ckpts:
        return f'job rejected: the requested checkpointing environment "{ckpt}" does not exist'
    if new_job:
        why = ckpt_when_refusal(req.get("ckpt_when") or "", ckpt)
        if why:
            return why
    for part in ("hard", "soft"):
        for name in ((req.get("resources") or {}).get(part) or {}):
            if names.complex_name(name) is None:
                return f'unknown resource "{name}"'
    return None


def ckpt_when_refusal(when, ckpt):
    """Why ``-c when`` cannot apply, as Grid Engine's qmaster refuses it at submission:
    ``n`` with other letters or with ``-ckpt``; letters other than ``n``, or an interval,
    without ``-ckpt`` (``ckpt``: the job's checkpointing environment). None when it can."""
    interval = when[:1].isdigit() or when[:1] == ":"
    letters = set() if interval else set(when)
    if "n" in letters and (len(letters) > 1 or ckpt):
        return 'job rejected: checkpointing with "-c n" requested'
    if not ckpt and (interval or letters - {"n"}):
        return "checkpointing denied"
    return None


def alter_words(text):
    """A ``names_refusal`` as Grid Engine's qmaster answers it to qalter (as qalter's own
    check words it): an unknown queue as qsub's, an unknown checkpointing environment
    without "denied:", the others after "denied:" without qsub's "job rejected" and
    "requested"."""
    if text.startswith((UNKNOWN_QUEUE.partition('"')[0], '"job" rejected: ', "ERROR! ")):
        return text
    for head in ("job rejected: ", "Job was rejected because job ", "Job was rejected because "):
        if text.startswith(head):
            text = text[len(head):]
            break
    text = text[len("requests "):] if text.startswith("requests ") else text
    if text.startswith("the requested checkpointing environment"):
        return text[len("the requested "):]
    if text.startswith("the requested parallel environment"):
        text = text[len("the requested "):]
    return f"denied: {text}"

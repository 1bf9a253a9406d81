"""The submit option table shared by qsub, qalter, qrsh, qrsub, ``#$`` lines and sge_request files.

Options are applied in order to a job *request* (a plain dict, the job's
description as it is spooled). ``parse(words, request, ctx)`` consumes option
words and returns the words left over (script and arguments). Each option is
one entry of ``OPTIONS``: how many argument words it takes and the function
that applies it. Values are checked here, so a bad value is reported with the
option that carried it before anything is queued.

Imports stay on the standard library core: this runs on every qsub.
"""

import os
import time

from gridtools.cli.sge.tokens import split_list
from gridtools.errors import InputError, UsageError

#: fields of a request and their defaults; ``-clear`` resets to these
DEFAULTS = {
    "name": None, "binary": False, "shell_wrap": True, "shell": None, "cwd": None,
    "stdout": [], "stderr": [], "stdin": [], "join": False, "env": {}, "export_all": False,
    "priority": 0, "user_hold": False, "hold_jid": [], "hold_jid_ad": [], "start_at": None,
    "tasks": None, "tc": None, "queues": {"hard": [], "soft": []},
    "resources": {"hard": {}, "soft": {}}, "masterq": [], "pe": None, "project": None,
    "account": "sge", "ar": None, "reserve": False, "notify": False, "rerun": None,
    "mail_options": "", "mail_list": [], "ckpt": None, "ckpt_when": None, "deadline": None,
    "jobshare": 0, "context": {}, "now": False, "verify": "n", "binding": None, "jsv": None,
    "override_tickets": 0, "hard_errors": False,
}


def fresh_request():
    """A request with every field at its default (deep-copied)."""
    req = {}
    for key, value in DEFAULTS.items():
        if isinstance(value, dict):
            req[key] = {k: (type(v)() if isinstance(v, (list, dict)) else v) for k, v in value.items()}
        elif isinstance(value, list):
            req[key] = []
        else:
            req[key] = value
    return req


class Context:
    """What option parsing needs besides the words: soft/hard mode, client flags."""

    def __init__(self, prog="qsub", cwd=None, env=None):
        self.prog = prog
        self.cwd = cwd if cwd is not None else os.getcwd()
        self.env = env if env is not None else os.environ
        self.soft = False
        self.client = {}          # qsub-only flags: terse, sync, verify_only, prefix
        self.seen = []            # option names in the order met (qalter uses them)
        self.in_file = None       # set while reading a request file or directives


# ---------------------------------------------------------------- value parsers

def parse_yes_no(opt, text):
    low = text.lower()
    if low in ("y", "yes"):
        return True
    if low in ("n", "no"):
        return False
    raise InputError(f"invalid option argument \"{opt} {text}\"")


def parse_datetime(text, now=None):
    """Grid Engine's ``[[CC]YY]MMDDhhmm[.SS]`` as epoch seconds (local time)."""
    body, _, secs = text.partition(".")
    if not body.isdigit() or len(body) not in (8, 10, 12) or (secs and not secs.isdigit()):
        raise InputError(f'invalid date_time "{text}": expected [[CC]YY]MMDDhhmm[.SS]')
    lt = time.localtime(now if now is not None else time.time())
    year = lt.tm_year
    if len(body) == 12:
        year, body = int(body[:4]), body[4:]
    elif len(body) == 10:
        year, body = 2000 + int(body[:2]), body[2:]
    month, day, hour, minute = (int(body[i:i + 2]) for i in range(0, 8, 2))
    sec = int(secs) if secs else 0
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and sec < 62):
        raise InputError(f'invalid date_time "{text}"')
    return time.mktime((year, month, day, hour, minute, sec, 0, 0, -1))


def parse_task_range(text):
    """``n[-m[:s]]`` as [first, last, step]; a reversed range is swapped as Grid Engine does."""
    body, _, step = text.partition(":")
    first, dash, last = body.partition("-")
    try:
        a = int(first)
        b = int(last) if dash else a
        s = int(step) if step else 1
    except ValueError:
        raise InputError(f'invalid task id range "{text}"') from None
    if a > b:
        a, b = b, a
    if a < 1 or s < 1:
        raise InputError(f'invalid task id range "{text}": task ids and step must be positive')
    b = a + (b - a) // s * s
    return [a, b, s]


def parse_slot_range(text):
    """A PE slot range ``n``, ``n-m``, ``-m``, ``n-`` as [min, max] (max 0 = unlimited)."""
    lo, dash, hi = text.partition("-")
    try:
        a = int(lo) if lo else 1
        b = (int(hi) if hi else 0) if dash else a
    except ValueError:
        raise InputError(f'invalid slot range "{text}"') from None
    if a < 1 or (b and b < a):
        raise InputError(f'invalid slot range "{text}"')
    return [a, b]


def parse_path_list(text):
    """``[host:]path[,[host:]path...]`` as [[host or None, path], ...]."""
    result = []
    for item in text.split(","):
        if not item:
            raise InputError(f'invalid path list "{text}"')
        host, colon, path = item.partition(":")
        result.append([host, path] if colon and "/" not in host else [None, item])
    return result


def parse_resource_list(text):
    """``name[=value],...`` as an ordered dict (name -> value text or "TRUE")."""
    result = {}
    for item in split_list(text):
        name, eq, value = item.partition("=")
        name = name.strip()
        if not name or (eq and value == ""):
            raise InputError(f'invalid resource request "{text}"')
        result[name] = value if eq else "TRUE"
    return result


def parse_env_list(text, env):
    """``-v`` list: ``NAME=value`` or ``NAME`` (taken from the submit environment)."""
    result = {}
    for item in text.split(","):
        if not item:
            continue
        name, eq, value = item.partition("=")
        if not name:
            raise InputError(f'invalid variable list "{text}"')
        result[name] = value if eq else env.get(name, "")
    return result


# ---------------------------------------------------------------- appliers

def _set(field, conv=None):
    def apply(req, args, ctx):
        req[field] = conv(args[0]) if conv else args[0]
    return apply


def _flag(field, value=True):
    def apply(req, args, ctx):
        req[field] = value
    return apply


def _yes_no(field):
    def apply(req, args, ctx):
        req[field] = parse_yes_no(ctx.current, args[0])
    return apply


def _client(key, value=None, conv=None):
    def apply(req, args, ctx):
        if value is not None:
            ctx.client[key] = value
        else:
            ctx.client[key] = conv(ctx.current, args[0]) if conv else args[0]
    return apply


def _apply_l(req, args, ctx):
    req["resources"]["soft" if ctx.soft else "hard"].update(parse_resource_list(args[0]))


def _apply_q(req, args, ctx):
    req["queues"]["soft" if ctx.soft else "hard"].extend(split_list(args[0]))


def parse_slot_ranges(text):
    """A PE slot range list ``1,2,4,8`` or ``2-4,8-`` as [[min, max], ...] (max 0 = unlimited)."""
    items = [item for item in text.split(",")]
    if not items or any(not item for item in items):
        raise InputError(f'invalid slot range "{text}"')
    return [parse_slot_range(item) for item in items]


def pe_request(name, text):
    """The spooled form of ``-pe name slots``: [name, min, max] for one range, or
    [name, [[min, max], ...]] for a slot list."""
    found = parse_slot_ranges(text)
    if len(found) == 1:
        return [name, found[0][0], found[0][1]]
    return [name, sorted(found)]


def _apply_pe(req, args, ctx):
    req["pe"] = pe_request(args[0], args[1])


def _apply_p(req, args, ctx):
    try:
        prio = int(args[0])
    except ValueError:
        raise InputError(f'invalid priority "{args[0]}": must be an integer') from None
    if not -1023 <= prio <= 1024:
        raise InputError(f"priority {prio} out of range -1023 to 1024")
    req["priority"] = prio


def _apply_v(req, args, ctx):
    req["env"].update(parse_env_list(args[0], ctx.env))


def _apply_V(req, args, ctx):
    req["export_all"] = True


def _apply_cwd(req, args, ctx):
    req["cwd"] = ctx.cwd


def _apply_wd(req, args, ctx):
    path = args[0]
    req["cwd"] = path if os.path.isabs(path) else os.path.normpath(os.path.join(ctx.cwd, path))


def _apply_hold_jid(field):
    def apply(req, args, ctx):
        req[field] = req[field] + [i for i in split_list(args[0]) if i not in req[field]]
    return apply


def _apply_t(req, args, ctx):
    req["tasks"] = parse_task_range(args[0])


def _apply_tc(req, args, ctx):
    try:
        req["tc"] = int(args[0])
    except ValueError:
        raise InputError(f'invalid task concurrency "{args[0]}"') from None


def _apply_a(field):
    def apply(req, args, ctx):
        req[field] = parse_datetime(args[0])
    return apply


def _apply_m(req, args, ctx):
    opts = args[0].replace(",", "")
    if any(c not in "beasn" for c in opts):
        raise InputError(f'invalid mail option "{args[0]}": use b, e, a, s or n')
    req["mail_options"] = "" if opts == "n" else opts


def _apply_M(req, args, ctx):
    req["mail_list"] = split_list(args[0])


def _apply_ctx(mode):
    def apply(req, args, ctx):
        if mode == "set":
            req["context"] = {}
        for item in split_list(args[0]):
            name, _, value = item.partition("=")
            if mode == "del":
                req["context"].pop(name, None)
            else:
                req["context"][name] = value
    return apply


def _apply_c(req, args, ctx):
    req["ckpt_when"] = args[0]


def _apply_w(req, args, ctx):
    if args[0] not in ("e", "w", "n", "v", "p"):
        raise InputError(f'invalid verification mode "{args[0]}": use e, w, n, v or p')
    req["verify"] = args[0]


def _apply_js(req, args, ctx):
    try:
        req["jobshare"] = int(args[0])
    except ValueError:
        raise InputError(f'invalid job share "{args[0]}"') from None


def _apply_ot(req, args, ctx):
    try:
        req["override_tickets"] = int(args[0])
    except ValueError:
        raise InputError(f'invalid ticket count "{args[0]}"') from None


def _apply_ar(req, args, ctx):
    if not args[0].isdigit():
        raise UsageError("invalid advance reservation id, must be an unsigned integer")
    req["ar"] = int(args[0])


def _apply_soft(req, args, ctx):
    ctx.soft = True


def _apply_hard(req, args, ctx):
    ctx.soft = False


def _apply_clear(req, args, ctx):
    req.clear()
    req.update(fresh_request())
    ctx.soft = False


def _apply_S(req, args, ctx):
    req["shell"] = parse_path_list(args[0])[0][1]


def _apply_b(req, args, ctx):
    req["binary"] = parse_yes_no("-b", args[0])


def _apply_binding(req, args, ctx):
    req["binding"] = " ".join(args)


def _apply_j(req, args, ctx):
    req["join"] = parse_yes_no("-j", args[0])


def _path_opt(field):
    def apply(req, args, ctx):
        req[field] = parse_path_list(args[0])
    return apply


def _sync(opt, text):
    return parse_yes_no(opt, text)


# option name -> (number of argument words, applier, who may use it)
# who: "all" everywhere, "submit" not in qalter, "cli" command line only, "alter" qalter only
OPTIONS = {
    "-a": (1, _apply_a("start_at"), "all"),
    "-ac": (1, _apply_ctx("add"), "all"),
    "-A": (1, _set("account"), "all"),
    "-ar": (1, _apply_ar, "all"),
    "-b": (1, _apply_b, "submit"),
    "-binding": (1, _apply_binding, "all"),
    "-c": (1, _apply_c, "all"),
    "-ckpt": (1, _set("ckpt"), "all"),
    "-clear": (0, _apply_clear, "all"),
    "-cwd": (0, _apply_cwd, "all"),
    "-C": (1, _client("prefix"), "cli"),
    "-dc": (1, _apply_ctx("del"), "all"),
    "-dl": (1, _apply_a("deadline"), "all"),
    "-e": (1, _path_opt("stderr"), "all"),
    "-h": (0, _flag("user_hold"), "all"),
    "-hard": (0, _apply_hard, "all"),
    "-he": (1, _yes_no("hard_errors"), "all"),
    "-hold_jid": (1, _apply_hold_jid("hold_jid"), "all"),
    "-hold_jid_ad": (1, _apply_hold_jid("hold_jid_ad"), "all"),
    "-i": (1, _path_opt("stdin"), "all"),
    "-j": (1, _apply_j, "all"),
    "-js": (1, _apply_js, "all"),
    "-jsv": (1, _set("jsv"), "all"),
    "-l": (1, _apply_l, "all"),
    "-m": (1, _apply_m, "all"),
    "-M": (1, _apply_M, "all"),
    "-masterq": (1, lambda r, a, c: r.__setitem__("masterq", split_list(a[0])), "all"),
    "-N": (1, _set("name"), "all"),
    "-notify": (0, _flag("notify"), "all"),
    "-now": (1, _yes_no("now"), "submit"),
    "-o": (1, _path_opt("stdout"), "all"),
    "-ot": (1, _apply_ot, "alter"),
    "-u": (1, _client("users", conv=lambda opt, text: split_list(text)), "alter"),
    "-P": (1, _set("project"), "all"),
    "-p": (1, _apply_p, "all"),
    "-pe": (2, _apply_pe, "all"),
    "-q": (1, _apply_q, "all"),
    "-R": (1, _yes_no("reserve"), "all"),
    "-r": (1, _yes_no("rerun"), "all"),
    "-sc": (1, _apply_ctx("set"), "all"),
    "-shell": (1, _yes_no("shell_wrap"), "all"),
    "-soft": (0, _apply_soft, "all"),
    "-S": (1, _apply_S, "all"),
    "-sync": (1, _client("sync", conv=_sync), "cli"),
    "-t": (1, _apply_t, "submit"),
    "-tc": (1, _apply_tc, "all"),
    "-terse": (0, _client("terse", True), "cli"),
    "-v": (1, _apply_v, "all"),
    "-V": (0, _apply_V, "all"),
    "-verify": (0, _client("verify_only", True), "cli"),
    "-w": (1, _apply_w, "all"),
    "-wd": (1, _apply_wd, "all"),
}


def parse(words, req, ctx, allowed=("all", "submit", "cli"), stop_at_arg=True):
    """Apply option ``words`` to ``req``; return the words after the options.

    The first word that is not an option (or ``-`` alone, meaning the script
    comes from stdin) ends the options when ``stop_at_arg``; it and all
    later words are returned.
    """
    i = 0
    n = len(words)
    while i < n:
        word = words[i]
        if word == "-@":
            if i + 1 >= n:
                raise UsageError('option "-@" requires an argument')
            from gridtools.cli.sge.tokens import read_option_file
            words = words[:i] + read_option_file(words[i + 1], missing_ok=False) + words[i + 2:]
            n = len(words)
            continue
        if not word.startswith("-") or word == "-":
            if stop_at_arg:
                return words[i:]
            raise UsageError(f'invalid option argument "{word}"')
        entry = OPTIONS.get(word)
        if entry is None or entry[2] not in allowed:
            raise UsageError(f'invalid option argument "{word}"')
        nargs, apply, _ = entry
        if i + nargs > n - 1:
            raise UsageError(f'option "{word}" requires an argument')
        ctx.current = word
        ctx.seen.append(word)
        apply(req, words[i + 1:i + 1 + nargs], ctx)
        i += 1 + nargs
    return []

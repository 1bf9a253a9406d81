"""The submit option table shared by qsub, qalter, qrsh, qrsub, ``#$`` lines and sge_request files.

Options are applied in order to a job *request* (a plain dict, the job's
description as it is spooled). ``parse(words, request, ctx)`` consumes option
words and returns the words left over (script and arguments). Each option is
one entry of ``OPTIONS``: how many argument words it takes and the function
that applies it. Values are checked here (with the parsers of ``optvalues``),
so a bad value is reported with the option that carried it before anything
is queued.

Imports stay on the standard library core: this runs on every qsub.
"""

import posix

from gridtools import ospaths
from gridtools.cli.sge.optvalues import (
    BINDING_TYPES, fail, must_have, parse_binding, parse_ckpt_when, parse_context, parse_datetime, parse_env_list,
    parse_job_name, parse_mail_list, parse_mail_options, parse_names, parse_path_list, parse_priority,
    parse_resource_list, parse_slot_range, parse_task_concurrency, parse_task_range,
    parse_unsigned, parse_yes_no)
from gridtools.errors import GridError, UsageError, lines

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


#: how many -@ option files one command line may read (a file naming itself ends here)
MAX_OPTION_FILES = 64


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
        self.cwd = cwd if cwd is not None else posix.getcwd()
        self._env = env
        self.soft = False
        self.client = {}          # qsub-only flags: terse, sync, verify_only, prefix
        self.seen = []            # option names in the order met (qalter uses them)
        self.unknown = []         # qsub: options Grid Engine's parser takes and qsub does not
        self.in_file = None       # set while reading a request file or directives
        self.source = "cmdline"   # which source is being read: "defaults", "script", "cmdline"
        self.queues_from = None   # the source whose -q the request holds (see _apply_q)

    @property
    def env(self):
        """The environment -v takes values from (the process's, unless one was given)."""
        return self._env if self._env is not None else ospaths.environ()


# ---------------------------------------------------------------- appliers

def _set(field, conv=None):
    def apply(req, args, ctx):
        req[field] = conv(args[0]) if conv else args[0]
    return apply


def _named(field):
    """An option whose argument names something (-P, -ckpt, -jsv, -A): never empty."""
    def apply(req, args, ctx):
        req[field] = must_have(ctx.current, args[0])
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


def _unsigned(field, message):
    def apply(req, args, ctx):
        req[field] = parse_unsigned(args[0], message)
    return apply


def _apply_l(req, args, ctx):
    req["resources"]["soft" if ctx.soft else "hard"].update(parse_resource_list(args[0]))


def _queue_list(text, opt):
    return parse_names(text, f'Wrong queue list format "{text}" specified to {opt} option')


def _apply_q(req, args, ctx):
    """-q: a union within one source; the first -q of a higher source (directives over
    request files, the command line over both) discards every -q, hard and soft, of
    the lower ones (sge_request(5), as Grid Engine's opt_list_merge_command_lines)."""
    if ctx.queues_from != ctx.source:
        req["queues"] = {"hard": [], "soft": []}
        ctx.queues_from = ctx.source
    req["queues"]["soft" if ctx.soft else "hard"].extend(_queue_list(args[0], "-q"))


def _apply_masterq(req, args, ctx):
    """-masterq: every one given adds to the list (as Grid Engine's parse_list_hardsoft)."""
    found = _queue_list(args[0], "-masterq")
    req["masterq"] = req["masterq"] + [q for q in found if q not in req["masterq"]]


def parse_slot_ranges(text, what="job"):
    """A PE slot range list ``1,2,4,8`` or ``2-4,8-`` as [[min, max], ...] (max 0 = unlimited)."""
    items = text.split(",")
    if any(not item for item in items):
        raise fail(f'invalid slot range "{text}"')
    return [parse_slot_range(item, what) for item in items]


def pe_request(name, text, what="job"):
    """The spooled form of ``-pe name slots``: [name, min, max] for one range, or
    [name, [[min, max], ...]] for a slot list (``what``: as ``parse_slot_range``)."""
    found = parse_slot_ranges(text, what)
    if len(found) == 1:
        return [name, found[0][0], found[0][1]]
    return [name, sorted(found)]


def _apply_pe(req, args, ctx):
    if args[0] == "":
        raise fail("-pe option must have pe_name argument")
    req["pe"] = pe_request(args[0], args[1])


def _apply_v(req, args, ctx):
    req["env"].update(parse_env_list(args[0], ctx.env))


def _apply_display(req, args, ctx):
    """qrsh's -display: the job gets DISPLAY set to it, as Grid Engine puts it into the
    job's environment list."""
    req["env"]["DISPLAY"] = must_have("-display", args[0])


def _apply_V(req, args, ctx):
    req["export_all"] = True


def _apply_cwd(req, args, ctx):
    req["cwd"] = ctx.cwd


def _apply_wd(req, args, ctx):
    path = must_have("-wd", args[0])
    req["cwd"] = path if path.startswith("/") else ospaths.normpath(ospaths.join(ctx.cwd, path))


def _apply_hold_jid(field):
    def apply(req, args, ctx):
        opt = "-" + field
        kind = "jid_hold_ad" if field.endswith("_ad") else "jid_hold"
        ids = parse_names(args[0], f'Wrong {kind} list format "{args[0]}" specified to {opt} option')
        req[field] = list(dict.fromkeys(req[field] + ids))
    return apply


def _apply_a(field, opt):
    def apply(req, args, ctx):
        req[field] = parse_datetime(args[0], opt=opt)
    return apply


def _apply_M(req, args, ctx):
    req["mail_list"] = parse_mail_list(args[0])


def _apply_ctx(mode):
    def apply(req, args, ctx):
        items = parse_context(args[0], ctx.current)
        if mode == "set":
            req["context"] = {}
        for name, value in items:
            if mode == "del":
                req["context"].pop(name, None)
            else:
                req["context"][name] = value
    return apply


def _apply_w(req, args, ctx):
    if args[0] not in ("e", "w", "n", "v", "p"):
        raise fail(f'invalid option argument "-w {args[0]}"')
    req["verify"] = args[0]


def _apply_soft(req, args, ctx):
    ctx.soft = True


def _apply_hard(req, args, ctx):
    ctx.soft = False


def _apply_clear(req, args, ctx):
    req.clear()
    req.update(fresh_request())
    ctx.soft = False
    ctx.client.pop("jsv", None)


def _apply_jsv(req, args, ctx):
    """-jsv: every one given counts (the JSVs run in turn, see cli.sge.jsv); the job keeps
    the last named. Its url is checked as it is read, as Grid Engine's option parser
    checks it (``jsv.check_url``: a program that can run, or ``none``)."""
    req["jsv"] = must_have(ctx.current, args[0])
    from gridtools.cli.sge import jsv
    jsv.check_url(req["jsv"])
    ctx.client.setdefault("jsv", []).append(req["jsv"])


def _apply_S(req, args, ctx):
    req["shell"] = merge_per_host(req.get("shell") or [], parse_path_list(args[0], "-S"))


def _apply_binding(req, args, ctx):
    req["binding"] = parse_binding(args)


def _path_opt(field, opt):
    """-o, -e, -i, -S: ``[host:]path`` lists merged per host (as Grid Engine's
    FLG_LIST_MERGE): a later entry for a host (or for none) replaces the one before."""
    def apply(req, args, ctx):
        req[field] = merge_per_host(req.get(field) or [], parse_path_list(args[0], opt))
    return apply


def merge_per_host(old, new):
    """``old`` [[host, path], ...] with the entries of ``new`` merged in by host."""
    if not old:
        return new
    merged = {host: path for host, path in old}
    merged.update((host, path) for host, path in new)
    return [[host, path] for host, path in merged.items()]


def _apply_sync(req, args, ctx):
    """-sync: ``y`` from any source wins over ``n`` from any other, whatever the order
    (as Grid Engine 8.1.9's qsub: any -sync y makes it wait; -clear keeps it)."""
    ctx.client["sync"] = parse_yes_no(ctx.current, args[0]) or bool(ctx.client.get("sync"))


def _apply_prefix(req, args, ctx):
    """-C: the first one given counts (as Grid Engine's qsub takes the first -C)."""
    ctx.client.setdefault("prefix", args[0])


def _users(opt, text):
    return parse_names(text, "-u option must have a list usernames")


# option name -> (number of argument words, applier, who may use it)
# who: "all" everywhere, "submit" not in qalter, "alter" qalter only, "qrsh" qrsh only
# (on its command line and in its directives), "cli" qsub only:
# accepted in its request files and directives too, where -terse and -C are ignored
# (qsub.build), as Grid Engine's qsub does
OPTIONS = {
    "-a": (1, _apply_a("start_at", "-a"), "all"),
    "-ac": (1, _apply_ctx("add"), "all"),
    "-A": (1, _named("account"), "all"),
    "-ar": (1, _unsigned("ar", "invalid advance reservation id, must be an unsigned integer"), "all"),
    "-b": (1, _yes_no("binary"), "submit"),
    "-binding": (1, _apply_binding, "all"),
    "-c": (1, _set("ckpt_when", parse_ckpt_when), "all"),
    "-ckpt": (1, _named("ckpt"), "all"),
    "-clear": (0, _apply_clear, "all"),
    "-cwd": (0, _apply_cwd, "all"),
    "-C": (1, _apply_prefix, "cli"),
    "-dc": (1, _apply_ctx("del"), "all"),
    "-display": (1, _apply_display, "qrsh"),
    "-dl": (1, _apply_a("deadline", "-dl"), "all"),
    "-e": (1, _path_opt("stderr", "-e"), "all"),
    "-h": (0, _flag("user_hold"), "all"),
    "-hard": (0, _apply_hard, "all"),
    "-he": (1, _yes_no("hard_errors"), "all"),
    "-hold_jid": (1, _apply_hold_jid("hold_jid"), "all"),
    "-hold_jid_ad": (1, _apply_hold_jid("hold_jid_ad"), "all"),
    "-i": (1, _path_opt("stdin", "-i"), "all"),
    "-j": (1, _yes_no("join"), "all"),
    "-js": (1, _unsigned("jobshare", "invalid jobshare, must be an unsigned integer"), "all"),
    "-jsv": (1, _apply_jsv, "all"),
    "-l": (1, _apply_l, "all"),
    "-m": (1, _set("mail_options", parse_mail_options), "all"),
    "-M": (1, _apply_M, "all"),
    "-masterq": (1, _apply_masterq, "all"),
    "-N": (1, _set("name", parse_job_name), "all"),
    "-noshell": (0, _client("noshell", True), "qrsh"),
    "-nostdin": (0, _client("nostdin", True), "qrsh"),
    "-notify": (0, _flag("notify"), "all"),
    "-now": (1, _yes_no("now"), "submit"),
    "-o": (1, _path_opt("stdout", "-o"), "all"),
    "-ot": (1, _unsigned("override_tickets", "invalid override tickets, must be an unsigned integer"),
            "alter"),
    "-u": (1, _client("users", conv=_users), "alter"),
    "-P": (1, _named("project"), "all"),
    "-p": (1, _set("priority", parse_priority), "all"),
    "-pe": (2, _apply_pe, "all"),
    "-pty": (1, _client("pty", conv=parse_yes_no), "qrsh"),
    "-q": (1, _apply_q, "all"),
    "-R": (1, _yes_no("reserve"), "all"),
    "-r": (1, _yes_no("rerun"), "all"),
    "-sc": (1, _apply_ctx("set"), "all"),
    "-shell": (1, _yes_no("shell_wrap"), "all"),
    "-soft": (0, _apply_soft, "all"),
    "-S": (1, _apply_S, "all"),
    "-sync": (1, _apply_sync, "cli"),
    "-t": (1, _set("tasks", parse_task_range), "submit"),
    "-tc": (1, _set("tc", parse_task_concurrency), "all"),
    "-terse": (0, _client("terse", True), "cli"),
    "-v": (1, _apply_v, "all"),
    "-V": (0, _apply_V, "all"),
    "-verbose": (0, _client("verbose", True), "qrsh"),
    "-verify": (0, _client("verify_only", True), "cli"),
    "-w": (1, _apply_w, "all"),
    "-wd": (1, _apply_wd, "all"),
}


#: what qsub does with the options of other commands that Grid Engine's option parser
#: knows (its argument words are taken and checked as that parser does): "ignore" (the
#: parser keeps them in the job, which does nothing with them), else "unknown" (qsub
#: refuses the job after reading every option: ``Unknown option -ot 5``, exit 5)
FOREIGN = {"-u": "ignore", "-pty": "ignore", "-ot": "unknown", "-noshell": "unknown",
           "-nostdin": "unknown", "-verbose": "unknown", "-display": "unknown"}

#: options of other commands Grid Engine's option parser knows and that no gridtools
#: command takes here: their argument words, unchecked (all "unknown" to qsub)
PARSER_ONLY = {"-uall": 0, "-explain": 0, "-xml": 0, "-inherit": 0, "-cell": 1, "-d": 1}

#: the exit code of qsub's refusal of an option it does not take (Grid Engine's
#: STATUS_ENOIMP)
UNKNOWN_OPTION_EXIT = 5


def arity(word, rest, at=0):
    """How many argument words option ``word`` takes when ``rest[at:]`` follows it
    (-binding takes a type word first when one is given)."""
    if word == "-binding" and at < len(rest) and rest[at] in BINDING_TYPES:
        return 2
    return OPTIONS[word][0]


def usage(prog, allowed):
    """The -help text of qsub or qrsh: the option table's entries ``allowed`` for it."""
    from gridtools.cli.sge import usage_text
    names = {name for name, entry in OPTIONS.items() if entry[2] in allowed} | {"-help", "-@"}
    if prog == "qrsh":
        names.add("-inherit")
    tail = {"qsub": "[{command|-} [command_args]]", "qlogin": ""}.get(prog, "[command [command_args]]")
    return usage_text.submit_usage(prog, names, tail)


def _missing_argument(word, ctx):
    """The refusal of option ``word`` given without its argument words: on the command
    line (and in its -@ files) and in request files ``-N option must have argument``
    (exit 2); in a script directive Grid Engine's words for it, exit 2."""
    if ctx.source == "script":
        return GridError(f"Unable to read script file because of error: ERROR! {word} option must have argument", 2)
    return UsageError(f"{word} option must have argument")


def parse(words, req, ctx, allowed=("all", "submit", "cli"), stop_at_arg=True):
    """Apply option ``words`` to ``req``; return the words after the options.

    The first word that is not an option (or ``-`` alone, meaning the script
    comes from stdin) ends the options when ``stop_at_arg``; it and all
    later words are returned. ``tokens.LINE_END`` in ``words`` ends a line of an
    option file or of the directives (Grid Engine parses each by itself): an
    option's argument words never reach past it.
    """
    from gridtools.cli.sge.tokens import LINE_END
    i, included = 0, 0
    n = len(words)
    while i < n:
        word = words[i]
        if word is LINE_END:
            i += 1
            continue
        if word == "-@":
            if i + 1 >= n or words[i + 1] is LINE_END:
                raise UsageError("-@ option must have file argument")
            included += 1
            if included > MAX_OPTION_FILES:
                raise UsageError(f"-@ option: more than {MAX_OPTION_FILES} option files read")
            from gridtools.cli.sge.tokens import read_option_file
            words = words[:i] + read_option_file(words[i + 1], missing_ok=False, by_line=True) + words[i + 2:]
            n = len(words)
            continue
        if not word.startswith("-") or word == "-":
            if stop_at_arg:
                return [w for w in words[i:] if w is not LINE_END]
            raise UsageError(f'invalid option argument "{word}"')
        entry = OPTIONS.get(word)
        foreign = "cli" in allowed and (word in PARSER_ONLY or (entry is not None and word in FOREIGN))
        if not foreign and (entry is None or entry[2] not in allowed):
            raise UsageError(f'invalid option argument "{word}"')
        nargs = arity(word, words, i + 1) if entry is not None else PARSER_ONLY[word]
        args = words[i + 1:i + 1 + nargs]
        if len(args) < nargs or any(arg is LINE_END for arg in args):
            raise _missing_argument(word, ctx)
        if any("\0" in arg for arg in args):
            raise fail(f"{word} option argument must not contain a NUL byte")
        ctx.current = word
        if foreign:
            _foreign(word, args, ctx)
        else:
            ctx.seen.append(word)
            entry[1](req, args, ctx)
        i += 1 + nargs
    return []


def _foreign(word, args, ctx):
    """Another command's option given to qsub: its arguments checked as Grid Engine's
    parser checks them (into a scratch request), then ignored or noted as unknown."""
    if word in OPTIONS:
        scratch = Context(ctx.prog, ctx.cwd, ctx._env)
        scratch.current = word
        OPTIONS[word][1](fresh_request(), args, scratch)
    if FOREIGN.get(word) != "ignore":
        ctx.unknown.append(" ".join([word] + args))


class UnknownOptions(GridError):
    """qsub's refusal of the options it read and does not take: a line each, each followed
    by an empty line (Grid Engine's text ends in a newline of its own, its print adds one)."""

    exit_code = UNKNOWN_OPTION_EXIT


def refuse_unknown(ctx):
    """Raise UnknownOptions when qsub read options it does not take."""
    if ctx.unknown:
        raise UnknownOptions(lines(*(part for what in ctx.unknown
                                     for part in (f"qsub: Unknown option {what}", ""))))

"""Client job submission verifiers (JSV): Grid Engine's protocol, run by qsub and qrsh.

A JSV is a program named with ``-jsv [script:]path`` on the command line, in a
script directive or in an sge_request file (``-clear`` forgets those before
it). Every JSV named is run, the last named first (Grid Engine's order: the
command line, then ./.sge_request, ~/.sge_request, the cell's sge_request),
each as the submitting user in the submission's directory (with SGE_ROOT the
cell's root when the caller has none), once for this job, and each sees the
job as the one before it left it. ``-jsv none`` names none. JSVs written in sh
can source ``$SGE_ROOT/util/resources/jsv/jsv_include.sh`` (Grid Engine's
functions: ``jsv_get_param``, ``jsv_correct`` ...; see spool.cellcommon).

The conversation, a line each way at a time (``jsv(1)`` of Grid Engine)::

    qsub: START                    JSV: [SEND ENV] STARTED
    qsub: PARAM name value ...     (the job, VERSION first; ENV ADD name value
    qsub: BEGIN                     when the JSV asked for the environment)
                                   JSV: [PARAM name [value] | ENV ADD|MOD|DEL name [value]
                                         | LOG INFO|WARNING|ERROR text] ...
                                   JSV: RESULT STATE ACCEPT|CORRECT|REJECT|REJECT_WAIT [text]
    qsub: QUIT

ACCEPT and CORRECT both take the job as the PARAM and ENV lines the JSV sent
left it (a PARAM without a value removes the setting), as Grid Engine's
``jsv_do_verify`` does; a JSV that sent none leaves it as it was. REJECT and
REJECT_WAIT refuse the job (``Unable to run job: <text>``, exit 1); so do a
change that is not valid, an unknown command, a line on the JSV's standard
error, and silence: a JSV that has not answered within ``SGE_JSV_TIMEOUT``
seconds (10 by default) is started again once, then the job is refused. LOG
lines are printed on standard output.

The daemon speaks the same conversation with the cell's server JSV
(``daemon.serverjsv``: ``Job``'s context ``server``, ``verify_with``).

Imported only when a submission names a JSV.
"""

import copy
import os
import select
import signal
import subprocess
import time

from gridtools import ospaths
from gridtools.cli.sge import options
from gridtools.cli.sge.optvalues import Rejected
from gridtools.errors import GridError, UsageError
from gridtools.formats.jobcheck import MAX_ITEMS

#: seconds a JSV may take over a line when SGE_JSV_TIMEOUT does not say
DEFAULT_TIMEOUT = 10

#: what the JSV may not change
READ_ONLY = ("CLIENT", "CONTEXT", "GROUP", "JOB_ID", "USER", "VERSION")

#: y|n parameters and the request fields they set
BOOLEANS = {"b": "binary", "j": "join", "notify": "notify", "R": "reserve", "r": "rerun",
            "shell": "shell_wrap"}

#: parameters set through the option that sets them: (the option's words before the
#: value, the request fields a new value replaces, as "field" or "field.part")
THROUGH_OPTIONS = {
    "a": (["-a"], ["start_at"]), "ac": (["-ac"], ["context"]), "ar": (["-ar"], ["ar"]),
    "A": (["-A"], ["account"]), "c_interval": (["-c"], ["ckpt_when"]),
    "c_occasion": (["-c"], ["ckpt_when"]), "ckpt": (["-ckpt"], ["ckpt"]), "cwd": (["-wd"], ["cwd"]),
    "dl": (["-dl"], ["deadline"]), "e": (["-e"], ["stderr"]), "o": (["-o"], ["stdout"]),
    "i": (["-i"], ["stdin"]), "S": (["-S"], ["shell"]), "hold_jid": (["-hold_jid"], ["hold_jid"]),
    "hold_jid_ad": (["-hold_jid_ad"], ["hold_jid_ad"]), "js": (["-js"], ["jobshare"]),
    "l_hard": (["-hard", "-l"], ["resources.hard"]), "l_soft": (["-soft", "-l"], ["resources.soft"]),
    "q_hard": (["-hard", "-q"], ["queues.hard"]), "q_soft": (["-soft", "-q"], ["queues.soft"]),
    "m": (["-m"], ["mail_options"]), "M": (["-M"], ["mail_list"]), "masterq": (["-masterq"], ["masterq"]),
    "N": (["-N"], ["name"]), "P": (["-P"], ["project"]), "p": (["-p"], ["priority"]),
    "tc": (["-tc"], ["tc"]), "w": (["-w"], ["verify"]),
}

#: what a PE range without a top is sent as
NO_TOP = 9999999
#: the longest line a JSV may send, and the most it may send over one verification (bytes):
#: one that sends more is taken for broken, as one that stops answering
LONGEST_LINE = 1 << 20
MOST_SENT = 64 << 20
#: the most LOG lines kept of one verification (one more line says the rest were left out)
MOST_LOGGED = 1000


class Refused(Rejected):
    """A JSV refused the job (or could not verify it): the reason (qsub prints
    ``Unable to run job: <reason>`` and ``Exiting.``, exit 1)."""


class Verdict(Refused):
    """The JSV refused the job (REJECT, REJECT_WAIT): an answer, not a failure of the JSV."""


class Job:
    """What a JSV sees and may change: the request, the script's or command's name, the
    arguments, and the submitter (owner, group, host)."""

    def __init__(self, req, name, command, args, who, outer_env=None, context="client", job_id=None):
        self.req, self.name, self.command, self.args, self.who = req, name, command, list(args), who
        # the environment -V takes (the submitter's; the caller's own by default), the
        # context sent (client, or server in the daemon: daemon.serverjsv) and the job's id
        self.outer_env = outer_env if outer_env is not None else ospaths.environ()
        self.context, self.job_id = context, job_id
        import grp
        try:
            self.group = grp.getgrgid(who["gid"]).gr_name
        except KeyError:
            self.group = str(who["gid"])

    def cmdname(self):
        """The script, the command (-b y), STDIN, or NONE (a qrsh without a command)."""
        return (self.command if self.req["binary"] else self.name) or "NONE"

    def environment(self):
        """The variables the job is to be given: -V's environment, then -v's."""
        env = dict(self.outer_env) if self.req["export_all"] else {}
        env.update({key: value or "" for key, value in self.req["env"].items()})
        return env


# ---------------------------------------------------------------- the job as parameters

def _stamp(epoch):
    return time.strftime("%Y%m%d%H%M.%S", time.localtime(epoch))


def _paths(items):
    return ",".join(f"{host}:{path}" if host else path for host, path in items)


def _hhmmss(text):
    from gridtools.formats.values import format_time, parse_time
    return format_time(parse_time(text))


def parameters(job, prog):
    """The job's (name, value) pairs, in the order Grid Engine sends them."""
    req, who = job.req, job.who
    out = [("VERSION", "1.0"), ("CONTEXT", job.context), ("CLIENT", prog), ("USER", who["owner"]),
           ("GROUP", job.group)]
    if job.job_id:
        out.append(("JOB_ID", str(job.job_id)))
    out += [("CMDNAME", job.cmdname()), ("CMDARGS", str(len(job.args)))]
    out += [(f"CMDARG{i}", arg) for i, arg in enumerate(job.args)]
    when = req["ckpt_when"]

    def some(name, value, shown=str):
        if value:
            out.append((name, shown(value)))

    some("a", req["start_at"], _stamp)
    some("ac", req["context"], lambda ctx: ",".join(f"{k}={v}" if v else k for k, v in ctx.items()))
    some("ar", req["ar"])
    some("A", req["account"] if req["account"] != "sge" else None)
    some("b", req["binary"] and "y")
    if when and (when[0].isdigit() or when[0] == ":"):
        out.append(("c_interval", _hhmmss(when)))
    elif when:
        out.append(("c_occasion", when))
    some("ckpt", req["ckpt"])
    some("cwd", req["cwd"])
    some("dl", req["deadline"], _stamp)
    some("e", req["stderr"], _paths)
    some("hold_jid", ",".join(req["hold_jid"]))
    some("hold_jid_ad", ",".join(req["hold_jid_ad"]))
    some("h", req["user_hold"] and "u")
    some("i", req["stdin"], _paths)
    some("j", req["join"] and "y")
    some("js", req["jobshare"])
    for part in ("hard", "soft"):
        some(f"l_{part}", req["resources"][part],
             lambda found: ",".join(f"{k}={v}" for k, v in found.items()))
    some("m", req["mail_options"])
    out.append(("M", ",".join(req["mail_list"] or [f"{who['owner']}@{who['submit_host']}"])))
    some("masterq", ",".join(req["masterq"]))
    some("notify", req["notify"] and "y")
    some("N", req["name"])
    some("o", req["stdout"], _paths)
    some("P", req["project"])
    some("p", req["priority"])
    some("tc", req["tc"])
    out += binding_parameters(req["binding"])
    out += pe_parameters(req["pe"])
    for part in ("hard", "soft"):
        some(f"q_{part}", ",".join(req["queues"][part]))
    some("R", req["reserve"] and "y")
    some("r", req["rerun"] and "y")
    some("shell", not req["shell_wrap"] and "n")
    some("S", req["shell"], _paths)
    if req["tasks"] and list(req["tasks"]) != [1, 1, 1]:
        out += [("t_min", str(req["tasks"][0])), ("t_max", str(req["tasks"][1])),
                ("t_step", str(req["tasks"][2]))]
    some("w", req["verify"] if req["verify"] != "n" else None)
    if prog != "qsub":                  # (qrsh's X display, from the job's environment)
        some("display", job.environment().get("DISPLAY"))
    return out


def pe_parameters(pe):
    """pe_name, pe_min and pe_max of a -pe request (NO_TOP for a range without a top)."""
    if not pe:
        return []
    ranges = pe[1] if isinstance(pe[1], list) else [pe[1:]]
    low, top = min(r[0] for r in ranges), max(r[1] for r in ranges)
    return [("pe_name", pe[0]), ("pe_min", str(low)),
            ("pe_max", str(NO_TOP if any(r[1] == 0 for r in ranges) else top))]


def _bad_value(name, value):
    """The refusal of a value a JSV gives that its parameter does not take."""
    return Refused(f'JSV tries to set "{name}" to "{value}"')


def _first_changed(changes, names):
    """The refusal naming the first of ``names`` a JSV changed (a request they make together
    that is not valid)."""
    which = next(name for name in names if name in changes)
    return _bad_value(which, changes[which])


def binding_parameters(binding):
    """The binding_* parameters of a -binding request (``[type] strategy[:...]``), as
    Grid Engine sends them: binding_strategy and binding_type (set unless given), the
    amount of linear and striding, the step of striding, the first socket and core when
    given, the sockets and cores of explicit (binding_exp_n, binding_exp_socketN,
    binding_exp_coreN)."""
    if not binding:
        return []
    words = binding.split()
    kind = words[0] if len(words) > 1 else "set"
    strategy, _, rest = words[-1].partition(":")
    parts = rest.split(":") if rest else []
    out = [("binding_strategy", strategy), ("binding_type", kind)]
    if strategy == "explicit":
        pairs = [part.partition(",")[::2] for part in parts]
        out.append(("binding_exp_n", str(len(pairs))))
        for i, (socket, core) in enumerate(pairs):
            out += [(f"binding_exp_socket{i}", socket), (f"binding_exp_core{i}", core)]
        return out
    out.append(("binding_amount", parts[0] if parts else "1"))
    if strategy == "striding":
        out.append(("binding_step", parts[1]))
    where = parts[2 if strategy == "striding" else 1:][:1]
    if where:
        socket, _, core = where[0].partition(",")
        out += [("binding_socket", socket), ("binding_core", core)]
    return out


def _binding(job, changes):
    """binding_* parameters changed: the -binding request they make together (none
    without a strategy)."""
    params = dict(binding_parameters(job.req["binding"]))
    for name, value in changes.items():
        if name.startswith("binding_"):
            if value is None:
                params.pop(name, None)
            else:
                params[name] = value
    strategy = params.get("binding_strategy")
    if strategy is None:
        job.req["binding"] = None
        return
    if strategy == "explicit":
        count = params.get("binding_exp_n", "0")
        pairs = [f"{params.get(f'binding_exp_socket{i}', '')},{params.get(f'binding_exp_core{i}', '')}"
                 for i in range(int(count) if count.isdigit() else 0)]
        text = ":".join(["explicit"] + pairs)
    else:
        fields = [strategy, params.get("binding_amount", "1")]
        if strategy == "striding":
            fields.append(params.get("binding_step", ""))
        if "binding_socket" in params or "binding_core" in params:
            fields.append(f"{params.get('binding_socket', '0')},{params.get('binding_core', '0')}")
        text = ":".join(fields)
    kind = params.get("binding_type", "set")
    if kind not in options.BINDING_TYPES:
        raise _bad_value("binding_type", kind)
    try:
        job.req["binding"] = options.parse_binding([kind, text] if kind != "set" else [text])
    except GridError:
        raise _first_changed(changes, [name for name in changes if name.startswith("binding_")]) from None


def _escaped(value):
    for char, escape in (("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("\a", "\\a"), ("\b", "\\b"),
                         ("\v", "\\v")):
        value = value.replace(char, escape)
    return value


# ---------------------------------------------------------------- changes

def _reset(req, field):
    name, _, part = field.partition(".")
    default = options.fresh_request()[name]
    if part:
        req[name][part] = default[part]
    else:
        req[name] = default


def _through_option(job, name, value, ctx):
    words, fields = THROUGH_OPTIONS[name]
    for field in fields:
        _reset(job.req, field)
    if name == "ckpt" and value is None:
        _reset(job.req, "ckpt_when")
    if value is None:
        return
    try:
        options.parse(words + [value], job.req, ctx, stop_at_arg=False)
    except GridError:
        raise _bad_value(name, value) from None


def _pe(job, changes):
    """pe_name, pe_min, pe_max changed: the PE request they make together."""
    sent = dict(pe_parameters(job.req["pe"]))
    name = changes.get("pe_name", sent.get("pe_name"))
    low = changes.get("pe_min", sent.get("pe_min", "1"))
    top = changes.get("pe_max", sent.get("pe_max", low))
    if name is None:
        job.req["pe"] = None
        return
    try:
        slots = f"{low}-" if top == str(NO_TOP) else f"{low}-{top}"
        job.req["pe"] = options.pe_request(name, slots)
    except GridError:
        raise _first_changed(changes, ("pe_max", "pe_min", "pe_name")) from None


def _tasks(job, changes):
    current = job.req["tasks"] or [1, 1, 1]
    values = [changes.get(key, str(now)) for key, now in zip(("t_min", "t_max", "t_step"), current)]
    try:
        job.req["tasks"] = options.parse_task_range(f"{values[0]}-{values[1]}:{values[2]}")
    except GridError:
        raise _first_changed(changes, ("t_step", "t_max", "t_min")) from None
    if job.req["tasks"] == [1, 1, 1]:
        job.req["tasks"] = None


def _command(job, name, value):
    if name == "CMDNAME":
        if value is None:
            raise Refused('JSV tries to delete "CMDNAME"')
        if job.req["binary"]:
            job.command = value
        job.name = value
    elif name == "CMDARGS":
        if value is None or not value.isdigit():
            raise _bad_value(name, value)
        count = int(value)
        if count > MAX_ITEMS:
            raise Refused(f"too many job arguments (more than {MAX_ITEMS})")
        job.args = (job.args + [""] * count)[:count]
    else:
        index = name[len("CMDARG"):]
        if not index.isdigit():
            return
        index = int(index)
        if index >= MAX_ITEMS:
            raise Refused(f"too many job arguments (more than {MAX_ITEMS})")
        job.args += [""] * (index + 1 - len(job.args))
        job.args[index] = value if value is not None else ""


def apply(job, changes, env_changes, cwd):
    """Apply a JSV's corrections: ``changes`` (name -> value, None to remove, in the order
    sent), then ``env_changes`` ([(ADD|MOD|DEL, name, value)])."""
    ctx = options.Context("qsub", cwd)
    ctx.current = None
    for name, value in changes.items():
        if name in READ_ONLY:
            raise Refused(f'JSV tries to modify read-only parameter "{name}"')
        if name in BOOLEANS:
            if value is None:
                raise Refused(f'JSV tries to delete boolean parameter "{name}"')
            if value not in ("y", "n"):
                raise _bad_value(name, value)
            job.req[BOOLEANS[name]] = value == "y"
        elif name == "N" and value is None:
            raise Refused('JSV tries to delete "N"')
        elif name == "h":
            if value not in ("u", "n", None):
                raise _bad_value(name, value)
            job.req["user_hold"] = value == "u"
        elif name in THROUGH_OPTIONS:
            _through_option(job, name, value, ctx)
        elif name.startswith("CMDARG") or name == "CMDNAME":
            _command(job, name, value)
        elif name == "display":
            env_changes.append(("DEL", "DISPLAY", None) if value is None else ("MOD", "DISPLAY", value))
    if any(key in changes for key in ("pe_name", "pe_min", "pe_max")):
        _pe(job, changes)
    if any(key in changes for key in ("t_min", "t_max", "t_step")):
        _tasks(job, changes)
    if any(key.startswith("binding_") for key in changes):
        _binding(job, changes)
    for how, name, value in env_changes:
        if how == "DEL":
            if job.req["export_all"] and name in job.outer_env:
                job.req["env"] = dict(job.outer_env, **job.req["env"])
                job.req["export_all"] = False
            job.req["env"].pop(name, None)
        else:
            job.req["env"][name] = value


# ---------------------------------------------------------------- the conversation

def _timeout():
    try:
        value = int(ospaths.getenv("SGE_JSV_TIMEOUT") or "")
    except ValueError:
        return DEFAULT_TIMEOUT
    return value if value > 0 else DEFAULT_TIMEOUT


#: Grid Engine's refusal of a client JSV url naming no program that can run
NOT_A_PROGRAM = 'JSV "{}" is either not a file or not executeable'


def check_url(url):
    """Refuse (UsageError, exit 3) the client JSV url of a ``-jsv`` option as it is read,
    as Grid Engine's option parser does (``qsub: JSV "/x" is either not a file or not
    executeable``): a user or another type named, or no program that can run."""
    try:
        program(url, client=True)
    except Refused as exc:
        raise UsageError(str(exc), 3) from None


def program(url, server=False, client=False):
    """The program of JSV url ``[script:]path`` (None for ``none``); Refused when it names
    a user, another type, or no program that can run (``client``: a -jsv option's, in
    Grid Engine's words for it). A ``server`` JSV's url may name
    the user it runs as, ``[script:][user@]path``: then (user or None, program)."""
    kind, colon, rest = url.partition(":")
    if not colon:
        kind, rest = None, url
    if kind is not None and kind.rstrip() != "script":
        raise Refused(f'type "{kind.rstrip()}" in JSV URL is invalid')
    user = None
    if "@" in rest:
        if not server:
            raise Refused("specifying user is not allowed in client JSV URLs")
        user, _, rest = rest.partition("@")
        user = user.strip()
    path = program(rest) if server else rest.rstrip()
    if server:
        return None if path is None else (user or None, path)
    if path.lower() == "none":
        return None
    if not path:
        raise Refused(f'JSV URL "{url}" is invalid')
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        raise Refused(NOT_A_PROGRAM.format(path) if client else f'JSV file "{path}" does not exist') from None
    if (st.st_mode & 0o170000) != 0o100000 or not os.access(path, os.X_OK):
        raise Refused(NOT_A_PROGRAM.format(path) if client
                      else f'JSV "{path}" is either not a file or not executable')
    return path


class Instance:
    """A running JSV: lines to it, lines from its standard output and error."""

    def __init__(self, path, cwd, env=None, user=None):
        """``env``: the JSV's environment (the caller's by default, with SGE_ROOT); ``user``:
        the account it runs as, (uid, gid) (the caller's by default)."""
        self.path = path
        if env is None:
            from gridtools import cell
            from gridtools.spool.cellcommon import CELL
            env = dict(ospaths.environ())
            if "SGE_ROOT" not in env:       # (where jsv_include.sh is, as in the cell's settings.sh)
                env.update(SGE_ROOT=cell.root(), SGE_CELL=CELL)
        who = {} if user is None else {"user": user[0], "group": user[1], "extra_groups": []}
        try:
            with CREDENTIALS:
                self.proc = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, cwd=cwd, env=env, start_new_session=True,
                                             **who)
        except (OSError, subprocess.SubprocessError):
            raise Refused(f'start of JSV "{path}" failed') from None
        os.set_blocking(self.proc.stdin.fileno(), False)
        self.pending = {self.proc.stdout.fileno(): b"", self.proc.stderr.fileno(): b""}
        self.closed = set()
        self.received = 0

    def send(self, lines, deadline):
        """Write ``lines`` to the JSV, each with its line break, by ``deadline`` (a
        monotonic time): TimeoutError when it has not taken them by then (it does not
        read), Refused when it cannot be written to (it left)."""
        data = memoryview("".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape"))
        fd = self.proc.stdin.fileno()
        while data:
            try:
                data = data[os.write(fd, data):]
            except BlockingIOError:
                pass
            except (OSError, ValueError):
                raise Refused("unable to send data to JSV") from None
            if data:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                select.select([], [fd], [], left)

    def unread(self):
        """True when the JSV wrote something not read yet (what a conversation that ended
        on its verdict leaves none of)."""
        if any(self.pending.values()):
            return True
        live = [fd for fd in self.pending if fd not in self.closed]
        return bool(live and select.select(live, [], [], 0)[0])

    def receive(self, timeout):
        """("out" or "err", line) as soon as one is whole; None after ``timeout`` seconds
        of silence or when the JSV closed its output."""
        out, err = self.proc.stdout.fileno(), self.proc.stderr.fileno()
        deadline = time.monotonic() + timeout
        while True:
            for fd, which in ((err, "err"), (out, "out")):
                head, newline, tail = self.pending[fd].partition(b"\n")
                if newline:
                    self.pending[fd] = tail
                    return which, head.decode("utf-8", "surrogateescape").rstrip("\r")
            if out in self.closed:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd for fd in (out, err) if fd not in self.closed], [], [], left)
            for fd in ready:
                data = os.read(fd, 65536)
                if data:
                    self.received += len(data)
                    if self.received > MOST_SENT:
                        raise Refused(f"JSV sent more than {MOST_SENT} bytes")
                    if len(self.pending[fd]) + len(data) > LONGEST_LINE and b"\n" not in data:
                        raise Refused(f"JSV sent a line longer than {LONGEST_LINE} bytes")
                    self.pending[fd] += data
                else:
                    self.closed.add(fd)
                    if self.pending[fd]:
                        self.pending[fd] += b"\n"

    def stop(self, quit=True):
        """Ask the JSV to leave (QUIT), then end it."""
        if quit and self.proc.poll() is None:
            try:
                self.send(["QUIT"], time.monotonic() + 1)
            except (Refused, TimeoutError):
                pass
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=1 if quit else 0.01)
        except subprocess.TimeoutExpired:
            try:
                with CREDENTIALS:
                    os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


class _Unguarded:
    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        return False


#: held while a JSV is started or killed: the process's identity as it is meant to be. The
#: daemon, which verifies jobs in a thread while its own thread may take a job owner's
#: identity for a moment (``exec.jobproc.owner_rights``), sets the lock they share.
CREDENTIALS = _Unguarded()


def _split(line):
    command, _, rest = line.partition(" ")
    sub, _, args = rest.partition(" ")
    return command, sub, args if args != "" else None


class Silent(TimeoutError):
    """The JSV said nothing at all (not even STARTED) in time."""


class OutOfTurn(Exception):
    """The JSV wrote a line the conversation was not at (a verdict before it was sent
    the job, a second STARTED ...): what a JSV left of an earlier conversation, say."""


def _logged(printed, level, text):
    """Keep one LOG line of a JSV, up to MOST_LOGGED of them; one line says that the
    ones after were left out."""
    if len(printed) < MOST_LOGGED:
        printed.append((level, text))
    elif len(printed) == MOST_LOGGED:
        printed.append(("WARNING", f"the JSV's LOG lines after the first {MOST_LOGGED} were left out"))


def _converse(instance, job, prog, timeout, printed, whole=None):
    """One verification: (changes, env changes). Refused for a refusal.
    ``timeout``: seconds the JSV may take over each line; ``whole``: seconds it may
    take over all of them (None: no such bound). TimeoutError (Silent when it never
    answered) when it took longer, OutOfTurn for a line out of turn."""
    deadline = None if whole is None else time.monotonic() + whole

    def limit():
        left = timeout if deadline is None else min(timeout, deadline - time.monotonic())
        if left <= 0:
            raise TimeoutError
        return left

    instance.send(["START"], time.monotonic() + limit())
    send_env, changes, env_changes, started, begun = False, {}, [], False, False
    while True:
        got = instance.receive(limit())
        if got is None:
            raise TimeoutError if started else Silent
        which, line = got
        if which == "err":
            raise Refused(f"JSV stderr: {line}")
        command, sub, args = _split(line)
        if command in ("SEND", "STARTED") and started or command in ("PARAM", "ENV", "RESULT") and not begun:
            raise OutOfTurn(line)
        if command == "SEND":
            if sub != "ENV":
                raise Refused(f'got "{sub}" as object for SEND command')
            send_env = True
        elif command == "STARTED":
            started = True
            # (a value's line breaks escaped, as the environment's: an argument holding one
            # must not pass for a parameter line of its own, USER say; a variable whose name
            # holds one, which the job's checks refuse, is never sent)
            lines = [f"PARAM {name} {_escaped(value)}" for name, value in parameters(job, prog)]
            if send_env:
                lines += [f"ENV ADD {name} {_escaped(value)}" for name, value in job.environment().items()
                          if name.isprintable() and " " not in name]
            instance.send(lines + ["BEGIN"], time.monotonic() + limit())
            begun = True
        elif command == "PARAM":
            changes[sub] = args
        elif command == "ENV":
            name, blank, value = (args or "").partition(" ")
            value = value if blank else (None if sub == "DEL" else "")
            if not name or sub not in ("ADD", "MOD", "DEL") or (sub == "DEL" and value):
                raise Refused(f'"ENV {sub or "<null>"} {name or "<null>"} {value or "<null>"}" is invalid')
            env_changes.append((sub, name, value))
        elif command == "LOG":
            _logged(printed, sub, args or "")
        elif command == "RESULT":
            state, _, text = (args or "").partition(" ")
            if sub != "STATE":
                raise Refused(f'JSV got unknown command "{sub}"')
            if state in ("ACCEPT", "CORRECT"):     # (both take the job as the JSV left it)
                return changes, env_changes
            if state == "REJECT":
                raise Verdict(text or "JSV rejected job")
            if state == "REJECT_WAIT":
                raise Verdict(text or "JSV temporarily rejected job")
            raise Refused(f'JSV sent unknown result "{args or ""}"')
        else:
            raise Refused(f'master got unknown command from JSV: "{command}"')


def verify_with(path, job, prog, cwd, printed, timeout=None, env=None, user=None, kept=None, whole=None):
    """Verify ``job`` with the JSV ``path`` (see ``Instance`` for ``env`` and ``user``;
    ``timeout``: seconds it may take over a line, SGE_JSV_TIMEOUT's by default; ``whole``:
    over the whole verification, see ``_converse``); its corrections applied to ``job``,
    its LOG lines added to ``printed``. Refused when it refuses the job or cannot verify
    it. A JSV that is silent (without ``whole``: over any line), or that writes a line out
    of turn, is ended and started again once.

    ``kept``: what holds a JSV that serves one job after another (the server's, see
    ``daemon.serverjsv.Kept``): it gives the running one (``take``) and keeps it again
    after its verdict (``keep``); a JSV that failed is ended. Without it the JSV is
    started for this job and asked to leave after it."""
    timeout = timeout or _timeout()
    for attempt in (1, 2):
        instance = kept.take(path, cwd, env, user) if kept is not None else Instance(path, cwd, env, user)
        try:
            changes, env_changes = _converse(instance, job, prog, timeout, printed, whole)
        except TimeoutError as exc:
            instance.stop(quit=False)
            if attempt == 2 or (whole is not None and not isinstance(exc, Silent)):
                raise Refused(f'got no response from JSV script "{path}"') from None
            continue
        except OutOfTurn as exc:
            instance.stop(quit=False)
            if attempt == 2:
                raise Refused(f'JSV protocol error: "{exc}" out of turn') from None
            continue
        except Verdict:
            _done_with(instance, kept)
            raise
        except Refused:
            instance.stop(quit=False)
            raise
        _done_with(instance, kept)
        apply(job, changes, env_changes, cwd)
        return


def _done_with(instance, kept):
    """A JSV gave its verdict: kept for the next job, or asked to leave."""
    if kept is not None:
        kept.keep(instance)
    else:
        instance.stop()


def verify(urls, req, name, command, args, who, prog="qsub", cwd=None, out=None, default_name=None):
    """Run the JSVs named (``urls`` in the order given: the last runs first) on the job;
    return (request, name, command, args) as they left it. Refused when one refuses it.
    The JSVs' LOG lines are written to ``out`` (standard output) as they come.
    ``default_name``: the job's name when -N gave none, which the JSVs are sent as N
    (Grid Engine names the job before its client JSVs see it)."""
    import sys
    out = out if out is not None else sys.stdout
    cwd = cwd or os.getcwd()
    job = Job(copy.deepcopy(req), name, command, args, who)
    if not job.req["name"] and default_name:
        job.req["name"] = default_name
    for url in reversed(urls):
        path = program(url)
        if path is None:
            continue
        printed = []
        try:
            verify_with(path, job, prog, cwd, printed)
        finally:
            out.write("".join(text + "\n" for _level, text in printed))
            out.flush()
    return job.req, job.name, job.command, job.args

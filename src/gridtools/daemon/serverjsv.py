"""The server JSV: the global configuration's ``jsv_url``, run by the daemon on every
Grid Engine job it takes in, and ``jsv_allowed_mod``, what qalter may change then.

``jsv_url`` is ``[script:][user@]path`` (``none``: no server JSV). The daemon
verifies each job submitted with qsub, qrsh, qlogin or qsh (HTCondor's jobs have
their own submit requirements) after the client's JSVs and its own checks of the
description, before Grid Engine's admission rules, with the protocol of the
client JSVs (``cli.sge.jsv``): the parameters with ``CONTEXT server``, ``CLIENT
qmaster`` and the job's ``JOB_ID``; the job's environment (-v, -V) when the JSV
asks for it. The JSV runs as ``user`` (the daemon's own user when none is named;
another only when the daemon is root), in ``/``, with an environment of its own
(PATH, HOME, USER, LOGNAME, SGE_ROOT and SGE_CELL), and is given qmaster_params
JSV_TIMEOUT seconds (10 by default) for each line and for the whole job, started
again once when silent. The verification runs in a thread beside the daemon's
loop (``Background``): the request waits, taken, and the requests after it wait
behind it, while the passes go on. As Grid Engine's qmaster does, the daemon keeps it running from one job
to the next (``Kept``): a JSV may count the jobs it saw. It is started again when
it failed (stderr, a protocol error, silence) or left, when the url changed, and
when its file changed; it is asked to leave (QUIT) when the url is unset and
when the daemon stops.

A correction is applied as the client applies one, and the job is checked again
as any other description is; a refusal (REJECT, REJECT_WAIT, a correction that is
not valid, a line on the JSV's standard error, silence, a JSV that cannot be
started) refuses the job with ``Unable to run job: <reason>``, and the id goes
back. The JSV's LOG lines go to the daemon's messages (INFO, WARNING and ERROR
as such).

While a server JSV is set, a qalter request may change only what
``jsv_allowed_mod`` lists (JSV parameter names, ``none`` for nothing; ``w`` is
always allowed, ``t`` with ``h`` or ``none``); any other change is refused, with
Grid Engine's words, for every user, managers too. qhold and qrls, which are
qalter -h in Grid Engine, change ``h``: they are refused when the list lacks it.
"""

import os
import pwd

#: jsv_allowed_mod's default
ALLOWED_MOD = "ac,h,i,e,o,j,M,N,p,w"

#: what qalter changes (a change set's field, or field.part) -> the JSV parameter
#: jsv_allowed_mod names it by
PARAMETER_OF = {
    "start_at": "a", "context": "ac", "ar": "ar", "account": "A", "binary": "b",
    "ckpt_when": "c", "ckpt": "ckpt", "cwd": "cwd", "deadline": "dl", "stderr": "e",
    "hold_jid": "hold_jid", "hold_jid_ad": "hold_jid_ad", "stdin": "i", "join": "j",
    "jobshare": "js", "resources.hard": "l_hard", "resources.soft": "l_soft",
    "mail_options": "m", "mail_list": "M", "masterq": "masterq", "notify": "notify",
    "name": "N", "stdout": "o", "project": "P", "priority": "p", "pe": "pe_name",
    "queues.hard": "q_hard", "queues.soft": "q_soft", "reserve": "R", "rerun": "r",
    "shell": "S", "shell_wrap": "shell", "tasks": "t", "tc": "tc", "verify": "w",
    "env": "v", "binding": "binding", "args": "CMDARG", "override_tickets": "ot", "user_hold": "h",
}


def url(state):
    """The global configuration's jsv_url, None when it is unset or ``none``."""
    conf = state.config.objects["conf"].get("global") or {}
    text = str(conf.get("jsv_url") or "").strip()
    return None if not text or text.lower() == "none" else text


def _timeout(state):
    from gridtools.formats.sge.conf import jsv_timeout
    return jsv_timeout((state.config.objects["conf"].get("global") or {}).get("qmaster_params"))


def account(name):
    """(uid, gid, name, home) of the user a JSV runs as: ``name``'s, the daemon's own
    when None. Refused when that user does not exist, or is another than the daemon's
    and the daemon is not root."""
    from gridtools.cli.sge.jsv import Refused
    try:
        entry = pwd.getpwnam(name) if name else pwd.getpwuid(os.geteuid())
    except KeyError:
        raise Refused(f'unknown user "{name}" in JSV URL') from None
    if entry.pw_uid != os.geteuid() and os.geteuid() != 0:
        raise Refused(f'JSV cannot run as user "{name}": the daemon is not root')
    return entry.pw_uid, entry.pw_gid, entry.pw_name, entry.pw_dir


class Kept:
    """The server JSV, running between jobs: one at a time, for the program, working
    directory, environment and user it was started for and the program file as it
    was then (modification time, size, inode)."""

    def __init__(self):
        self.key = self.instance = None

    def take(self, path, cwd, env, user):
        """The running JSV for these (started when there is none, it ended, or what it
        was started for changed); Refused when it cannot start. It is the caller's
        until it gives it back with ``keep``."""
        from gridtools.cli.sge.jsv import CREDENTIALS, Instance
        with CREDENTIALS:               # (the file as the daemon's identity sees it)
            try:
                st = os.stat(path)
                stamp = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)
            except OSError:
                stamp = None
        key = (path, cwd, tuple(sorted((env or {}).items())), user, stamp)
        if self.instance is not None and (key != self.key or self.instance.proc.poll() is not None
                                          or self.instance.unread()):
            self.release()              # (its QUIT and the wait for it hold no lock: only its kill does)
        instance, self.instance = self.instance, None
        if instance is None:
            instance, self.key = Instance(path, cwd, env, user), key     # (started under the lock)
        return instance

    def keep(self, instance):
        """``instance`` gave its verdict: it serves the next job."""
        self.instance = instance

    def release(self):
        """Ask the running JSV to leave (QUIT), and end it."""
        instance, self.instance, self.key = self.instance, None, None
        if instance is not None:
            instance.stop()


#: the daemon's server JSV
KEPT = Kept()


def _log(state, printed):
    for level, line in printed:
        state.log(f"{_LEVELS.get(level, 'I')}|server JSV: {line}")


class Background:
    """The server JSV's verification of one job at a time, run in a thread beside the
    daemon's loop, so that a JSV that takes long over a job holds up only the requests
    queued after it (which wait, to keep their order), not the daemon's passes, starts
    and reaping. ``outcome`` starts it and says when it is done; ``fd`` wakes the loop
    then. The thread only talks with the JSV: it reads and changes nothing of the
    daemon's, which logs the JSV's lines once it has the outcome."""

    def __init__(self):
        self.key = self.thread = self.result = None
        self.printed = []
        self.rfd = self.wfd = None

    def busy(self):
        return self.thread is not None and self.thread.is_alive()

    def outcome(self, state, key, spec, text):
        """``_verify``'s (job, None) or (None, why) once the verification of ``key`` (the
        request and the url) is done; None while it runs, or after starting it."""
        if self.key == key and self.thread is not None and not self.thread.is_alive():
            self.thread.join()
            found, printed = self.result, self.printed
            self._reset()
            _log(state, printed)
            return found
        if self.busy():
            return None                 # (this one's, or one whose request went: it ends by its timeout)
        self._reset()
        import threading
        _preload()
        self.key, self.printed, self.result = key, [], None
        self.rfd, self.wfd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.thread = threading.Thread(target=self._run, args=(dict(spec), text, _timeout(state)),
                                       name="server-jsv", daemon=True)
        self.thread.start()
        return None

    def _run(self, spec, text, timeout):
        try:
            self.result = _verify(spec, text, timeout, self.printed)
        except Exception as exc:  # noqa: BLE001 - the job is refused, the daemon goes on
            self.result = (None, f"the server JSV could not verify the job: {exc}")
        finally:
            try:
                os.write(self.wfd, b"v")
            except OSError:
                pass

    def fd(self):
        """What the loop waits on while a verification runs (None when none runs: one
        that ended waits for its request's next intake, which the wake-up brings, or
        for the next verification, which lets it go; a descriptor that stayed readable
        would keep the loop from resting)."""
        return self.rfd if self.busy() else None

    def _reset(self):
        for fd in (self.rfd, self.wfd):
            if fd is not None:
                os.close(fd)
        self.key = self.thread = self.result = self.rfd = self.wfd = None
        self.printed = []


#: the daemon's verifications in the background
BACKGROUND = Background()


def _preload():
    """Import here, in the daemon's own thread, every module a verification uses, so
    that the verifying thread imports nothing: a shepherd the daemon forks meanwhile
    never finds a module's import lock held by a thread it does not have."""
    import importlib
    for name in ("copy", "grp", "select", "subprocess", "gridtools.cell", "gridtools.cli.sge.jsv",
                 "gridtools.formats.values", "gridtools.spool.cellcommon"):
        importlib.import_module(name)
    from gridtools.cli.sge import jsv
    from gridtools.exec.jobproc import IDENTITY
    jsv.CREDENTIALS = IDENTITY          # (starts and kills wait while an owner's identity is taken)


def _verify(spec, text, timeout, printed):
    """Verify the Grid Engine job ``spec`` (checked, its owner known) with the server JSV
    of url ``text``, ``timeout`` for each line and for the whole verification, the JSV's
    LOG lines put into ``printed`` as (level, line): (the job as the JSV left it,
    unchecked, or ``spec`` itself when it accepted it as it was; None) or (None, why it
    refused it)."""
    import copy
    from gridtools import cell
    from gridtools.cli.sge import jsv
    from gridtools.spool.cellcommon import CELL
    try:
        with jsv.CREDENTIALS:           # (the daemon's identity, not an owner's it took a moment)
            found = jsv.program(text, server=True)
            if found is None:
                return spec, None
            user, path = found
            uid, gid, name, home = account(user)
            as_user = None if uid == os.geteuid() else (uid, gid)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": home, "USER": name, "LOGNAME": name,
               "SGE_ROOT": cell.root(), "SGE_CELL": CELL}
        job = jsv.Job(copy.deepcopy(spec), spec.get("script_name"), spec.get("command"), spec.get("args") or [],
                      {"owner": spec["owner"], "gid": spec["gid"], "submit_host": spec.get("submit_host", "")},
                      outer_env=spec.get("submit_env") or {}, context="server", job_id=spec["id"])
        before = copy.deepcopy(job.req), job.name, job.command, list(job.args)
        jsv.verify_with(path, job, "qmaster", "/", printed, timeout=timeout, env=env,
                        user=as_user, kept=KEPT, whole=timeout)
    except jsv.Refused as exc:
        return None, str(exc)
    if (job.req, job.name, job.command, job.args) == before:
        return spec, None
    found = job.req
    found["script_name"], found["args"] = job.name, list(job.args)
    if job.command is not None:
        found["command"] = job.command
    if not found.get("export_all"):
        found.pop("submit_env", None)
    return found, None


_LEVELS = {"INFO": "I", "WARNING": "W", "ERROR": "E"}


def alteration_refusal(state, touched):
    """Why qalter may not make a change touching ``touched`` (dotted field names) while a
    server JSV is set ("" when it may): Grid Engine's words."""
    if url(state) is None or not touched:
        return ""
    conf = state.config.objects["conf"].get("global") or {}
    text = str(conf.get("jsv_allowed_mod") or ALLOWED_MOD).strip()
    none = text.lower() == "none"
    allowed = ({"t"} if none else {word.strip() for word in text.split(",") if word.strip()}) | {"w"}
    if "h" in allowed:
        allowed.add("t")
    refused = []
    order = list(PARAMETER_OF)
    for field in sorted(touched, key=lambda f: (order.index(f) if f in order else len(order), f)):
        name = PARAMETER_OF.get(field, PARAMETER_OF.get(field.partition(".")[0], field))
        if name not in allowed and name not in refused:
            refused.append(name)
    if not refused:
        return ""
    if none:
        return "No job modification allowed due to jsv_allowed_mod configuration"
    return "rejected due to jsv_allowed_mod configuration which does not allow: " + ",".join(refused)

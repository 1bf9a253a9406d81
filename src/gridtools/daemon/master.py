"""The master: the process ``gridtools daemon start`` starts, which runs the daemon as
its child and starts it again when it dies, as HTCondor's condor_master does with
the daemons of its DAEMON_LIST.

The daemon is ``python -m gridtools.daemon`` with ``GRIDTOOLS_MASTER`` set to the
master's pid (``daemon.__main__``), its output the master's (spool/daemon.out).
When it ends:

- a daemon that stopped (``gridtools daemon stop``, SIGTERM: status 0) ends the
  master; so does one that never finished its start-up (it did not write its
  pid file: another daemon holds the cell, a spool it cannot use ...), with the
  daemon's status (or its signal, of which the master dies too), so that whoever
  started it learns why;
- one that died after its start-up (a signal, a status other than 0) is started
  again after MASTER_BACKOFF_CONSTANT + MASTER_BACKOFF_FACTOR ** n seconds, n
  the restarts since it last ran MASTER_RECOVER_FACTOR seconds, at most
  MASTER_BACKOFF_CEILING (HTCondor's knobs and defaults: 10 s, then 11, 13, 17 ...)
  unless by then the cell's spool is gone, another daemon runs it or another
  master started, which ends the master. Its death and the restart are written to the messages file, and
  the administrator is mailed an obituary as HTCondor's master mails one: to
  CONDOR_ADMIN of the cell's condor_config, else to sge_conf's
  administrator_mail, with the cell's mailer, naming the signal or status and
  the restart and holding the last OBITUARY_LOG_LENGTH lines of the messages
  file and of what the daemon printed (a traceback). None is sent for SIGKILL
  (an administrator's act) nor after the third restart in a row;
- a daemon armed with crash points (``GRIDTOOLS_CRASH_AT``, ``daemon.crash``: for
  testing what a crash leaves behind) is not started again.

SIGTERM, SIGINT and SIGHUP sent to the master go to the daemon, and a daemon asked
to stop so (or killed by SIGTERM or SIGINT) is not started again; during a
back-off SIGTERM and SIGINT end the master (``gridtools daemon stop`` sends it
one then: the master's pid is in spool/daemon.master while it runs). Jobs never
depend on the master: they run under their shepherds, and a new daemon takes
them back from the spool.
"""

import math
import os
import signal
import sys
import time

#: the environment variable that tells a daemon the pid of its master
ENV = "GRIDTOOLS_MASTER"
#: HTCondor's defaults of the knobs the master reads
DEFAULTS = {"MASTER_BACKOFF_CONSTANT": 9, "MASTER_BACKOFF_FACTOR": 2.0, "MASTER_BACKOFF_CEILING": 3600,
            "MASTER_RECOVER_FACTOR": 300, "OBITUARY_LOG_LENGTH": 20}
#: the signals that stop the daemon, and those the master hands on to it
STOPPING = (signal.SIGTERM, signal.SIGINT)
PASSED_ON = STOPPING + (signal.SIGHUP,)
#: the file that holds the master's pid while it runs (in the spool): its daemon writes it
#: when it took the cell's lock, so that of masters started at once the one whose daemon
#: runs the cell is named (another's would leave with its daemon, and take the file along)
PID_FILE = "daemon.master"
#: obituaries are sent for the first restarts in a row only
MOST_OBITUARIES = 3


def run():
    """Run the daemon until it stops; the master's exit status (the daemon's, when it
    never finished its start-up)."""
    watched = set(PASSED_ON) | {signal.SIGCHLD}
    signal.pthread_sigmask(signal.SIG_BLOCK, watched)
    mine = _cell_file(PID_FILE)         # (written by its daemon once that holds the cell)
    try:
        code = _serve(watched)
    finally:
        try:
            with open(mine) as fh:
                if fh.read().strip() == str(os.getpid()):
                    os.unlink(mine)
        except (OSError, ValueError):
            pass
    if code < 0:                # (a daemon killed during its start-up: so is the master)
        number = -code
        if number not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
        os.kill(os.getpid(), number)
        code = 128 + number
    return code


def _serve(watched):
    from gridtools.spool import daemonctl
    restarts = 0
    while True:
        began, out_at = time.monotonic(), _size(_cell_file("daemon.out"))
        child = _spawn(watched)
        status, asked = _wait(child)
        if asked or _stopped(status) or daemonctl.pid() != child:
            return 0 if _stopped(status) else _as_own(status)
        knobs, admin = _settings()
        if time.monotonic() - began >= knobs["MASTER_RECOVER_FACTOR"]:
            restarts = 0
        delay = min(knobs["MASTER_BACKOFF_CONSTANT"] + math.ceil(knobs["MASTER_BACKOFF_FACTOR"] ** restarts),
                    knobs["MASTER_BACKOFF_CEILING"])
        crash_points = bool(os.environ.get("GRIDTOOLS_CRASH_AT"))
        what = _death(status)
        _log("E", f"the daemon (pid {child}) {what}"
             + ("; it had crash points armed (GRIDTOOLS_CRASH_AT): not started again" if crash_points
                else f"; starting it again in {delay} seconds"))
        if crash_points:
            return _as_own(status)
        if restarts < MOST_OBITUARIES and not (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL):
            _obituary(status, what, delay, knobs["OBITUARY_LOG_LENGTH"], out_at, admin)
        restarts += 1
        if not _rest(delay, watched) or not os.path.isdir(_cell_file()) or daemonctl.running() \
                or daemonctl.master_pid() != os.getpid():       # (another master started since)
            return 0


def _cell_file(*parts):
    from gridtools import cell
    return cell.spool(*parts)


def _size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _spawn(watched):
    """Start the daemon, with the signals the master blocks unblocked and at their defaults."""
    env = dict(os.environ)
    env[ENV] = str(os.getpid())
    return os.posix_spawn(sys.executable, [sys.executable, "-P", "-m", "gridtools.daemon"], env,
                          setsigmask=(), setsigdef=watched)


def _wait(child):
    """Wait for the daemon to end, handing it the signals sent to the master: (its wait
    status, whether it was asked to stop)."""
    asked = False
    while True:
        got = signal.sigwaitinfo(set(PASSED_ON) | {signal.SIGCHLD})
        if got.si_signo != signal.SIGCHLD:
            asked = asked or got.si_signo in STOPPING
            try:
                os.kill(child, got.si_signo)
            except ProcessLookupError:
                pass
        try:
            done, status = os.waitpid(child, os.WNOHANG)
        except ChildProcessError:
            return 0, True
        if done:
            return status, asked


def _stopped(status):
    """True for a daemon that stopped as asked: status 0, or killed by SIGTERM or SIGINT."""
    if os.WIFSIGNALED(status):
        return os.WTERMSIG(status) in STOPPING
    return os.WEXITSTATUS(status) == 0


def _as_own(status):
    """The master's end for the daemon's wait status: its exit status, or minus the
    signal that killed it (the master dies of it too)."""
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _death(status):
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        return f"died due to signal {number} ({signal.strsignal(number) or 'unknown'})"
    return f"exited with status {os.WEXITSTATUS(status)}"


def _rest(delay, watched):
    """Wait ``delay`` seconds; False when a signal to stop came meanwhile."""
    end = time.monotonic() + delay
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return True
        got = signal.sigtimedwait(watched, left)
        if got is not None and got.si_signo in STOPPING:
            return False


def _settings():
    """(the master's knobs, whom an obituary goes to) from the cell's configuration: the
    knobs of its condor_config (HTCondor's defaults for those not set or not read);
    CONDOR_ADMIN, else sge_conf's administrator_mail ("" for none)."""
    found, address = dict(DEFAULTS), ""
    try:
        from gridtools.cli.condor.machineviews import client_config
        conf = client_config()
    except Exception:  # noqa: BLE001 - a configuration that does not read: the defaults, nobody
        conf = {}
    else:
        address = str(conf.get("CONDOR_ADMIN") or "").strip()
    if not address:
        from gridtools.cli.sge.submit import global_value
        address = str(global_value("administrator_mail", "") or "").strip()
    for name, default in DEFAULTS.items():
        try:
            value = type(default)(str(conf.get(name)).strip()) if conf.get(name) is not None else default
        except ValueError:
            value = default
        found[name] = value if value >= (0 if name == "MASTER_BACKOFF_FACTOR" else 1) else default
    return found, "" if address.lower() == "none" else address


def _log(level, text):
    try:
        with open(_cell_file("messages"), "a", encoding="utf-8") as fh:
            fh.write(f"{time.strftime('%m/%d/%Y %H:%M:%S')}|{level}|master: {text}\n")
    except OSError:
        pass


def _tail(path, count, offset=0):
    """The last ``count`` lines of ``path`` after ``offset`` (read from its last 64 KiB)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(offset, os.fstat(fh.fileno()).st_size - 65536))
            return fh.read().decode("utf-8", "replace").splitlines()[-count:]
    except OSError:
        return []


def _obituary(status, what, delay, count, out_at, address):
    """Mail ``address`` of the daemon's death, as HTCondor's master does."""
    from gridtools import cell, mail
    if not address:
        return
    host = cell.hostname()
    code = f"died ({os.WTERMSIG(status)})" if os.WIFSIGNALED(status) else f"exited ({os.WEXITSTATUS(status)})"
    subject = f"Problem {host}: gridtools daemon {code}"
    body = [f'"gridtools daemon" on "{host}" {what}.',
            f"gridtools will automatically restart this process in {delay} seconds.", ""]
    for path, offset in ((_cell_file("messages"), 0), (_cell_file("daemon.out"), out_at)):
        lines = _tail(path, count, offset)
        if lines:
            body += [f"*** Last {len(lines)} line(s) of file {path}:"] + lines \
                + [f"*** End of file {os.path.basename(path)}", ""]
    problem = mail.send(address, subject, "\n".join(body) + "\n")
    if problem:
        _log("W", f"the obituary to {address} was not sent: {problem}")


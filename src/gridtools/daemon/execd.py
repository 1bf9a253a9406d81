"""Execution daemons: the processes that fork the shepherds.

The dispatcher does not fork shepherds itself: forking a process costs in
proportion to its memory, and the dispatcher holds every job. Instead it
forks an *exec server* first thing (``python -m gridtools.daemon`` does so
before it loads anything a shepherd does not need), and sends it one
frame per task to start (the task folder and its plan, in ``marshal`` form:
both ends are the same interpreter) through a pipe; the exec server hands
it to a spare shepherd that waits (forked ahead of time, or one that has
served a task before and waits for the next), and reaps it when it ends.
When the pipe closes (the dispatcher ended or was killed) the exec server
exits; its shepherds carry on.

``gridtools execd --host NAME`` is the same server for one host, taking its
orders from ``spool/execd/NAME/inbox/`` (one file per task, written by the
dispatcher: ``<job>.<task>`` for a job's task, ``<job>.<task>.<k>`` for task k
that qrsh -inherit started inside it; the plan lies in the task's folder) and woken through ``spool/execd/NAME/wakeup``. It holds
``spool/execd/NAME/execd.lock`` while it runs; the dispatcher sends a host's
tasks to its execd only while that lock is held. It reports the load of its
machine in ``spool/execd/NAME/load`` (``daemon.hostreport``).
"""

import errno
import marshal
import os
import select
import signal
import sys
import time

from gridtools import cell
from gridtools.errors import GridError
from gridtools.exec import launch
from gridtools.spool import files, jobs as jobstore, wake


def reap_exited(children=None):
    """waitpid() every child of this process that has ended. ``children`` maps the
    pids of shepherds to their task folders: a shepherd that ended without writing
    its task's result (killed, or failed before it could) gets an obituary there,
    and the dispatcher is woken to see to the task at once."""
    for pid, status in launch.ended_children():
        tdir = children.pop(pid, None) if children is not None else None
        if tdir is not None and status != 0:
            _obituary(tdir, status)


def _obituary(tdir, status):
    """Note that a shepherd ended without a result. The file's presence is what counts
    (``daemon.reap``): when its text cannot be written (a full disk, the very reason a
    shepherd may fail to start) it is left empty, which needs no space for data."""
    if os.path.exists(os.path.join(tdir, jobstore.RESULT_FILE)):
        return
    path = os.path.join(tdir, jobstore.OBITUARY_FILE)
    try:
        files.atomic_write(path, f"{status}\n", fsync=False)
    except GridError:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644))
        except OSError:
            pass
    wake.poke()


def _start(tdir, children):
    try:
        plan = launch.read_plan(tdir)
    except (OSError, ValueError):
        return
    children[launch.spawn(plan, tdir)] = tdir


#: frame kinds of the order pipe: start a shepherd (task folder, plan), empty the trash
SPAWN, TRASH = b"S", b"T"
#: bytes of a frame's head: its kind and the length of its body
_HEAD = 5


def frame(kind, body=b""):
    """One order for the pipe: kind, body length (4 bytes, big-endian), body."""
    return kind + len(body).to_bytes(4, "big") + body


def _orders(buffer):
    """Complete frames of ``buffer`` as orders: (task folder, plan) or "trash"; returns
    (orders, the incomplete rest)."""
    orders, at = [], 0
    while len(buffer) - at >= _HEAD:
        size = int.from_bytes(buffer[at + 1:at + _HEAD], "big")
        end = at + _HEAD + size
        if end > len(buffer):
            break
        kind = buffer[at:at + 1]
        if kind == TRASH:
            orders.append("trash")
        elif kind == SPAWN:
            try:
                task_dir, plan = marshal.loads(buffer[at + _HEAD:end])
                orders.append((task_dir, plan))
            except (ValueError, EOFError, TypeError):
                pass
        at = end
    return orders, buffer[at:]


#: seconds without orders after which the exec server empties the trash
TRASH_QUIET = 0.2
#: most seconds the trash waits for a quiet moment before a slice is emptied anyway
TRASH_LATEST = 10.0
#: job folders removed per slice (a start order waits for at most one slice)
TRASH_SLICE = 16


#: most spares kept waiting for tasks (more that say they are done are let go)
IDLE_MOST = 4


def serve_pipe(rfd):
    """The exec server loop: start a shepherd for every order read from ``rfd``. Folders
    the dispatcher put into the trash are removed a slice at a time in quiet moments
    (no order for TRASH_QUIET seconds), never in front of a start order.

    A task goes to a spare that waits (one that has just served another task first,
    see ``exec.launch``), else to a new fork; one spare is always forked ahead."""
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    buffer = b""
    children = {}                # pid -> the task folder of the task it runs (None: waiting)
    idle, busy = [launch.fork_spare()], {}      # [(pid, socket)]; socket -> pid
    trash_since = None           # when the oldest unserved trash order came
    while True:
        timeout = 5.0 if trash_since is None else TRASH_QUIET
        try:
            ready, _, _ = select.select([rfd, *busy], [], [], timeout)
        except InterruptedError:
            ready = []
        for sock in [s for s in ready if s in busy]:
            _heard(sock, busy, idle, children)
        reap_exited(children)
        now = time.monotonic()
        orders_ready = rfd in ready
        if trash_since is not None and (not orders_ready or now - trash_since > TRASH_LATEST):
            try:
                left = jobstore.empty_trash(TRASH_SLICE)
            except Exception:           # (the next trash order tries again; starts go on)
                left = False
            if not left:
                trash_since = None
            elif orders_ready:
                trash_since = now
        if not orders_ready:
            continue
        chunk = os.read(rfd, 65536)
        if not chunk:
            return
        orders, buffer = _orders(buffer + chunk)
        for order in orders:
            if order == "trash":
                trash_since = trash_since or now
            else:
                _start_one(idle, busy, children, *order)
        reap_exited(children)
        if not idle:
            idle.append(launch.fork_spare())


def _heard(sock, busy, idle, children):
    """A busy spare said it is done (it waits again) or closed its socket (it left)."""
    pid = busy.pop(sock)
    try:
        said = os.read(sock, 64)
    except OSError:
        said = b""
    if said:
        children[pid] = None         # (it ended its task: no obituary when it leaves)
    if said and len(idle) < IDLE_MOST:
        idle.append((pid, sock))
    else:
        os.close(sock)               # (a spare let go this way reads the end and leaves)


def _start_one(idle, busy, children, task_dir, plan):
    """Have a shepherd carry out ``plan``: a waiting spare (the last one that was done
    first), else a new fork."""
    while idle:
        pid, sock = idle.pop()
        if launch.hand(sock, task_dir, plan):
            busy[sock] = pid
            children[pid] = task_dir
            return
    children[launch.spawn(plan, task_dir)] = task_dir


class ExecClient:
    """The dispatcher's end of its exec server."""

    def __init__(self):
        self.pid = 0
        self.wfd = -1

    def start(self):
        """Fork the exec server (unless it runs), in a session of its own, keeping only
        the read end of the order pipe and the standard streams. ``python -m
        gridtools.daemon`` does this first, while the process is lean."""
        if self.wfd >= 0:
            return
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                signal.set_wakeup_fd(-1)        # the daemon's (a restarted server is forked late)
                os.close(wfd)
                os.closerange(3, rfd)
                os.closerange(rfd + 1, _max_fd())
                os.setsid()
                serve(rfd)
            except BaseException:  # noqa: BLE001 - the child must never return into the daemon
                code = 1
            finally:
                os._exit(code)
        os.close(rfd)
        self.pid, self.wfd = pid, wfd

    def order(self, plan, task_dir):
        """Ask for a shepherd to carry out ``plan`` in ``task_dir``."""
        try:
            body = marshal.dumps((task_dir, plan))
        except ValueError:              # a value of a kind marshal does not know: as plain data
            import json
            body = marshal.dumps((task_dir, json.loads(json.dumps(plan, default=str))))
        self._send(frame(SPAWN, body))

    def order_trash(self):
        """Ask for the job folders put aside by purging to be deleted."""
        self._send(frame(TRASH))

    def _send(self, data):
        """Write a whole frame (a server that went away is started again for it)."""
        try:
            _write_all(self.wfd, data)
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            self.stop()
            self.start()
            _write_all(self.wfd, data)

    def stop(self):
        if self.wfd >= 0:
            os.close(self.wfd)
            self.wfd = -1
        if self.pid:
            try:
                os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:
                pass


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _max_fd():
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        return 1024


def serve(rfd):
    """The exec server's process: load the shepherd once (every fork shares it), set the
    loaded objects aside from the garbage collector (a shepherd's collections then
    leave the pages it shares with the server untouched), and serve the pipe."""
    import gc
    from gridtools.exec import shepherd  # noqa: F401 - loaded once, used by every fork
    gc.freeze()
    serve_pipe(rfd)


# ---------------------------------------------------------------- per-host execd

def host_dir(host, *parts):
    return cell.spool("execd", host, *parts)


def registered(host):
    """True when an execution daemon serves ``host`` now."""
    return files.is_locked(host_dir(host, "execd.lock"))


def send(host, job_id, number):
    """Dispatcher side: hand a task to the execd of ``host``."""
    _post(host, f"{job_id}.{number}")


def send_folder(host, tdir):
    """Dispatcher side: hand the execd of ``host`` a task inside a parallel job (qrsh
    -inherit), whose folder is ``jobs/<id>/<n>/pe.<k>`` (entry ``<id>.<n>.<k>``)."""
    parent, name = os.path.split(tdir)
    number_dir, number = os.path.split(parent)
    _post(host, f"{os.path.basename(number_dir)}.{number}.{name[3:]}")


def _post(host, entry):
    inbox = host_dir(host, "inbox")
    files.atomic_write(os.path.join(inbox, entry), b"", fsync=False)
    try:
        fd = os.open(host_dir(host, "wakeup"), os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    try:
        os.write(fd, b"!")
    except OSError:
        pass
    finally:
        os.close(fd)


def _take_inbox(inbox, children):
    for name in sorted(os.listdir(inbox)):
        if name.startswith("."):
            continue
        parts = name.split(".")
        try:
            os.unlink(os.path.join(inbox, name))
        except FileNotFoundError:
            continue
        if len(parts) in (2, 3) and all(p.isdigit() for p in parts):
            tdir = jobstore.task_dir(int(parts[0]), int(parts[1]))
            _start(os.path.join(tdir, f"pe.{parts[2]}") if len(parts) == 3 else tdir, children)


def serve_host(host):
    """``gridtools execd --host NAME``: serve the host's inbox until SIGTERM. NAME must be
    an execution host of the cell (a typo would serve nobody's jobs)."""
    try:
        known = set(os.listdir(cell.etc("exechosts"))) - {"global"}
    except OSError:
        known = set()
    if host not in known or "/" in host:
        sys.stderr.write(f'gridtools execd: "{host}" is not an execution host\n')
        return 1
    files.makedirs(host_dir(host), 0o755)
    inbox = host_dir(host, "inbox")
    files.makedirs(inbox, 0o755)
    lock = files.Lock(host_dir(host, "execd.lock"), mode=0o600, blocking=False)
    if not lock.acquire():
        sys.stderr.write(f"gridtools execd: an execution daemon already serves host {host}\n")
        return 1
    files.atomic_write(host_dir(host, "execd.pid"), f"{os.getpid()}\n", fsync=False)
    fifo = host_dir(host, "wakeup")
    if not os.path.exists(fifo):
        os.mkfifo(fifo, 0o600)
    wake_fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    signal.signal(signal.SIGINT, lambda *_: stopping.append(1))
    signal.signal(signal.SIGCHLD, lambda *_: None)
    os.environ[cell.ENV_HOST] = host
    children = {}
    from gridtools.daemon.hostreport import Reporter
    reporter = Reporter(host)
    while not stopping:
        if lock.replaced():
            sys.stderr.write(f"gridtools execd: the spool {cell.spool()} is gone; exiting\n")
            return 1
        _take_inbox(inbox, children)
        reap_exited(children)
        wait = min(2.0, reporter.tick(time.time()))
        cron = reporter.fds()
        try:
            ready, _, _ = select.select([wake_fd] + cron, [], [], wait)
        except InterruptedError:
            ready = []
        if cron and ready:
            reporter.ready(ready, time.time())
        if wake_fd in ready:
            try:
                os.read(wake_fd, 4096)
            except BlockingIOError:
                pass
    reporter.stop()
    lock.release()
    return 0

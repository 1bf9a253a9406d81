"""The streams of a session another user's process runs in (``condor_ssh_to_job`` run
by root into a user's job), as sshd gives them: a pseudo-terminal of its own when the
caller's standard input is a terminal, else three pipes, with the caller's process
relaying between them and its own descriptors until the session's process ends. The
session's processes never hold the caller's terminal, to push input into it or to read
what the caller types after the session.
"""

import os
import signal

#: bytes read at once from a stream the session's streams are relayed between
CHUNK = 65536
#: the signals the caller's process passes on to the session's processes while it relays
PASSED_ON = (signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGHUP)


class Streams:
    """The streams of a session that runs as another user, as sshd gives them: a
    pseudo-terminal of its own when the caller's standard input is a terminal, else
    three pipes; the caller's process relays between them and its own descriptors, so
    the session's processes never hold the caller's terminal (to push input into it or
    to read what is typed next)."""

    def __init__(self, owner):
        import termios
        self.tty = os.isatty(0)
        if self.tty:
            try:
                self.master, slave = os.openpty()
            except OSError:             # (no pseudo-terminal to be had: pipes then)
                self.tty = False
        if self.tty:
            try:
                termios.tcsetattr(slave, termios.TCSANOW, termios.tcgetattr(0))
            except termios.error:
                pass
            _copy_size(0, self.master)
            _give_terminal(slave, owner)
            self.theirs = (slave, slave, slave)
            self.routes = [Route(0, self.master), Route(self.master, 1)]
        else:
            (stdin, into), (out, stdout), (err, stderr) = os.pipe(), os.pipe(), os.pipe()
            self.theirs = (stdin, stdout, stderr)
            self.routes = [Route(0, into, ends=True), Route(out, 1), Route(err, 2)]

    def attach(self):
        """In the session's process: a session of its own (no controlling terminal but
        its pseudo-terminal), the streams as 0, 1 and 2."""
        import fcntl
        import termios
        os.setsid()
        if self.tty:
            fcntl.ioctl(self.theirs[0], termios.TIOCSCTTY, 0)
        for target, fd in enumerate(self.theirs):
            os.dup2(fd, target)

    def relay(self, child):
        """In the caller's process: relay until the session's process ``child`` ended
        (the caller's terminal raw meanwhile, its size passed on); its exit status."""
        import termios
        import tty
        for fd in set(self.theirs):
            os.close(fd)
        mine = {fd for route in self.routes for fd in (route.source, route.target) if fd > 2}
        for fd in mine:
            os.set_blocking(fd, False)
        saved = termios.tcgetattr(0) if self.tty else None
        handlers = {signum: signal.signal(signum, lambda signum, _f: _pass_on(child, signum))
                    for signum in PASSED_ON}
        pidfd = None
        try:
            if self.tty:
                handlers[signal.SIGWINCH] = signal.signal(signal.SIGWINCH, lambda *_a: _copy_size(0, self.master))
                tty.setraw(0, termios.TCSADRAIN)
            pidfd = os.pidfd_open(child)
            self._pump(pidfd)
            status = wait_child(child)
            for route in self.routes:
                if route.source > 2:
                    route.drain()
        finally:
            if pidfd is not None:
                os.close(pidfd)
            if saved is not None:
                termios.tcsetattr(0, termios.TCSADRAIN, saved)
            for signum, handler in handlers.items():
                signal.signal(signum, handler)
            for fd in mine - {route.closed for route in self.routes}:
                os.close(fd)
        return status

    def _pump(self, pidfd):
        """Move bytes along the routes until the session's process ended (``pidfd``)."""
        import select
        while True:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            wanted = {}
            for route in self.routes:
                for fd, event in route.waits():
                    wanted[fd] = wanted.get(fd, 0) | event
            for fd, events in wanted.items():
                poller.register(fd, events)
            ready = dict(poller.poll())
            if pidfd in ready:
                return
            for route in self.routes:
                route.move(ready)


class Route:
    """Bytes from one descriptor to another: the caller's are read only when ready and
    written whole; the session's do not block (what they cannot take yet waits). A
    route that ``ends`` its target closes it when its source ended (the session's
    standard input, a pipe, then ends too)."""

    def __init__(self, source, target, ends=False):
        self.source, self.target, self.ends = source, target, ends
        self.waiting = b""
        self.open = True                # (its source may give more)
        self.closed = None              # (its target, once it closed it)

    def waits(self):
        import select
        if self.waiting:
            return [(self.target, select.POLLOUT)]
        return [(self.source, select.POLLIN)] if self.open else []

    def move(self, ready):
        if self.waiting:
            if ready.get(self.target):
                self._write()
        elif self.open and ready.get(self.source):
            self._read()

    def _read(self):
        """Read what the source has, and pass it on; False when it had nothing now."""
        try:
            data = os.read(self.source, CHUNK)
        except BlockingIOError:
            return False
        except OSError:                 # (a pseudo-terminal nobody holds any more: EIO)
            data = b""
        if data:
            self.waiting = data
            self._write()
            return True
        self.open = False
        if self.ends and self.target is not None:
            os.close(self.target)
            self.closed, self.target = self.target, None
        return False

    def _write(self):
        while self.waiting and self.target is not None:
            try:
                done = os.write(self.target, self.waiting)
            except BlockingIOError:
                return
            except OSError:             # (the other end went away: what comes is dropped)
                self.target = None
                break
            self.waiting = self.waiting[done:]
        if self.target is None:
            self.waiting = b""

    def drain(self):
        """After the session's process ended: what its stream holds now, to the caller."""
        while self.open and not self.waiting and self._read():
            pass


def _pass_on(child, signum):
    try:
        os.killpg(child, signum)
    except OSError:
        pass


def _copy_size(source, target):
    """The window size of terminal ``source`` given to ``target``."""
    import fcntl
    import termios
    try:
        fcntl.ioctl(target, termios.TIOCSWINSZ, fcntl.ioctl(source, termios.TIOCGWINSZ, b"\0" * 8))
    except OSError:
        pass


def _give_terminal(slave, owner):
    """The session's terminal is its owner's (group tty, mode 0620), as sshd gives one."""
    import grp
    try:
        group = grp.getgrnam("tty").gr_gid
    except KeyError:
        group = -1
    try:
        os.fchown(slave, owner.pw_uid, group)
        os.fchmod(slave, 0o620)
    except OSError:
        pass


def wait_child(child):
    """The exit status of process ``child`` once it ended (128 + the signal that ended it)."""
    while True:
        try:
            _pid, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)

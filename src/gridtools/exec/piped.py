"""A program the daemon runs beside its jobs and talks to through pipes: Grid
Engine's load sensors (``exec.loadsensor``) and HTCondor's startd cron jobs
(``daemon.startdcron``).

``Piped`` starts the program in a session of its own (so that stopping it
stops what it started), with its standard output read through a pipe that
never blocks the daemon: ``lines()`` gives the lines completed since the last
call, and tells when the output ended. Its standard input is a pipe when the
daemon writes to it (``send``), else /dev/null; its standard error goes to
/dev/null. A line longer than ``LONGEST_LINE`` is dropped, so that a program
that never ends its line cannot fill the daemon's memory, and one call reads
at most ``MOST_READ`` bytes, so that one that writes without pause cannot
hold the daemon.

The daemon's own reaping of ended children (``exec.launch.ended_children``)
may collect the program's exit before ``running`` asks: the program then
counts as ended, which it is.
"""

import os
import signal
import subprocess

#: bytes a line may have; a longer one is dropped
LONGEST_LINE = 1 << 20
#: most bytes one call of ``lines`` reads (a program that writes without pause cannot hold
#: the daemon: the rest waits for the next call)
MOST_READ = 1 << 20


class Piped:
    """One run of a program (see the module docstring)."""

    def __init__(self, argv, executable=None, env=None, cwd=None, with_input=False):
        self.proc = subprocess.Popen(
            argv, executable=executable, env=env, cwd=cwd, start_new_session=True, close_fds=True,
            stdin=subprocess.PIPE if with_input else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.pid = self.proc.pid
        self.fd = self.proc.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.input = self.proc.stdin.fileno() if with_input else None
        if self.input is not None:
            os.set_blocking(self.input, False)
        self.ended = False          # its output ended (or could not be read)
        self._rest = b""
        self._dropping = False      # the rest of a line too long is being dropped

    def lines(self):
        """The lines of output completed since the last call (decoded, without their line
        ends); when the output ended, the last line even without its end."""
        chunks, taken = [], 0
        while not self.ended and taken < MOST_READ:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:
                self.ended = True
                break
            chunks.append(data)
            taken += len(data)
        if not chunks and not (self.ended and self._rest):
            return []
        text = self._rest + b"".join(chunks)
        found = text.split(b"\n")
        self._rest = found.pop()
        if self._dropping and found:
            found.pop(0)
            self._dropping = False
        if len(self._rest) > LONGEST_LINE:
            self._rest, self._dropping = b"", True
        if self.ended:
            if self._rest and not self._dropping:
                found.append(self._rest)
            self._rest = b""
            self._close_output()
        return [line.decode("utf-8", "replace").rstrip("\r") for line in found]

    def send(self, text):
        """Write ``text`` to the program's input; False when it cannot take it now."""
        if self.input is None:
            return False
        try:
            return os.write(self.input, text.encode()) == len(text.encode())
        except OSError:             # (ended: a broken pipe; or its pipe is full)
            return False

    def running(self):
        """True while the program has not ended."""
        try:
            return self.proc.poll() is None
        except OSError:
            return False

    def close(self):
        """Close the pipes (the program sees the end of its input)."""
        if self.input is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            self.input = None
        self._close_output()

    def _close_output(self):
        if self.fd is not None:
            try:
                self.proc.stdout.close()
            except OSError:
                pass
            self.fd = None
            self.ended = True

    def kill(self):
        """Kill the program and what it started (its session), when it still runs."""
        self.close()
        if self.running():
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                self.proc.wait(timeout=1.0)
            except (subprocess.TimeoutExpired, OSError):
                pass

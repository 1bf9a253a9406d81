"""File access that submit descriptions need, behind one small interface.

Submit processing itself is pure; what it needs from the file system (the
lines of a ``queue from`` file or command, the names a ``matching`` glob
finds, the size of the executable) comes through an object with the methods
of ``LocalFiles``. Tests and callers can hand in their own.
"""

import posix

from gridtools import ospaths


class LocalFiles:
    """Reads the local file system, relative paths from ``cwd``."""

    def __init__(self, cwd):
        self.cwd = cwd

    def _path(self, path):
        return path if path.startswith("/") else ospaths.join(self.cwd, path)

    def read_lines(self, path):
        """The lines of a file (without line ends); InputError when unreadable."""
        from gridtools.errors import InputError
        try:
            with open(self._path(path), encoding="utf-8", errors="surrogateescape") as handle:
                return handle.read().splitlines()
        except OSError as exc:
            raise InputError(f"can't open file {path}: {exc.strerror}") from None

    def command_lines(self, command):
        """The lines a command prints on its standard output (``queue from CMD |``), run
        as the caller in ``cwd`` without a shell: its words are split at blanks (quotes
        are part of the words), or read in the new syntax when it starts with ``"``, as HTCondor's
        condor_submit runs it. Its exit status is not looked at (nor is it by HTCondor);
        InputError when it cannot be started."""
        import subprocess
        from gridtools.errors import InputError
        from gridtools.formats.condor import args
        try:
            words = args.split_new(command) if args.is_new_syntax(command) else command.split()
        except InputError as exc:
            raise InputError(f"Can't append args, {exc}") from None
        if not words:
            raise InputError("not a valid command, | must be at the end")
        try:
            done = subprocess.run(words, cwd=self.cwd, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, check=False)
        except OSError as exc:
            raise InputError(f"not a valid command, errno={exc.errno} : {exc.strerror}") from None
        return done.stdout.decode("utf-8", "surrogateescape").splitlines()

    def glob(self, pattern, kind):
        """Names matching ``pattern`` in sorted order, relative as written;
        directories end in ``/``. ``kind`` is a queue.MatchKind."""
        import glob
        import os
        found = []
        for name in sorted(glob.glob(self._path(pattern))):
            shown = os.path.relpath(name, self.cwd) if not os.path.isabs(pattern) else name
            is_dir = os.path.isdir(name)
            if kind.value == "files" and is_dir or kind.value == "dirs" and not is_dir:
                continue
            found.append(shown + "/" if is_dir else shown)
        return found

    def is_dir(self, path):
        return ospaths.isdir(self._path(path))

    def readable(self, path):
        """True when the caller may read ``path`` (condor_submit's check of its input
        files: it warns of one it cannot read, and submits the job all the same)."""
        return posix.access(self._path(path), posix.R_OK)

    def size_kib(self, path):
        """The size of a file in KiB rounded up (0 for a directory or another kind of
        file), or None when it is missing."""
        try:
            st = posix.stat(self._path(path))
        except OSError:
            return None
        return (st.st_size + 1023) // 1024 if st.st_mode & 0o170000 == 0o100000 else 0

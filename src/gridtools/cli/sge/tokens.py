"""Splitting option text into words, as Grid Engine reads request files.

Used for sge_request files, ``-@`` option files and ``#$`` script
directives (``option_words``, as Grid Engine's parse_script_file reads them: a
line ends at its first ``#``, words are separated by blanks, then every quote
character is dropped; each line is parsed by itself, so ``LINE_END`` marks where
one ends: an option cannot take its argument from the next line), and for sge_aliases lines (``split_words``: single and
double quotes group, a backslash escapes the next character outside single
quotes, ``#`` starts a comment at the beginning of a word). Written out by
hand because ``shlex`` would pull ``re`` into every qsub start-up.
"""

from gridtools.errors import InputError

#: the most bytes of one option file (sge_request, ``-@`` file) read: more is refused
MAX_OPTION_FILE = 16 * 1024 * 1024


class _LineEnd(str):
    """The mark between the words of two lines of option text (``option_lines``): the
    option parser skips it, and an option whose arguments would reach past it lacks
    them. A str, so that code that only looks at words passes it by; no word equals it."""

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    __hash__ = str.__hash__


LINE_END = _LineEnd("\n")


def option_words(line, keep_empty=False):
    """The option words of one line of an option file or directive: cut at the first
    ``#``, split on blanks, quotes removed (a quoted blank still separates words).
    ``keep_empty``: a word of quotes only (``""``) stays, as an empty word, as Grid
    Engine keeps it; else it is dropped."""
    line = line.partition("#")[0]
    words = [word.replace('"', "").replace("'", "") for word in line.split()]
    return words if keep_empty else [w for w in words if w]


def option_lines(lines):
    """The option words of ``lines``, each line's followed by LINE_END (empty words kept)."""
    words = []
    for line in lines:
        found = option_words(line, keep_empty=True)
        if found:
            words.extend(found)
            words.append(LINE_END)
    return words


def without_line_ends(words):
    """``words`` without the LINE_END marks."""
    return [word for word in words if word is not LINE_END]


def split_words(text, comments=True):
    """The words of one line (or several joined lines) of option text."""
    words = []
    cur = []
    in_word = False
    quote = None
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if quote:
            if ch == quote:
                quote = None
            elif ch == "\\" and quote == '"' and i + 1 < n and text[i + 1] in '"\\$`':
                i += 1
                cur.append(text[i])
            else:
                cur.append(ch)
        elif ch in " \t\r\n":
            if in_word:
                words.append("".join(cur))
                cur = []
                in_word = False
        elif ch == "#" and comments and not in_word:
            break
        elif ch in "'\"":
            quote = ch
            in_word = True
        elif ch == "\\" and i + 1 < n:
            i += 1
            cur.append(text[i])
            in_word = True
        else:
            cur.append(ch)
            in_word = True
        i += 1
    if quote:
        raise InputError(f"unmatched quote in {text.strip()!r}")
    if in_word:
        words.append("".join(cur))
    return words


def split_list(text):
    """Comma- (and white-space-) separated list items, empty items dropped."""
    return text.replace(",", " ").split()


def list_words(argv, i):
    """The argument words of the list option ``argv[i]``: every word after it up to the
    next option (a word starting with ``-``), as Grid Engine's clients take a list
    argument, and the index past them. None for the words when there is none."""
    j = i + 1
    while j < len(argv) and not argv[j].startswith("-"):
        j += 1
    return (argv[i + 1:j] or None), j


def read_option_file(path, missing_ok=True, by_line=False):
    """The words of an option file (sge_request or -@ file); [] if it is missing.
    ``by_line``: as ``option_lines`` gives them (each line's words ended by LINE_END,
    empty words kept), for the submit options, which Grid Engine parses a line at a time.
    Errors in Grid Engine's words (``error opening nosuch: No such file or
    directory``); the file's contents are never echoed."""
    try:
        fd = _open_read(path)
    except FileNotFoundError as exc:
        if missing_ok:
            return []
        raise InputError(f"error opening {path}: {exc.strerror}") from None
    except OSError as exc:
        raise InputError(f"error opening {path}: {exc.strerror}") from None
    return _words_of(fd, path, by_line)


def _open_read(path):
    import posix
    if "\0" in path:
        raise FileNotFoundError(2, "No such file or directory")
    return posix.open(path, posix.O_RDONLY | posix.O_NONBLOCK | posix.O_CLOEXEC)


def _words_of(fd, path, by_line=False):
    """The option words of the open file ``fd`` (closed here): at most MAX_OPTION_FILE
    bytes of text, else one short error line. ``by_line``: as ``option_lines`` gives them."""
    import posix
    try:
        chunks, size = [], 0
        while size <= MAX_OPTION_FILE:
            chunk = posix.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise InputError(f"error reading {path}: {exc.strerror}") from None
    finally:
        posix.close(fd)
    if size > MAX_OPTION_FILE:
        raise InputError(f"error reading {path}: larger than {MAX_OPTION_FILE >> 20} MiB, not an option file")
    data = b"".join(chunks)
    if b"\0" in data:
        raise InputError(f"error reading {path}: not a text file (it holds a NUL byte)")
    text = data.decode("utf-8", "replace").splitlines()
    if by_line:
        return option_lines(text)
    words = []
    for line in text:
        words.extend(option_words(line))
    return words


#: what a user's own option file must be (read_own_option_file's warning)
_OWN_FILE_RULE = ("it must be a file of your own (or root's) that no one else may write, reached "
                  "only through links of your own (or root's) in folders no one else may change")


def read_own_option_file(path, by_line=False):
    """The words of an option file a user keeps (``./.sge_request``, ``~/.sge_request``,
    ``~/.sge_qstat``): [] when it is missing; [] with a warning unless it is (or links
    to) a regular file of the caller's own or root's that nobody else may write (its
    group only when the group is its owner's own: ``_private_group``), reached only
    through links of the caller's own or root's in folders nobody else may change
    (``_trusted_target``): another user's file or link planted in a folder others may
    write would set the caller's job's options, its shell say. One that cannot be read
    is refused as ``read_option_file`` refuses it."""
    import posix
    import sys
    try:
        target = _trusted_target(path)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise InputError(f"error opening {path}: {exc.strerror}") from None
    fd = None
    if target is not None:
        try:
            fd = posix.open(target, posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_NONBLOCK | posix.O_CLOEXEC)
        except FileNotFoundError:
            return []
        except OSError as exc:
            if exc.errno != 40:         # (ELOOP: it became a link since: refused below)
                raise InputError(f"error opening {path}: {exc.strerror}") from None
    st = posix.fstat(fd) if fd is not None else None
    if st is None or not _own_file(st):
        if fd is not None:
            posix.close(fd)
        sys.stderr.write(f"warning: {path} not read: {_OWN_FILE_RULE}\n")
        return []
    return _words_of(fd, path, by_line)


def _own_file(st):
    """True when ``st`` is the status of a regular file of the caller's or root's that
    nobody else may write."""
    import posix
    return (st.st_mode & 0o170000 == 0o100000 and st.st_uid in (0, posix.geteuid())
            and not st.st_mode & 0o002 and not (st.st_mode & 0o020 and not _private_group(st)))


#: how many links one option file's path may pass through (as the kernel's limit)
_MAX_LINKS = 40


def _trusted_target(path):
    """``path`` with every link on it resolved, or None when a link on the way is not the
    caller's or root's, or sits in a folder that someone else could change (another
    user's, or writable by others without the sticky bit: they could replace it)."""
    import posix
    from gridtools import ospaths
    parts = ospaths.abspath(path).split("/")[1:]
    done, hops = "", 0
    while parts:
        name = parts.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            done = done.rpartition("/")[0]
            continue
        here = done + "/" + name
        st = posix.lstat(here)
        if st.st_mode & 0o170000 != 0o120000:
            done = here
            continue
        hops += 1
        if hops > _MAX_LINKS or st.st_uid not in (0, posix.geteuid()) or not _safe_folder(done or "/"):
            return None
        link = posix.readlink(here)
        if link.startswith("/"):
            done = ""
        parts = link.split("/") + parts
    return done or "/"


def _safe_folder(folder):
    """True when nobody but the caller and root can replace an entry of ``folder``."""
    import posix
    st = posix.stat(folder)
    if st.st_uid not in (0, posix.geteuid()):
        return False
    others_write = st.st_mode & 0o002 or (st.st_mode & 0o020 and not _private_group(st))
    return not others_write or bool(st.st_mode & 0o1000)


def _private_group(st):
    """True when the group of a file (``st``: its status) is its owner's own: the owner's
    primary group, with no other member (a umask of 002 makes files group-writable)."""
    import grp
    import pwd
    try:
        owner, group = pwd.getpwuid(st.st_uid), grp.getgrgid(st.st_gid)
    except KeyError:
        return False
    return owner.pw_gid == st.st_gid and set(group.gr_mem) <= {owner.pw_name}


def read_user_option_file(name, by_line=False):
    """The words of the calling user's option file ``name`` in their home folder (the
    password database's, as Grid Engine reads it); [] when the user cannot see a file
    there (missing, or a home folder they may not search). A file that is there but
    cannot be read is refused as ``read_option_file`` refuses it."""
    import posix
    from gridtools import ospaths
    path = ospaths.join(ospaths.user_home(), name)
    try:
        posix.stat(path)
    except (OSError, ValueError):
        return []
    return read_own_option_file(path, by_line)


def script_directives(text, prefix="#$"):
    """The option words of all lines of a job script that start with ``prefix``, each
    line's ended by LINE_END (``option_lines``).

    Grid Engine reads directives from the whole script; a directive line ends at
    its first ``#`` (``option_words``) and is parsed by itself. An empty prefix
    (``-C ''``) disables them.
    """
    if not prefix:
        return []
    return option_lines(line[len(prefix):] for line in text.splitlines() if line.startswith(prefix))

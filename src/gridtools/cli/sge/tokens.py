"""Splitting option text into words, as Grid Engine reads request files.

Used for sge_request files, ``-@`` option files and ``#$`` script
directives: words are separated by blanks; single and double quotes group;
a backslash escapes the next character outside single quotes; ``#`` starts
a comment at the beginning of a word. Written out by hand because ``shlex``
would pull ``re`` into every qsub start-up.
"""

from gridtools.errors import InputError


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


def read_option_file(path, missing_ok=True):
    """The words of an option file (sge_request or -@ file); [] if it is missing."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except FileNotFoundError:
        if missing_ok:
            return []
        raise InputError(f"can't open file {path!r}") from None
    except OSError as exc:
        raise InputError(f"can't read file {path!r}: {exc.strerror}") from None
    words = []
    for line in text.splitlines():
        words.extend(split_words(line))
    return words


def read_own_option_file(path):
    """The words of an option file a user keeps (``./.sge_request``, ``~/.sge_request``):
    [] when it is missing, and when it is not a regular file of the caller's own or
    root's, reached without a link, that nobody else may write (its group only when the
    group is its owner's own: ``_private_group``) (another user's file
    planted in a folder others may write would set the caller's job's options, its
    shell say): then a warning says so. One that cannot be read is refused as
    ``read_option_file`` refuses it."""
    import posix
    import sys
    try:
        fd = posix.open(path, posix.O_RDONLY | posix.O_NOFOLLOW | posix.O_NONBLOCK | posix.O_CLOEXEC)
    except FileNotFoundError:
        return []
    except OSError as exc:
        if exc.errno != 40:             # (ELOOP: a link, refused below)
            raise InputError(f"can't read file {path!r}: {exc.strerror}") from None
        fd = None
    try:
        st = posix.fstat(fd) if fd is not None else None
        if st is None or st.st_mode & 0o170000 != 0o100000 or st.st_uid not in (0, posix.geteuid()) \
                or st.st_mode & 0o002 or st.st_mode & 0o020 and not _private_group(st):
            sys.stderr.write(f"warning: {path} not read: only a file of your own (or root's) that no one "
                             "else may write, reached without a link, is\n")
            return []
        with open(fd, encoding="utf-8", errors="replace", closefd=False) as fh:
            text = fh.read()
    except OSError as exc:
        raise InputError(f"can't read file {path!r}: {exc.strerror}") from None
    finally:
        if fd is not None:
            posix.close(fd)
    words = []
    for line in text.splitlines():
        words.extend(split_words(line))
    return words


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


def read_user_option_file(name):
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
    return read_own_option_file(path)


def script_directives(text, prefix="#$"):
    """The option words of all lines of a job script that start with ``prefix``.

    Grid Engine reads directives from the whole script; a directive line may
    carry a trailing comment. An empty prefix (``-C ''``) disables them.
    """
    if not prefix:
        return []
    words = []
    for line in text.splitlines():
        if line.startswith(prefix):
            words.extend(split_words(line[len(prefix):]))
    return words

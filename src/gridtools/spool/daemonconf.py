"""The HTCondor configuration the daemon runs with, as it publishes it, and the
settings ``condor_config_val -set`` made, as the daemon keeps them.

Published: each time the daemon reads its condor_config (at start-up, when a
file changed, on condor_reconfig) it writes ``spool/daemon_config``, one marshal
document (a mapping: the daemon's host, pid and address, the files it read,
and every definition with its raw and expanded values and where it was made),
for ``condor_config_val -master NAME`` and the like to answer from. ``publish``
writes it atomically, whole into a file only the daemon's user may read
(``daemon_config.private``), and what every user may read of it (no definition
from a file others cannot read, or from the daemon's environment) into
``daemon_config``; ``read`` gives the first the caller can read, or None.

Kept: a persistent setting lives in ``PERSISTENT_CONFIG_DIR`` as HTCondor lays
it out: ``.config.MASTER`` holds ``RUNTIME_CONFIG_ADMIN = name, name ...`` (the
names set) and ``.config.MASTER.<name>`` the line ``NAME = value`` of each.
Only the daemon writes them (``save_setting``, ``remove_setting``), each file
replaced atomically; ``settings`` reads them back, a file at a time, opened
without following a link, and only when the folder is writable by its owner
alone and each file is a plain file owned by the daemon's user (HTCondor's check
of its persistent configuration). What cannot be read so is named in the
problems it returns and left out.
"""

import marshal
import posix

from gridtools import cell, ospaths
from gridtools.spool.files import NotRegular, atomic_write, open_regular, read_capped

#: the name of the published configuration in the spool
PUBLISHED = "daemon_config"
#: the persistent files' subsystem name (the cell's one daemon is its master)
SUBSYSTEM = "MASTER"
#: the largest persistent file read
MAX_FILE = 64 << 10


#: beside it, the whole of it, which only the daemon's user may read
PRIVATE = "daemon_config.private"


def path(private=False):
    return cell.spool(PRIVATE if private else PUBLISHED)


def publish(snapshot, public):
    """Write the configuration in use (a mapping of plain values): ``snapshot`` whole for
    the daemon's user (and root), ``public`` (what every user may read of it:
    ``daemon.confset.public``) for everybody."""
    atomic_write(path(private=True), marshal.dumps(snapshot), mode=0o600)
    atomic_write(path(), marshal.dumps(public), mode=0o644)


#: present while the configuration sets rules the daemon checks each new job against
#: and a submitting command does not check in full (SUBMIT_REQUIREMENT_NAMES,
#: MAX_JOBS_SUBMITTED, MAX_JOBS_PER_OWNER of condor_config; Grid Engine's admission
#: rules): then qsub and condor_submit wait for the daemon's word on a job, to say a
#: refusal as they say their own (``cli.ask.checks_marked`` looks for it by this name)
CHECKS = "submit_checks"
#: the knobs that make it present
CHECK_KNOBS = ("SUBMIT_REQUIREMENT_NAMES", "MAX_JOBS_SUBMITTED", "MAX_JOBS_PER_OWNER")


def mark_checks(config, global_conf=None):
    """Make CHECKS present when ``config`` (condor_config as just read) sets one of
    CHECK_KNOBS, or ``global_conf`` (Grid Engine's global configuration, a mapping) one
    of the admission rules (``cli.sge.cellfacts.rules_set``); absent otherwise."""
    import os
    from gridtools.cli.sge.cellfacts import rules_set
    wanted = (config is not None and any(name in config and (config.raw(name) or "").strip()
                                         for name in CHECK_KNOBS)) or rules_set(global_conf or {})
    marker = cell.spool(CHECKS)
    if wanted:
        if not os.path.exists(marker):
            atomic_write(marker, "", mode=0o644)
    else:
        try:
            os.unlink(marker)
        except FileNotFoundError:
            pass


def read():
    """The published configuration (a mapping): the whole of it when the caller may read
    it, else what every user may read; None when there is none to read."""
    for private in (True, False):
        try:
            with open(path(private), "rb") as fh:
                found = marshal.loads(fh.read())
        except PermissionError:
            continue
        except (OSError, EOFError, ValueError, TypeError):
            return None
        return found if type(found) is dict else None
    return None


# ---------------------------------------------------------------- persistent settings

def top_file(directory):
    return ospaths.join(directory, f".config.{SUBSYSTEM}")


def setting_file(directory, name):
    """The file of setting ``name`` (already validated: no ``/``), in lower case."""
    return f"{top_file(directory)}.{name.lower()}"


def folder_problem(directory):
    """Why the daemon may not keep its settings in ``directory``, or None: it must be a
    folder (not a link) of the daemon's user or root that nobody else may write to."""
    try:
        st = posix.lstat(directory)
    except OSError as exc:
        return f"{directory}: {exc.strerror}"
    if st.st_mode & 0o170000 != 0o040000:
        return f"{directory} is not a folder"
    if st.st_uid not in (0, posix.geteuid()) or st.st_mode & 0o022:
        return f"{directory} may be written by others than the daemon's user"
    return None


def _read_owned(file_path):
    """The text of a plain file of the daemon's user (None when there is none; ValueError
    naming what is wrong with one that is there)."""
    try:
        fd, st = open_regular(file_path)
    except FileNotFoundError:
        return None
    except (OSError, NotRegular) as exc:
        raise ValueError(f"{file_path}: {exc.strerror}") from None
    try:
        if st.st_uid != posix.geteuid():
            raise ValueError(f"{file_path} is owned by uid {st.st_uid}, not by the daemon's user")
        data = read_capped(fd, MAX_FILE)
    finally:
        posix.close(fd)
    if data is None:
        raise ValueError(f"{file_path} is larger than {MAX_FILE} bytes")
    return data.decode("utf-8", "replace")


def names(directory):
    """The names of the settings kept, from the top file's RUNTIME_CONFIG_ADMIN (ValueError
    when it cannot be read)."""
    text = _read_owned(top_file(directory)) or ""
    for line in text.splitlines():
        key, equals, value = line.partition("=")
        if equals and key.strip().upper() == "RUNTIME_CONFIG_ADMIN":
            return [n for n in value.replace(",", " ").split() if n]
    return []


def settings(directory):
    """([(name, assignment text, file)] of the settings kept, [problems])."""
    problem = folder_problem(directory)
    if problem is not None:
        return [], [problem]
    found, problems = [], []
    try:
        kept = names(directory)
    except ValueError as exc:
        return [], [str(exc)]
    for name in kept:
        file_path = setting_file(directory, name)
        try:
            text = _read_owned(file_path)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if text is not None and text.strip():
            found.append((name, text.strip("\n"), file_path))
    return found, problems


def save_setting(directory, name, text):
    """Keep setting ``name`` (validated) as the one line ``text``, then list it in the top
    file. Raises SpoolError when a file cannot be written, ValueError when the folder may
    not hold them."""
    _writable(directory)
    atomic_write(setting_file(directory, name), text + "\n", mode=0o644)
    kept = names(directory)
    if name.lower() not in kept:
        _write_top(directory, sorted(kept + [name.lower()]))


def remove_setting(directory, name):
    """Forget setting ``name``: off the top file's list, then its file removed (the top
    file too when no setting is left)."""
    _writable(directory)
    kept = [n for n in names(directory) if n != name.lower()]
    _write_top(directory, kept)
    for file_path in (setting_file(directory, name),) + (() if kept else (top_file(directory),)):
        try:
            posix.unlink(file_path)
        except FileNotFoundError:
            pass


def _writable(directory):
    problem = folder_problem(directory)
    if problem is not None:
        raise ValueError(problem)


def _write_top(directory, kept):
    atomic_write(top_file(directory), f"RUNTIME_CONFIG_ADMIN = {', '.join(kept)}\n", mode=0o644)

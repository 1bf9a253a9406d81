"""The journal of bulk job changes: ``spool/journal``.

A request that deletes or holds many jobs at once (``qdel -u``, ``qhold`` of
thousands of ids) is made durable by one record appended here and flushed
to disk, instead of one state file per job: the daemon answers the request
once its record is on disk and writes the jobs' state files later, off the
request's path. A daemon that restarts replays the records onto the jobs
whose state files do not show them yet.

The file is a line of JSON per entry. The first line names the journal:
``{"journal": <token>}`` (a fresh token each time a journal is begun);
each record after it is

    {"seq": 1, "op": "delete", "at": <time>, "jobs": [[first, last, step], ...],
     "req": <request name>}
    {"seq": 2, "op": "hold", "at": <time>, "jobs": [...], "letters": "u", "on": true,
     "req": <request name>}

``seq`` counts up from 1 within the journal. While a journal exists, every
state file the daemon writes carries ``journal: [<token>, <last seq>]``: a
record applies to a job whose state file names an older journal or an
earlier record, never to one written after it. A line that does not parse
(a write cut short by a machine crash) ends the reading. The journal is
removed (``retire``) once every job it names has its state written or its
folder removed. The file is the daemon's alone (mode 0600).
"""

import json
import posix

from gridtools import cell
from gridtools.errors import SpoolError

FILE = "journal"
#: the operations a record may carry (``answered``: jobs a request changed, to answer it
#: again after a crash; no change of its own)
OPS = ("delete", "hold", "answered")


def path():
    return cell.spool(FILE)


def fresh_token():
    """A token naming a new journal (never the same as an earlier one's)."""
    import time
    return f"{time.time_ns():x}.{posix.getpid()}"


def append(token, records, begin=False):
    """Append ``records`` (dicts) to the journal and flush them to disk; with ``begin``
    the journal is begun anew with ``token`` (a journal left behind is replaced).
    Raises SpoolError when they cannot be written (a record written in part is cut
    off again)."""
    lines = [json.dumps(rec, separators=(",", ":")) + "\n" for rec in records]
    if begin:
        lines.insert(0, json.dumps({"journal": token}) + "\n")
    data = "".join(lines).encode()
    flags = posix.O_WRONLY | posix.O_CREAT | posix.O_APPEND | posix.O_NOFOLLOW | posix.O_CLOEXEC
    if begin:
        flags |= posix.O_TRUNC
    try:
        fd = posix.open(path(), flags, 0o600)
    except OSError as exc:
        raise SpoolError(f"cannot write {path()}: {exc.strerror}") from None
    try:
        size = posix.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[posix.write(fd, view):]
            posix.fsync(fd)
        except OSError as exc:
            try:
                posix.ftruncate(fd, size)
            except OSError:
                pass
            raise SpoolError(f"cannot write {path()}: {exc.strerror}") from None
    finally:
        posix.close(fd)


def rewrite(token, records):
    """Replace the journal by a new one, ``token``, holding ``records`` (flushed to disk)."""
    from gridtools.spool.files import atomic_write
    lines = [json.dumps({"journal": token}) + "\n"]
    lines += [json.dumps(rec, separators=(",", ":")) + "\n" for rec in records]
    atomic_write(path(), "".join(lines), mode=0o600, fsync=True)


def read():
    """(token, records) of the journal on disk; (None, []) when there is none (or its
    first line does not name it)."""
    try:
        with open(path(), "rb") as fh:
            lines = fh.read().split(b"\n")
    except FileNotFoundError:
        return None, []
    try:
        head = json.loads(lines[0])
        token = head["journal"]
    except (ValueError, KeyError, TypeError, IndexError):
        return None, []
    records = []
    for line in lines[1:]:
        try:
            rec = json.loads(line)
        except ValueError:
            break                           # a record cut short, and nothing after it
        if isinstance(rec, dict) and rec.get("op") in OPS and type(rec.get("seq")) is int:
            records.append(rec)
    return str(token), records


def job_ids(record):
    """The job ids a record names (none for ranges that are not well formed)."""
    from gridtools.formats.jobcheck import MAX_JOB_ID
    found = []
    ranges = record.get("jobs")
    for item in ranges if isinstance(ranges, list) else ():
        if not (isinstance(item, list) and len(item) == 3 and all(type(v) is int for v in item)):
            continue
        first, last, step = item
        if 0 < first <= last <= MAX_JOB_ID and step > 0:
            found.extend(range(first, last + 1, step))
    return found


def deleted_ids():
    """Ids of the jobs the journal records as deleted (an empty set when there is no
    journal, or it cannot be read)."""
    try:
        _token, records = read()
    except OSError:
        return set()
    return {n for rec in records if rec["op"] == "delete" for n in job_ids(rec)}


def retire():
    """Remove the journal (every change it records is in the job store now)."""
    try:
        posix.unlink(path())
    except FileNotFoundError:
        pass

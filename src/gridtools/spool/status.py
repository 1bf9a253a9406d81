"""The status snapshot: what queries read instead of parsing every job file.

After each pass that changed something, the daemon writes one file,
``spool/status``, with every job task row, every queue instance and every
host, ready for qstat, qhost, condor_q and condor_status. It is a cache, not
the record (that is the job store), so it uses Python's ``marshal`` format:
loading it needs no import.

The file is in sections, each a marshal document, so that a query loads
only what it shows: ``listing`` (the compact job listing of
``spool.listing``: plain qstat, condor_q and qdel read nothing else) and
``lines`` (its rendered qstat lines), the job ``rows``, the job facts (``jobs``), the reasons of waiting jobs
(``reasons``) and ``head``, everything else (queues, hosts, configuration
facts, faults, ...). Before them come the listing's ready-made tables, when
the daemon makes them (``encode``'s ``tables``): condor_q's batch view of
everybody's jobs and of each owner's and its per-proc table's rows of each
run of the listing (``cli.condor.qlisting.Published``), each its own
section, so that a condor_q reads only the one it shows. Layout: the 8 bytes ``MAGIC``, the sections, the index
(a marshal tuple of ``(section name, length)`` pairs in file order), then the
length of the index (4 bytes, little-endian). The index comes last so that
the daemon writes each section as soon as it is made, and holds the bytes
of one section at a time. A long list or mapping (the rows, facts and
reasons of 10,000 jobs) is written as several sections of the same name,
each of at most ``PART`` items, which reading joins again in order: marshal
keeps a table of every object it wrote in one document, and that table is
larger than the bytes it writes.

The facts of a job (the ``jobs`` section, job id -> facts) are a mapping, or,
as the daemon writes them, three parts that ``job_facts`` joins: the facts
the job shares with jobs submitted alike (one object for all of them, its
``submit_time`` None), its submission time, and the facts of its place in
the order (``urgency``, ``order``; one object for the jobs that stand
alike). ``read`` returns them joined.

The snapshot is world-readable: it carries what every user may see of every
job. What only a job's owner (and root) sees in the queries that read it,
the arguments of condor_q's CMD column, is published beside it in
``spool/private/<uid>``, one file per user with jobs that have some (mode
0400, owned by that user; ``publish_private``, ``read_private``).

What every user sees of a job submitted as an ad besides what the snapshot
says, the text of that ad without its private attributes (``spool.rows.public_ad``),
is published in ``spool/public/<n>``, world-readable, one file for the
clusters ``n * BUCKET`` to ``n * BUCKET + BUCKET - 1`` (``publish_public``,
``read_public``): a file is rewritten only when what it holds changed (a
submission rewrites one, the newest), and a query reads only the files of
the clusters whose ads it shows, only when it shows ads (condor_q -l, -af,
-constraint, -analyze ...).
"""

import marshal

from gridtools import cell
from gridtools.spool.files import atomic_write

VERSION = 3
MAGIC = b"GTSTAT3\n"
#: the sections besides ``head``: each is the snapshot's value of that key
SECTIONS = ("listing", "lines", "rows", "jobs", "reasons")
#: most items of a list or mapping written in one section
PART = 2000
#: how the names of the sections of ready-made tables start (``encode``'s ``tables``)
TABLE = "table:"


def path():
    return cell.spool("status")


def encode(snapshot, builder=None, renderer=None, tables=None):
    """The file's bytes for a snapshot (a dict of plain values), as parts to write one
    after the other, each section's made when the one before was taken (a snapshot of
    10,000 jobs is megabytes: they are neither copied into one string nor held at
    once). Its job listing and the listing's qstat lines are made by ``builder`` and
    ``renderer`` (a ``spool.listing.Builder`` and ``Renderer`` the daemon keeps from
    one snapshot to the next; new ones by default). ``tables``, when given, makes the
    listing's ready-made tables: a function of the listing that returns (section name,
    value) pairs, each written as its own section (``TABLE`` names: see
    ``read_listing``); when it fails, the snapshot is written without them (the
    queries that would read them make what they show from the listing)."""
    from gridtools.spool import listing
    head = dict(snapshot)
    head["version"] = VERSION
    head["listing"] = (builder or listing.Builder()).build(head)
    head["lines"] = (renderer or listing.Renderer()).lines(head["listing"])
    made = ()
    if tables is not None:
        try:
            made = tables(head["listing"])
        except Exception:  # noqa: BLE001 - a cache: without it the queries count from the listing
            made = ()
    yield MAGIC
    index = []
    for name, value in made:
        blob = marshal.dumps(value)
        index.append((name, len(blob)))
        yield blob
    for name in SECTIONS + ("head",):
        for part in _parts(head if name == "head" else head.pop(name, None)):
            blob = marshal.dumps(part)
            index.append((name, len(blob)))
            yield blob
    blob = marshal.dumps(tuple(index))
    yield blob + len(blob).to_bytes(4, "little")


def _parts(value):
    """``value`` in parts of at most PART items, made one at a time (one part for
    anything but a long list or mapping)."""
    kind = type(value)
    if kind not in (list, dict) or len(value) <= PART:
        yield value
        return
    import itertools
    items = iter(value.items()) if kind is dict else iter(value)
    while True:
        part = kind(itertools.islice(items, PART))
        if not part:
            return
        yield part


def publish(snapshot, builder=None, renderer=None, tables=None):
    """Write the snapshot atomically (see ``encode``)."""
    atomic_write(path(), encode(snapshot, builder, renderer, tables), mode=0o644, fsync=False)


def _sections(fh, wanted):
    """name -> value of the ``wanted`` sections of an open status file (None for a file of
    another format)."""
    if fh.read(len(MAGIC)) != MAGIC:
        return None
    fh.seek(-4, 2)
    size = int.from_bytes(fh.read(4), "little")
    fh.seek(-4 - size, 2)
    index = marshal.loads(fh.read(size))
    found, offset, base = {}, 0, len(MAGIC)
    for name, length in index:
        if name in wanted:
            fh.seek(base + offset)
            value = marshal.loads(fh.read(length))
            if name not in found:
                found[name] = value
            elif type(value) is list:
                found[name].extend(value)
            else:
                found[name].update(value)
        offset += length
    return found


def read_sections(*wanted):
    """{section name: value} of the last published snapshot's ``wanted`` sections, or
    None when there is none or it is unreadable."""
    try:
        with open(path(), "rb") as fh:
            found = _sections(fh, wanted)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if found is None or ("head" in found and not _current(found["head"])):
        return None
    return found


def _current(head):
    return isinstance(head, dict) and head.get("version") == VERSION


def job_facts(entry):
    """The facts of a job, a mapping, from its entry in the ``jobs`` section (a mapping, or
    the three parts the daemon writes: see the module)."""
    if type(entry) is not tuple:
        return entry
    common, submitted, order = entry
    facts = dict(common)
    facts["submit_time"] = submitted
    facts.update(order)
    return facts


def read():
    """The last published snapshot (every section but the listing), or None when there
    is none or it is unreadable."""
    found = read_sections("head", "rows", "jobs", "reasons")
    if found is None or "head" not in found:
        return None
    snap = found.pop("head")
    jobs = found.get("jobs")
    if type(jobs) is dict:
        found["jobs"] = {job_id: job_facts(entry) for job_id, entry in jobs.items()}
    snap.update(found)
    return snap


def read_listing(lines=False, tables=()):
    """The last published snapshot's job listing (``spool.listing``), with its rendered
    ``lines`` when asked for, or None. ``tables``: the names of ready-made tables to
    read with it (sections whose names start with ``TABLE``), given in the listing's
    ``tables`` (name -> value, for the names the file holds)."""
    wanted = ("listing", "lines") if lines else ("listing",)
    found = read_sections(*wanted, *tables)
    listing = (found or {}).get("listing")
    if not isinstance(listing, dict):
        return None
    if lines:
        listing["lines"] = found.get("lines")
    if tables:
        listing["tables"] = {name: found[name] for name in tables if name in found}
    return listing


def mtime():
    try:
        import posix
        return posix.stat(path()).st_mtime
    except OSError:
        return 0.0


# ---------------------------------------------------------------- published files

class FolderFiles:
    """The files of one spool folder that the daemon writes whole (``spool/private``,
    ``spool/public``): each only when what it holds changed, the files it no longer has
    removed. The first time (for this cell), and after a failed write, the folder is made
    and its files from before are listed, so that those a daemon left are removed too."""

    def __init__(self, name, folder_mode):
        self.name, self.folder_mode = name, folder_mode
        self.held = {}          # file name -> what it holds (as ``publish`` was given it)
        self.folder = None      # the folder, once made and listed

    def publish(self, files):
        """Write ``files`` (file name -> (what it holds: bytes, or a value written in
        marshal form; mode; owner (uid, gid) or None)); a value is compared with what
        the file was given last time before it is written."""
        import os
        folder = cell.spool(self.name)
        if self.folder != folder:
            from gridtools.spool.files import makedirs
            self.held.clear()
            try:
                makedirs(folder, self.folder_mode)
                stale = {name for name in os.listdir(folder) if name.isdigit()}
            except OSError as exc:
                from gridtools.errors import SpoolError
                raise SpoolError(f"cannot write {folder}: {exc.strerror}") from None
            self.folder = folder
        else:
            stale = set(self.held)
        for name, (value, mode, owner) in files.items():
            stale.discard(name)
            if self.held.get(name) != value:
                data = value if isinstance(value, bytes) else marshal.dumps(value)
                try:
                    atomic_write(os.path.join(folder, name), data, mode=mode, fsync=False, owner=owner)
                except BaseException:
                    self.folder = None          # (the folder is looked at again next time)
                    raise
                self.held[name] = value
        for name in stale:
            self.held.pop(name, None)
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass            # (gone already; else looked at again when the daemon restarts)


# ---------------------------------------------------------------- private facts

PRIVATE = FolderFiles("private", 0o711)


def private_dir():
    return cell.spool("private")


def publish_private(by_uid):
    """Write each user's private facts (``by_uid``: uid -> (gid, {job id: facts})) to
    ``spool/private/<uid>``, readable by that user only, when they changed; remove the
    files of users who have none any more. The facts are compared in marshal form (a
    job's facts are kept between passes, and may change in place)."""
    PRIVATE.publish({str(uid): (marshal.dumps(facts), 0o400, (uid, gid))
                     for uid, (gid, facts) in by_uid.items()})


def read_private(uid):
    """{file's uid: {job id: private facts}} of the files the daemon published for user
    ``uid`` (for every user for root); {} when there are none or they cannot be read. A
    user may rewrite their own file: a reader other than its user trusts it only for
    jobs of that uid."""
    import posix
    folder = private_dir()
    try:
        names = posix.listdir(folder) if uid == 0 else [str(uid)]
    except OSError:
        return {}
    found = {}
    for name in names:
        facts = _mapping(f"{folder}/{name}") if name.isdigit() else None
        if facts is not None:
            found[int(name)] = facts
    return found


def _mapping(path):
    """The mapping a published file holds, or None when it cannot be read as one."""
    try:
        with open(path, "rb") as fh:
            value = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return value if type(value) is dict else None


# ---------------------------------------------------------------- public ads

#: clusters in one file of ``spool/public``
BUCKET = 1000
PUBLIC = FolderFiles("public", 0o755)


def public_dir():
    return cell.spool("public")


def publish_public(by_bucket):
    """Write the public ads (``by_bucket``: file number -> {cluster id: text, or list of
    texts, of ``spool.rows.public_ad``}) to ``spool/public/<n>`` (mode 0644), each
    file when it changed; remove the files of numbers with none any more. Mappings of
    the same texts compare at once: the daemon's texts are one object for a
    description."""
    PUBLIC.publish({str(number): (ads, 0o644, None) for number, ads in by_bucket.items()})


def read_public(clusters):
    """{cluster id: public ad} of the files holding ``clusters`` (an iterable of cluster
    ids); {} for those that cannot be read."""
    found = {}
    for number in sorted({int(c) // BUCKET for c in clusters}):
        found.update(_mapping(f"{public_dir()}/{number}") or {})
    return found

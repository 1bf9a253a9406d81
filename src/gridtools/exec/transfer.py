"""File transfer of HTCondor jobs that run in a scratch folder.

A plan with ``scratch`` (``should_transfer_files = YES``) runs in the task's
TMPDIR instead of its ``Iwd``: before the job starts, the files of
``transfer_input_files`` are copied in (a folder with its contents, a name
ending in ``/`` its contents only); when it ends, the files it made or
changed at the top of the folder (never the job's ad files) are copied back to ``Iwd``, or those
``transfer_output_files`` names: a file, or a folder with all it holds (a
name ending in ``/`` its contents only), each under its last name. A name
listed there that the job did not leave is reported (the task is held, as
HTCondor holds it). Every copy is made by a child process with the job
owner's identity, so it reads and writes only what the owner may, and an
input file is read as ``ownfiles`` walks a path: a link another user planted
in a sticky folder anyone may write (an Iwd in /tmp) is not followed.

An input file given as a URL is fetched into the folder under the last name
of its path (``exec.movers``: by the standard library, or a transfer plugin).

An output file goes where ``transfer_output_remaps`` (the scratch plan's
``remaps``, the ad's TransferOutputRemaps text) maps its name, as HTCondor's
file transfer reads the rules (``remap``): a path (relative to Iwd; its folder
must exist, unless the plan's ``mkdir``, ALLOW_TRANSFER_REMAP_TO_MKDIR, has the
folders of a relative one made), or a URL it is sent to; a file it does not map goes under
``output_destination`` (``destination``), a URL, when the job gives one, else
to Iwd. A URL is sent to by the scheme's plugin: ``file`` copies (as to a
path), ``http`` and ``https`` PUT the file's bytes, as HTCondor's curl plugin
uploads (a folder's files each to the URL and its place in the folder). With
``output_directory`` (``outdir``) the files go there instead of Iwd, and the
paths of the rules are relative to it; it is made (private to the owner) when
it is not there. A copy or upload that fails fails the output transfer: the
result names the destination and its errno (``"write": True``), and the daemon
holds the job.

A URL is moved by a plugin when one moves its scheme (``exec.movers``): a
plugin of the multi-file protocol gets all the input files of its schemes in
one run, and all the output files in another, after the files that go
elsewhere, as HTCondor's starter runs it.
"""

import os
import shutil
import stat

from gridtools.exec import jobproc
from gridtools.exec.movers import (by_plugin, failed_url, fetch, mover, plain_url, run_plugin, run_single, send,
                                   stats, url_name)

#: the steps of a transfer that can fail, as a task's result names them
STEP_INPUT, STEP_OUTPUT = "transfer_input", "transfer_output"


def _preload(plan):
    """Import, with the shepherd's identity, what the copying child of ``plan`` may need
    (the URL modules, a job plugin's runner and the ClassAd reader of its answers): once
    the child has the owner's identity, the interpreter's own library may be out of its
    reach (an interpreter in a home folder only its user may read)."""
    scratch = plan.get("scratch") or {}
    texts = list(scratch.get("input") or ()) + [scratch.get("remaps") or "", scratch.get("destination") or ""]
    import importlib
    importlib.import_module("gridtools.ownfiles")       # (how the outputs are written)
    if any("://" in text for text in texts):
        for name in ("urllib.parse", "urllib.request"):
            importlib.import_module(name)
    if scratch.get("plugins") or scratch.get("pool"):
        importlib.import_module("subprocess")
        from gridtools.classad.parser import parse_bracketed_ads
        parse_bracketed_ads('[ TransferSuccess = true; TransferError = "" ]')     # (what it loads on use)
        stats('TransferError = "none"\nTransferUrl = "a://b"\n')                # (a plugin of one file a run)


def _as_owner(plan, work):
    """Run ``work()`` in a child with the owner's identity; (its exit code (0: done),
    the text ``work`` returned). What the child may import is imported first
    (``_preload``)."""
    _preload(plan)
    rfd, wfd = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(rfd)
            from gridtools.exec import leftovers
            leftovers.join()            # (a plugin it runs, and what that leaves, end with the task)
            jobproc.become_owner(plan)
            said = work() or ""
            os.write(wfd, said.encode(errors="surrogateescape"))
            code = 0
        except BaseException:  # noqa: BLE001 - the parent learns it failed
            code = 1
        finally:
            os._exit(code)
    os.close(wfd)
    said = jobproc.read_to_end(rfd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), said.decode(errors="surrogateescape")


def _copy_in(source, folder, plugins=None, env=None, pool=None):
    """Copy input ``source`` (a path or a URL) into ``folder``: see the module docstring."""
    if "://" in source:
        if not by_plugin(source, os.path.join(folder, url_name(source)), folder, plugins, pool, env):
            fetch(source, folder)
        return
    from gridtools import ownfiles
    real = ownfiles.resolve_own(source)         # (no link another user planted in a sticky folder)
    if os.path.isdir(real):
        if source.endswith("/"):
            for name in os.listdir(real):
                _copy_in(os.path.join(real, name), folder)
            return
        shutil.copytree(real, os.path.join(folder, os.path.basename(source.rstrip("/"))),
                        symlinks=True, dirs_exist_ok=True)
        return
    fd = ownfiles.open_own(real, os.O_RDONLY | os.O_NONBLOCK)     # (a FIFO does not stop it)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise OSError(f"{source}: not a regular file")
    with os.fdopen(fd, "rb") as data, open(os.path.join(folder, os.path.basename(source)), "wb") as out:
        shutil.copyfileobj(data, out)
        os.fchmod(out.fileno(), stat.S_IMODE(info.st_mode))
        out.flush()
        os.utime(out.fileno(), ns=(info.st_atime_ns, info.st_mtime_ns))


def _catalog(folder):
    """The files at the top of ``folder``, one line each: name, size and mtime (ns)."""
    lines = []
    for name in os.listdir(folder):
        try:
            info = os.lstat(os.path.join(folder, name))
        except OSError:
            continue
        if "\n" not in name:
            lines.append(f"{info.st_size} {info.st_mtime_ns} {name}")
    return "\n".join(lines)


def _read_catalog(text):
    found = {}
    for line in (text or "").split("\n"):
        size, _, rest = line.partition(" ")
        mtime, _, name = rest.partition(" ")
        if name:
            found[name] = (size, mtime)
    return found


def _place(folder, where):
    """The folder under ``folder`` an input file goes into: ``where``, its relative
    folder kept by preserve_relative_paths ("" or None: ``folder`` itself), made (the
    owner's) when missing."""
    if not where:
        return folder
    from gridtools.ownfiles import makedirs_own
    path = os.path.join(folder, where)
    makedirs_own(path, 0o700)
    return path


def _inputs(plan):
    """[(source, the folder under the scratch folder it goes into)] of ``plan``: its
    transfer_input_files (``places``: their relative folders, kept by
    preserve_relative_paths), then its executable when it is transferred (HTCondor's
    file transfer adds it last, unless the list names it already)."""
    scratch = plan.get("scratch") or {}
    sources = list(scratch.get("input") or ())
    places = list(scratch.get("places") or ()) + [""] * len(sources)
    pairs = list(zip(sources, places))
    program = scratch.get("executable")
    if program and program not in sources:
        pairs.append((program, ""))
    return pairs


def _restore(store, folder):
    """Copy into ``folder`` what an earlier run kept in ``store`` (None: nothing): its
    newest whole copy (see ``save_checkpoint``)."""
    kept = _last_checkpoint(store) if store else None
    if kept:
        for name in os.listdir(kept):
            _copy_in(os.path.join(kept, name), folder)


def stage_in(plan):
    """Copy the input files into the scratch folder; (True, "", 0), or (False, why, the
    errno of the file that could not be read, or the failed plugin's exit status), in
    the words of HTCondor's file transfer (``reading from file <path>: (errno N) ...``).
    What the folder then holds (the job's ad files too) is noted in ``plan["scratch"]``
    (``catalog``): without transfer_output_files, only the files the job makes or
    changes come back (``stage_out``); the last self-checkpoint is copied in before
    the catalog is made, the sandbox spooled at an eviction (ON_EXIT_OR_EVICT) after
    it, so that it comes back at the final exit, as HTCondor sends back the files
    spooled at an eviction (its SpooledIntermediateFiles)."""
    scratch = plan.get("scratch") or {}
    folder = plan["cwd"]
    if folder == scratch.get("iwd"):
        return True, "", 0          # (no scratch folder could be made: it runs in Iwd, nothing is copied)
    plugins = scratch.get("plugins") or {}
    pool = scratch.get("pool") or {}

    def work():
        for plugin in dict.fromkeys(plugins.values()):  # (the job's plugins first, as HTCondor sends them)
            _copy_in(plugin, folder)
        batches = {}            # a multi-file plugin -> the (URL, local path) pairs it fetches in one run
        for source, where in _inputs(plan):
            moved_by = mover(source, folder, plugins, pool) if "://" in source else None
            if moved_by is not None and moved_by[1]:
                batches.setdefault(moved_by[0], []).append((source, os.path.join(folder, url_name(source))))
                continue
            try:
                _copy_in(source, _place(folder, where), plugins, plan.get("env"), pool)
            except OSError as exc:
                if moved_by is None:
                    return f"E{exc.errno or 5} {source}"
                return f"P{exc.errno or 5} {exc.strerror or exc}"
        for plugin, pairs in batches.items():
            try:
                run_plugin(plugin, pairs, folder, plan.get("env"))
            except OSError as exc:
                return f"P{exc.errno or 5} {exc.strerror or exc}"
        _restore((plan.get("self_checkpoint") or {}).get("store"), folder)     # (after the input files)
        catalog = _catalog(folder)
        _restore(scratch.get("evict_store"), folder)
        return catalog
    code, said = _as_owner(plan, work)
    if code == 0 and said[:1] in ("P", "E"):
        status, _, why = said[1:].partition(" ")
        if said.startswith("E"):
            why = f"reading from file {why}: (errno {status}) {os.strerror(int(status))}"
        return False, why, int(status)
    if code != 0:
        return False, "Transfer input files failure: cannot copy " + \
            ", ".join(scratch.get("input") or ()) + f" into {folder}", 0
    if "scratch" in plan:
        plan["scratch"]["catalog"] = said
    return True, "", 0


#: the most rules one name goes through (HTCondor's MAX_REMAP_RECURSIONS)
MAX_REMAPS = 128


class RemapLoop(OSError):
    """Rules of transfer_output_remaps that map a name on and on."""


def _upto(text, at, delim):
    """(the field of ``text`` from ``at`` up to an unescaped ``delim``, without its blanks
    around and with ``\\delim`` read as ``delim``; where ``delim`` is, or None at the end)."""
    out, escape, lead = [], False, True
    while at < len(text):
        ch = text[at]
        if ch == "\\" and not escape and text[at + 1:at + 2] == delim:
            escape, at = True, at + 1
            continue
        if ch == delim and not escape:
            return "".join(out).rstrip(), at
        at += 1
        if ch.isspace() and lead:
            continue
        lead, escape = False, False
        out.append(ch)
    return "".join(out).rstrip(), None


def remap_rules(text):
    """[(name, where it goes)] of a transfer_output_remaps text, ``name = where; ...``,
    as HTCondor reads it: tabs and line ends dropped, blanks around each part trimmed,
    ``\\=`` and ``\\;`` for the characters themselves, a part without ``=`` skipped."""
    text = (text or "").replace("\t", "").replace("\n", "")
    rules, at = [], 0
    while True:
        start = at
        name, at = _upto(text, at, "=")
        if at is None:
            return rules
        if ";" in name:                 # (no "=" in this part: on to the next)
            at = text.index(";", start) + 1
            continue
        where, at = _upto(text, at + 1, ";")
        rules.append((name, where))
        if at is None:
            return rules
        at += 1


def remap(rules, name, level=0):
    """Where ``name`` goes by the ``rules`` (None: no rule maps it), as HTCondor's
    filename_remap_find: the first rule for the name itself, then the rules for where
    that leads, in turn; else a rule for the folder it is in (``dir/file`` goes under
    where ``dir`` goes). RemapLoop when it goes on past MAX_REMAPS rules."""
    if level > MAX_REMAPS:
        raise RemapLoop(40, f"transfer_output_remaps map {name} on and on")   # (ELOOP)
    for rule, where in rules:
        if rule == name:
            further = remap(rules, where, level + 1)
            return where if further is None else further
    parent, slash, entry = name.rpartition("/")
    if slash:
        further = remap(rules, parent, level + 1)
        if further is not None:
            return f"{further}/{entry}"
    return None


def _local(target):
    """The path a ``file://`` URL names; any other target as it is."""
    if "://" not in target:
        return target
    scheme, plain = plain_url(target)
    if scheme != "file":
        return target
    import urllib.parse
    return urllib.parse.unquote(urllib.parse.urlparse(plain).path)


def _put(path, target, send=send):
    """Put the file or folder at ``path`` at ``target`` (a path or a URL: ``send(path,
    url)`` sends a file there); a folder's files go under it, each by its place in the
    folder."""
    target = _local(target)
    is_url = "://" in target
    if os.path.isdir(path) and not os.path.islink(path):
        if not is_url:
            _copy_folder(path, target)
            return
        for top, _dirs, files in os.walk(path):
            for name in files:
                full = os.path.join(top, name)
                if os.path.isfile(full) and not os.path.islink(full):
                    send(full, target.rstrip("/") + "/" + os.path.relpath(full, path))
    elif os.path.isfile(path) and not os.path.islink(path):
        if is_url:
            send(path, target)
        else:
            _copy_file(path, target)


def _target(name, iwd, rules, destination, mkdir=False):
    """Where output ``name`` goes (see the module docstring); None: into ``iwd`` as
    it is (a folder's contents only when ``name`` ends in ``/``). With ``mkdir``, the
    folders of a relative path a rule maps it to are made when missing (private to the
    owner), as HTCondor's shadow makes them under ALLOW_TRANSFER_REMAP_TO_MKDIR (never
    those of an absolute path); ``_Unmade`` when they cannot be."""
    base = os.path.basename(name.rstrip("/"))
    found = remap(rules, base) if rules else None
    if found is not None and mkdir and "://" not in found and not found.startswith("/") \
            and os.path.dirname(found.rstrip("/")):
        _make_folders(iwd, os.path.dirname(found.rstrip("/")))
    if found is None and destination and not name.endswith("/"):
        found = destination.rstrip("/") + "/" + base
    if found is None:
        return None
    return found if "://" in found else os.path.join(iwd, found)


def _followed(path):
    """The path a link named in transfer_output_files leads to, as HTCondor's file
    transfer stat()s a listed link's target and sends what it finds (read with the
    owner's rights, as the whole copy is); ``_Unread`` when it leads nowhere."""
    try:
        os.stat(path)
    except OSError as exc:
        raise _Unread(exc.errno or 5, path) from None
    return os.path.realpath(path)


def _kept_place(name, iwd, preserve):
    """With preserve_relative_paths, the folder under ``iwd`` a relative output name
    (``outd/deep/y``) goes into, made (the owner's, no planted link followed) when
    missing; else ``iwd``."""
    where = os.path.dirname(name.rstrip("/"))
    if not preserve or not where or name.startswith("/") or ".." in where.split("/"):
        return iwd
    from gridtools.ownfiles import makedirs_own
    target = os.path.join(iwd, where)
    try:
        makedirs_own(target, 0o700)
    except OSError as exc:
        raise _Unsent(exc.errno or 5, target) from None
    return target


def _copy_out(path, name, iwd, rules=(), destination=None, send=send, mkdir=False, listed=False,
              preserve=False):
    """Copy output ``name`` (found at ``path``) where it goes: into ``iwd``, a file, or a
    folder with all it holds (its contents only when ``name`` ends in ``/``), unless
    ``rules`` or ``destination`` send it elsewhere (``_target``, a URL's files sent by
    ``send``; ``_Unsent`` when it could not go there; ``mkdir``: see ``_target``). A
    link ``listed`` in transfer_output_files goes as what it leads to (``_followed``);
    ``preserve``: an unmapped relative name keeps its folders (``_kept_place``)."""
    if listed and os.path.islink(path):
        path = _followed(path)
    target = _target(name, iwd, rules, destination, mkdir)
    if target is None:
        iwd = _kept_place(name, iwd, preserve)
    if target is not None:
        try:
            _put(path, target, send)
        except OSError as exc:
            raise _Unsent(exc.errno or 5, target) from None
    elif os.path.isdir(path) and not os.path.islink(path):
        target = iwd if name.endswith("/") else os.path.join(iwd, os.path.basename(name.rstrip("/")))
        _copy_back(_copy_folder, path, target)
    elif os.path.isfile(path) and not os.path.islink(path):
        _copy_back(_copy_file, path, os.path.join(iwd, os.path.basename(name)))


def _copy_back(copy, path, target):
    """``copy(path, target)``; ``_Unsent`` when it fails (as for an output mapped
    elsewhere: a link another user planted refused, a folder the owner may not write)."""
    try:
        copy(path, target)
    except OSError as exc:
        raise _Unsent(exc.errno or 5, target) from None


def _copy_file(source, target):
    """``shutil.copy2`` (into ``target`` when it is a folder), with ``target`` opened as
    ``ownfiles.open_own`` opens it: no link another user planted on its path (Iwd or
    output_directory in a sticky folder such as /tmp) is followed, for a job of root's
    too."""
    from gridtools.ownfiles import is_own_dir, open_own
    if is_own_dir(target):
        target = os.path.join(target, os.path.basename(source))
    try:
        data = open(source, "rb")
    except OSError as exc:
        raise _Unread(exc.errno or 5, source) from None
    info = os.fstat(data.fileno())
    try:
        fd = open_own(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, stat.S_IMODE(info.st_mode))
    except BaseException:
        data.close()
        raise
    with os.fdopen(fd, "wb") as out, data:
        shutil.copyfileobj(data, out)
        out.flush()
        os.fchmod(fd, stat.S_IMODE(info.st_mode))
        os.utime(fd, ns=(info.st_atime_ns, info.st_mtime_ns))


def _copy_folder(source, target):
    """Copy the folder ``source`` to ``target`` (links copied as links; into folders that
    are there already), every path of the copy walked as ``ownfiles.open_own`` walks
    it: no link another user planted in ``target`` or below it is followed, and no file
    of theirs left there is written through."""
    from gridtools.ownfiles import makedirs_own, resolve_own
    for folder, subfolders, files in os.walk(source):
        here = os.path.join(target, os.path.relpath(folder, source))
        makedirs_own(here, stat.S_IMODE(os.stat(folder).st_mode) | 0o700)
        for name in sorted(files) + [n for n in subfolders if os.path.islink(os.path.join(folder, n))]:
            path = os.path.join(folder, name)
            if os.path.islink(path):
                os.symlink(os.readlink(path), os.path.join(resolve_own(here), name))
            else:
                _copy_file(path, os.path.join(here, name))


class _Unsent(Exception):
    """An output that could not go where it was mapped: (errno, the destination)."""


class _Unread(Exception):
    """An output that could not be read (a link to what the owner may not read, or to
    nothing): (errno, its path)."""


class _Unmade(Exception):
    """The folder of a remap path that could not be made: (errno, the folder)."""


def _make_folders(top, relative):
    """Make the missing folders of ``relative`` under ``top``, each private to the
    caller (mode 0700); ``_Unmade`` for the first that cannot be made."""
    path = top
    for part in relative.split("/"):
        if not part or part == ".":
            continue
        path = os.path.join(path, part)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            from gridtools.ownfiles import is_own_dir
            if not is_own_dir(path):                # (a link another user planted is not one)
                raise _Unmade(17, path) from None       # (EEXIST: something else is there)
        except OSError as exc:
            raise _Unmade(exc.errno or 5, path) from None


def _missing(path):
    """"" when ``path`` is there, else "errno path" (the first name not found)."""
    try:
        os.lstat(path)
        return ""
    except OSError as exc:
        return f"{exc.errno} {path}"


def stage_out(plan):
    """Copy what the job left in its scratch folder back to its Iwd, or where the rules
    send it: (True when the copies were made, None or the first name of
    ``transfer_output_files`` the job did not leave: {"path", "errno"}, or the first
    destination that could not be written: {"path", "errno", "write": True}, with
    ``"mkdir": True`` when its folder could not be made). Without
    that list, the plain files at the top of the folder that the job made or changed
    come back (size or mtime other than ``stage_in``
    noted), never its ad files (``plan["ad_files"]``), as HTCondor's starter sends
    back only what is new or modified, never its own files."""
    scratch = plan.get("scratch") or {}
    folder, iwd = plan["cwd"], scratch.get("iwd")
    if not iwd or folder == iwd:
        return True, None
    wanted = scratch.get("output")
    before = _read_catalog(scratch.get("catalog"))
    own = _own_names(plan)
    destination = scratch.get("destination") or None
    outdir = scratch.get("outdir")
    plugins = scratch.get("plugins") or {}
    pool = scratch.get("pool") or {}

    batches = {}        # a multi-file plugin -> the (URL, local path) pairs it sends in one run

    def upload(path, url):
        found = mover(url, folder, plugins, pool)
        if found is None:
            send(path, url)
        elif found[1]:
            batches.setdefault(found[0], []).append((url, path))
        else:
            run_single(found[0], path, url, folder, plan.get("env"))

    def work():
        from gridtools.ownfiles import makedirs_own
        missing = ""
        rules = remap_rules(scratch.get("remaps"))
        there = iwd
        if outdir:
            try:
                makedirs_own(outdir, 0o700)
            except OSError as exc:
                return f"W{exc.errno} {outdir}"
            there = outdir
        try:
            _send_streams(plan)
        except _Unsent as exc:
            return f"W{exc.args[0]} {exc.args[1]}"
        for name in _leaving(folder, wanted, before, own):
            path = os.path.join(folder, name)
            if wanted is not None:
                missing = missing or _missing(path)
            if os.path.lexists(path):
                try:
                    _copy_out(path, name, there, rules, destination, upload, bool(scratch.get("mkdir")),
                              listed=wanted is not None, preserve=bool(scratch.get("preserve")))
                except _Unread as exc:
                    return f"{exc.args[0]} {path}"
                except _Unsent as exc:
                    return f"W{exc.args[0]} {exc.args[1]}"
                except _Unmade as exc:
                    return f"M{exc.args[0]} {exc.args[1]}"
                except RemapLoop as exc:
                    return f"W{exc.errno} {name}"
        for plugin, pairs in batches.items():
            try:
                run_plugin(plugin, pairs, folder, plan.get("env"), upload=True)
            except OSError as exc:
                return f"W{exc.errno or 5} {failed_url(exc, pairs)}"
        return missing
    code, said = _as_owner(plan, work)
    err, _, path = said.partition(" ")
    if said.startswith("W"):
        return code == 0, {"path": path, "errno": int(err[1:]), "write": True}
    if said.startswith("M"):
        return code == 0, {"path": path, "errno": int(err[1:]), "write": True, "mkdir": True}
    return code == 0, ({"path": path, "errno": int(err)} if said else None)


def _leaving(folder, wanted, before, own):
    """The names of ``folder`` that go out: ``wanted`` (a list), else the plain files at
    its top made or changed since ``before`` (the catalog), never those of ``own``."""
    if wanted is not None:
        return list(wanted)
    found = []
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        if name in own or not os.path.isfile(path) or os.path.islink(path) or before.get(name) == _noted(path):
            continue
        found.append(name)
    return found


#: in a task's self-checkpoint folder: the checkpoints kept (``kept.<time in ns>``, each
#: whole: renamed so once written), and the one being written
KEPT, NEXT = "kept.", "next"


def _last_checkpoint(store):
    """The newest whole checkpoint folder of ``store``, or None."""
    try:
        names = [n for n in os.listdir(store) if n.startswith(KEPT) and n[len(KEPT):].isdigit()]
    except OSError:
        return None
    return os.path.join(store, max(names, key=lambda n: int(n[len(KEPT):]))) if names else None


def _remove_in(folder, name):
    """Remove ``name`` of ``folder`` (a tree of any depth), following no link."""
    from gridtools import fstree
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fstree.remove_at(fd, name)
    finally:
        os.close(fd)


def save_checkpoint(plan, store):
    """A job that exited with its checkpoint_exit_code: keep its checkpoint files (its
    transfer_checkpoint_files, else its transfer_output_files, else what it made or
    changed at the top of its scratch folder) in ``store``, the folder of its task kept
    for them (owned by the job's owner), in place of the last ones: written aside, then
    renamed as the newest, then the older go, so that a shepherd killed at any moment
    leaves a whole checkpoint behind. (True, "") or (False, why)."""
    return _keep_copy(plan, store, (plan.get("self_checkpoint") or {}).get("files"))


def spool_sandbox(plan, store):
    """A job of ON_EXIT_OR_EVICT evicted (held, vacated, requeued): keep its output
    sandbox (its transfer_output_files, else what it made or changed at the top of its
    scratch folder) in ``store``, a folder of its task in the daemon's spool (owned by
    the job's owner, mode 0700: no other user reads it), in place of what an earlier
    eviction kept, as ``save_checkpoint`` keeps one; the next run finds it in its
    scratch folder (``stage_in``). Copied with the owner's rights, as every copy of
    the job's files. (True, "") or (False, why)."""
    scratch = plan.get("scratch") or {}
    streams = [name for name, _where in (scratch.get("streams") or {}).values()]
    wanted = scratch.get("output")
    return _keep_copy(plan, store, None if wanted is None else list(dict.fromkeys(list(wanted) + streams)),
                      streams)


def _keep_copy(plan, store, wanted, streams=()):
    """Copy the files ``wanted`` (None: what the job made or changed, and its
    ``streams``, the names of its output and error files in the folder) of the job's
    scratch folder into ``store`` as its newest whole copy; see ``save_checkpoint``."""
    scratch = plan.get("scratch") or {}
    folder = plan["cwd"]
    before = _read_catalog(scratch.get("catalog"))
    own = _own_names(plan) - set(streams)

    def work():
        import time
        fresh = os.path.join(store, NEXT)
        _remove_in(store, NEXT)
        os.mkdir(fresh, 0o700)
        for name in _leaving(folder, wanted, before, own):
            path = os.path.join(folder, name)
            if os.path.lexists(path):
                _copy_out(path, name, fresh, listed=wanted is not None, preserve=bool(scratch.get("preserve")))
        newest = max(time.time_ns(), int((_last_checkpoint(store) or "0").rpartition(".")[2] or 0) + 1)
        os.rename(fresh, os.path.join(store, f"{KEPT}{newest}"))
        for name in os.listdir(store):
            if name.startswith(KEPT) and name != f"{KEPT}{newest}":
                _remove_in(store, name)
        return ""
    code, said = _as_owner(plan, work)
    return code == 0, said


def _own_names(plan):
    """The names of the scratch folder that never go back as output files: the job's ad
    files, the executable transferred in (HTCondor's file transfer never sends it back)
    and its output and error files (they go to their own paths: ``_send_streams``)."""
    own = {entry[0] for entry in plan.get("ad_files") or ()}
    scratch = plan.get("scratch") or {}
    if scratch.get("executable"):
        own.add(os.path.basename(scratch["executable"]))
    own.update(name for name, _where in (scratch.get("streams") or {}).values())
    return own


def _send_streams(plan):
    """Copy the output and error files the job wrote in its scratch folder to their
    paths (``scratch["streams"]``), as the owner (no link another user planted on the
    way is followed); ``_Unsent`` for the first that cannot be written."""
    folder = plan["cwd"]
    streams = (plan.get("scratch") or {}).get("streams") or {}
    for name, where in dict.fromkeys(tuple(pair) for pair in streams.values()):
        path = os.path.join(folder, name)
        if os.path.isfile(path) and not os.path.islink(path):
            _copy_back(_copy_file, path, where)


def _noted(path):
    """(size, mtime) of a file as ``_catalog`` notes them."""
    info = os.lstat(path)
    return str(info.st_size), str(info.st_mtime_ns)

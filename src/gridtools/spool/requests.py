"""The request queue: how clients ask the daemon to change anything.

A client writes one file per request into ``spool/requests/`` (a directory
everyone may write to, like /tmp): ``<ns>-<pid>.<kind>``, a spool-YAML
mapping. The file is written under a hidden temporary name and renamed, so
the daemon sees whole requests only. A submit request may carry the job
script in a companion file ``<same name>.script`` written before it.

The daemon takes requests in name order (which is time order) and trusts
only the file's owner uid for the requester's identity, never a name written
inside: this is the file-system authentication of Grid Engine's FS method.
"""

import os
import time

from gridtools import cell
from gridtools.errors import SpoolError
from gridtools.formats import spoolyaml
from gridtools.spool.files import atomic_write

SUFFIX_SCRIPT = ".script"


def _folder():
    return cell.spool("requests")


def new_name(kind):
    """A fresh request file name that sorts after all earlier ones."""
    return f"{time.time_ns():020d}-{os.getpid()}.{kind}"


def write(kind, payload, script=None, name=None, reply=False):
    """Queue a request; returns its file name. ``script`` (bytes) travels beside it.

    With ``reply``, the daemon answers in ``spool/replies/<name>`` (see ``wait_reply``).
    """
    name = name or new_name(kind)
    if reply:
        payload = dict(payload, reply=True)
    folder = _folder()
    if script is not None:
        atomic_write(os.path.join(folder, name + SUFFIX_SCRIPT), script, mode=0o600, fsync=True)
    body = dict(payload)
    body["kind"] = kind
    if script is not None:
        body["has_script"] = True
    try:
        atomic_write(os.path.join(folder, name), spoolyaml.dump(body), mode=0o600)
    except SpoolError:
        if script is not None:          # nothing half-written stays behind
            try:
                os.unlink(os.path.join(folder, name + SUFFIX_SCRIPT))
            except OSError:
                pass
        raise
    return name


class Request:
    """One queued request as the daemon sees it."""

    __slots__ = ("name", "kind", "uid", "body", "path")

    def __init__(self, name, kind, uid, body, path):
        self.name = name
        self.kind = kind
        self.uid = uid
        self.body = body
        self.path = path

    def script_path(self):
        return self.path + SUFFIX_SCRIPT

    def read_script(self):
        """The companion script's bytes, opened without following links; None if absent."""
        try:
            fd = os.open(self.script_path(), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            if os.fstat(fd).st_uid != self.uid:
                return None
            chunks = []
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def remove(self):
        paths = (self.path, self.script_path()) if self.body.get("has_script") else (self.path,)
        for path in paths:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass


def pending(limit=None):
    """The queued requests in order (the first ``limit``), each read and authenticated by owner uid.

    Unreadable or malformed request files are returned with kind ``invalid``
    so the daemon can log and drop them.
    """
    folder = _folder()
    try:
        names = sorted(n for n in os.listdir(folder) if not n.startswith(".")
                       and not n.endswith(SUFFIX_SCRIPT))
    except FileNotFoundError:
        return []
    result = []
    for name in names[:limit]:
        path = os.path.join(folder, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            uid = os.fstat(fd).st_uid
            text = os.read(fd, 1 << 24).decode("utf-8", "surrogateescape")
        finally:
            os.close(fd)
        try:
            body = spoolyaml.load(text)
            kind = str(body.get("kind", "invalid"))
        except Exception:  # noqa: BLE001 - a broken request must not stop the daemon
            body, kind = {}, "invalid"
        result.append(Request(name, kind, uid, body, path))
    return result


def reply_path(name):
    return cell.spool("replies", name)


def answer(req, code, out="", err=""):
    """Daemon side: write the reply to a request that asked for one."""
    if not req.body.get("reply"):
        return
    folder = cell.spool("replies")
    if not os.path.isdir(folder):
        os.makedirs(folder, exist_ok=True)
        os.chmod(folder, 0o1777)
    path = reply_path(req.name)
    atomic_write(path, spoolyaml.dump({"code": int(code), "out": out, "err": err}),
                 mode=0o600, fsync=False)
    if os.geteuid() == 0 and req.uid != 0:
        # the requester reads the reply and removes it (the folder is sticky, like /tmp)
        os.chown(path, req.uid, -1)


def wait_reply(name, timeout=30.0):
    """Client side: wait for the daemon's reply; returns (code, out, err) or None on timeout."""
    path = reply_path(name)
    end = time.time() + timeout
    delay = 0.002
    while time.time() < end:
        try:
            with open(path, encoding="utf-8") as fh:
                body = spoolyaml.load(fh.read())
        except (FileNotFoundError, PermissionError, spoolyaml.SpoolFormatError):
            # PermissionError: renamed into place, not yet given to the requester
            time.sleep(delay)
            delay = min(delay * 1.5, 0.1)
            continue
        try:
            os.unlink(path)
        except OSError:
            pass
        return body.get("code", 1), body.get("out", ""), body.get("err", "")
    return None


def pending_submits():
    """Job descriptions of submit requests not yet taken in (for queries without a daemon)."""
    return [r for r in pending() if r.kind == "submit"]

"""Removing what users left in the folders of the spool everybody may write (reply
folders, the requests' folder, the id claims): the daemon's sweeps.

A file or an empty folder goes at once. A folder is emptied here, walking it with
a stack of descriptors (no recursion, no link followed), when it is small (at
most MOST_DEPTH levels and MOST_ENTRIES entries, as a reply folder always is)
and every folder in it is its owner's: what the owner could remove themselves
(a folder of another user's moved in with it keeps what is in it). Any other
tree was planted, and its removal could cost the daemon any time: ``rm -rf``
removes it in the background as the folder's owner (who may remove it anyway,
and nothing else: ``chmod -R u+rwx`` first opens the folders they made
unwritable), one at a time per owner; what is left is looked at again an hour
later (RETRY_AFTER), not at every sweep, and a sweep spends at most
SWEEP_BUDGET seconds on removals.
"""

import os
import subprocess
import time

#: deepest folder emptied in the daemon's own process
MOST_DEPTH = 16
#: most entries removed in the daemon's own process for one folder
MOST_ENTRIES = 1000
#: seconds a background removal may take before it is killed (a later sweep goes on)
REMOVAL_TIMEOUT = 600.0

#: seconds of removals one sweep spends in the daemon's process (the rest waits for the next)
SWEEP_BUDGET = 1.0
#: seconds before a folder whose removal failed is looked at again
RETRY_AFTER = 3600.0
#: most failed folders remembered (beyond, the memory starts again)
MOST_REMEMBERED = 100000

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW
#: background removals: owner's uid -> (Popen, when it began)
_REMOVING = {}
#: folders whose removal failed: (device, inode, change time) -> when
_FAILED = {}
#: when the removals of this sweep must stop (``begin``)
_until = [float("inf")]


def begin(budget=SWEEP_BUDGET):
    """A sweep begins: its removals take at most ``budget`` seconds of this process."""
    _until[0] = time.monotonic() + budget


def end():
    """The sweep is over: the folders it left to ``rm -rf`` are given to it, and removals
    have no budget again (a planted request goes at once)."""
    _until[0] = float("inf")
    launch()


def remove(path, st):
    """Remove the entry at ``path`` (``st``: its lstat), following no link. A folder
    whose removal failed is left alone for RETRY_AFTER seconds, and none is looked at
    once the sweep's budget is spent."""
    if (st.st_mode & 0o170000) != 0o040000:
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    now = time.monotonic()
    key = (st.st_dev, st.st_ino, st.st_ctime)
    if now > _until[0] or now - _FAILED.get(key, -RETRY_AFTER) < RETRY_AFTER:
        return
    if len(_FAILED) >= MOST_REMEMBERED:
        _FAILED.clear()
    _FAILED[key] = now                  # (until it is gone: a removal that worked forgets it)
    parent, name = os.path.split(path)
    try:
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if _small_removal(parent_fd, name, st):
            _FAILED.pop(key, None)
            return
    finally:
        os.close(parent_fd)
    _in_background(path, st.st_uid, key)


def _small_removal(parent_fd, name, st):
    """Empty and remove folder ``name`` of ``parent_fd`` within the limits; True when it
    is gone (or could not be opened as the folder ``st`` describes)."""
    try:
        top = os.open(name, _DIR, dir_fd=parent_fd)
    except OSError:
        return True
    stack, budget = [(top, None)], MOST_ENTRIES        # (folder descriptor, name in the one above)
    try:
        found = os.fstat(top)
        if (found.st_ino, found.st_dev) != (st.st_ino, st.st_dev):
            return True                 # (replaced meanwhile: the next sweep looks again)
        while stack:
            fd, _name = stack[-1]
            descended = False
            with os.scandir(fd) as entries:
                for entry in entries:
                    budget -= 1
                    if budget < 0:
                        return False
                    if entry.is_dir(follow_symlinks=False):
                        if len(stack) >= MOST_DEPTH:
                            return False
                        inner = os.open(entry.name, _DIR, dir_fd=fd)
                        if os.fstat(inner).st_uid != st.st_uid:
                            os.close(inner)     # (not the owner's to empty: rm as the owner
                            return False        # removes what they may)
                        stack.append((inner, entry.name))
                        descended = True
                        break
                    try:
                        os.unlink(entry.name, dir_fd=fd)
                    except FileNotFoundError:
                        pass
            if descended:
                continue
            stack.pop()
            os.close(fd)
            above = stack[-1][0] if stack else parent_fd
            os.rmdir(_name if stack else name, dir_fd=above)
        return True
    except OSError:
        return False
    finally:
        for fd, _name in stack:
            os.close(fd)


#: folders a sweep leaves to ``rm -rf``: owner's uid -> [(path, key of _FAILED)]
_PENDING = {}
#: most folders one background removal is given
MOST_PATHS = 512


def _in_background(path, uid, key):
    """Have ``rm -rf`` remove the tree at ``path`` as its owner: at the end of the sweep
    (``end``), or at once outside one."""
    _PENDING.setdefault(uid, []).append((path, key))
    if _until[0] == float("inf"):
        launch()


def launch():
    """Start a background removal for each owner with folders to remove, unless one of
    theirs still runs (their folders are then looked at again by a later sweep)."""
    settle()
    for uid, items in _PENDING.items():
        if uid in _REMOVING:
            for _path, key in items:
                _FAILED.pop(key, None)
            continue
        kwargs = {}
        if os.geteuid() == 0 and uid != 0:
            import pwd
            try:
                gid = pwd.getpwuid(uid).pw_gid
            except KeyError:
                gid = uid
            kwargs = {"user": uid, "group": gid, "extra_groups": []}
        for _path, key in items[MOST_PATHS:]:
            _FAILED.pop(key, None)
        paths = [path for path, _key in items[:MOST_PATHS]]
        try:
            # (the owner may open their own folders first: one they made unwritable stays no more)
            proc = subprocess.Popen(["sh", "-c", 'chmod -R u+rwx -- "$@" 2>/dev/null; '
                                     'exec rm -rf --one-file-system -- "$@"', "sh", *paths],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, cwd="/", env={"PATH": "/usr/bin:/bin"},
                                    start_new_session=True, **kwargs)
        except (OSError, subprocess.SubprocessError):
            continue
        _REMOVING[uid] = (proc, time.monotonic())
    _PENDING.clear()


def settle():
    """Collect the background removals that ended; kill those that took too long."""
    now = time.monotonic()
    for uid, (proc, began) in list(_REMOVING.items()):
        if proc.poll() is not None:
            del _REMOVING[uid]
        elif now - began > REMOVAL_TIMEOUT:
            proc.kill()
            proc.wait()
            del _REMOVING[uid]

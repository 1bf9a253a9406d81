"""Removing what users left in the folders of the spool everybody may write (reply
folders, the requests' folder, the id claims): the daemon's sweeps.

A file or an empty folder goes at once. A folder is emptied here, walking it with
a stack of descriptors (no recursion, no link followed), when it is small (at
most MOST_DEPTH levels and MOST_ENTRIES entries, as a reply folder always is)
and every folder in it is its owner's: what the owner could remove themselves
(a folder of another user's moved in with it keeps what is in it). Any other
tree was planted, and its removal could cost the daemon any time: ``rm -rf``
removes it in the background as the folder's owner (who may remove it anyway,
and nothing else), one at a time per owner; what is left goes with a later
sweep.
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

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW
#: background removals: owner's uid -> (Popen, when it began)
_REMOVING = {}


def remove(path, st):
    """Remove the entry at ``path`` (``st``: its lstat), following no link."""
    if (st.st_mode & 0o170000) != 0o040000:
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    parent, name = os.path.split(path)
    try:
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if _small_removal(parent_fd, name, st):
            return
    finally:
        os.close(parent_fd)
    _in_background(path, st.st_uid)


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


def _in_background(path, uid):
    """Have ``rm -rf`` remove the tree at ``path`` as its owner, unless one of theirs runs."""
    settle()
    if uid in _REMOVING:
        return
    kwargs = {}
    if os.geteuid() == 0 and uid != 0:
        import pwd
        try:
            gid = pwd.getpwuid(uid).pw_gid
        except KeyError:
            gid = uid
        kwargs = {"user": uid, "group": gid, "extra_groups": []}
    try:
        proc = subprocess.Popen(["rm", "-rf", "--one-file-system", "--", path], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
                                env={"PATH": "/usr/bin:/bin"}, start_new_session=True, **kwargs)
    except (OSError, subprocess.SubprocessError):
        return
    _REMOVING[uid] = (proc, time.monotonic())


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

"""Folder trees a user made, removed and measured without recursion or links.

A job's owner can build a chain of folders of any depth where the daemon later
cleans up or measures (a checkpoint store in the spool, a scratch folder): a
walk that takes a Python frame, or a path, per level fails on it, and one that
climbs back through ``..`` can be led elsewhere by a folder moved meanwhile.
Both walks here go from an open folder to a name in it, keeping the open
folders of the current branch on a stack (never following a link), and the
stack is bounded: ``remove_at`` moves a folder deeper than ``MOST_DEPTH`` up
into the folder it started from, under a new name, and removes it from there
in turn; ``usage`` does not look below that depth.
"""

import os
import stat
import time

#: the open folders one walk keeps at most (the depth it goes to at once)
MOST_DEPTH = 128

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_at(dir_fd, name):
    """Remove entry ``name`` of the open folder ``dir_fd``, whatever it is (a file, a
    link itself, a folder and all it holds at any depth); what cannot be removed stays.
    True when it is gone."""
    todo = [name]
    while todo:
        top = todo.pop()
        try:
            os.unlink(top, dir_fd=dir_fd)
            continue
        except FileNotFoundError:
            continue
        except (IsADirectoryError, PermissionError):
            pass                        # (a folder: unlink refuses it)
        except OSError:
            return False
        todo.extend(_empty_branch(dir_fd, top))
        try:
            os.rmdir(top, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        except OSError:
            return False
    return True


def _empty_branch(dir_fd, name):
    """Empty folder ``name`` of ``dir_fd`` (walked to MOST_DEPTH): the names, in
    ``dir_fd``, of the deeper folders moved up there to be removed next."""
    spilled = []
    try:
        first = os.open(name, _FOLDER, dir_fd=dir_fd)
    except OSError:
        return spilled
    stack = [(first, name)]             # (open folder, its name in the one above)
    tried = set()                       # (folders walked that could not be removed)
    try:
        while stack:
            fd = stack[-1][0]
            deeper = None
            with os.scandir(fd) as entries:
                for entry in entries:
                    if not entry.is_dir(follow_symlinks=False):
                        try:
                            os.unlink(entry.name, dir_fd=fd)
                        except OSError:
                            pass
                        continue
                    try:
                        os.rmdir(entry.name, dir_fd=fd)
                        continue        # (an empty one)
                    except FileNotFoundError:
                        continue
                    except OSError:
                        pass
                    if entry.inode() in tried:
                        continue
                    if len(stack) >= MOST_DEPTH:
                        spill = f".removed.{os.getpid()}.{time.monotonic_ns()}"
                        try:
                            os.rename(entry.name, spill, src_dir_fd=fd, dst_dir_fd=dir_fd)
                            spilled.append(spill)
                        except OSError:
                            pass
                        continue
                    try:
                        deeper = os.open(entry.name, _FOLDER, dir_fd=fd)
                    except OSError:
                        continue
                    stack.append((deeper, entry.name))
                    break
            if deeper is not None:
                continue
            fd, below = stack.pop()
            walked = os.fstat(fd).st_ino
            os.close(fd)
            if stack:
                try:
                    os.rmdir(below, dir_fd=stack[-1][0])
                except OSError:     # (what could not be emptied stays)
                    tried.add(walked)
    except OSError:
        pass
    finally:
        for fd, _name in stack:
            os.close(fd)
    return spilled


def usage(path, most_entries):
    """(bytes of the regular files, entries) in the folder at ``path`` at any depth
    down to MOST_DEPTH, links never followed; counting stops after ``most_entries``.
    (0, 0) when it cannot be opened."""
    try:
        first = os.open(path, _FOLDER)
    except OSError:
        return 0, 0
    total = [0, 0]
    stack = [(first, _listed(first, total))]    # (open folder, its folders not walked yet)
    try:
        while stack and total[1] < most_entries:
            fd, folders = stack[-1]
            if not folders:
                os.close(stack.pop()[0])
                continue
            name = folders.pop()
            if len(stack) >= MOST_DEPTH:
                continue
            try:
                inner = os.open(name, _FOLDER, dir_fd=fd)
            except OSError:
                continue
            stack.append((inner, _listed(inner, total)))
    finally:
        for fd, _folders in stack:
            os.close(fd)
    return total[0], total[1]


def _listed(fd, total):
    """The names of the folders in the open folder ``fd``; its entries and the bytes of
    its regular files are added to ``total`` ([bytes, entries])."""
    folders = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                total[1] += 1
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    total[0] += info.st_size
                elif stat.S_ISDIR(info.st_mode):
                    folders.append(entry.name)
    except OSError:
        pass
    return folders

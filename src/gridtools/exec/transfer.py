"""File transfer of HTCondor jobs that run in a scratch folder.

A plan with ``scratch`` (``should_transfer_files = YES``) runs in the task's
TMPDIR instead of its ``Iwd``: before the job starts, the files of
``transfer_input_files`` are copied in (a folder with its contents, a name
ending in ``/`` its contents only); when it ends, the files it made or
changed at the top of the folder (or only those of
``transfer_output_files``) are copied back to ``Iwd``. Every copy is made by
a child process with the job owner's identity, so it reads and writes only
what the owner may.
"""

import os
import shutil
import time

from gridtools.exec import jobproc


def _as_owner(plan, work):
    """Run ``work()`` in a child with the owner's identity; its exit code (0: done)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            jobproc.become_owner(plan)
            work()
            code = 0
        except BaseException:  # noqa: BLE001 - the parent learns it failed
            code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _copy_in(source, folder):
    if os.path.isdir(source):
        if source.endswith("/"):
            for name in os.listdir(source):
                _copy_in(os.path.join(source, name), folder)
            return
        shutil.copytree(source, os.path.join(folder, os.path.basename(source.rstrip("/"))),
                        symlinks=True, dirs_exist_ok=True)
        return
    shutil.copy2(source, os.path.join(folder, os.path.basename(source)))


def stage_in(plan):
    """Copy the input files into the scratch folder; (True, "") or (False, why)."""
    scratch = plan.get("scratch") or {}
    folder = plan["cwd"]

    def work():
        for source in scratch.get("input") or ():
            _copy_in(source, folder)
    if _as_owner(plan, work) != 0:
        return False, "Transfer input files failure: cannot copy " + \
            ", ".join(scratch.get("input") or ()) + f" into {folder}"
    return True, ""


def stage_out(plan, since):
    """Copy what the job left in its scratch folder back to its Iwd; True when done."""
    scratch = plan.get("scratch") or {}
    folder, iwd = plan["cwd"], scratch.get("iwd")
    if not iwd or folder == iwd:
        return True
    wanted = scratch.get("output")

    def work():
        names = wanted if wanted is not None else os.listdir(folder)
        for name in names:
            path = os.path.join(folder, name)
            if not os.path.isfile(path) or os.path.islink(path):
                continue
            if wanted is None and os.stat(path).st_mtime < since:
                continue
            shutil.copy2(path, os.path.join(iwd, os.path.basename(name)))
    return _as_owner(plan, work) == 0


def started_at():
    return time.time() - 1.0

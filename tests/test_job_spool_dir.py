"""A job reads its own spool folder ($SGE_JOB_SPOOL_DIR): in a cell started by root,
the job of a plain user lists the folder and reads its environment and pe_hostfile,
while other users may only pass through it; a folder given back for reuse keeps
nothing of the grant."""

import os
import stat

from conftest import wait_for
from qtools import add_object, jid_of

PE = """pe_name            two
slots              8
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $fill_up
control_slaves     FALSE
job_is_first_task  TRUE
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
"""

JOB = """#!/bin/sh
echo "$SGE_JOB_SPOOL_DIR" > {dir}/where
ls "$SGE_JOB_SPOOL_DIR" > {dir}/listing; echo "ls $?" > {dir}/status
grep -c '^JOB_ID=' "$SGE_JOB_SPOOL_DIR/environment" >> {dir}/status
cat "$PE_HOSTFILE" > {dir}/hostfile
touch {dir}/ready
while [ ! -e {dir}/go ]; do sleep 0.1; done
"""


def test_a_plain_users_job_lists_its_spool_folder_and_nobody_else_does(cell, workdir, users):
    alice, bob = users[0], users[1]
    add_object(cell, "-Ap", PE)
    cell.run("qconf", "-aattr", "queue", "pe_list", "two", "all.q", check=True)
    jid = jid_of(cell.qsub("-pe", "two", "2", "-o", "/dev/null", "-j", "y",
                           input=JOB.format(dir=workdir), user=alice, cwd=workdir))
    wait_for(lambda: os.path.exists(os.path.join(workdir, "ready")), timeout=30)
    folder = open(os.path.join(workdir, "where")).read().strip()
    listing = open(os.path.join(workdir, "listing")).read().split()
    assert "environment" in listing and "pe_hostfile" in listing
    assert open(os.path.join(workdir, "status")).read().split() == ["ls", "0", "1"]
    assert open(os.path.join(workdir, "hostfile")).read().split()[1] == "2"
    # the job's owner lists it from outside the job too; another user cannot
    assert cell.run("ls", folder, user=alice).returncode == 0
    other = cell.run("ls", folder, user=bob)
    assert other.returncode != 0 and "Permission denied" in other.stderr
    assert cell.run("cat", os.path.join(folder, "environment"), user=bob).returncode != 0
    assert os.stat(folder).st_uid == 0              # still the daemon's: the user owns nothing
    open(os.path.join(workdir, "go"), "w").close()
    cell.wait_finished(jid, timeout=30)


def test_a_reused_folder_keeps_no_grant(tmp_path, monkeypatch, users):
    """The folders of removed jobs are kept for new ones: a task folder the job's owner
    could list comes back with the plain mode, its ACL gone."""
    import pwd
    from gridtools.spool import jobs as jobstore
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    os.makedirs(tmp_path / "spool" / "jobs" / "7")
    task = tmp_path / "spool" / "jobs" / "7" / "1"
    os.mkdir(task, jobstore.DIR_MODE)
    os.chmod(task, jobstore.DIR_MODE)
    os.chmod(tmp_path / "spool" / "jobs" / "7", jobstore.DIR_MODE)
    assert jobstore.let_owner_list(str(task), pwd.getpwnam(users[0]).pw_uid)
    assert stat.S_IMODE(os.stat(task).st_mode) == jobstore.LISTED_MODE
    assert "system.posix_acl_access" in os.listxattr(task)
    assert jobstore.remove(7) == []
    jobstore.empty_trash()
    kept = [tmp_path / "spool" / jobstore.FRESH / n for n in os.listdir(tmp_path / "spool" / jobstore.FRESH)]
    assert len(kept) == 2                               # the job's folder and its task's
    for path in kept:
        assert stat.S_IMODE(os.stat(path).st_mode) == jobstore.DIR_MODE
        assert "system.posix_acl_access" not in os.listxattr(path)


def test_emptying_the_trash_never_follows_a_link_the_owner_swaps_in(tmp_path, monkeypatch, users):
    """A job's checkpoint store in its spool folder is its owner's, who may change it while
    root empties the trash: a folder there swapped for a link to somewhere else, after
    root listed it and before it empties the folders it holds, changes nothing outside
    the store: the folder named like one of them elsewhere keeps everything. (The swap
    is made at that moment, as a racing process of the owner's would make it.)"""
    import pwd
    from gridtools.spool import jobs as jobstore
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    owner = pwd.getpwnam(users[0])
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "victim" / "sub").mkdir(parents=True)
    (elsewhere / "victim" / "precious").write_text("keep\n")
    (elsewhere / "victim" / "sub" / "deep").write_text("keep\n")
    store = tmp_path / "spool" / "jobs" / "7" / "1" / "self_checkpoint"
    (store / "a" / "victim").mkdir(parents=True)
    (store / "a" / "victim" / "file").write_text("x")
    for folder in (store, store / "a", store / "a" / "victim"):
        os.chown(folder, owner.pw_uid, owner.pw_gid)
    real_scandir, mark = os.scandir, os.stat(store / "a")
    swapped = []

    class Listed(list):
        def __enter__(self):
            return self

        def __exit__(self, *_exc):
            return False

    def scandir_then_swap(target):
        """List a folder; once the owner's folder "a" is listed, swap it for a link."""
        if swapped or not isinstance(target, int) or not os.path.samestat(os.fstat(target), mark):
            return real_scandir(target)
        with real_scandir(target) as entries:
            listing = Listed(entries)
            for entry in listing:
                entry.is_dir(follow_symlinks=False)         # (read now, as listed)
        here = os.readlink(f"/proc/self/fd/{target}").rpartition("/")[0]    # (where the trash has it)
        os.rename(f"{here}/a", f"{here}/a.old")
        os.symlink(elsewhere, f"{here}/a")
        swapped.append(True)
        return listing
    monkeypatch.setattr(jobstore.os, "scandir", scandir_then_swap)
    assert jobstore.remove(7) == []
    jobstore.empty_trash()
    assert swapped
    assert (elsewhere / "victim" / "precious").read_text() == "keep\n"
    assert (elsewhere / "victim" / "sub" / "deep").read_text() == "keep\n"
    assert os.listdir(tmp_path / "spool" / "trash") == []


def test_a_folder_that_cannot_be_emptied_is_not_kept_for_reuse(tmp_path, monkeypatch, users):
    """A job folder the recycler could not empty (here, a file in the owner's checkpoint
    store that cannot be removed) is not kept for a new job: it stays in the trash, and
    the kept folders hold nothing; the owner's folder in it was taken from the owner."""
    import pwd
    import subprocess
    from gridtools.spool import jobs as jobstore
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    owner = pwd.getpwnam(users[0])
    job = tmp_path / "spool" / "jobs" / "7"
    store = job / "1" / "self_checkpoint"
    store.mkdir(parents=True)
    for folder in (job, job / "1"):
        os.chmod(folder, jobstore.DIR_MODE)
    stuck = store / "stuck"
    stuck.write_text("x")
    os.chown(store, owner.pw_uid, owner.pw_gid)
    os.chown(stuck, owner.pw_uid, owner.pw_gid)
    if subprocess.run(["chattr", "+i", str(stuck)], capture_output=True).returncode != 0:
        import pytest
        pytest.skip("no immutable files on this file system")
    try:
        assert jobstore.remove(7) == []
        jobstore.empty_trash()
        fresh = tmp_path / "spool" / jobstore.FRESH
        for name in os.listdir(fresh):
            assert os.listdir(fresh / name) == [], name         # nothing kept holds anything
        (left,) = os.listdir(tmp_path / "spool" / "trash")
        folder = tmp_path / "spool" / "trash" / left / "1" / "self_checkpoint"
        assert os.listdir(folder) == ["stuck"]
        st = os.stat(folder)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o700)
    finally:
        for found in tmp_path.rglob("stuck"):
            subprocess.run(["chattr", "-i", str(found)], capture_output=True)


def test_a_checkpoint_store_of_any_depth_is_emptied_from_the_trash(tmp_path, monkeypatch, users):
    """The owner's checkpoint store may hold folders deeper than any recursion limit (the
    job can make them): the trash is emptied all the same, and the next job's folder is
    removed as well."""
    import pwd
    from gridtools.spool import jobs as jobstore
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    owner = pwd.getpwnam(users[0])
    for job in (7, 8):
        store = tmp_path / "spool" / "jobs" / str(job) / "1" / "self_checkpoint"
        store.mkdir(parents=True)
        fd = os.open(store, os.O_RDONLY | os.O_DIRECTORY)
        for _ in range(1500 if job == 7 else 2):
            os.mkdir("a", dir_fd=fd)
            os.chown("a", owner.pw_uid, owner.pw_gid, dir_fd=fd)
            inner = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(fd)
        os.chown(store, owner.pw_uid, owner.pw_gid)
    assert jobstore.remove(7, 8) == []
    assert jobstore.empty_trash() is False
    assert os.listdir(tmp_path / "spool" / "trash") == []

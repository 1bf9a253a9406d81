"""Attacks on what runs jobs: TMPDIR, output files, identities.

A hostile user (gtbob) plants links and folders where jobs will write and
steers output paths at files that are not his; the victims (root's files,
gtalice's files, another cell's jobs) must be left as they were. Jobs write
as their owner only, and their TMPDIR is fresh, private and their cell's own.
"""

import os
import pwd
import shutil
import stat

import pytest

from attack_tools import user_py
from conftest import destroy_cell, machine_lock, make_cell, wait_for
from qtools import jid_of


@pytest.fixture
def tmp_names():
    """The plants use names in /tmp that are the same for every cell (/tmp/<job id>.1.all.q):
    the tests that plant take turns across test processes."""
    with machine_lock("tmp-job-names"):
        yield


def _jid(proc):
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.split(".")[0])


def _cell_tmp_name(cell):
    """The cell's folder of TMPDIRs: ``gridtools.`` and a digest of its root (exec.tmpdir)."""
    import hashlib
    return "gridtools." + hashlib.sha256(cell.root.encode()).hexdigest()[:16]


def _restart_daemon_in_groups(cell, groups):
    """Run the daemon with these supplementary groups, as a root started from a login has."""
    import subprocess
    cell.stop_daemon()
    subprocess.run(["gridtools", "daemon", "start"], env=cell.env, cwd=cell.root, check=True,
                   capture_output=True, preexec_fn=lambda: os.setgroups(groups))


def _next_id_as(cell, user):
    """Claim an id as ``user`` and return it (the next job of anybody gets the one after)."""
    proc = user_py(cell, user, "from gridtools.spool import ids; print(ids.allocate('job')[0])", check=True)
    return int(proc.stdout)


def _plant_everywhere(cell, user, job_id, kind, target):
    """As ``user``, put a link to ``target`` (kind "link") or an open folder holding a link
    named ``out`` to it (kind "dir") wherever the TMPDIR of task 1 of ``job_id`` might be."""
    name = _cell_tmp_name(cell)
    code = f"""
    import os
    places = ["/tmp/{job_id}.1.all.q", "/tmp/{name}/{job_id}.1.all.q", "/tmp/{name}"]
    for place in places:
        try:
            if {kind!r} == "link":
                os.symlink({target!r}, place)
            else:
                os.mkdir(place, 0o777)
                os.chmod(place, 0o777)
                os.symlink({target!r}, os.path.join(place, "out"))
            print("planted", place)
        except OSError as exc:
            print("refused", place, exc.strerror)
    """
    return user_py(cell, user, code, check=True).stdout


def _cleanup(cell, job_id):
    name = _cell_tmp_name(cell)
    for place in (f"/tmp/{job_id}.1.all.q", f"/tmp/{name}"):
        if os.path.islink(place) or os.path.isfile(place):
            os.unlink(place)
        elif os.path.isdir(place):
            shutil.rmtree(place, ignore_errors=True)
    for entry in os.listdir("/tmp"):
        if entry.startswith(f"{name}.set-aside."):
            path = os.path.join("/tmp", entry)
            (os.unlink if os.path.islink(path) else shutil.rmtree)(path)


def test_planted_link_at_tmpdir_gives_a_user_nothing(cell, workdir, users, tmp_names):
    """bob links the place of his own job's TMPDIR to a folder of root's."""
    bob = users[1]
    guarded = os.path.join(workdir, "rootonly")
    os.mkdir(guarded, 0o700)
    with open(os.path.join(guarded, "keep"), "w") as fh:
        fh.write("root's\n")
    job_id = _next_id_as(cell, bob) + 1
    try:
        _plant_everywhere(cell, bob, job_id, "link", guarded)
        out = os.path.join(workdir, "t.out")
        jid = _jid(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", out, "sh", "-c",
                             "'stat -c \"%U %a\" $TMPDIR; ls -A $TMPDIR | wc -l; echo x > $TMPDIR/f'",
                             user=bob, cwd=workdir))
        assert jid == job_id
        cell.wait_finished(jid)
        st = os.stat(guarded)
        assert st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o700, "root's folder was given away"
        assert sorted(os.listdir(guarded)) == ["keep"]
        assert open(out).read().split("\n")[:2] == [f"{bob} 700", "0"]
    finally:
        _cleanup(cell, job_id)


def test_planted_folder_cannot_steer_another_users_job(cell, workdir, users, tmp_names):
    """bob plants folders with a link to alice's file where alice's next TMPDIR goes."""
    alice, bob = users[0], users[1]
    home = pwd.getpwnam(alice).pw_dir
    victim = os.path.join(home, "precious.txt")
    cell.run("sh", "-c", f"echo precious > {victim}", user=alice, check=True)
    job_id = _next_id_as(cell, bob) + 1
    try:
        _plant_everywhere(cell, bob, job_id, "dir", victim)
        jid = _jid(cell.qsub("-terse", "-b", "y", "-o", "/dev/null", "-e", "/dev/null", "sh", "-c",
                             "'echo pwned > $TMPDIR/out'", user=alice, cwd=workdir))
        assert jid == job_id
        cell.wait_finished(jid)
        assert open(victim).read() == "precious\n", "bob steered alice's job into her own file"
    finally:
        _cleanup(cell, job_id)
        os.unlink(victim)


def test_tmpdir_is_fresh_private_and_removed(cell, workdir, users):
    alice = users[0]
    out = os.path.join(workdir, "env.out")
    jid = _jid(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", out, "sh", "-c",
                         "'echo $TMPDIR; stat -c \"%U %a\" $TMPDIR $(dirname $TMPDIR); ls -A $TMPDIR | wc -l'",
                         user=alice, cwd=workdir))
    cell.wait_finished(jid)
    path, mine, parent, count = open(out).read().split("\n")[:4]
    assert mine == f"{alice} 700"
    assert parent == "root 711"
    assert count == "0"
    assert os.path.basename(path) == f"{jid}.1.all.q"
    assert os.path.basename(os.path.dirname(path)) == _cell_tmp_name(cell)
    assert not os.path.exists(path), "TMPDIR left behind"


def test_a_tmpdir_kept_for_the_next_task_is_out_of_reach_of_the_job_that_left_it(cell, workdir, users):
    """A shepherd that serves another task keeps its task's emptied TMPDIR for that task:
    bob's job leaves a process behind in it (in a session of its own), which is ended
    with the job (``exec.leftovers``) and so can plant nothing there afterwards, neither
    while the folder is kept nor in alice's TMPDIR made of it."""
    alice, bob = users[0], users[1]
    first, said, go, lurker, ready = (os.path.join(workdir, n)
                                      for n in ("first.out", "bob.said", "go", "lurk.sh", "lurk.ready"))
    with open(lurker, "w") as fh:
        fh.write(f"touch {ready}\nwhile [ ! -e {go} ]; do sleep 0.05; done\n"
                 f"if echo planted > here; then echo wrote; else echo denied; fi > {said}\n")
    # the job ends only once the lurker runs in a session of its own (the end of the job
    # kills the job's process group, which the lurker is in until setsid has run)
    jid = _jid(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", first, "sh", "-c",
                         f"'stat -c %i $TMPDIR; cd $TMPDIR && setsid sh {lurker} </dev/null >/dev/null 2>&1 & "
                         f"while [ ! -e {ready} ]; do sleep 0.05; done'",
                         user=bob, cwd=workdir))
    cell.wait_finished(jid)
    inode = int(open(first).read().split()[0])
    folder = os.path.join("/tmp", _cell_tmp_name(cell))
    kept = [n for n in os.listdir(folder) if os.lstat(os.path.join(folder, n)).st_ino == inode]
    assert kept and kept[0].startswith(".kept."), "the emptied TMPDIR was not kept"
    st = os.lstat(os.path.join(folder, kept[0]))
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o700), "bob still owns the kept folder"
    out = os.path.join(workdir, "second.out")
    second = _jid(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", out, "sh", "-c",
                            f"'stat -c \"%i %U %a\" $TMPDIR; touch {go}; sleep 1; ls -A $TMPDIR | wc -l'",
                            user=alice, cwd=workdir))
    cell.wait_finished(second, timeout=30)
    assert not os.path.exists(said)         # (the lurker was ended with bob's job)
    mine, count = open(out).read().split("\n")[:2]
    assert mine.split()[1:] == [alice, "700"] and count == "0"


def test_two_cells_on_one_host_never_share_a_tmpdir(cell, workdir):
    other = make_cell()
    try:
        keep = os.path.join(workdir, "a.out")
        a = _jid(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", keep, "sh", "-c",
                           "'echo $TMPDIR; touch $TMPDIR/mine; sleep 3; test -e $TMPDIR/mine && echo kept'",
                           cwd=workdir))
        wait_for(lambda: os.path.exists(keep) and os.path.getsize(keep) > 0)
        b_out = os.path.join(workdir, "b.out")
        b = _jid(other.qsub("-terse", "-b", "y", "-j", "y", "-o", b_out, "sh", "-c", "'echo $TMPDIR'",
                            cwd=workdir))
        assert a == b == 1
        other.wait_finished(b)
        cell.wait_finished(a, timeout=30)
        lines = open(keep).read().split()
        assert lines[-1] == "kept", "another cell's job removed this job's TMPDIR"
        assert lines[0] != open(b_out).read().strip()
    finally:
        destroy_cell(other)


@pytest.mark.parametrize("owner", ["root", "alice"])
def test_output_link_to_a_file_not_the_owners_writes_nothing(cell, workdir, users, owner):
    """bob's -o names a link to a file of root's (group root may write) or of alice's;
    neither the queue's prolog (started by the root shepherd) nor the job may write it."""
    alice, bob = users[0], users[1]
    victim = os.path.join(workdir, f"victim-{owner}")
    with open(victim, "w") as fh:
        fh.write("unchanged\n")
    if owner == "root":
        os.chmod(victim, 0o664)
    else:
        entry = pwd.getpwnam(alice)
        os.chown(victim, entry.pw_uid, entry.pw_gid)
        os.chmod(victim, 0o644)
    cell.run("qconf", "-mattr", "queue", "prolog", "/bin/echo", "all.q", check=True)
    _restart_daemon_in_groups(cell, [0])
    link = os.path.join(workdir, f"link-{owner}")
    user_py(cell, bob, f"import os; os.symlink({victim!r}, {link!r})", check=True)
    jid = _jid(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", link, "echo", "job-ran",
                         user=bob, cwd=workdir))
    wait_for(lambda: cell.task_states(jid).get(1) in ("finished", "error"), timeout=20)
    assert open(victim).read() == "unchanged\n"


def test_modules_planted_where_root_starts_the_daemon_are_never_loaded(cell, users, workdir):
    """A user who can write the folder root stands in (here a 1777 one) plants a gridtools
    package and standard library names there; the daemon root starts from it, restarts
    or keeps running loads none of them (Grid Engine's and HTCondor's daemons leave the
    folder they were started in)."""
    import subprocess
    marker = os.path.join(workdir, "pwned")
    plant = (f"open({marker!r}, 'a').write(__name__ + '\\n')\n")
    for name in ("gridtools/__init__.py", "random.py", "json.py", "fnmatch.py", "shlex.py",
                 "tempfile.py", "uuid.py"):
        path = os.path.join(workdir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(plant)
    subprocess.run(["chown", "-R", "gtbob", workdir], check=True)
    cell.stop_daemon()
    assert cell.run("gridtools", "daemon", "start", cwd=workdir).returncode == 0
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    cell.wait_finished(jid)
    with open(os.path.join(cell.root, "spool", "daemon.pid")) as fh:
        pid = int(fh.read())
    assert os.readlink(f"/proc/{pid}/cwd") == "/"
    assert not os.path.exists(marker)


def test_a_link_another_user_planted_in_a_shared_folder_is_not_followed(cell, workdir, users):
    """bob plants a link in a sticky folder anyone may write (as /tmp) where alice's job
    will write its output, pointing at a file of alice's: the job does not follow it (as
    the kernel's protected_symlinks), its file is left as it was and the job is in error;
    a link alice made there herself is followed."""
    alice, bob = users[0], users[1]
    shared = os.path.join(workdir, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    entry = pwd.getpwnam(alice)
    victim = os.path.join(workdir, "profile")
    with open(victim, "w") as fh:
        fh.write("unchanged\n")
    os.chown(victim, entry.pw_uid, entry.pw_gid)
    planted = os.path.join(shared, "alice.out")
    user_py(cell, bob, f"import os; os.symlink({victim!r}, {planted!r})", check=True)
    jid = _jid(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", planted, "echo", "OWNED",
                         user=alice, cwd=workdir))
    wait_for(lambda: cell.task_states(jid).get(1) in ("finished", "error"), timeout=20)
    assert cell.task_states(jid).get(1) == "error"
    assert open(victim).read() == "unchanged\n"
    reason = [line for line in cell.run("qstat", "-j", str(jid)).stdout.splitlines()
              if line.startswith("error reason")]
    assert reason and reason[0].endswith(f"can't open output file \"{planted}\": Permission denied"), reason
    own = os.path.join(shared, "alice-own.out")
    user_py(cell, alice, f"import os; os.symlink({victim!r}, {own!r})", check=True)
    jid = _jid(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", own, "echo", "mine",
                         user=alice, cwd=workdir))
    cell.wait_finished(jid)
    assert open(victim).read() == "unchanged\nmine\n"

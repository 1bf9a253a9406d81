"""Attacks by files and folders planted where another user's output will go (as with
fs.protected_regular=0 and fs.protected_fifos=0, where the kernel lets a user write
through a file another user left in /tmp).

A hostile user (gtbob) leaves, in a sticky folder anyone may write (as /tmp), a file
anyone may write, a FIFO, or a folder of his own with links in it, at the name the
output of a job of gtalice's will take. The job's output is not written through
them: it goes into the error state (Eqw; an HTCondor job is held) as for an output
path it may not write, and bob learns nothing of it, nor empties or adds to a file
of alice's. What alice made herself there is written as before.
"""

import os
import pwd
import threading

from attack_tools import private_folder, sticky_folder, user_py
from condortools import submit, wait_status
from qtools import end_state, jid_of


def _alice_file(workdir, alice, name, text):
    path = os.path.join(private_folder(workdir, f"{name}-home", alice), name)
    with open(path, "w") as fh:
        fh.write(text)
    entry = pwd.getpwnam(alice)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    os.chmod(path, 0o600)
    return path


def _trap(cell, user, path, text=b""):
    """A file of ``user``'s at ``path`` that anyone may write, holding ``text``."""
    user_py(cell, user, f"import os; fd = os.open({path!r}, os.O_CREAT | os.O_WRONLY, 0o666); "
                        f"os.write(fd, {text!r}); os.fchmod(fd, 0o666)", check=True)
    return path


def test_output_does_not_go_into_a_file_another_user_left_there(cell, workdir, users):
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    trap = _trap(cell, bob, os.path.join(shared, "nightly.out"))
    jid = jid_of(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", trap, "echo", "secret-of-alice",
                         user=alice, cwd=workdir))
    assert end_state(cell, jid) == "error"
    assert open(trap).read() == ""
    reason = [ln for ln in cell.run("qstat", "-j", str(jid)).stdout.splitlines() if ln.startswith("error reason")]
    assert reason and reason[0].endswith(f"can't open output file \"{trap}\": Permission denied"), reason
    # alice's own file there is written as before
    mine = os.path.join(shared, "mine.out")
    user_py(cell, alice, f"open({mine!r}, 'w').write('before\\n')", check=True)
    done = jid_of(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", mine, "echo", "after", user=alice, cwd=workdir))
    assert end_state(cell, done) == "finished"
    assert open(mine).read() == "before\nafter\n"


def test_output_does_not_go_into_a_fifo_another_user_left_there(cell, workdir, users):
    """bob's FIFO: the job neither hangs in its open (holding a slot) nor writes to
    a reader of bob's."""
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    trap = os.path.join(shared, "pipe.out")
    user_py(cell, bob, f"import os; os.mkfifo({trap!r}, 0o666); os.chmod({trap!r}, 0o666)", check=True)
    heard = []
    reader = threading.Thread(target=lambda: heard.append(open(trap).read()), daemon=True)
    reader.start()
    jid = jid_of(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", trap, "echo", "secret-of-alice",
                         user=alice, cwd=workdir))
    assert end_state(cell, jid) == "error"
    os.close(os.open(trap, os.O_WRONLY | os.O_NONBLOCK))      # (lets the reader go)
    reader.join(10)
    assert heard == [""]


def test_htcondor_output_neither_empties_nor_fills_a_file_another_user_left(cell, workdir, users):
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    trap = _trap(cell, bob, os.path.join(shared, "c.out"), b"bob-was-here\n")
    cluster = submit(cell, f"executable = /bin/echo\narguments = secret-of-alice\noutput = {trap}\n"
                           f"error = {shared}/c.err\nqueue\n", cwd=workdir, user=alice)
    wait_status(cell, f"{cluster}.0", 5)
    assert open(trap).read() == "bob-was-here\n"
    assert "Permission denied" in cell.run("condor_q", "-af", "HoldReason", str(cluster)).stdout


def test_links_in_a_folder_another_user_planted_are_not_followed(cell, workdir, users):
    """bob makes a folder of his own (anyone may write it) at the name alice's output
    folder will have, with links in it to alice's files: neither her Grid Engine job
    (appending) nor her HTCondor job (emptying first) writes through them."""
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    first = _alice_file(workdir, alice, "profile", "unchanged\n")
    second = _alice_file(workdir, alice, "keys", "unchanged too\n")
    planted = os.path.join(shared, "results")
    user_py(cell, bob, f"import os; os.mkdir({planted!r}); os.chmod({planted!r}, 0o777); "
                       f"os.symlink({first!r}, {planted!r} + '/out'); os.symlink({second!r}, {planted!r} + '/cout')",
            check=True)
    jid = jid_of(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", f"{planted}/out", "echo", "appended",
                         user=alice, cwd=workdir))
    cluster = submit(cell, f"executable = /bin/echo\narguments = overwrote\noutput = {planted}/cout\n"
                           f"error = {planted}/cerr\nqueue\n", cwd=workdir, user=alice)
    assert end_state(cell, jid) == "error"
    wait_status(cell, f"{cluster}.0", 5)
    assert open(first).read() == "unchanged\n"
    assert open(second).read() == "unchanged too\n"
    # (a folder of alice's own below it is hers again: nothing else changes there)
    assert not os.path.exists(os.path.join(planted, "cerr")) or \
        os.stat(os.path.join(planted, "cerr")).st_uid == pwd.getpwnam(alice).pw_uid


def test_the_walk_refuses_what_others_left_in_shared_and_planted_folders(workdir, users):
    """ownfiles as root: bob's links and files in a folder anyone may write (sticky or
    not), or in a folder bob planted there, are refused for writing; what is new, root's
    own, and bob's when read, are not."""
    import errno
    from gridtools import ownfiles
    bob = pwd.getpwnam(users[1]).pw_uid
    shared = sticky_folder(workdir)
    open_dir = os.path.join(workdir, "open")
    os.mkdir(open_dir)
    os.chmod(open_dir, 0o777)
    real = private_folder(workdir, "real")

    def bobs(path, folder=False, link=None):
        if link:
            os.symlink(link, path)
        elif folder:
            os.mkdir(path, 0o777)
        else:
            open(path, "w").close()
        os.lchown(path, bob, -1)

    for folder in (shared, open_dir):
        bobs(os.path.join(folder, "bobs"))
        bobs(os.path.join(folder, "bobslink"), link=os.path.join(real, "x"))
    bobs(os.path.join(shared, "bobdir"), folder=True)
    bobs(os.path.join(shared, "bobdir", "file"))
    bobs(os.path.join(shared, "bobdir", "link"), link=os.path.join(real, "y"))
    os.mkdir(os.path.join(shared, "bobdir", "roots"))           # (a folder of root's below: root's own again)
    os.symlink(os.path.join(real, "z"), os.path.join(shared, "bobdir", "roots", "link"))

    def attempt(path, how=os.O_WRONLY | os.O_CREAT | os.O_APPEND):
        try:
            os.close(ownfiles.open_own(path, how))
            return "ok"
        except OSError as exc:
            return errno.errorcode[exc.errno]
    for folder in (shared, open_dir):
        assert [attempt(os.path.join(folder, n)) for n in ("bobs", "bobslink", "new")] == ["EACCES", "EACCES", "ok"]
        assert attempt(os.path.join(folder, "bobs"), os.O_RDONLY) == "ok"
    assert [attempt(os.path.join(shared, "bobdir", n)) for n in ("file", "link", "new", "roots/link")] == \
        ["EACCES", "EACCES", "ok", "ok"]
    assert sorted(os.listdir(real)) == ["z"]

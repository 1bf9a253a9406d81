"""Attacks by links planted on the path of another user's output (as with
fs.protected_symlinks=0, where the kernel follows them all).

A hostile user (gtbob) plants, in a sticky folder anyone may write (as /tmp),
a link where a job of root's or of gtalice's will write: at the file itself
(which the queue's prolog opens before the job), or at a folder of the path
(which the job's output, -o naming a folder, HTCondor's output_directory and
the output transfer go through). The shepherd follows such a link neither as
root nor as the job owner: the job fails as with an output path it cannot
write (Eqw, HTCondor's hold) and the file or folder the link names is left as
it was. A link of the owner's own is followed as before.
"""

import os
import pwd
import textwrap

import pytest

from attack_tools import private_folder, sticky_folder, user_py
from condortools import submit, wait_status
from conftest import wait_for
from qtools import end_state, jid_of


def _plant(cell, user, target, link):
    user_py(cell, user, f"import os; os.symlink({target!r}, {link!r})", check=True)


def _error_reason(cell, jid):
    return [line for line in cell.run("qstat", "-j", str(jid)).stdout.splitlines()
            if line.startswith("error reason")]


@pytest.mark.parametrize("owner", ["root", "alice"])
def test_a_prolog_s_output_does_not_go_through_a_planted_file_link(cell, workdir, users, owner):
    """The queue's prolog writes into the job's output file before the job opens it: for
    a job of root's (the prolog then opens it as root) a link bob planted there would
    have root make a file of bob's choosing; for alice's, add to a file of alice's."""
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    if owner == "root":
        victim, user = os.path.join(private_folder(workdir, "rootonly"), "proof"), None
    else:
        victim, user = os.path.join(private_folder(workdir, "alicedir", alice), "profile"), alice
        with open(victim, "w") as fh:
            fh.write("unchanged\n")
        entry = pwd.getpwnam(alice)
        os.chown(victim, entry.pw_uid, entry.pw_gid)
    cell.run("qconf", "-mattr", "queue", "prolog", "/bin/echo prolog-of-job $job_name", "all.q", check=True)
    link = os.path.join(shared, "nightly.out")
    _plant(cell, bob, victim, link)
    jid = jid_of(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", link, "-N", "nightly", "true",
                         user=user, cwd=workdir))
    assert end_state(cell, jid) == "error"
    if owner == "root":
        assert not os.path.exists(victim)
    else:
        assert open(victim).read() == "unchanged\n"
    reason = _error_reason(cell, jid)
    assert reason and reason[0].endswith(f"can't open output file \"{link}\": Permission denied"), reason


@pytest.mark.parametrize("owner", ["root", "alice"])
@pytest.mark.parametrize("how", ["folder", "inside"])
def test_a_planted_folder_link_does_not_choose_where_the_output_goes(cell, workdir, users, owner, how):
    """bob links a name in the sticky folder to a folder of the victim's: an -o naming
    the link (a folder: the output would go in it under its default name) or a file
    under it does not write into that folder."""
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    user = None if owner == "root" else alice
    victim = private_folder(workdir, "victimdir", user)
    link = os.path.join(shared, "outdir")
    _plant(cell, bob, victim, link)
    path = link if how == "folder" else os.path.join(link, "job.out")
    jid = jid_of(cell.qsub("-terse", "-b", "y", "-o", path, "-N", "rootjob", "echo", "secret",
                         user=user, cwd=workdir))
    assert end_state(cell, jid) == "error"
    assert os.listdir(victim) == []
    reason = _error_reason(cell, jid)
    assert reason and reason[0].endswith(f"can't open output file \"{path}\": Permission denied"), reason


@pytest.mark.parametrize("owner", ["root", "alice"])
def test_the_owner_s_own_links_are_followed(cell, workdir, users, owner):
    """A link of the job owner's, in a folder of theirs or in the sticky one, to a folder
    or a file: the output goes where it leads, and the prolog's line with it."""
    alice = users[0]
    user = None if owner == "root" else alice
    shared = sticky_folder(workdir)
    home = private_folder(workdir, "home", user)
    cell.run("qconf", "-mattr", "queue", "prolog", "/bin/echo prolog-of-job $job_name", "all.q", check=True)
    code = f"""
    import os
    os.mkdir({home!r} + "/real")
    os.symlink({home!r} + "/real", {home!r} + "/out")
    os.symlink({home!r} + "/real", {shared!r} + "/mine")
    os.symlink({home!r} + "/real/file.txt", {shared!r} + "/file")
    """
    if user is None:
        exec(textwrap.dedent(code))
    else:
        user_py(cell, user, code, check=True)
    real = os.path.join(home, "real")
    for number, path in enumerate((f"{home}/out", f"{shared}/mine", f"{shared}/file")):
        jid = jid_of(cell.qsub("-terse", "-b", "y", "-j", "y", "-o", path, "-N", f"own{number}",
                             "echo", "mine", user=user, cwd=workdir))
        assert end_state(cell, jid) == "finished"
        written = os.path.join(real, "file.txt" if path.endswith("file") else f"own{number}.o{jid}")
        assert open(written).read() == "prolog-of-job " + f"own{number}\nmine\n"


def test_root_s_htcondor_output_does_not_go_through_a_planted_folder_link(cell, workdir, users):
    """Root's HTCondor jobs write into the sticky folder: an output file under bob's
    link, an output_directory made under it, and output files transferred back into an
    initialdir there, where bob planted a link at the name of one of them. Each job is
    held; root's folder gets nothing."""
    bob = users[1]
    shared = sticky_folder(workdir)
    victim = private_folder(workdir, "rootonly")
    _plant(cell, bob, victim, os.path.join(shared, "cdir"))
    _plant(cell, bob, os.path.join(victim, "a.txt"), os.path.join(shared, "a.txt"))
    texts = {       # what each is about: the hold's code, the end of its reason
        "output": (f"executable = /bin/echo\narguments = secret\noutput = {shared}/cdir/out.txt\n", 7,
                   f"Failed to open '{shared}/cdir/out.txt' as standard output: Permission denied (errno 13)"),
        "output_directory": ("executable = /bin/echo\narguments = secret\nshould_transfer_files = YES\n"
                             f"output_directory = {shared}/cdir/results\noutput = out.txt\n", 7,
                             f"Failed to open '{shared}/cdir/results' as standard output: "
                             "Permission denied (errno 13)"),
        "transfer": ("executable = /bin/sh\narguments = \"-c 'echo secret > a.txt'\"\n"
                     f"should_transfer_files = YES\ntransfer_output_files = a.txt\ninitialdir = {shared}\n", 12,
                     f"failed to write to file {shared}/a.txt: (errno 13) Permission denied"),
    }
    for name, (text, code, words) in texts.items():
        cluster = submit(cell, text + f"log = {workdir}/{name}.log\nqueue\n", cwd=workdir, name=f"{name}.sub")
        wait_status(cell, f"{cluster}.0", 5, timeout=30)
        held = cell.run("condor_q", f"{cluster}.0", "-af", "HoldReasonCode", "HoldReason").stdout.strip()
        assert held.startswith(f"{code} ") and held.endswith(words), (name, held)
        assert os.listdir(victim) == [], name


def test_the_walk_applies_the_rule_to_every_link_on_the_path(workdir, users):
    """ownfiles as root: a link of another user's in the sticky folder is refused whether
    it is the last part of the path or a folder on the way, also when reached through a
    link of root's; root's own links, links outside sticky folders and '..' are
    followed; a loop of links is ELOOP; missing folders are made through allowed links."""
    import errno
    from gridtools import ownfiles
    bob = pwd.getpwnam(users[1])
    shared = sticky_folder(workdir)
    real = private_folder(workdir, "real")
    for name, owner in (("bobs", bob.pw_uid), ("roots", 0)):
        os.symlink(real, os.path.join(shared, name))
        os.lchown(os.path.join(shared, name), owner, -1)
    os.symlink(os.path.join(shared, "bobs"), os.path.join(real, "via"))     # (root's, to bob's)
    os.symlink("loop", os.path.join(shared, "loop"))
    for path in ("bobs", "bobs/out", "bobs/sub/out", "roots/via/out"):
        with pytest.raises(PermissionError):
            ownfiles.open_own(os.path.join(shared, path), os.O_WRONLY | os.O_CREAT)
        assert not ownfiles.is_own_dir(os.path.join(shared, path))
    with pytest.raises(PermissionError):
        ownfiles.makedirs_own(os.path.join(shared, "bobs", "made"), 0o700)
    assert os.listdir(real) == ["via"]
    with pytest.raises(OSError) as caught:
        ownfiles.open_own(os.path.join(shared, "loop"), os.O_WRONLY | os.O_CREAT)
    assert caught.value.errno == errno.ELOOP
    assert ownfiles.resolve_own(os.path.join(shared, "roots", "..", "shared", "roots", "x")) == \
        os.path.join(os.path.realpath(real), "x")
    assert ownfiles.is_own_dir(os.path.join(shared, "roots"))
    ownfiles.makedirs_own(os.path.join(shared, "roots", "a", "b"), 0o700)
    os.close(ownfiles.open_own(os.path.join(shared, "roots", "a", "b", "out"), os.O_WRONLY | os.O_CREAT))
    assert os.path.isfile(os.path.join(real, "a", "b", "out"))


@pytest.mark.parametrize("owner", ["root", "alice"])
def test_a_planted_folder_link_does_not_choose_the_working_folder(cell, workdir, users, owner):
    """bob links the name of the job's working folder (-wd, HTCondor's initialdir) in the
    sticky folder to a folder of the victim's: the job does not start there (it fails
    as with a working folder it cannot enter), and a link of the owner's own is
    followed."""
    alice, bob = users[0], users[1]
    user = None if owner == "root" else alice
    shared = sticky_folder(workdir)
    victim = private_folder(workdir, "victimdir", user)
    own = private_folder(workdir, "owndir", user)
    out = private_folder(workdir, "outdir", user)
    link = os.path.join(shared, "work")
    _plant(cell, bob, victim, link)
    jid = jid_of(cell.qsub("-terse", "-b", "y", "-wd", link, "-o", out, "-j", "y", "-N", "here",
                         "touch", "made-here", user=user, cwd=workdir))
    assert end_state(cell, jid) == "error"
    assert os.listdir(victim) == [] and os.listdir(out) == []
    reason = _error_reason(cell, jid)
    assert reason and reason[0].endswith(f"can't chdir to {link}: Permission denied"), reason
    cluster = submit(cell, f"executable = /bin/pwd\ninitialdir = {link}\noutput = {out}/c.out\n"
                           f"log = {out}/c.log\nqueue\n", cwd=workdir, user=user)
    wait_status(cell, f"{cluster}.0", 5, timeout=30)
    assert not os.path.exists(os.path.join(out, "c.out")) and os.listdir(victim) == []
    # the owner's own link, in the same sticky folder
    mine = os.path.join(shared, "mine")
    if user is None:
        os.symlink(own, mine)
    else:
        _plant(cell, user, own, mine)
    jid = jid_of(cell.qsub("-terse", "-b", "y", "-wd", mine, "-o", out, "-j", "y", "-N", "there",
                         "touch", "made-here", user=user, cwd=workdir))
    assert end_state(cell, jid) == "finished"
    assert os.listdir(own) == ["made-here"]


def test_root_s_input_transfer_does_not_read_through_a_planted_link(cell, workdir, users):
    """Root's HTCondor job in a sticky folder transfers its input files into its scratch
    folder as root: bob links the name of one to a file only root may read, another to
    a FIFO of his own (which would keep the transfer waiting). The job is held with
    the input transfer's failure, and never sees the secret; the owner's own link is
    followed."""
    bob = users[1]
    shared = sticky_folder(workdir)
    victim = private_folder(workdir, "rootonly")
    with open(os.path.join(victim, "secret"), "w") as fh:
        fh.write("root's secret\n")
    _plant(cell, bob, os.path.join(victim, "secret"), os.path.join(shared, "in.txt"))
    user_py(cell, bob, f"import os; os.mkfifo({shared!r} + '/pipe.txt')", check=True)
    os.symlink(os.path.join(victim, "secret"), os.path.join(shared, "mine.txt"))
    head = ("executable = /bin/cat\nshould_transfer_files = YES\nwhen_to_transfer_output = ON_EXIT\n"
            f"initialdir = {shared}\n")
    for name in ("in.txt", "pipe.txt"):
        cluster = submit(cell, head + f"arguments = {name}\ntransfer_input_files = {name}\n"
                                      f"output = {workdir}/{name}.out\nlog = {workdir}/{name}.log\nqueue\n",
                         cwd=workdir, name=f"{name}.sub")
        wait_status(cell, f"{cluster}.0", 5, timeout=30)
        held = cell.run("condor_q", f"{cluster}.0", "-af", "HoldReason").stdout
        assert "Transfer input files failure" in held, held
        out = os.path.join(workdir, f"{name}.out")
        assert not os.path.exists(out) or "secret" not in open(out).read()
    cluster = submit(cell, head + f"arguments = mine.txt\ntransfer_input_files = mine.txt\n"
                                  f"output = {workdir}/mine.out\nlog = {workdir}/mine.log\nqueue\n",
                     cwd=workdir, name="mine.sub")
    wait_for(lambda: os.path.exists(os.path.join(workdir, "mine.out"))
             and open(os.path.join(workdir, "mine.out")).read(), timeout=30)
    assert open(os.path.join(workdir, "mine.out")).read() == "root's secret\n"

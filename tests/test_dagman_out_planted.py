"""A file, link or FIFO another user (gtbob) planted at the name of a DAG's DAGMan log,
``DAGFILE.dagman.out``, in a folder the DAG's owner may remove it from: a folder of
gtalice's own that anyone may write (sticky or not), an -outfile_dir of hers, or any
folder when root runs the DAG.

The manager removes it before its first line, as it removes one at the names of the
lock and of the nodes log, and says so in the fresh DAGMan log, which is the owner's
and holds the whole run; nothing the link named is written, nothing goes to
``lib.err``. Where the owner may not remove it (root's /tmp) the lines go to
``lib.err``, as tests/test_dagman_planted_logs.py shows. The owner's own DAGMan log is
appended to, as HTCondor's DAGMan appends to it, and a link of the owner's own is
followed.
"""

import os
import pwd
import stat

import pytest

from attack_tools import give_to, private_folder, run_dag, sticky_folder, two_node_dag, user_py, victim_file

SECRET = "the victim's own words\n"
BOB = "bob's words\n"
WARNING = "WARNING: removed {}, which was not a file of this DAG's owner"


def _plant(cell, bob, path, kind, target):
    """bob's ``kind`` at ``path``: a link to ``target``, a file anyone may write with his
    words in it, or a FIFO anyone may write."""
    code = {"link": f"import os; os.symlink({target!r}, {path!r})",
            "file": f"import os; fd = os.open({path!r}, os.O_CREAT | os.O_WRONLY, 0o666); "
                    f"os.fchmod(fd, 0o666); os.write(fd, {BOB.encode()!r})",
            "fifo": f"import os; os.mkfifo({path!r}); os.chmod({path!r}, 0o666)"}[kind]
    user_py(cell, bob, code, check=True)


def _read(path):
    with open(path) as fh:
        return fh.read()


def _check_fresh_log(out, user, named):
    """The DAGMan log at ``out`` is a regular file of ``user``'s holding the whole run,
    the warning naming it as the manager was given it (``named``) right after the
    banner, and nothing of bob's."""
    info = os.lstat(out)
    assert stat.S_ISREG(info.st_mode), oct(info.st_mode)
    assert info.st_uid == (pwd.getpwnam(user).pw_uid if user else 0)
    said = _read(out)
    assert BOB not in said
    lines = said.splitlines()
    assert "(CONDOR_DAGMAN) STARTING UP" in lines[1], lines
    banner_end = [i for i, line in enumerate(lines) if line.endswith("*" * 20)][1]
    assert lines[banner_end + 1].endswith(WARNING.format(named)), lines
    assert "All jobs Completed!" in said and lines[-1].endswith("EXITING WITH STATUS 0"), lines


@pytest.mark.parametrize("kind,sticky", [("link", True), ("file", False), ("fifo", True), ("link", False)])
def test_planted_in_the_owners_own_folder_it_is_removed_and_said(cell, workdir, users, kind, sticky):
    """bob's link, file or FIFO at d.dag.dagman.out in a folder of alice's that anyone may
    write: the manager removes it and logs the whole run in a DAGMan log of alice's own,
    saying what it removed; lib.err stays empty, the file bob's link named is as it was,
    and the DAG runs."""
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    if not sticky:
        os.chmod(shared, 0o777)
    give_to(shared, alice)
    two_node_dag(shared, alice)
    secret = victim_file(workdir, alice, SECRET)
    _plant(cell, bob, os.path.join(shared, "d.dag.dagman.out"), kind, secret)
    assert run_dag(cell, shared, alice) == 0
    assert _read(os.path.join(shared, "order")) == "A\nB\n"
    assert _read(secret) == SECRET
    _check_fresh_log(os.path.join(shared, "d.dag.dagman.out"), alice, "d.dag.dagman.out")
    assert _read(os.path.join(shared, "d.dag.lib.err")) == ""


def test_root_s_dag_removes_a_link_planted_in_a_shared_folder(cell, workdir, users):
    """root runs a DAG in a sticky folder of root's that anyone may write (as /tmp): bob's
    link at d.dag.dagman.out, which names a file only root may read, is removed, not
    written through."""
    bob = users[1]
    shared = sticky_folder(workdir)
    two_node_dag(shared, None)
    secret = victim_file(workdir, None, SECRET)
    _plant(cell, bob, os.path.join(shared, "d.dag.dagman.out"), "link", secret)
    assert run_dag(cell, shared, None) == 0
    assert _read(os.path.join(shared, "order")) == "A\nB\n"
    assert _read(secret) == SECRET
    _check_fresh_log(os.path.join(shared, "d.dag.dagman.out"), None, "d.dag.dagman.out")
    assert _read(os.path.join(shared, "d.dag.lib.err")) == ""


def test_planted_in_the_owners_outfile_dir_it_is_removed(cell, workdir, users):
    """-outfile_dir puts the DAGMan log in another folder of alice's that anyone may write:
    bob's link there is removed as well, and the warning names the log's path there."""
    alice, bob = users[0], users[1]
    folder = sticky_folder(workdir)
    give_to(folder, alice)
    two_node_dag(folder, alice)
    logs = sticky_folder(workdir, "logs")
    give_to(logs, alice)
    secret = victim_file(workdir, alice, SECRET)
    out = os.path.join(logs, "d.dag.dagman.out")
    _plant(cell, bob, out, "link", secret)
    assert run_dag(cell, folder, alice, "-outfile_dir", logs) == 0
    assert _read(secret) == SECRET
    _check_fresh_log(out, alice, out)


def test_the_owners_own_log_is_appended_to_and_her_own_link_followed(cell, workdir, users):
    """A DAGMan log of alice's own from an earlier run is appended to, as HTCondor's
    DAGMan appends to it; a link of her own at the name is followed, not removed."""
    alice = users[0]
    shared = sticky_folder(workdir)
    give_to(shared, alice)
    two_node_dag(shared, alice)
    out = os.path.join(shared, "d.dag.dagman.out")
    with open(out, "w") as fh:
        fh.write("an earlier run's lines\n")
    give_to(out, alice)
    assert run_dag(cell, shared, alice) == 0
    said = _read(out)
    assert said.startswith("an earlier run's lines\n") and "EXITING WITH STATUS 0" in said
    assert "WARNING: removed" not in said
    for name in ("order", "d.dag.condor.sub", "d.dag.lib.out", "d.dag.lib.err", "d.dag.dagman.log"):
        os.unlink(os.path.join(shared, name))
    kept = os.path.join(private_folder(workdir, "kept", alice), "mine.out")
    os.rename(out, kept)
    user_py(cell, alice, f"import os; os.symlink({kept!r}, {out!r})", check=True)
    assert run_dag(cell, shared, alice) == 0
    assert os.path.islink(out)
    again = _read(kept)
    assert again.startswith(said) and again.count("(CONDOR_DAGMAN) STARTING UP") == 2
    assert "WARNING: removed" not in again

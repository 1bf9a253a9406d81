"""Attacks on another user's DAG and job records through files a hostile user (gtbob)
leaves in a sticky folder anyone may write (as /tmp), where the victim (root or
gtalice) runs a DAG or keeps a job's log, and through the text of a job's own
attributes, which every user reads back in the job history.

- the DAG's lock file: a link planted at its name must not make the manager write
  (and cut short) the file it names; a lock file of another user's is not taken;
- a rescue DAG another user wrote must not mark the victim's nodes done;
- a user log under a planted folder link is not written where the link leads;
- a string with a line break (a submit file's ``\\n`` is two characters in the old
  syntax; a qsub argument may hold a real one) must not add records to the history.
"""

import os
import pwd
import re

import pytest

from attack_tools import private_folder, sticky_folder, user_py
from condortools import submit
from conftest import wait_for

PRECIOUS = "".join(f"{n}\n" for n in range(1, 1001))


def _give(path, user):
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _dag(folder, name, user):
    """A one-node DAG ``name`` whose node appends "A" to ``order`` in ``folder``."""
    script = os.path.join(folder, f"{name}.sh")
    with open(script, "w") as fh:
        fh.write(f"#!/bin/sh\necho A >> {folder}/{name}.order\n")
    os.chmod(script, 0o755)
    with open(os.path.join(folder, f"{name}.sub"), "w") as fh:
        fh.write(f"executable = {script}\nqueue\n")
    with open(os.path.join(folder, name), "w") as fh:
        fh.write(f"JOB A {name}.sub\n")
    for made in (script, os.path.join(folder, f"{name}.sub"), os.path.join(folder, name)):
        _give(made, user)


def _run_dag(cell, folder, name, user):
    proc = cell.run("condor_submit_dag", name, cwd=folder, user=user)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    manager = int(re.search(r"submitted to cluster (\d+)\.", proc.stdout).group(1))
    cell.wait_finished(manager, timeout=60)
    return proc


def _out(folder, name):
    with open(os.path.join(folder, f"{name}.dagman.out")) as fh:
        return fh.read()


@pytest.mark.parametrize("owner", ["root", "alice", "alice's folder"])
@pytest.mark.parametrize("planted", ["link", "file"])
def test_a_lock_file_another_user_left_is_neither_written_nor_taken(cell, workdir, users, owner, planted):
    """bob leaves, at the name of the victim's DAG lock and nodes log, a link to a file
    of the victim's (which the manager would have cut to its 96-byte record) or a file
    of his own. Where the victim may remove it (root; alice in a sticky folder of her
    own) the manager removes it, says so and runs the DAG; where not (alice in root's
    sticky folder, as /tmp) it ends without running the DAG and says why. The file the
    link names is as it was."""
    alice, bob = users[0], users[1]
    user = None if owner == "root" else alice
    shared = sticky_folder(workdir)
    if owner == "alice's folder":
        _give(shared, alice)
    victim = os.path.join(private_folder(workdir, "victim", user), "precious.txt")
    with open(victim, "w") as fh:
        fh.write(PRECIOUS)
    _give(victim, user)
    _dag(shared, "a.dag", user)
    for name in ("a.dag.lock", "a.dag.nodes.log"):
        planted_at = os.path.join(shared, name)
        if planted == "link":
            user_py(cell, bob, f"import os; os.symlink({victim!r}, {planted_at!r})", check=True)
        else:
            user_py(cell, bob, f"open({planted_at!r}, 'w').write('1 1 elsewhere 0 0')", check=True)
    _run_dag(cell, shared, "a.dag", user)
    assert open(victim).read() == PRECIOUS
    said = _out(shared, "a.dag")
    if owner == "alice":
        assert not os.path.exists(os.path.join(shared, "a.dag.order"))          # the node never ran
        whys = ["Permission denied"] if planted == "link" else \
            [f"it belongs to another user (uid {pwd.getpwnam(bob).pw_uid})", "Permission denied"]
        assert any(f"cannot open lock a.dag.lock: {why}" in said for why in whys), said
        assert "ends without running a.dag" in said, said
        return
    assert "WARNING: removed a.dag.lock, which was not a file of this DAG's owner" in said, said
    assert "WARNING: removed a.dag.nodes.log, which was not a file of this DAG's owner" in said
    assert open(os.path.join(shared, "a.dag.order")).read() == "A\n"
    assert "EXITING WITH STATUS 0" in said, said


def test_a_rescue_dag_of_another_user_marks_nothing_done(cell, workdir, users):
    """bob writes a rescue DAG for alice's DAG that marks its node done: alice's run
    neither counts nor reads it, and her node runs."""
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    _dag(shared, "c.dag", alice)
    user_py(cell, bob, f"open({shared!r} + '/c.dag.rescue001', 'w').write('DONE A\\n')", check=True)
    proc = _run_dag(cell, shared, "c.dag", alice)
    assert "Running rescue DAG" not in proc.stdout
    assert wait_for(lambda: os.path.exists(os.path.join(shared, "c.dag.order")))
    assert open(os.path.join(shared, "c.dag.order")).read() == "A\n"
    assert "Running rescue DAG" not in _out(shared, "c.dag")


def test_root_s_user_log_does_not_go_through_a_planted_folder_link(cell, workdir, users):
    """bob links a name in the sticky folder to a folder only root may enter: root's
    condor_submit of a job whose log is under that name refuses it as HTCondor's refuses
    a log it cannot write, and the daemon, writing the log's events, does not go there
    either. Nothing is written into the folder."""
    bob = users[1]
    shared = sticky_folder(workdir)
    secret = private_folder(workdir, "rootonly")
    user_py(cell, bob, f"import os; os.symlink({secret!r}, {shared!r} + '/rlogs')", check=True)
    path = os.path.join(cell.root, "r.sub")
    with open(path, "w") as fh:
        fh.write(f"executable = /bin/true\nlog = {shared}/rlogs/job.log\nqueue\n")
    proc = cell.run("condor_submit", path, cwd=workdir)
    assert (proc.returncode, proc.stderr) == (
        1, f'ERROR: Invalid log file: "{shared}/rlogs/job.log" (Permission denied)\n')
    from gridtools.daemon.userlogs import open_log
    with pytest.raises(PermissionError):
        open_log(f"{shared}/rlogs/job.log", "root", 0, 0)
    assert os.listdir(secret) == []


def test_a_line_break_in_a_job_s_strings_adds_no_record_to_the_history(cell, workdir, users):
    """alice's HTCondor job has an attribute whose text holds ``\\n`` (in the old syntax
    a backslash and an n: HTCondor keeps them as they are), her Grid Engine job an
    argument with a real line break; each tries to add lines that would read as a job of
    bob's. The history shows her two jobs and nothing else, and condor_q shows the
    attribute as HTCondor does."""
    alice = users[0]
    forged = "Owner = Bar\\nClusterId = 4242\\nProcId = 0"
    text = ("executable = /bin/true\nhold = true\n+Bar = \"gtbob\"\n"
            f"+Zed = \"x\\n{forged}\"\nqueue\n")
    cluster = submit(cell, text, cwd=workdir, user=alice)
    shown = cell.run("condor_q", str(cluster), "-af", "Zed").stdout
    assert shown == "x\\n" + forged + "\n"
    qsub = cell.qsub("-terse", "-b", "y", "echo", "a\nOwner = \"gtbob\"\nClusterId = 4243", user=alice, cwd=workdir)
    assert qsub.returncode == 0, qsub.stderr
    ge_job = int(qsub.stdout.strip())
    cell.run("condor_rm", str(cluster), user=alice, check=True)
    cell.wait_finished(ge_job, timeout=30)
    wait_for(lambda: {str(cluster), str(ge_job)} <= set(cell.run("condor_history", "-af", "ClusterId").stdout.split()))
    rows = cell.run("condor_history", "-af", "ClusterId", "Owner").stdout.splitlines()
    assert sorted(rows) == sorted([f"{cluster} {alice}", f"{ge_job} {alice}"]), rows
    assert cell.run("condor_history", "gtbob").stdout.count("\n") <= 1        # (its header alone)
    history = open(os.path.join(cell.root, "spool", "history")).read()
    assert not re.search(r"^ClusterId = 424[23]$", history, re.M)


def test_a_halt_file_of_another_user_does_not_halt_the_dag(cell, workdir, users):
    """bob puts a halt file beside alice's DAG in the sticky folder before it starts:
    her DAG is not halted, and its node runs."""
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    _dag(shared, "h.dag", alice)
    user_py(cell, bob, f"open({shared!r} + '/h.dag.halt', 'w').close()", check=True)
    _run_dag(cell, shared, "h.dag", alice)
    assert open(os.path.join(shared, "h.dag.order")).read() == "A\n"
    assert "DAG halted" not in _out(shared, "h.dag")


@pytest.mark.parametrize("planted", ["c.dag.rescue001", "c.dag.rescue100"])
def test_a_rescue_dag_name_another_user_took_does_not_take_the_rescue(cell, workdir, users, planted):
    """bob leaves a file anyone may write at the name of alice's next rescue DAG, or at
    the last one (DAGMAN_MAX_RESCUE_NUM): her failed run writes its rescue DAG under a
    name of her own, which her next run reads; bob's file is left as it was."""
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    _dag(shared, "c.dag", alice)
    with open(os.path.join(shared, "c.dag.sh"), "w") as fh:
        fh.write("#!/bin/sh\nexit 1\n")
    user_py(cell, bob, f"import os; fd = os.open({shared!r} + '/{planted}', os.O_CREAT | os.O_WRONLY, 0o666); "
                       "os.fchmod(fd, 0o666)", check=True)
    _run_dag(cell, shared, "c.dag", alice)
    assert open(os.path.join(shared, planted)).read() == ""
    text = _out(shared, "c.dag")
    written = re.search(r"Writing Rescue DAG file (\S+)", text)
    assert written, text
    rescue = os.path.join(shared, written.group(1))
    assert os.path.basename(rescue) != planted
    assert os.stat(rescue).st_uid == pwd.getpwnam(alice).pw_uid
    assert "# Rescue DAG file, created after running" in open(rescue).read()


def test_a_save_point_file_goes_through_no_folder_link_another_user_planted(cell, workdir, users):
    """bob links save_files beside alice's DAG to a folder of hers holding save points
    of an earlier run: her DAG's SAVE_POINT_FILE neither renames nor overwrites them."""
    alice, bob = users[0], users[1]
    shared = sticky_folder(workdir)
    precious = private_folder(workdir, "precious", alice)
    os.chmod(precious, 0o711)
    kept = {"A-c.dag.save": "an earlier save point\n", "A-c.dag.save.old": "an older one\n"}
    for name, text in kept.items():
        with open(os.path.join(precious, name), "w") as fh:
            fh.write(text)
        _give(os.path.join(precious, name), alice)
    _dag(shared, "c.dag", alice)
    with open(os.path.join(shared, "c.dag"), "a") as fh:
        fh.write("SAVE_POINT_FILE A\n")
    user_py(cell, bob, f"import os; os.symlink({precious!r}, {shared!r} + '/save_files')", check=True)
    _run_dag(cell, shared, "c.dag", alice)
    assert {name: open(os.path.join(precious, name)).read() for name in sorted(os.listdir(precious))} == kept
    assert "writing the save point file" in _out(shared, "c.dag")

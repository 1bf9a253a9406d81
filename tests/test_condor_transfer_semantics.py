"""HTCondor's file transfer as a user meets it: when output comes back (ON_EXIT,
ON_EXIT_OR_EVICT), links named in transfer_output_files, file lists, input failures,
preserve_relative_paths, the transferred executable, TransferInputSizeMB and the job's
output file kept in the sandbox until its exit.

Every job runs as a plain user (gtalice) from a folder of hers, as a user meets it;
the hostile cases check that every copy keeps the owner's rights and that the spooled
sandbox of ON_EXIT_OR_EVICT is the owner's alone.
"""

import os
import pwd

from attack_tools import user_py
from condortools import events, history, submit, wait_events, wait_status
from conftest import wait_for

#: the file transfer event (040) and the others a test waits for
TRANSFER, EXECUTE, TERMINATED, ABORTED, HELD = 40, 1, 5, 9, 12


def _home(workdir, user, name="iwd"):
    """A folder of ``user``'s in ``workdir`` (mode 0755), the job's Iwd."""
    path = os.path.join(workdir, name)
    os.mkdir(path, 0o755)
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    return path


def _put(iwd, name, text, mode=0o644, user=None):
    path = os.path.join(iwd, name)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, mode)
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)
    return path


def _job(cell, iwd, user, script, extra="", name="e"):
    """Submit ``script`` (a shell script, the executable ``<name>.sh``) from ``iwd`` as
    ``user``, transferring files; its log is ``<name>.log``, its output ``<name>.out``.
    Returns "cluster.0"."""
    _put(iwd, f"{name}.sh", "#!/bin/sh\n" + script, 0o755, user)
    cluster = submit(cell, f"executable = {name}.sh\nshould_transfer_files = YES\nlog = {name}.log\n"
                           f"output = {name}.out\nerror = {name}.err\n{extra}queue\n",
                     cwd=iwd, user=user, name=f"{name}.sub")
    return f"{cluster}.0"


def _read(path):
    with open(path) as fh:
        return fh.read()


def _ad(cell, jid, *attrs):
    return cell.run("condor_q", jid, "-af", *attrs).stdout.split(" ", len(attrs) - 1)


def test_a_removed_or_held_on_exit_job_copies_nothing_back(cell, workdir, users):
    """ON_EXIT (the default): a job removed or held while it runs sends nothing back
    (file-transfer.rst: "If the job is preempted or removed, no files are transferred
    back"): the user's results stay as they were, the log has no output transfer
    event, and the job's output file (kept in its sandbox) is not written into Iwd."""
    alice = users[0]
    iwd = _home(workdir, alice)
    _put(iwd, "results.txt", "GOOD-RESULTS\n", user=alice)
    script = 'echo half > results.txt; echo early; touch "$1"; sleep 300\n'
    removed = _job(cell, iwd, alice, script, f"transfer_input_files = results.txt\narguments = {iwd}/r.go\n", "r")
    held = _job(cell, iwd, alice, script, f"transfer_input_files = results.txt\narguments = {iwd}/h.go\n", "h")
    wait_for(lambda: os.path.exists(os.path.join(iwd, "r.go")) and os.path.exists(os.path.join(iwd, "h.go")),
             timeout=30)
    assert cell.run("condor_rm", removed, user=alice).returncode == 0
    assert cell.run("condor_hold", held, user=alice).returncode == 0
    wait_events(os.path.join(iwd, "r.log"), removed, [0, TRANSFER, TRANSFER, EXECUTE, ABORTED])
    wait_events(os.path.join(iwd, "h.log"), held, [0, TRANSFER, TRANSFER, EXECUTE, HELD])
    assert _read(os.path.join(iwd, "results.txt")) == "GOOD-RESULTS\n"
    assert events(os.path.join(iwd, "r.log"))[removed].count(TRANSFER) == 2      # (the input's only)
    assert events(os.path.join(iwd, "h.log"))[held].count(TRANSFER) == 2
    assert not os.path.exists(os.path.join(iwd, "r.out")) and not os.path.exists(os.path.join(iwd, "h.out"))


def _stores(cell, jid=None):
    """The evicted-sandbox folders of the cell's spool (``jid``: of that job's)."""
    found = []
    for top, dirs, _files in os.walk(os.path.join(cell.root, "spool")):
        found += [os.path.join(top, d) for d in dirs if d == "evicted_sandbox"]
    return [s for s in found if jid is None or s.split(os.sep)[-3] == jid.split(".")[0]]


def test_on_exit_or_evict_spools_the_sandbox_at_a_hold_and_gives_it_to_the_next_run(cell, workdir, users):
    """ON_EXIT_OR_EVICT: at the hold the output sandbox goes under the spool (the
    owner's alone, nothing in Iwd), and the next run finds it in its scratch folder
    before it runs; at the final exit the files come to Iwd; a link the job left,
    named in transfer_output_files, is read as the owner (nothing of /etc/shadow is
    spooled); removing the job removes what it spooled."""
    alice, bob = users[0], users[1]
    iwd = _home(workdir, alice)
    script = ('echo run >> state.txt; cat state.txt\n'
              'if [ "$(wc -l < state.txt)" -ge 2 ]; then exit 0; fi\n'
              'touch "$1"; sleep 300\n')
    jid = _job(cell, iwd, alice, script, f"when_to_transfer_output = ON_EXIT_OR_EVICT\narguments = {iwd}/go\n")
    wait_for(lambda: os.path.exists(os.path.join(iwd, "go")), timeout=30)
    assert cell.run("condor_hold", jid, user=alice).returncode == 0
    wait_events(os.path.join(iwd, "e.log"), jid, [0, TRANSFER, TRANSFER, EXECUTE, HELD])
    assert not os.path.exists(os.path.join(iwd, "state.txt"))
    [store] = wait_for(lambda: [s for s in _stores(cell) if any(os.scandir(s))] or None)
    info = os.stat(store)
    assert info.st_uid == pwd.getpwnam(alice).pw_uid and info.st_mode & 0o777 == 0o700
    peek = user_py(cell, bob, f"import os; os.listdir({store!r})")
    assert peek.returncode != 0 and "PermissionError" in peek.stderr
    os.unlink(os.path.join(iwd, "go"))
    assert cell.run("condor_release", jid, user=alice).returncode == 0
    wait_events(os.path.join(iwd, "e.log"), jid, [0, TRANSFER, TRANSFER, EXECUTE, HELD, 13, TRANSFER, TRANSFER,
                                                 EXECUTE, TRANSFER, TRANSFER, TERMINATED], timeout=40)
    assert _read(os.path.join(iwd, "state.txt")) == "run\nrun\n"
    assert _read(os.path.join(iwd, "e.out")) == "run\nrun\n"
    assert not _stores(cell, jid)                       # (its files are in Iwd now)

    linked = _job(cell, iwd, alice, 'ln -s /etc/shadow shadowlink; touch "$1"; sleep 300\n',
                  "when_to_transfer_output = ON_EXIT_OR_EVICT\ntransfer_output_files = shadowlink\n"
                  f"arguments = {iwd}/go2\n", "s")
    wait_for(lambda: os.path.exists(os.path.join(iwd, "go2")), timeout=30)
    assert cell.run("condor_hold", linked, user=alice).returncode == 0
    wait_events(os.path.join(iwd, "s.log"), linked, [0, TRANSFER, TRANSFER, EXECUTE, HELD])
    shadow = _read("/etc/shadow")
    for store in _stores(cell):
        for top, _dirs, files in os.walk(store):
            for name in files:
                assert _read(os.path.join(top, name)) != shadow
    victim = os.path.join(workdir, "rootonly")        # (the owner's links in the spool are never followed)
    os.mkdir(victim, 0o755)
    _put(victim, "keep", "root's\n")
    [store] = _stores(cell, linked)
    assert user_py(cell, alice, f"import os; os.symlink({victim!r}, {store!r} + '/kept.99')").returncode == 0
    assert cell.run("condor_rm", linked, user=alice).returncode == 0
    wait_events(os.path.join(iwd, "s.log"), linked, [0, TRANSFER, TRANSFER, EXECUTE, HELD, ABORTED])
    assert not _stores(cell, linked) and _read(os.path.join(victim, "keep")) == "root's\n"


def test_a_link_named_in_transfer_output_files_is_sent_as_what_it_leads_to_read_as_the_owner(cell, workdir, users):
    """A link named in transfer_output_files comes back as its target's contents; one to a
    file the owner may not read (/etc/shadow) holds the job 12/13 with HTCondor's words,
    and nothing of the file comes back."""
    alice = users[0]
    iwd = _home(workdir, alice)
    own = _put(iwd, "ownfile.txt", "mine\n", user=alice)
    good = _job(cell, iwd, alice, f"ln -s {own} ownlink\n", "transfer_output_files = ownlink\n", "g")
    bad = _job(cell, iwd, alice, "ln -s /etc/shadow shadowlink\n", "transfer_output_files = shadowlink\n", "b")
    wait_events(os.path.join(iwd, "g.log"), good, [0, TRANSFER, TRANSFER, EXECUTE, TRANSFER, TRANSFER, TERMINATED])
    got = os.path.join(iwd, "ownlink")
    assert not os.path.islink(got) and _read(got) == "mine\n"
    wait_status(cell, bad, 5)
    code, sub, reason = _ad(cell, bad, "HoldReasonCode", "HoldReasonSubCode", "HoldReason")
    assert (code, sub) == ("12", "13")
    assert "shadowlink: (errno 13) Permission denied" in reason and "error reading from " in reason
    assert not os.path.exists(os.path.join(iwd, "shadowlink"))


def test_file_lists_split_on_commas_only(cell, workdir, users):
    """transfer_input_files and transfer_output_files are split on commas only, blanks
    around each name trimmed: a name may hold blanks."""
    alice = users[0]
    iwd = _home(workdir, alice)
    _put(iwd, "in file.txt", "spaced\n", user=alice)
    jid = _job(cell, iwd, alice, 'cat "in file.txt" > "a b.txt"; echo c > c.txt\n',
               "transfer_input_files = in file.txt\ntransfer_output_files = a b.txt , c.txt\n")
    wait_events(os.path.join(iwd, "e.log"), jid, [0, TRANSFER, TRANSFER, EXECUTE, TRANSFER, TRANSFER, TERMINATED])
    assert _read(os.path.join(iwd, "a b.txt")) == "spaced\n" and _read(os.path.join(iwd, "c.txt")) == "c\n"


def test_an_input_that_cannot_be_read_holds_the_job_with_its_errno(cell, workdir, users):
    """An input that cannot be read holds the job 13 with its errno as the subcode and
    HTCondor's words: a missing one (2), and another user's private file, read as the
    owner (13)."""
    alice, bob = users[0], users[1]
    iwd = _home(workdir, alice)
    missing = _job(cell, iwd, alice, "true\n", "transfer_input_files = nosuch.txt\n", "m")
    bobdir = _home(workdir, bob, "bobdir")
    private = _put(bobdir, "secret.txt", "bob's\n", 0o600, bob)
    refused = _job(cell, iwd, alice, "true\n", f"transfer_input_files = {private}\n", "p")
    wait_status(cell, missing, 5)
    wait_status(cell, refused, 5)
    code, sub, reason = _ad(cell, missing, "HoldReasonCode", "HoldReasonSubCode", "HoldReason")
    assert (code, sub) == ("13", "2")
    assert reason.strip().endswith(f"Details: reading from file {iwd}/nosuch.txt: (errno 2) No such file or directory")
    code, sub, reason = _ad(cell, refused, "HoldReasonCode", "HoldReasonSubCode", "HoldReason")
    assert (code, sub) == ("13", "13")
    assert f"reading from file {private}: (errno 13) Permission denied" in reason


def test_preserve_relative_paths_keeps_the_folders_of_inputs_and_unmapped_outputs(cell, workdir, users):
    """preserve_relative_paths: dirA/file1 and dirB/file1 do not collide in the scratch
    folder, and outd/deep/y comes back as Iwd/outd/deep/y."""
    alice = users[0]
    iwd = _home(workdir, alice)
    for folder in ("dirA", "dirB"):
        os.mkdir(os.path.join(iwd, folder))
        _put(iwd, f"{folder}/file1", f"{folder}\n", user=alice)
    jid = _job(cell, iwd, alice, "mkdir -p outd/deep; cat dirA/file1 dirB/file1 > outd/deep/y\n",
               "preserve_relative_paths = true\ntransfer_input_files = dirA/file1, dirB/file1\n"
               "transfer_output_files = outd/deep/y\n")
    wait_events(os.path.join(iwd, "e.log"), jid, [0, TRANSFER, TRANSFER, EXECUTE, TRANSFER, TRANSFER, TERMINATED])
    assert _read(os.path.join(iwd, "outd", "deep", "y")) == "dirA\ndirB\n"
    assert not os.path.exists(os.path.join(iwd, "y"))


def test_the_executable_is_copied_into_the_scratch_folder_and_run_there(cell, workdir, users):
    """transfer_executable (true by default): the executable is in the scratch folder and
    the job runs that copy; Cmd stays as submitted, and the copy does not come back."""
    alice = users[0]
    iwd = _home(workdir, alice)
    jid = _job(cell, iwd, alice, 'ls > listing; [ -x ./e.sh ] && echo "$0"\n')
    wait_events(os.path.join(iwd, "e.log"), jid, [0, TRANSFER, TRANSFER, EXECUTE, TRANSFER, TRANSFER, TERMINATED])
    assert "e.sh" in _read(os.path.join(iwd, "listing")).split()
    ran = _read(os.path.join(iwd, "e.out")).strip()
    assert os.path.basename(ran) == "e.sh" and ran != os.path.join(iwd, "e.sh")
    wait_for(lambda: jid in history(cell))
    assert history(cell, jid.split(".")[0], "-af", "Cmd").strip() == os.path.join(iwd, "e.sh")


def test_transfer_input_size_mb_counts_the_executable_and_the_input_files(cell, workdir, users):
    """TransferInputSizeMB = (executable KiB + input KiB) / 1024 rounded down, as
    HTCondor 24.0's condor_submit computes it (the oracle ads say the same): 4 for a
    5,000,000-byte input, 0 for a tiny job."""
    alice = users[0]
    iwd = _home(workdir, alice)
    _put(iwd, "big.bin", "x" * 5_000_000, user=alice)
    sized = _job(cell, iwd, alice, "true\n", "transfer_input_files = big.bin\nhold = true\n", "z")
    tiny = _job(cell, iwd, alice, "true\n", "hold = true\n", "t")
    assert _ad(cell, sized, "TransferInputSizeMB") == ["4\n"]
    assert _ad(cell, tiny, "TransferInputSizeMB") == ["0\n"]


def test_the_output_file_stays_in_the_sandbox_until_the_job_exits(cell, workdir, users):
    """Without stream_output, a job that transfers files writes its output file in its
    scratch folder: nothing of it is in Iwd while it runs; all of it is at its exit."""
    alice = users[0]
    iwd = _home(workdir, alice)
    jid = _job(cell, iwd, alice, 'echo early; touch "$1"; while [ ! -e "$2" ]; do sleep 0.1; done; echo late\n',
               f"arguments = {iwd}/started {iwd}/finish\n")
    wait_for(lambda: os.path.exists(os.path.join(iwd, "started")), timeout=30)
    assert not os.path.exists(os.path.join(iwd, "e.out"))
    _put(iwd, "finish", "")
    wait_events(os.path.join(iwd, "e.log"), jid, [0, TRANSFER, TRANSFER, EXECUTE, TRANSFER, TRANSFER, TERMINATED])
    assert _read(os.path.join(iwd, "e.out")) == "early\nlate\n"


def test_condor_submit_warns_of_an_input_file_it_cannot_read(idle_cell, workdir):
    """As HTCondor's condor_submit: a warning at the end, once per file, and the job is
    queued all the same (it is held if the file cannot be read when it starts)."""
    with open(os.path.join(workdir, "here.txt"), "w") as fh:
        fh.write("x\n")
    with open(os.path.join(workdir, "w.sub"), "w") as fh:
        fh.write("executable = /bin/true\nshould_transfer_files = YES\n"
                 "transfer_input_files = here.txt, nosuch.txt\nqueue 2\n")
    proc = idle_cell.run("condor_submit", "-dry-run", os.path.join(workdir, "dry.ads"), "w.sub", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == f"\nWARNING: File {workdir}/nosuch.txt is not readable by condor.\n"

"""Prolog, epilog and PE start/stop procedures in a root-run cell shared by users who
do not trust each other, and an HTCondor job's KillSig.

A procedure's command line is split into words, its variables ($job_id, $job_name,
...) are replaced inside each word and it is executed without a shell; one that runs
as root (``root@``) has a clean environment and starts in /, one that runs as the job
owner has the job's environment and starts in the job's working directory, changed to
after dropping to the owner; a failure of the latter is the job's, not the queue's.
"""

import os
import re
import shutil
import tempfile

import pytest

from condortools import statuses, submit as condor_submit, wait_status
from conftest import wait_for
from qtools import jid_of, queue_letters, set_attr, state_of, wait_state

Q = "all.q@testhost"
FIXED_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def script(folder, name, body):
    path = os.path.join(folder, name)
    with open(path, "w") as fh:
        fh.write(body)
    os.chmod(path, 0o755)
    return path


def read(path):
    try:
        with open(path) as fh:
            return fh.read()
    except FileNotFoundError:
        return None


@pytest.fixture
def root_only():
    """A folder only root may enter."""
    path = tempfile.mkdtemp(prefix="gtroot-", dir="/tmp")
    os.chmod(path, 0o700)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _env_of(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_root_prolog_has_a_clean_environment_and_its_variables(cell, users, workdir, root_only):
    bob = users[1]
    prolog = script(root_only, "prolog.sh",
                    f'#!/bin/sh\n/usr/bin/env > {root_only}/env.$1\n/bin/pwd > {root_only}/pwd.$1\n'
                    f'for a in "$@"; do echo "$a"; done > {root_only}/args.$1\n')
    os.chmod(root_only, 0o711)          # the daemon and root only: bob cannot read what it writes
    set_attr(cell, "all.q", "prolog", f"root@{prolog} $job_id $job_name $queue $host $ja_task_id $job_owner")
    jid = jid_of(cell.qsub("-cwd", "-N", "pj", "-o", "/dev/null", "-j", "y",
                           "-v", f"LD_PRELOAD=/nonexistent/evil.so,PATH=/home/{bob}/bin:/usr/bin,GT_MARK=mine",
                           "-b", "y", "true", user=bob, cwd=workdir))
    cell.wait_finished(jid)
    env = _env_of(read(f"{root_only}/env.{jid}"))
    assert "LD_PRELOAD" not in env and "GT_MARK" not in env
    assert env["PATH"] == FIXED_PATH
    assert (env["JOB_ID"], env["JOB_NAME"], env["USER"], env["LOGNAME"], env["QUEUE"]) == \
        (str(jid), "pj", bob, bob, "all.q")
    assert env["SGE_TASK_ID"] == "undefined" and env["HOME"] == "/root"
    assert read(f"{root_only}/pwd.{jid}") == "/\n"
    assert read(f"{root_only}/args.{jid}").splitlines() == [str(jid), "pj", "all.q", "testhost", "0", bob]


def test_owner_prolog_has_the_jobs_environment_and_writes_to_its_streams(cell, users, workdir):
    bob = users[1]
    prolog = script(workdir, "prolog.sh", '#!/bin/sh\necho "prolog $* $GT_MARK $(pwd) $(id -un)"\n'
                    'echo "prolog to stderr" >&2\n')
    set_attr(cell, "all.q", "prolog", f"{prolog} $job_id $job_name $queue $host $ja_task_id")
    jid = jid_of(cell.qsub("-cwd", "-N", "pj", "-v", "GT_MARK=mine", "-b", "y", "echo", "job",
                           user=bob, cwd=workdir))
    cell.wait_finished(jid)
    assert read(os.path.join(workdir, f"pj.o{jid}")) == \
        f"prolog {jid} pj all.q testhost 0 mine {workdir} {bob}\njob\n"
    assert read(os.path.join(workdir, f"pj.e{jid}")) == "prolog to stderr\n"


def test_job_name_with_shell_metacharacters_is_one_literal_argument(cell, users, workdir, root_only):
    bob = users[1]
    pe_start = script(root_only, "pestart.sh",
                      f'#!/bin/sh\necho "$#" > {root_only}/args\nfor a in "$@"; do echo "$a"; done >> {root_only}/args\n')
    os.chmod(root_only, 0o711)
    pe = os.path.join(cell.root, "etc", "pe", "smp")
    text = re.sub(r"^start_proc_args\s+.*$", f"start_proc_args    root@{pe_start} $pe_hostfile $job_name",
                  read(pe), flags=re.M)
    with open(pe, "w") as fh:
        fh.write(text)
    name = "x;touch${IFS}pwned;sh<evil"
    with open(os.path.join(workdir, "evil"), "w") as fh:
        fh.write(f"touch {workdir}/pwned-evil\n")
    proc = cell.qsub("-cwd", "-pe", "smp", "1", "-N", name, "-o", "/dev/null", "-e", "/dev/null",
                     "-b", "y", "true", user=bob, cwd=workdir)
    jid = jid_of(proc)
    cell.wait_finished(jid)
    lines = read(f"{root_only}/args").splitlines()
    assert lines[0] == "2" and lines[2] == name
    assert lines[1].endswith("/pe_hostfile")
    assert not os.path.exists(os.path.join(workdir, "pwned"))
    assert not os.path.exists(os.path.join(workdir, "pwned-evil"))
    assert not os.path.exists("/pwned")


def test_owner_procedure_cannot_start_where_only_root_may_go(cell, users, workdir, root_only):
    """The job's working directory is entered after dropping to the owner: a prolog of
    bob's never starts in root's private folder (nor in any it leads to), the job goes
    to the error state as it would itself, and the queue stays usable."""
    bob = users[1]
    with open(os.path.join(root_only, "secret"), "w") as fh:
        fh.write("root's secret\n")
    prolog = script(workdir, "prolog.sh", f'#!/bin/sh\npwd > {workdir}/prolog-ran\ncat secret >> {workdir}/prolog-ran\n')
    set_attr(cell, "all.q", "prolog", prolog)
    jid = jid_of(cell.qsub("-wd", root_only, "-o", workdir + "/", "-j", "y", "-b", "y", "true",
                           user=bob, cwd=workdir))
    wait_state(cell, jid, "Eqw")
    assert read(os.path.join(workdir, "prolog-ran")) is None
    reason = cell.run("qstat", "-j", str(jid)).stdout
    assert f"prolog: can't chdir to {root_only}: Permission denied" in reason
    assert queue_letters(cell, Q) == ""


def test_owner_procedure_failure_is_the_jobs_error_not_the_queues(cell, users, workdir):
    bob = users[1]
    epilog = script(workdir, "epilog.sh", '#!/bin/sh\nexit ${GT_EXIT:-0}\n')
    set_attr(cell, "all.q", "epilog", epilog)
    failing = jid_of(cell.qsub("-cwd", "-o", "/dev/null", "-j", "y", "-v", "GT_EXIT=3", "-b", "y", "true",
                               user=bob, cwd=workdir))
    wait_state(cell, failing, "Eqw")
    assert "epilog failed with exit status 3" in cell.run("qstat", "-j", str(failing)).stdout
    assert queue_letters(cell, Q) == ""
    other = jid_of(cell.qsub("-cwd", "-o", "/dev/null", "-j", "y", "-b", "y", "true", user=users[0],
                             cwd=workdir))
    cell.wait_finished(other)
    assert state_of(cell, failing) == "Eqw"
    # the job ran before its epilog failed: its record keeps the run's times
    record = cell.run("qacct", "-j", str(failing)).stdout
    assert re.search(r"^start_time\s+\w{3} \w{3} ", record, re.M), record


def test_pe_procedure_output_files_of_an_array_task(cell, workdir):
    pe_start = script(workdir, "pestart.sh", '#!/bin/sh\necho "start $1"\necho "start error" >&2\n')
    pe = os.path.join(cell.root, "etc", "pe", "smp")
    text = re.sub(r"^start_proc_args\s+.*$", f"start_proc_args    {pe_start} $ja_task_id", read(pe), flags=re.M)
    with open(pe, "w") as fh:
        fh.write(text)
    out = os.path.join(workdir, "out")
    os.mkdir(out)
    jid = jid_of(cell.qsub("-cwd", "-t", "1-2", "-pe", "smp", "1", "-N", "pa", "-o", out, "-b", "y",
                           "echo", "job", cwd=workdir))
    cell.wait_finished(jid, tasks=(1, 2))
    for task in (1, 2):
        assert read(os.path.join(out, f"pa.po{jid}.{task}")) == f"start {task}\n"      # in -o's folder
        assert read(os.path.join(out, f"pa.o{jid}.{task}")) == "job\n"
        assert read(os.path.join(workdir, f"pa.pe{jid}.{task}")) == "start error\n"    # no -e: the cwd
        assert read(os.path.join(workdir, f"pa.e{jid}.{task}")) == ""


def test_output_folder_is_looked_at_with_the_owners_rights(cell, users, workdir, root_only):
    """-o naming a folder gets the default name inside it; whether a path in a folder
    bob may not enter is a folder is not told to him."""
    bob = users[1]
    mine = os.path.join(workdir, "mine")
    cell.run("mkdir", mine, user=bob, check=True)
    jid = jid_of(cell.qsub("-N", "od", "-o", mine, "-j", "y", "-b", "y", "echo", "hi", user=bob, cwd=workdir))
    cell.wait_finished(jid)
    assert read(os.path.join(mine, f"od.o{jid}")) == "hi\n"
    os.mkdir(os.path.join(root_only, "sub"))
    os.chmod(root_only, 0o700)
    reasons = []
    for target in ("sub", "nothere"):
        jid = jid_of(cell.qsub("-o", f"{root_only}/{target}", "-j", "y", "-b", "y", "true", user=bob, cwd=workdir))
        wait_state(cell, jid, "Eqw")
        text = cell.run("qstat", "-j", str(jid)).stdout
        reasons.append(re.search(r"can't stat\(\) \"(\S+)\" as stdout_path: (Permission denied) ", text).groups())
    assert reasons == [(f"{root_only}/sub", "Permission denied"), (f"{root_only}/nothere", "Permission denied")]


def test_killsig_names_only_a_signal(cell, workdir):
    marker = os.path.join(workdir, "pwned")
    cluster = condor_submit(cell, "executable = /bin/sleep\narguments = 300\n"
                            f'+KillSig = "/usr/bin/touch {marker}"\nqueue\n', cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 2)
    cell.run("condor_rm", jid, check=True)
    wait_for(lambda: not statuses(cell, jid))
    assert not os.path.exists(marker)


@pytest.mark.parametrize("given, signal", [("SIGUSR1", "SIGUSR1"), ("term", "SIGTERM"), ("9", "SIGKILL"),
                                           ("/bin/sh -c 'id > /tmp/x'", "SIGTERM"), ("NOSUCH", "SIGTERM")])
def test_killsig_of_an_ad(given, signal):
    from gridtools.classad import parse_ad
    from gridtools.formats.condor.spec import kill_signal, signal_of
    quoted = given.replace("\\", "\\\\").replace('"', '\\"')
    assert signal_of(kill_signal(parse_ad(f'KillSig = "{quoted}"\n'))) == signal


def test_a_jobs_own_start_failure_stays_its_reason_after_the_epilog(cell, users, workdir, root_only):
    epilog = script(workdir, "epilog.sh", f"#!/bin/sh\npwd > {workdir}/epilog-ran\n")
    set_attr(cell, "all.q", "epilog", epilog)
    jid = jid_of(cell.qsub("-wd", root_only, "-o", workdir + "/", "-j", "y", "-b", "y", "true",
                           user=users[1], cwd=workdir))
    wait_state(cell, jid, "Eqw")
    text = cell.run("qstat", "-j", str(jid)).stdout
    assert re.search(rf"error reason +1: +\S+ \S+ \[\d+:\d+\]: error: can't chdir to {root_only}: Permission denied", text), text
    assert read(os.path.join(workdir, "epilog-ran")) is None
    assert queue_letters(cell, Q) == ""


def test_a_root_prolog_writes_to_the_job_s_streams_and_their_errors_are_not_its_own(cell, users, workdir,
                                                                                   root_only):
    """A root@ prolog's output goes to the job's files through the shepherd: the owner
    sees it, but where the files do not take it (/dev/full; a FIFO whose reader closes
    it at once) the prolog neither fails nor dies of SIGPIPE, so the owner cannot put
    the queue into the error state that a failing root prolog sets."""
    import subprocess
    import threading
    bob = users[1]
    prolog = script(root_only, "prolog.sh", '#!/bin/sh\nsleep 0.3\necho "prolog says hello"\necho "done"\n')
    os.chmod(root_only, 0o711)
    set_attr(cell, "all.q", "prolog", f"root@{prolog}")
    seen = jid_of(cell.qsub("-cwd", "-N", "seen", "-j", "y", "-b", "y", "echo", "job", user=bob, cwd=workdir))
    cell.wait_finished(seen)
    assert read(os.path.join(workdir, f"seen.o{seen}")) == "prolog says hello\ndone\njob\n"
    full = jid_of(cell.qsub("-o", "/dev/full", "-j", "y", "-b", "y", "true", user=bob, cwd=workdir))
    cell.wait_finished(full)
    fifo = os.path.join(workdir, "pipe")
    subprocess.run(["runuser", "-u", bob, "--", "mkfifo", fifo], check=True)
    closer = threading.Thread(target=lambda: os.close(os.open(fifo, os.O_RDONLY)), daemon=True)
    closer.start()
    piped = jid_of(cell.qsub("-o", fifo, "-j", "y", "-b", "y", "true", user=bob, cwd=workdir))
    closer.join(30)
    wait_state(cell, piped, "r")        # (past its prolog: the job itself waits for a reader)
    assert queue_letters(cell, Q) == ""
    assert state_of(cell, full) is None
    cell.run("qdel", str(piped), check=True)
    other = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", "-b", "y", "true", user=users[0], cwd=workdir))
    cell.wait_finished(other)
    assert queue_letters(cell, Q) == ""



def test_a_procedure_that_asks_to_run_the_job_again_and_again_gets_the_jobs_rests(cell, workdir):
    """A prolog that exits 99 every time puts the job back to wait; after a few quick
    tries the job rests between them, as one whose own exit status is 99 does: it does
    not restart as fast as the daemon can, a record each time."""
    from gridtools.daemon.apply import FREE_REQUEUES
    runs = os.path.join(workdir, "tries")
    prolog = script(workdir, "prolog.sh", f"#!/bin/sh\necho try >> {runs}\nexit 99\n")
    set_attr(cell, "all.q", "prolog", prolog)
    jid = jid_of(cell.qsub("-o", "/dev/null", "-j", "y", "-b", "y", "true", cwd=workdir))

    def count():
        return len(open(runs).read().split()) if os.path.exists(runs) else 0
    wait_for(lambda: count() >= FREE_REQUEUES + 2, timeout=30)
    assert wait_for(lambda: "execution time not reached" in cell.run("qstat", "-j", str(jid)).stdout
                    or None, timeout=10)
    cell.run("qdel", str(jid), check=True)

"""qrsh and qlogin as Grid Engine's: the shell a command runs in (the owner's login shell,
QRSH_WRAPPER), the options they refuse, what a waiting qrsh says when it is interrupted
or its job deleted, the accounting category, qstat -j's path lists, QRSH_COMMAND, the
errors of qrsh -inherit, and the FIFO folder of a qrsh killed outright."""

import glob
import os
import pwd
import re
import select
import signal
import subprocess
import time

import pytest
from conftest import wait_for
from qtools import add_object, jid_of, state_of

#: the signals by which qrsh is told to go
ENDING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def _fill_slots(cell, workdir):
    """Both slots taken by batch jobs; their ids."""
    ids = [jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir)) for _ in range(2)]
    wait_for(lambda: all(state_of(cell, jid) == "r" for jid in ids))
    return ids


def _qrsh(cell, workdir, *args, user=None):
    """Start qrsh (its job named qrshjob, its FIFOs in ``workdir``) with the default
    action for the ENDING signals; as ``user`` when given."""
    entry = pwd.getpwnam(user) if user else None

    def prepare():
        for sig in ENDING:
            signal.signal(sig, signal.SIG_DFL)
        if entry is not None:
            os.initgroups(user, entry.pw_gid)
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)
    env = dict(cell.env, TMPDIR=workdir)
    return subprocess.Popen(["qrsh", "-N", "qrshjob", *args], cwd=workdir, env=env, preexec_fn=prepare,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _qrsh_job(cell, state):
    """The id of the qrsh job (named qrshjob) once qstat shows it in ``state``."""
    def found():
        for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]:
            fields = line.split()
            if fields[2:3] == ["qrshjob"] and fields[4] == state:
                return int(fields[0])
        return None
    return wait_for(found)


def _read_until(stream, end, timeout=15):
    """What ``stream`` (a pipe) says up to and including ``end``, read without blocking
    past ``timeout`` seconds."""
    got, deadline = b"", time.monotonic() + timeout
    while not got.endswith(end):
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, got
        chunk = os.read(stream.fileno(), 1)
        assert chunk, got
        got += chunk
    return got


def _running(cell, proc):
    """The id of the qrsh job (whose command says "running" first) once its command runs."""
    ready, _, _ = select.select([proc.stdout], [], [], 15)
    assert ready and proc.stdout.readline() == b"running\n"
    return _qrsh_job(cell, "r")


# ---------------------------------------------------------------- the command's shell

def test_qrsh_runs_its_command_under_the_owners_login_shell(cell, workdir):
    """As qrsh_starter: ``<login shell> -c "<words>"`` (root's is bash here), whatever the
    queue's shell; -noshell runs the words themselves."""
    assert pwd.getpwuid(os.getuid()).pw_shell.endswith("bash")
    proc = cell.run("qrsh", "echo $0; [[ 1 == 1 ]] && echo ok; echo ${BASH_VERSION:+bash}", cwd=workdir)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "bash\nok\nbash\n", "")
    proc = cell.run("qrsh", "no-such-command-here", cwd=workdir)
    assert proc.returncode == 127 and proc.stderr.startswith("bash: ")
    assert cell.run("qrsh", "-noshell", "echo", "$0", cwd=workdir).stdout == "$0\n"


def test_qrsh_runs_its_command_through_qrsh_wrapper(cell, workdir):
    """QRSH_WRAPPER of the caller runs the command's words (submit(1))."""
    proc = cell.run("qrsh", "hello", "there", cwd=workdir, env={"QRSH_WRAPPER": "/bin/echo"})
    assert (proc.returncode, proc.stdout) == (0, "hello there\n")


# ---------------------------------------------------------------- refused options

@pytest.mark.parametrize("option", [["-t", "1-3"], ["-a", "202701010000"], ["-c", "s"], ["-ckpt", "x"],
                                    ["-i", "/dev/null"], ["-r", "y"], ["-shell", "n"], ["-S", "/bin/bash"],
                                    ["-tc", "2"], ["-dl", "202701010000"], ["-he", "y"]])
def test_qrsh_refuses_the_options_it_does_not_take(cell, workdir, option):
    proc = cell.run("qrsh", "-now", "n", *option, "echo", "ran", cwd=workdir)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", f"error: Unknown option {option[0]}\n")
    assert cell.run("qstat", "-u", "*").stdout == ""            # nothing was submitted


def test_a_login_session_refuses_cwd_wd_v_and_V(cell, workdir):
    for prog, command in (("qlogin", []), ("qrsh", [])):
        for option in (["-cwd"], ["-wd", workdir], ["-v", "A=1"], ["-V"]):
            proc = cell.run(prog, *option, *command, cwd=workdir)
            assert (proc.returncode, proc.stderr) == (1, f"error: Unknown option {option[0]}\n")
    # a command takes them
    proc = cell.run("qrsh", "-cwd", "-v", "A=1", "echo $A; pwd -P", cwd=workdir)
    assert proc.stdout == f"1\n{os.path.realpath(workdir)}\n"


# ---------------------------------------------------------------- a waiting qrsh

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_waiting_qrsh_says_its_request_was_canceled(cell, workdir, sig):
    _fill_slots(cell, workdir)
    proc = _qrsh(cell, workdir, "-now", "n", "-verbose", "exit", "5")
    jid = _qrsh_job(cell, "qw")
    # (qrsh waits once the daemon took its job in and it said so: qstat shows a request
    # before the daemon has answered it)
    said = _read_until(proc.stderr, b"to be scheduled ...")
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 1
    assert said + err == b"waiting for interactive job to be scheduled ...\nRequest for interactive job has been canceled.\n"
    wait_for(lambda: state_of(cell, jid) is None, 5)


def test_a_waiting_qrsh_whose_job_is_deleted_says_it_could_not_be_scheduled(cell, workdir):
    _fill_slots(cell, workdir)
    proc = _qrsh(cell, workdir, "-now", "n", "exit", "5")
    jid = _qrsh_job(cell, "qw")
    cell.run("qdel", str(jid), check=True)
    out, err = proc.communicate(timeout=10)
    assert (proc.returncode, out, err) == (1, b"", b'\n\nYour "qrsh" request could not be scheduled, try again later.\n')


# ---------------------------------------------------------------- what the job shows

def _category(cell, jid):
    shown = cell.run("qacct", "-j", str(jid)).stdout
    return re.search(r"^category\s+(.*)$", shown, re.M).group(1).strip()


def test_the_accounting_category_says_I_y_for_immediate_jobs(cell, workdir):
    user = pwd.getpwuid(os.getuid()).pw_name
    later = jid_of(cell.run("qrsh", "-now", "n", "-verbose", "true", cwd=workdir))
    at_once = jid_of(cell.run("qrsh", "-verbose", "true", cwd=workdir))
    batch_now = jid_of(cell.qsub("-now", "y", "-b", "y", "true", cwd=workdir))
    cell.wait_finished(batch_now)
    wait_for(lambda: all(_has_record(cell, jid) for jid in (later, at_once, batch_now)))
    assert _category(cell, later) == f"-u {user}"
    assert _category(cell, at_once) == f"-u {user} -I y"
    assert _category(cell, batch_now) == f"-u {user} -I y"


def _has_record(cell, jid):
    return any(row[5] == str(jid) for row in cell.accounting())


def test_qstat_j_shows_no_fifo_of_a_qrsh_job(cell, workdir):
    """Grid Engine's qrsh sets the output path lists to /dev/null and no input list."""
    proc = _qrsh(cell, workdir, "echo running; sleep 300")
    try:
        jid = _running(cell, proc)
        shown = cell.run("qstat", "-j", str(jid)).stdout
        assert "gtqrsh" not in shown, shown
        assert re.search(r"^stdout_path_list:\s+.*:/dev/null$", shown, re.M)
        assert re.search(r"^stderr_path_list:\s+.*:/dev/null$", shown, re.M)
        assert "stdin_path_list" not in shown
        xml = cell.run("qstat", "-j", str(jid), "-xml").stdout
        assert "gtqrsh" not in xml and "JB_stdin_path_list" not in xml
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=10)


def test_qrsh_command_holds_the_words_joined_by_byte_ff(cell, workdir):
    proc = cell.run("qrsh", "printenv", "QRSH_COMMAND", cwd=workdir, text=False)
    assert proc.stdout == b"printenv\xffQRSH_COMMAND\n"
    proc = cell.run("qrsh", "printenv QRSH_COMMAND", cwd=workdir, text=False)
    assert proc.stdout == b"printenv QRSH_COMMAND\n"


PE = """pe_name            tight
slots              999
user_lists         NONE
xuser_lists        NONE
start_proc_args    NONE
stop_proc_args     NONE
allocation_rule    $pe_slots
control_slaves     TRUE
job_is_first_task  TRUE
urgency_slots      min
accounting_summary FALSE
qsort_args         NONE
"""


def test_a_qrsh_inherit_task_gets_qrsh_command(cell, workdir):
    add_object(cell, "-Ap", PE)
    cell.run("qconf", "-aattr", "queue", "pe_list", "tight", "all.q", check=True)
    script = f'qrsh -inherit "$HOSTNAME" printenv QRSH_COMMAND > {workdir}/task\n'
    jid = jid_of(cell.qsub("-pe", "tight", "2", "-o", "/dev/null", "-j", "y", input=script, cwd=workdir))
    cell.wait_finished(jid, timeout=30)
    assert open(f"{workdir}/task", "rb").read() == b"printenv\xffQRSH_COMMAND\n"


def test_qrsh_inherit_errors_in_grid_engines_words(cell, workdir):
    env = {k: v for k, v in cell.env.items() if k not in ("JOB_ID", "SGE_TASK_ID", "PE_HOSTFILE")}

    def inherit(*args, **extra):
        proc = subprocess.run(["qrsh", "-inherit", *args], env=dict(env, **extra), cwd=workdir,
                              capture_output=True, text=True, timeout=30)
        return proc.returncode, proc.stderr
    assert inherit(cell.host, "true") == \
        (1, 'error: "qrsh" called with option "-inherit", but "JOB_ID" not set in environment\n')
    assert inherit(cell.host, "true", JOB_ID="abc") == (1, 'error: invalid "JOB_ID" abc\n')
    usage = 'error: usage with "-inherit" option: "qrsh -inherit ... <host> <command> [args]"\n'
    assert inherit(JOB_ID="5") == (1, usage)
    assert inherit(cell.host, JOB_ID="5") == (1, usage)


# ---------------------------------------------------------------- a qrsh killed outright

def _folders(workdir):
    return glob.glob(os.path.join(workdir, "gtqrsh-*"))


@pytest.mark.parametrize("who", [None, "user"])
def test_the_fifo_folder_of_a_killed_qrsh_goes_with_its_job(cell, workdir, users, who):
    user = users[0] if who else None
    proc = _qrsh(cell, workdir, "echo running; sleep 300", user=user)
    jid = _running(cell, proc)
    assert len(_folders(workdir)) == 1
    proc.kill()                         # SIGKILL: qrsh cannot remove its folder
    proc.wait(timeout=10)
    cell.wait_finished(jid, timeout=10)
    wait_for(lambda: not _folders(workdir), 5)


def test_the_fifo_folder_of_a_qrsh_killed_while_waiting_goes_too(cell, workdir):
    batch = _fill_slots(cell, workdir)
    proc = _qrsh(cell, workdir, "-now", "n", "exit", "5")
    jid = _qrsh_job(cell, "qw")
    proc.kill()
    proc.wait(timeout=10)
    cell.run("qdel", str(batch[0]), check=True)
    cell.wait_finished(jid, timeout=10)             # started, and given up at once
    wait_for(lambda: not _folders(workdir), 5)


def _gone_client():
    """The identity of a process that ended."""
    from gridtools.exec import client
    child = subprocess.Popen(["true"])
    child.wait()
    return dict(client.identity(), pid=child.pid)


def _plan(folder, gone_client):
    return {"uid": os.getuid(), "gid": os.getgid(), "owner": pwd.getpwuid(os.getuid()).pw_name,
            "interactive": {"client": gone_client},
            **{name: os.path.join(folder, name) for name in ("stdin", "stdout", "stderr")}}


def test_only_a_folder_of_fifos_is_removed_and_no_link_is_followed(tmp_path):
    from gridtools.exec import client
    gone = _gone_client()
    good = tmp_path / "gtqrsh-good"
    good.mkdir(mode=0o700)
    for name in ("stdin", "stdout", "stderr"):
        os.mkfifo(good / name, 0o600)
    assert client.remove_folder(_plan(str(good), gone)) and not good.exists()
    # something else inside: kept
    mixed = tmp_path / "gtqrsh-mixed"
    mixed.mkdir()
    os.mkfifo(mixed / "stdout")
    (mixed / "stderr").write_text("a file\n")
    assert not client.remove_folder(_plan(str(mixed), gone))
    assert sorted(os.listdir(mixed)) == ["stderr", "stdout"]
    # a link in the folder's place: not followed
    target = tmp_path / "target"
    target.mkdir()
    os.mkfifo(target / "stdout")
    os.symlink(target, tmp_path / "gtqrsh-link")
    assert not client.remove_folder(_plan(str(tmp_path / "gtqrsh-link"), gone))
    assert os.listdir(target) == ["stdout"]
    # a folder not named as qrsh names it, or a client still there: kept
    other = tmp_path / "other"
    other.mkdir()
    os.mkfifo(other / "stdout")
    assert not client.remove_folder(_plan(str(other), gone))
    assert not client.remove_folder(_plan(str(mixed), client.identity()))

"""qrsh and immediate jobs: streams attached, exit status returned, -now semantics."""

import fcntl
import os
import re
import select
import signal
import subprocess
import termios
import time

import pytest
from conftest import wait_for
from qtools import jid_of, set_global, state_of


def test_qrsh_runs_command_and_returns_its_output(cell, workdir):
    proc = cell.run("qrsh", "echo", "hello", "from", "qrsh", cwd=workdir)
    assert proc.returncode == 0
    assert proc.stdout == "hello from qrsh\n"


def test_qrsh_attaches_stdin_stdout_stderr_and_exit_status(cell, workdir):
    proc = cell.run("qrsh", "sh", "-c", "'cat; echo oops >&2; exit 5'", input="line1\nline2\n", cwd=workdir)
    assert proc.returncode == 5
    assert proc.stdout == "line1\nline2\n"
    assert proc.stderr == "oops\n"


def test_qrsh_large_input(cell, workdir):
    data = "".join(f"{i}\n" for i in range(100000))
    proc = cell.run("qrsh", "wc", "-l", input=data, cwd=workdir)
    assert proc.stdout.strip() == "100000"


def test_qrsh_environment(cell, workdir):
    proc = cell.run("qrsh", "env", cwd=workdir)
    env = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    assert env["JOB_SCRIPT"] == "QRSH" and env["QRSH_COMMAND"] == "env"
    assert env["JOB_NAME"] == "env" and env["NSLOTS"] == "1"
    # its streams are qrsh's: the paths say /dev/null, as in the capture
    assert [env[f"SGE_{s}_PATH"] for s in ("STDIN", "STDOUT", "STDERR")] == ["/dev/null"] * 3
    # the caller's terminal type (capture qrsh-b-n-env: TERM=xterm); -v still wins
    shown = cell.run("qrsh", "echo $TERM", cwd=workdir, env={"TERM": "vt100"}).stdout
    assert shown == "vt100\n"
    assert cell.run("qrsh", "-v", "TERM=dumb", "echo $TERM", cwd=workdir, env={"TERM": "vt100"}).stdout == "dumb\n"


def test_qrsh_own_options_noshell_nostdin_pty_and_verbose(cell, workdir):
    """Grid Engine's qrsh options outside -inherit: -noshell runs the command itself
    (found on the PATH, no shell expands its words; one that cannot be started is said
    as qrsh_starter says it, exit 1), -nostdin gives it no input, -pty y|n is taken,
    -verbose says what qrsh waits for."""
    assert cell.run("qrsh", "echo", "$HOME", "a;", cwd=workdir).stdout.startswith("/")
    proc = cell.run("qrsh", "-noshell", "echo", "$HOME", "a;", cwd=workdir)
    assert (proc.returncode, proc.stdout) == (0, "$HOME a;\n")
    proc = cell.run("qrsh", "-noshell", "no-such-command-here", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "qrsh_starter: executing child process no-such-command-here "
                                                 "failed: No such file or directory\n")
    proc = cell.run("qrsh", "-nostdin", "cat", input="never read\n", cwd=workdir)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert cell.run("qrsh", "-pty", "y", "echo", "ok", cwd=workdir).stdout == "ok\n"
    proc = cell.run("qrsh", "-pty", "maybe", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (2, 'qrsh: invalid option argument "-pty maybe"\n')
    proc = cell.run("qrsh", "-verbose", "true", cwd=workdir)
    jid = int(re.fullmatch(r'Your job (\d+) \("true"\) has been submitted\n', proc.stdout).group(1))
    assert proc.stderr == (f"waiting for interactive job to be scheduled ...\n"
                           f"Your interactive job {jid} has been successfully scheduled.\n"
                           f"Establishing builtin session to host {cell.host} ...\n")
    shown = cell.run("qrsh", "-help").stdout
    for line in ("[-inherit]", "[-noshell]", "[-nostdin]", "[-pty y[es]|n[o]]", "[-verbose]"):
        assert line in shown
    proc = cell.run("qsub", "-noshell", "-b", "y", "true", cwd=workdir)      # qrsh's own
    assert (proc.returncode, proc.stderr) == (5, "qsub: Unknown option -noshell\n\n")


def test_qrsh_w_v_and_w_p_only_verify_and_w_e_refuses(cell, workdir):
    """As Grid Engine's qrsh: -w v and -w p say whether a queue would take the job and run
    nothing; -w e refuses a job no queue takes; a queue that is not INTERACTIVE takes no
    qrsh job."""
    ran = os.path.join(workdir, "ran")
    for mode in ("v", "p"):
        proc = cell.run("qrsh", "-w", mode, f"touch {ran}", cwd=workdir)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "verification: found suitable queue(s)\n", "")
    proc = cell.run("qrsh", "-w", "e", "-l", "arch=sol-sparc64", f"touch {ran}", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "Unable to run job: error: no suitable queues\nExiting.\n")
    assert not os.path.exists(ran) and cell.accounting() == []
    cell.run("qconf", "-mattr", "queue", "qtype", "BATCH", "all.q", check=True)
    proc = cell.run("qrsh", "-w", "v", "true", cwd=workdir)
    assert proc.returncode == 1 and proc.stderr.endswith(
        'cannot run in queue "all.q@testhost" because it is not of type interactive\n'
        "verification: no suitable queues\nExiting.\n")


def test_qsub_shell_n_finds_the_command_on_the_path(cell, workdir):
    """-b y -shell n: no shell, the command found on the job's PATH (Grid Engine's
    shepherd executes it with execvp)."""
    out = os.path.join(workdir, "out")
    proc = cell.qsub("-sync", "y", "-b", "y", "-shell", "n", "-j", "y", "-o", out, "echo", "$HOME", cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    assert open(out).read() == "$HOME\n"


def test_qrsh_job_is_named_after_the_first_word_of_its_command(cell, workdir):
    """As Grid Engine names it (qrsh-b-n-env.txt): never with a blank, which would shift
    the columns of qstat that clients split."""
    proc = cell.run("qrsh", "env | sort", cwd=workdir)
    env = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    assert (env["JOB_NAME"], env["REQUEST"]) == ("env", "env")
    for command, name in ((["echo a; exit 4"], "echo"), (["/bin/sh", "-c", "exit 0"], "sh"),
                          (["-N", "mine", "true"], "mine")):
        cell.run("qrsh", *command, cwd=workdir)
        assert cell.accounting()[-1][4] == name


def test_qrsh_immediate_refused_when_full_and_waits_with_now_n(cell, workdir):
    release = os.path.join(workdir, "release")
    for _ in range(2):                   # both slots taken until the test releases them
        cell.qsub("-b", "y", "sh", "-c", f"'while [ ! -e {release} ]; do sleep 0.1; done'", cwd=workdir)
    wait_for(lambda: cell.run("qstat").stdout.count(" r ") == 2)
    proc = cell.run("qrsh", "hostname", cwd=workdir)
    assert proc.returncode == 1
    assert proc.stderr == 'Your "qrsh" request could not be scheduled, try again later.\n'
    waiting = subprocess.Popen(["qrsh", "-now", "n", "echo waited"], cwd=workdir, env=cell.env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    jid = wait_for(lambda: next((int(line.split()[0]) for line in cell.run("qstat").stdout.splitlines()[2:]
                                 if line.split()[4:5] == ["qw"]), None))         # (the only one waiting)
    # (a pass has looked at it: it gave a reason; bytes: Grid Engine joins the arguments of
    # QRSH_COMMAND in env_list with 0xff)
    wait_for(lambda: b"\nscheduling info:" in cell.run("qstat", "-j", str(jid), text=False).stdout)
    assert waiting.poll() is None        # still waiting for a slot, not refused
    open(release, "w").close()
    out, _err = waiting.communicate(timeout=60)
    assert waiting.returncode == 0 and out == "waited\n"


def test_qrsh_needs_an_interactive_queue(cell, workdir):
    queue = f"{cell.root}/etc/queues/all.q"
    text = open(queue).read().replace("BATCH INTERACTIVE", "BATCH")
    open(queue, "w").write(text)
    time.sleep(0.1)
    proc = cell.run("qrsh", "hostname", cwd=workdir)
    assert proc.returncode == 1


def test_qsub_now_y(cell, workdir):
    proc = cell.qsub("-now", "y", "-b", "y", "true", cwd=workdir)
    assert proc.returncode == 0
    jid = re.search(r"(\d+)", proc.stdout).group(1)
    assert proc.stderr == ("Waiting for immediate job to be scheduled.\n\n"
                           f"Your immediate job {jid} has been successfully scheduled.\n")


# ---------------------------------------------------------------- a qrsh that goes away

def _fill_slots(cell, workdir):
    """Both slots taken by batch jobs; their ids."""
    ids = [jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir)) for _ in range(2)]
    wait_for(lambda: all(state_of(cell, jid) == "r" for jid in ids))
    return ids


#: the signals by which qrsh is told to go
ENDING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


def _qrsh(cell, workdir, *args, setup=None, **streams):
    """Start qrsh, its job named qrshjob, with the default action for the ENDING signals
    (a test run in the background or under nohup would hand it some of them ignored,
    and qrsh keeps them ignored), its FIFOs in ``workdir`` (what a qrsh killed leaves
    goes with it); ``setup`` runs in the child before it executes qrsh."""
    def prepare():
        for sig in ENDING:
            signal.signal(sig, signal.SIG_DFL)
        if setup is not None:
            setup()
    streams = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE,
               **streams}
    env = dict(cell.env, TMPDIR=workdir)
    return subprocess.Popen(["qrsh", "-N", "qrshjob", *args], cwd=workdir, env=env, preexec_fn=prepare,
                            **streams)


def _qrsh_job(cell, state):
    """The id of the qrsh job (named qrshjob) once qstat shows it in ``state``."""
    def found():
        for line in cell.run("qstat").stdout.splitlines()[2:]:
            fields = line.split()
            if fields[2:3] == ["qrshjob"] and fields[4] == state:
                return int(fields[0])
        return None
    return wait_for(found)


def _gone_soon(cell, jid, timeout=20):
    wait_for(lambda: state_of(cell, jid) is None, timeout)


#: a qrsh command that says when it runs (qstat shows r from the dispatch on, before the
#: job's process has taken its streams from qrsh)
SAYS_IT_RUNS = "echo running; sleep 300"


def _running(cell, proc):
    """The id of the qrsh job (running SAYS_IT_RUNS) once its command runs."""
    ready, _, _ = select.select([proc.stdout], [], [], 15)
    assert ready and proc.stdout.readline() == b"running\n"
    return _qrsh_job(cell, "r")


def test_plain_qdel_ends_a_job_waiting_for_its_qrsh(cell, workdir):
    batch = _fill_slots(cell, workdir)
    proc = _qrsh(cell, workdir, "-now", "n", "exit", "5")
    jid = _qrsh_job(cell, "qw")
    proc.send_signal(signal.SIGSTOP)    # alive but silent: its job's process waits for it
    try:
        cell.run("qdel", str(batch[0]), check=True)
        wait_for(lambda: state_of(cell, jid) == "r")
        time.sleep(0.5)
        assert state_of(cell, jid) == "r"
        cell.run("qdel", str(jid), check=True)
        _gone_soon(cell, jid, timeout=10)
        rec = [row for row in cell.accounting() if row[5] == str(jid)][0]
        assert rec[11] == "100"
    finally:
        proc.send_signal(signal.SIGCONT)
    proc.wait(timeout=10)


def test_a_job_whose_qrsh_vanished_ends_and_frees_its_slot(cell, workdir):
    batch = _fill_slots(cell, workdir)
    proc = _qrsh(cell, workdir, "-now", "n", "exit", "5")
    jid = _qrsh_job(cell, "qw")
    proc.kill()                         # SIGKILL: qrsh cannot delete its job
    proc.wait(timeout=10)
    cell.run("qdel", str(batch[0]), check=True)
    cell.wait_finished(jid, timeout=10)             # started, and given up at once
    rec = [row for row in cell.accounting() if row[5] == str(jid)][0]
    assert rec[11] == "11" and rec[12] == "1"        # failed "before job"
    said = rf"\|W\|job {jid}\.1 failed on host testhost general before job because: " \
           rf"the qrsh client \(pid {proc.pid}\) went away\n"
    # (the daemon writes its messages with the pass's other files, after the accounting record)
    assert wait_for(lambda: re.search(said, open(os.path.join(cell.root, "spool", "messages")).read()))
    after = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))    # the slot is free again
    cell.wait_finished(after, timeout=10)


def test_a_running_job_whose_qrsh_vanished_is_ended(cell, workdir):
    proc = _qrsh(cell, workdir, SAYS_IT_RUNS)
    jid = _running(cell, proc)
    proc.kill()                         # nobody reads its output any more
    proc.wait(timeout=10)
    cell.wait_finished(jid, timeout=10)
    rec = [row for row in cell.accounting() if row[5] == str(jid)][0]
    assert rec[11] == "100" and rec[12] == "137"


def test_a_job_whose_qrsh_does_not_connect_is_given_up_after_the_handshake_timeout(cell, workdir):
    set_global(cell, execd_params="QRSH_HANDSHAKE_TIMEOUT=1")        # (in effect when qconf returns)
    batch = _fill_slots(cell, workdir)
    proc = _qrsh(cell, workdir, "-now", "n", "exit", "5")
    jid = _qrsh_job(cell, "qw")
    proc.send_signal(signal.SIGSTOP)
    try:
        cell.run("qdel", str(batch[0]), check=True)
        wait_for(lambda: state_of(cell, jid) == "r")
        # given up well before the default timeout (60 s); a loaded machine may take some
        # seconds more than the 1 s to start the job and to end it
        cell.wait_finished(jid, timeout=30)
    finally:
        proc.send_signal(signal.SIGCONT)
    assert proc.wait(timeout=10) == 1
    # (the daemon writes its messages with the pass's other files, after the job's state)
    said = f"job {jid}.1 failed on host testhost general before job because: the qrsh client did not " \
           "take the job's input and output within 1 s\n"
    assert wait_for(lambda: said in open(os.path.join(cell.root, "spool", "messages")).read())


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGQUIT])   # (SIGINT, SIGTERM: test_qrsh_conformance2)
def test_qrsh_ended_by_a_signal_while_waiting_deletes_its_job(cell, workdir, sig):
    batch = _fill_slots(cell, workdir)
    proc = _qrsh(cell, workdir, "-now", "n", "exit", "5")
    jid = _qrsh_job(cell, "qw")
    proc.send_signal(sig)
    assert proc.wait(timeout=10) == 128 + sig
    _gone_soon(cell, jid)
    cell.run("qdel", str(batch[0]), check=True)      # a slot frees up: nothing is left to take it
    probe = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    cell.wait_finished(probe)
    assert state_of(cell, jid) is None
    assert not any(row[5] == str(jid) for row in cell.accounting())     # it never ran


def test_qrsh_ended_by_a_signal_while_its_job_runs_deletes_it(cell, workdir):
    proc = _qrsh(cell, workdir, SAYS_IT_RUNS)
    jid = _running(cell, proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=10) == 143
    _gone_soon(cell, jid)
    rec = wait_for(lambda: [row for row in cell.accounting() if row[5] == str(jid)])[0]
    assert rec[11] == "100" and rec[12] == "137"          # failed: killed; exit status 128 + 9


def test_qrsh_whose_terminal_hangs_up_deletes_its_job(cell, workdir):
    master, slave = os.openpty()

    def own_terminal():                 # a session whose controlling terminal is the pty
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    proc = _qrsh(cell, workdir, "sleep", "300", stdin=slave, stdout=slave, stderr=slave,
                 setup=own_terminal)
    os.close(slave)
    jid = _qrsh_job(cell, "r")
    os.close(master)                    # the terminal goes away: SIGHUP
    assert proc.wait(timeout=10) == 129
    _gone_soon(cell, jid)


def test_a_hangup_while_qrsh_reads_its_jobs_state_ends_qrsh(tmp_path, monkeypatch):
    """The signal may land while qrsh reads its job's state, whose failures qrsh rides out
    (a state file being replaced): the hangup must end qrsh all the same, or a qrsh whose
    terminal went away would wait on for its job."""
    import sys
    from gridtools.cli.sge import qrsh
    from gridtools.spool import jobs as jobstore
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    target = jobstore.read_state.__code__

    def hang_up_inside(frame, event, _arg):
        if event == "call" and frame.f_code is target:
            os.kill(os.getpid(), signal.SIGHUP)         # handled inside the real read
    before = {sig: signal.getsignal(sig) for sig in qrsh.ENDING}
    try:
        qrsh._catch_signals()
        sys.setprofile(hang_up_inside)
        with pytest.raises(qrsh.Ended) as ended:
            qrsh._task(7)
    finally:
        sys.setprofile(None)
        for sig, handler in before.items():
            signal.signal(sig, handler)
    assert ended.value.status == 129


# ---------------------------------------------------------------- qrsh -b n: a script

def _script(workdir, name, text, mode=0o644):
    path = os.path.join(workdir, name)
    with open(path, "w") as fh:
        fh.write(text)
    os.chmod(path, mode)
    return path


def test_qrsh_b_n_runs_a_script_with_its_directives_and_arguments(cell, workdir):
    """submit(1): with -b n the command is a script, read on the submit host, sent with
    the job and searched for directives; it need not be executable."""
    _script(workdir, "job.sh", '#!/bin/sh\n#$ -N fromscript\n#$ -v GREETING=hi\n'
            'echo "$JOB_NAME $GREETING $# [$1] [$2]"\nexit 3\n')
    proc = cell.run("qrsh", "-b", "n", "job.sh", "one", "two words", cwd=workdir)
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, "fromscript hi 2 [one] [two words]\n", "")
    # the command line wins over a directive
    proc = cell.run("qrsh", "-N", "mine", "-b", "n", "job.sh", cwd=workdir)
    assert proc.stdout == "mine hi 0 [] []\n"
    # the job runs the copy sent with it: the script may change or go once submitted
    proc = cell.run("qrsh", "-b", "n", "./job.sh", "x", cwd=workdir)
    assert proc.stdout.startswith("fromscript hi 1 [x]")


def test_qrsh_b_n_without_directives_is_named_after_the_script(cell, workdir):
    _script(workdir, "plain.sh", 'echo "$JOB_NAME"\ncat\n')
    proc = cell.run("qrsh", "-b", "n", "plain.sh", input="typed\n", cwd=workdir)
    assert (proc.returncode, proc.stdout) == (0, "plain.sh\ntyped\n")


def test_qrsh_b_y_and_default_do_not_read_the_command(cell, workdir):
    """qrsh applies -b y when nothing else is said: a command is run as it is, its
    directives are no options, and a script that is not executable cannot be run."""
    script = _script(workdir, "job.sh", '#!/bin/sh\n#$ -N fromscript\necho "$JOB_NAME"\n', mode=0o755)
    assert cell.run("qrsh", script, cwd=workdir).stdout == "job.sh\n"
    assert cell.run("qrsh", "-b", "y", script, cwd=workdir).stdout == "job.sh\n"
    script = _script(workdir, "noexec.sh", 'echo ran\n')
    assert cell.run("qrsh", script, cwd=workdir).returncode == 126
    assert cell.run("qrsh", "-b", "n", script, cwd=workdir).stdout == "ran\n"


def test_qrsh_b_n_with_a_script_it_cannot_read(cell, workdir):
    proc = cell.run("qrsh", "-b", "n", "missing.sh", cwd=workdir)
    assert proc.returncode == 14
    assert "Unable to read script file because of error: error opening missing.sh: " \
           "No such file or directory" in proc.stderr
    assert cell.run("qstat").stdout == ""


def test_without_a_command_qrsh_and_qlogin_run_an_interactive_shell(cell, workdir):
    """As Grid Engine: qrsh without a command is a login (job QRLOGIN), quietly; qlogin is
    one too (job QLOGIN), told as qrsh -verbose tells it; the shell reads qrsh's input,
    and its exit status is theirs. qlogin takes no command."""
    script = 'echo "name=$JOB_NAME"; exit 3\n'
    proc = cell.run("qrsh", input=script, cwd=workdir)
    assert (proc.returncode, proc.stdout.splitlines()[-1:]) == (3, ["name=QRLOGIN"])
    assert "waiting for interactive job" not in proc.stderr
    proc = cell.run("qlogin", input=script, cwd=workdir)
    assert proc.returncode == 3 and "name=QLOGIN" in proc.stdout.splitlines()
    jid = int(re.match(r'Your job (\d+) \("QLOGIN"\) has been submitted\n', proc.stdout).group(1))
    assert proc.stderr.startswith(f"waiting for interactive job to be scheduled ...\n"
                                  f"Your interactive job {jid} has been successfully scheduled.\n"
                                  f"Establishing builtin session to host {cell.host} ...\n")
    proc = cell.run("qlogin", "-N", "named", input="echo $JOB_NAME\n", cwd=workdir)
    assert proc.returncode == 0 and "named" in proc.stdout.splitlines()
    proc = cell.run("qlogin", "hostname", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (2, 'qlogin: invalid option argument "hostname"\n')
    assert cell.run("qlogin", "-help").stdout.splitlines()[1] == "usage: qlogin [options]"


def test_qrsh_says_why_its_job_could_not_start(cell, workdir):
    proc = cell.run("qrsh", "-wd", "/nonexistent.gt", "true", cwd=workdir)
    assert proc.returncode == 1
    assert proc.stderr == "Could not start interactive job: can't chdir to /nonexistent.gt: No such file or directory\n"
    assert proc.stdout == ""

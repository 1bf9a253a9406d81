"""The queue attributes that shape how a job runs: tmpdir, shell, shell_start_mode,
prolog/epilog, starter/suspend/resume/terminate methods, notify, priority, limits,
min_cpu_interval."""

import os
import time

import psutil
import pytest

from conftest import wait_for
from qtools import add_object, jid_of, job_pid, running, set_attr, stopped, wait_state


def script(workdir, name, body, mode=0o755):
    path = os.path.join(workdir, name)
    with open(path, "w") as fh:
        fh.write(body)
    os.chmod(path, mode)
    return path


def output(cell, workdir, jid, name="job.out"):
    cell.wait_finished(jid)
    with open(os.path.join(workdir, name)) as fh:
        return fh.read()


def read(path):
    try:
        with open(path) as fh:
            return fh.read()
    except FileNotFoundError:
        return ""


def submit(cell, workdir, *args, user=None):
    return jid_of(cell.qsub("-cwd", "-o", "job.out", "-j", "y", *args, cwd=workdir, user=user))


def test_tmpdir(cell, workdir):
    base = os.path.join(workdir, "scratch")
    os.mkdir(base)
    os.chmod(base, 0o777)
    set_attr(cell, "all.q", "tmpdir", base)
    jid = submit(cell, workdir, "-b", "y", "sh", "-c", "'echo $TMPDIR; test -d $TMPDIR && echo there'")
    lines = output(cell, workdir, jid).split()
    from gridtools.exec.tmpdir import cell_folder_name
    assert lines == [os.path.join(base, cell_folder_name(cell.root), f"{jid}.1.all.q"), "there"]
    assert not os.path.exists(lines[0])


def fresh_output(cell, workdir, *args):
    """Run a job and return its joined output, starting from an empty output file."""
    path = os.path.join(workdir, "job.out")
    if os.path.exists(path):
        os.unlink(path)
    return output(cell, workdir, submit(cell, workdir, *args))


def test_shell_and_shell_start_mode(cell, workdir):
    if not os.path.exists("/bin/dash") or not os.path.exists("/bin/bash"):
        pytest.skip("needs /bin/dash and /bin/bash")
    plain = script(workdir, "plain.sh", 'echo "bash=${BASH_VERSION:+yes}"\n')
    bang = script(workdir, "bang.sh", '#!/bin/bash\necho "bash=${BASH_VERSION:+yes}"\n')
    set_attr(cell, "all.q", "shell_start_mode", "posix_compliant")
    set_attr(cell, "all.q", "shell", "/bin/bash")
    assert fresh_output(cell, workdir, plain) == "bash=yes\n"
    set_attr(cell, "all.q", "shell", "/bin/dash")
    assert fresh_output(cell, workdir, bang) == "bash=\n"        # posix_compliant: the queue's shell
    set_attr(cell, "all.q", "shell_start_mode", "unix_behavior")
    assert fresh_output(cell, workdir, bang) == "bash=yes\n"     # unix_behavior: the #! line
    assert fresh_output(cell, workdir, plain) == "bash=\n"
    # -S does not override a #! line under unix_behavior (Grid Engine execs the script);
    # it runs a script without one, and it is the job's SHELL either way
    assert fresh_output(cell, workdir, "-S", "/bin/dash", bang) == "bash=yes\n"
    assert fresh_output(cell, workdir, "-S", "/bin/bash", plain) == "bash=yes\n"
    shell = script(workdir, "shell.sh", '#!/bin/sh\necho "SHELL=$SHELL"\n')
    assert fresh_output(cell, workdir, shell) == "SHELL=/bin/dash\n"
    assert fresh_output(cell, workdir, "-S", "/bin/bash", shell) == "SHELL=/bin/bash\n"
    set_attr(cell, "all.q", "shell_start_mode", "script_from_stdin")
    stdin = script(workdir, "stdin.sh", 'echo "$0 from stdin"\n')
    assert fresh_output(cell, workdir, stdin) == "dash from stdin\n"


def test_prolog_and_epilog_run_as_owner_or_named_user(cell, users, workdir):
    log = os.path.join(workdir, "procedures.log")
    proc = script(workdir, "proc.sh", f'#!/bin/sh\necho "$1 $(id -un) $JOB_ID" >> {log}\n')
    set_attr(cell, "all.q", "prolog", f"{proc} prolog")
    set_attr(cell, "all.q", "epilog", f"root@{proc} epilog")
    jid = submit(cell, workdir, "-b", "y", "true", user="gtbob")
    cell.wait_finished(jid)
    assert read(log).splitlines() == [f"prolog gtbob {jid}", f"epilog root {jid}"]


def test_starter_method(cell, workdir):
    log = os.path.join(workdir, "starter.log")
    starter = script(workdir, "starter.sh",
                     f'#!/bin/sh\necho "$SGE_STARTER_SHELL_PATH $*" > {log}\nexec "$@"\n')
    set_attr(cell, "all.q", "starter_method", starter)
    jid = submit(cell, workdir, "-b", "y", "echo", "hello")
    assert output(cell, workdir, jid) == "hello\n"
    assert read(log) == "/bin/sh /bin/sh -c echo hello\n"


def test_suspend_resume_and_terminate_methods(cell, workdir):
    log = os.path.join(workdir, "methods.log")
    method = script(workdir, "method.sh", f'#!/bin/sh\necho "$1 $2" >> {log}\n'
                    'test "$1" = terminate && kill -9 "$2"\nexit 0\n')
    set_attr(cell, "all.q", "suspend_method", f"{method} suspend $job_pid")
    set_attr(cell, "all.q", "resume_method", f"{method} resume $job_pid")
    set_attr(cell, "all.q", "terminate_method", f"{method} terminate $job_pid")
    jid = submit(cell, workdir, "-b", "y", "sleep", "300")
    wait_state(cell, jid, "r")
    pid = job_pid(cell, jid)
    cell.run("qmod", "-sj", str(jid), check=True)
    wait_for(lambda: read(log) == f"suspend {pid}\n")
    # the shepherd (the job's parent) ran the method as a child and has reaped it: its
    # suspend is over, and a SIGSTOP after the method would have been sent by now
    shepherd = psutil.Process(psutil.Process(pid).ppid())
    wait_for(lambda: [child.pid for child in shepherd.children()] == [pid])
    assert running(pid)                                 # the method replaced SIGSTOP
    cell.run("qmod", "-usj", str(jid), check=True)
    wait_for(lambda: read(log).endswith(f"resume {pid}\n"))
    cell.run("qdel", str(jid), check=True)
    cell.wait_finished(jid)
    assert read(log).splitlines()[-1] == f"terminate {pid}"


def test_notify_warns_before_suspending_and_killing(cell, workdir):
    log = os.path.join(workdir, "signals.log")
    job = script(workdir, "notified.sh", f"#!/bin/sh\ntrap 'echo usr1 >> {log}' USR1\n"
                 f"trap 'echo usr2 >> {log}' USR2\nwhile true; do sleep 0.1; done\n")
    set_attr(cell, "all.q", "notify", "0:0:2")
    jid = submit(cell, workdir, "-notify", job)
    wait_state(cell, jid, "r")
    pid = job_pid(cell, jid)
    asked = time.time()
    cell.run("qmod", "-sj", str(jid), check=True)
    wait_for(lambda: read(log) == "usr1\n")
    assert running(pid)
    wait_for(lambda: stopped(pid))
    assert time.time() - asked >= 1.9
    cell.run("qmod", "-usj", str(jid), check=True)
    wait_for(lambda: running(pid))
    asked = time.time()
    cell.run("qdel", str(jid), check=True)
    wait_for(lambda: read(log) == "usr1\nusr2\n")
    cell.wait_finished(jid)
    assert time.time() - asked >= 1.9


def test_priority_is_the_jobs_nice_value(cell, workdir):
    set_attr(cell, "all.q", "priority", "7")
    assert output(cell, workdir, submit(cell, workdir, "-b", "y", "nice")) == "7\n"


def test_limits(cell, workdir):
    set_attr(cell, "all.q", "h_vmem", "500M")
    set_attr(cell, "all.q", "s_vmem", "400M")
    set_attr(cell, "all.q", "h_cpu", "0:1:0")
    jid = submit(cell, workdir, "-b", "y", "sh", "-c", "'ulimit -H -v; ulimit -S -v; ulimit -t'")
    assert output(cell, workdir, jid).split() == ["512000", "409600", "60"]
    log = os.path.join(workdir, "soft.log")
    soft = script(workdir, "soft.sh", f"#!/bin/sh\ntrap 'echo usr1 >> {log}; exit 3' USR1\n"
                  "while true; do sleep 0.1; done\n")
    set_attr(cell, "all.q", "s_rt", "0:0:1")
    jid = submit(cell, workdir, soft)
    cell.wait_finished(jid, timeout=15)
    assert read(log) == "usr1\n"
    assert cell.job_state(jid)["tasks"]["1"]["exit_status"] == 3
    set_attr(cell, "all.q", "s_rt", "INFINITY")
    set_attr(cell, "all.q", "h_rt", "0:0:2")
    began = time.time()
    jid = submit(cell, workdir, "-b", "y", "sleep", "60")
    cell.wait_finished(jid, timeout=15)
    assert time.time() - began < 10
    assert cell.job_state(jid)["tasks"]["1"]["exit_status"] == 137


def test_min_cpu_interval_checkpoints_periodically(cell, workdir):
    log = os.path.join(workdir, "checkpoints.log")
    add_object(cell, "-Ackpt", "ckpt_name periodic\ninterface hibernator\n"
               f"ckpt_command /bin/sh -c 'echo $job_pid >> {log}'\nmigr_command none\n"
               "restart_command none\nclean_command none\nckpt_dir /tmp\nsignal none\nwhen m\n")
    set_attr(cell, "all.q", "ckpt_list", "periodic")
    set_attr(cell, "all.q", "min_cpu_interval", "0:0:1")
    jid = submit(cell, workdir, "-ckpt", "periodic", "-b", "y", "sleep", "300")
    wait_state(cell, jid, "r")
    pid = job_pid(cell, jid)
    wait_for(lambda: read(log).split()[:3] == [str(pid)] * 3)


def test_the_job_spool_folder_keeps_pid_trace_and_error(cell, users, workdir):
    """As Grid Engine's execd keeps them beside a job (captures execd-active_job-pid.txt,
    -trace.txt, -error.txt): the shepherd's pid, its steps as ``MM/DD/YYYY HH:MM:SS
    [euid:pid]: text`` lines, and an error file, empty while all goes well and holding
    the reason when the job could not be started; all readable by the owner alone."""
    import pwd
    import re
    import stat as st
    job = script(workdir, "spool.sh", "#!/bin/sh\n"
                 'echo "ppid $PPID pid $(cat "$SGE_JOB_SPOOL_DIR/pid")"\n'
                 'stat -c "%n %U %a %s" "$SGE_JOB_SPOOL_DIR/pid" "$SGE_JOB_SPOOL_DIR/trace" '
                 '"$SGE_JOB_SPOOL_DIR/error"\n'
                 'cat "$SGE_JOB_SPOOL_DIR/trace"\n')
    lines = output(cell, workdir, submit(cell, workdir, job, user="gtbob")).splitlines()
    ppid, pid = lines[0].split()[1], lines[0].split()[3]
    assert ppid == pid                              # the job's parent: its shepherd
    files = {os.path.basename(ln.split()[0]): ln.split()[1:] for ln in lines[1:4]}
    assert files["pid"] == ["gtbob", "600", str(len(pid) + 1)]
    assert files["error"] == ["gtbob", "600", "0"]
    assert files["trace"][:2] == ["gtbob", "600"]
    trace = lines[4:]
    assert trace and all(re.fullmatch(rf"\d\d/\d\d/\d{{4}} \d\d:\d\d:\d\d \[\d+:{pid}\]: \S.*", t)
                         for t in trace), trace
    bad = submit(cell, workdir, "-wd", "/nonexistent", "-b", "y", "true", user="gtbob")
    wait_state(cell, bad, "Eqw")
    error = os.path.join(cell.root, "spool", "jobs", str(bad), "1", "error")
    with open(error) as fh:
        assert fh.read() == "can't chdir to /nonexistent: No such file or directory\n"
    info = os.stat(error)
    assert st.S_IMODE(info.st_mode) == 0o600 and info.st_uid == pwd.getpwnam("gtbob").pw_uid


def test_the_job_spool_folder_keeps_environment_and_exit_status(cell, users, workdir):
    """As Grid Engine's execd keeps them in active_jobs/<job>.<task>/ (captures
    execd-active_job-environment.txt, -exit_status.txt): the job's environment, which an
    owner's epilog reads, and the job's exit status, both readable by the owner alone."""
    log = os.path.join(workdir, "epilog.log")
    proc = script(workdir, "epi.sh", "#!/bin/sh\n"
                  f'grep "^JOB_ID=" "$SGE_JOB_SPOOL_DIR/environment" >> {log}\n'
                  f'echo "status $(cat "$SGE_JOB_SPOOL_DIR/exit_status")" >> {log}\n'
                  f'stat -c "%U %a" "$SGE_JOB_SPOOL_DIR/environment" >> {log}\n')
    set_attr(cell, "all.q", "epilog", proc)
    jid = submit(cell, workdir, "-b", "y", "-v", "SECRET=x", "sh", "-c", "'exit 3'", user="gtbob")
    cell.wait_finished(jid)
    assert read(log).splitlines() == [f"JOB_ID={jid}", "status 3", "gtbob 600"]

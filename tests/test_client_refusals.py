"""What the job commands answer for what Grid Engine refuses or takes on their command
lines: a job named with -u that is none of those users' (qdel, qhold, qrls), the
options qrsh -inherit does not take, and qrsh's -display."""

import os

from qtools import jid_of, state_of


def held_job(cell, workdir, name="mine"):
    return jid_of(cell.qsub("-h", "-N", name, "-b", "y", "true", cwd=workdir))


def test_qdel_u_answers_each_job_that_is_none_of_the_users(cell, workdir):
    jid = held_job(cell, workdir)
    proc = cell.run("qdel", "-u", "nosuchuser", str(jid))
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, f"The job {jid} of user(s) nosuchuser does not exist\n", "")
    assert state_of(cell, jid) == "hqw"
    proc = cell.run("qdel", "-u", "nosuchuser,other", "999999", "mine")
    assert (proc.returncode, proc.stderr) == (1, "")
    assert proc.stdout.splitlines() == [
        "The job 999999 of user(s) nosuchuser,other does not exist",
        "The job mine of user(s) nosuchuser,other does not exist"]
    assert state_of(cell, jid) == "hqw"
    # with "*" (every user) a job id that names no job is answered so
    proc = cell.run("qdel", "-u", "*", "999999")
    assert (proc.returncode, proc.stdout) == (1, "There are no jobs registered\n")
    # the users' jobs among those named are deleted, the others answered after them
    other = held_job(cell, workdir, "other")
    proc = cell.run("qdel", "-u", "root", str(jid), "999999")
    assert proc.returncode == 1
    assert proc.stdout.splitlines() == [f"root has deleted job {jid}",
                                        "The job 999999 of user(s) root does not exist"]
    assert state_of(cell, other) == "hqw"


def test_qhold_and_qrls_u_answer_each_job_that_is_none_of_the_users(cell, workdir):
    jid = held_job(cell, workdir)
    for prog in ("qrls", "qhold"):
        proc = cell.run(prog, "-u", "nosuchuser", str(jid))
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            3, f"The job {jid} of user(s) nosuchuser does not exist\n", ""), prog
        assert state_of(cell, jid) == "hqw"
    proc = cell.run("qrls", "-u", "nosuchuser", "mine", "999999")
    assert proc.returncode == 3
    assert proc.stdout.splitlines() == ["The job mine of user(s) nosuchuser does not exist",
                                        "The job 999999 of user(s) nosuchuser does not exist"]
    proc = cell.run("qrls", "-u", "root", str(jid), "999999")
    assert proc.returncode == 3
    assert proc.stdout.splitlines() == [f"modified hold of job {jid}",
                                        "The job 999999 of user(s) root does not exist"]
    assert state_of(cell, jid) != "hqw"                  # released: it may run at once


def inherit(cell, workdir, *words, job_id="1"):
    """qrsh -inherit as a task of job ``job_id`` whose PE_HOSTFILE grants one host only."""
    hostfile = os.path.join(workdir, "pe_hostfile")
    with open(hostfile, "w") as fh:
        fh.write("granted 1 all.q@granted UNDEFINED\n")
    env = {"PE_HOSTFILE": hostfile}
    if job_id is not None:
        env["JOB_ID"] = job_id
    return cell.run("qrsh", "-inherit", *words, env=env, cwd=workdir)


def test_qrsh_inherit_refuses_the_submit_options_grid_engine_does_not_take_there(cell, workdir):
    for words in (["-l", "h_rt=10"], ["-now", "n"], ["-q", "all.q"], ["-b", "y"], ["-N", "x"],
                  ["-V", "-pe", "make", "2"]):
        proc = inherit(cell, workdir, *words, "granted", "true")
        option = words[-3] if words[0] == "-V" else words[0]
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            1, "", f"error: Unknown option {option}\n"), words
    # after the checks of JOB_ID and of the host and command, as Grid Engine's qrsh
    proc = inherit(cell, workdir, "-l", "h_rt=10", "granted", "true", job_id=None)
    assert (proc.returncode, proc.stderr) == (
        1, 'error: "qrsh" called with option "-inherit", but "JOB_ID" not set in environment\n')
    proc = inherit(cell, workdir, "-l", "h_rt=10", "granted")
    assert (proc.returncode, proc.stderr) == (
        1, 'error: usage with "-inherit" option: "qrsh -inherit ... <host> <command> [args]"\n')
    # what Open MPI, MPICH and users pass goes on to the host check
    for words in (["-nostdin", "-V"], ["-V"], ["-cwd", "-v", "X=1", "-display", ":0"],
                  ["-wd", "/tmp", "-noshell", "-verbose", "-pty", "y"]):
        proc = inherit(cell, workdir, *words, "ungranted", "true")
        assert proc.returncode == 1, words
        assert proc.stderr.endswith('error: executing task of job 1 failed: execution daemon on host '
                                    '"ungranted" didn\'t accept task\n'), (words, proc.stderr)


def test_qrsh_display_sets_display_in_the_job_and_a_login_refuses_it(cell, workdir):
    proc = cell.run("qrsh", "-display", "remote:7", "echo", "$DISPLAY", input="", cwd=workdir,
                    env={"DISPLAY": ":0"})
    assert (proc.returncode, proc.stdout) == (0, "remote:7\n"), proc.stderr
    assert "[-display display]" in cell.run("qrsh", "-help").stdout
    for argv in (["qrsh", "-display", ":0"], ["qlogin", "-display", ":0"]):
        proc = cell.run(*argv, input="", cwd=workdir)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            1, "", "error: Unknown option -display\n"), argv
    # qsub does not take it (Grid Engine's qsub: unknown option, exit 5)
    proc = cell.qsub("-display", ":0", "-b", "y", "true", cwd=workdir)
    assert proc.returncode == 5 and "Unknown option -display :0" in proc.stdout + proc.stderr

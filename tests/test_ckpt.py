"""Checkpointing end to end (checkpoint(5)): a checkpointed job whose host is flushed
runs its migration command, restarts on another host with RESTARTED=1 through its
restart command (a kernel-level interface), and runs its clean command at the end;
under "x" suspending its queue or the job itself migrates it too. An
application-level job restarts by its own script; a userdefined one is given the
environment's signal, whatever commands the environment names."""

import os

import pytest

from conftest import destroy_cell, make_cell, wait_for
from qtools import add_object, jid_of


@pytest.fixture
def two_execds():
    """Hosts testhost and node2, one slot each, each served by its own execution daemon."""
    cell = make_cell(slots=1, hosts=["testhost", "node2"], execds=True)
    try:
        yield cell
    finally:
        destroy_cell(cell)

CKPT = """ckpt_name          ck
interface          {interface}
ckpt_command       none
migr_command       /bin/sh {dir}/note.sh migrate $job_id $host
restart_command    /bin/sh {dir}/restart.sh
clean_command      /bin/sh {dir}/note.sh clean $job_id $host
ckpt_dir           {dir}
signal             none
when               {when}
"""


def setup(cell, workdir, when="sx", interface="hibernator"):
    with open(os.path.join(workdir, "note.sh"), "w") as fh:
        fh.write(f'echo "$1 $2 $3 RESTARTED=$RESTARTED" >> {workdir}/log\n')
    with open(os.path.join(workdir, "restart.sh"), "w") as fh:
        fh.write(f'echo "restart $JOB_ID $HOSTNAME RESTARTED=$RESTARTED dir=$SGE_CKPT_DIR" >> {workdir}/log\n'
                 "sleep 1\n")
    add_object(cell, "-Ackpt", CKPT.format(dir=workdir, when=when, interface=interface))
    cell.run("qconf", "-aattr", "queue", "ckpt_list", "ck", "all.q", check=True)


def log(workdir):
    path = os.path.join(workdir, "log")
    return open(path).read().splitlines() if os.path.exists(path) else []


def start_on_first_host(cell, workdir, rerun=""):
    cell.run("qmod", "-d", "all.q@node2", check=True)
    script = f'echo "run $JOB_ID $HOSTNAME RESTARTED=$RESTARTED" >> {workdir}/log\n{rerun}sleep 60\n'
    jid = jid_of(cell.qsub("-ckpt", "ck", "-o", "/dev/null", "-j", "y", input=script, cwd=workdir))
    wait_for(lambda: any(line.startswith("run") for line in log(workdir)), timeout=20)
    cell.run("qmod", "-e", "all.q@node2", check=True)
    return jid


def test_a_flushed_host_migrates_the_job(two_execds, workdir):
    cell = two_execds
    setup(cell, workdir)
    jid = start_on_first_host(cell, workdir)
    cell.run("gridtools", "host", "flush", "testhost", check=True)
    cell.wait_finished(jid, timeout=30)
    lines = log(workdir)
    assert lines[0] == f"run {jid} testhost RESTARTED=0"
    assert lines[1] == f"migrate {jid} testhost RESTARTED=0"
    assert lines[2] == f"restart {jid} node2 RESTARTED=1 dir={workdir}"
    assert lines[3] == f"clean {jid} node2 RESTARTED=1"
    hosts = [r[1] for r in cell.accounting() if r[5] == str(jid)]
    assert hosts == ["testhost", "node2"]


def test_an_application_level_job_restarts_by_its_own_script(two_execds, workdir):
    """Grid Engine never runs restart_command for application-level checkpointing: the
    job script runs again (RESTARTED=1) and resumes from what it saved."""
    cell = two_execds
    setup(cell, workdir, when="x", interface="application-level")
    jid = start_on_first_host(cell, workdir, rerun='if [ "$RESTARTED" = 1 ]; then exit 0; fi\n')
    cell.run("qmod", "-sj", str(jid), check=True)
    cell.wait_finished(jid, timeout=30)
    assert log(workdir) == [f"run {jid} testhost RESTARTED=0", f"migrate {jid} testhost RESTARTED=0",
                            f"run {jid} node2 RESTARTED=1", f"clean {jid} node2 RESTARTED=1"]


def test_a_suspended_queue_migrates_a_job_checkpointed_on_suspension(two_execds, workdir):
    cell = two_execds
    setup(cell, workdir, when="x")
    jid = start_on_first_host(cell, workdir)
    cell.run("qmod", "-s", "all.q@testhost", check=True)
    cell.wait_finished(jid, timeout=30)
    assert [line.split()[0] for line in log(workdir)] == ["run", "migrate", "restart", "clean"]
    assert log(workdir)[2].split()[2] == "node2"


def test_suspending_the_job_itself_migrates_a_job_checkpointed_on_suspension(two_execds, workdir):
    cell = two_execds
    setup(cell, workdir, when="x")
    jid = start_on_first_host(cell, workdir)
    answer = cell.run("qmod", "-sj", str(jid))
    assert answer.returncode == 0, answer.stderr
    cell.wait_finished(jid, timeout=30)
    assert [line.split()[0] for line in log(workdir)] == ["run", "migrate", "restart", "clean"]
    assert log(workdir)[2].split()[2] == "node2"


def test_shutting_down_the_execution_daemon_migrates_a_job_checkpointed_under_s(workdir):
    import subprocess
    cell = make_cell(slots=1, hosts=["testhost", "node2"])
    execd = subprocess.Popen(["gridtools", "execd", "--host", "node2"], env=cell.env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: os.path.exists(os.path.join(cell.root, "spool", "execd", "node2", "execd.lock")))
        setup(cell, workdir, when="s")
        cell.run("qmod", "-d", "all.q@testhost", check=True)
        script = f'echo "run $JOB_ID $HOSTNAME RESTARTED=$RESTARTED" >> {workdir}/log\nsleep 60\n'
        jid = jid_of(cell.qsub("-ckpt", "ck", "-o", "/dev/null", "-j", "y", input=script, cwd=workdir))
        wait_for(lambda: any(line.startswith("run") for line in log(workdir)), timeout=20)
        cell.run("qmod", "-e", "all.q@testhost", check=True)
        cell.run("qmod", "-d", "all.q@node2", check=True)            # the host is being shut down
        killed = cell.run("qconf", "-ke", "node2")
        assert killed.returncode == 0, killed.stderr
        execd.wait(timeout=20)
        cell.wait_finished(jid, timeout=30)
        assert log(workdir) == [f"run {jid} node2 RESTARTED=0", f"migrate {jid} node2 RESTARTED=0",
                                f"restart {jid} testhost RESTARTED=1 dir={workdir}",
                                f"clean {jid} testhost RESTARTED=1"]
    finally:
        if execd.poll() is None:
            execd.kill()
        destroy_cell(cell)


def test_without_commands_the_job_gets_the_environments_signal_before_it_migrates(cell_two_hosts, workdir):
    """signal usr2, userdefined: the job is given the signal and time to save its state
    and end (it takes a second here) before it restarts elsewhere by its own script;
    the commands the environment names are not for this interface and do not run."""
    cell = cell_two_hosts
    add_object(cell, "-Ackpt", "ckpt_name sig\ninterface userdefined\nckpt_command none\n"
               f"migr_command /bin/sh -c 'echo migr >> {workdir}/log'\n"
               f"restart_command /bin/sh -c 'echo restart >> {workdir}/log'\n"
               f"clean_command /bin/sh -c 'echo clean >> {workdir}/log'\n"
               f"ckpt_dir {workdir}\nsignal usr2\nwhen x\n")
    cell.run("qconf", "-aattr", "queue", "ckpt_list", "sig", "all.q", check=True)
    cell.run("qmod", "-d", "all.q@node2", check=True)
    script = (f'trap \'sleep 1; echo "usr2 $HOSTNAME" >> {workdir}/log; exit 0\' USR2\n'
              f'echo "run $HOSTNAME RESTARTED=$RESTARTED" >> {workdir}/log\n'
              'if [ "$RESTARTED" = 1 ]; then exit 0; fi\nwhile true; do sleep 0.1; done\n')
    jid = jid_of(cell.qsub("-ckpt", "sig", "-o", "/dev/null", "-j", "y", input=script, cwd=workdir))
    wait_for(lambda: any(line.startswith("run") for line in log(workdir)), timeout=20)
    cell.run("qmod", "-e", "all.q@node2", check=True)
    cell.run("qmod", "-s", "all.q@testhost", check=True)
    cell.wait_finished(jid, timeout=30)
    assert log(workdir) == ["run testhost RESTARTED=0", "usr2 testhost", "run node2 RESTARTED=1"]

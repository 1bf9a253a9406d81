"""Parallel jobs across execution hosts: a $round_robin job over two hosts, each served by
its own execution daemon, gets a correct PE_HOSTFILE, runs its PE start and stop
procedures, and starts a task on the second host with qrsh -inherit, accounted to it;
the options MPI launchers put before the host name, the shell the command line runs
in, and the execution daemon of the host named starting the task."""

import os
import time

import psutil
import pytest

from conftest import destroy_cell, make_cell, wait_for
from qtools import add_object, jid_of, process_state, wait_state

PE = """pe_name            {name}
slots              999
user_lists         NONE
xuser_lists        NONE
start_proc_args    /bin/sh {dir}/proc.sh start $host $pe_hostfile
stop_proc_args     /bin/sh {dir}/proc.sh stop $host $pe_hostfile
allocation_rule    $round_robin
control_slaves     {control}
job_is_first_task  {first}
urgency_slots      min
accounting_summary {summary}
qsort_args         NONE
"""

JOB = """#!/bin/sh
cat "$PE_HOSTFILE" > {dir}/hostfile
qrsh -inherit node2 'echo slave on $HOSTNAME; echo slave-err >&2; exit 7'
echo "inherit status $?"
qrsh -inherit elsewhere true
echo "elsewhere status $?"
"""


@pytest.fixture
def two_hosts(workdir):
    cell = make_cell(slots=2, hosts=["testhost", "node2"], execds=True)
    try:
        with open(os.path.join(workdir, "proc.sh"), "w") as fh:
            fh.write('echo "$1 $2 $(tr "\\n" " " < "$3")" >> %s/procs\n' % workdir)
        yield cell
    finally:
        destroy_cell(cell)


def run_job(cell, workdir, summary, control="TRUE", out="out", first="FALSE", job=JOB):
    text = PE.format(name="rr", dir=workdir, control=control, summary=summary, first=first)
    if cell.run("qconf", "-sp", "rr").returncode == 0:
        add_object(cell, "-Mp", text)
    else:
        add_object(cell, "-Ap", text)
        cell.run("qconf", "-aattr", "queue", "pe_list", "rr", "all.q", check=True)
    jid = jid_of(cell.qsub("-V", "-pe", "rr", "4", "-o", f"{workdir}/{out}", "-e", f"{workdir}/{out}.err",
                           input=job.format(dir=workdir), cwd=workdir))
    cell.wait_finished(jid, timeout=40)
    return jid


def test_round_robin_hostfile_procedures_and_inherit(two_hosts, workdir):
    cell = two_hosts
    jid = run_job(cell, workdir, "FALSE")
    hosts = sorted(open(f"{workdir}/hostfile").read().splitlines())
    assert hosts == ["node2 2 all.q@node2 UNDEFINED", "testhost 2 all.q@testhost UNDEFINED"]
    out = open(f"{workdir}/out").read().splitlines()
    assert out == ["slave on node2", "inherit status 7", "elsewhere status 1"]
    err = open(f"{workdir}/out.err").read()
    assert "slave-err" in err and f'error: executing task of job {jid} failed: execution daemon on host ' \
        '"elsewhere" didn\'t accept task' in err
    procs = open(f"{workdir}/procs").read().splitlines()
    assert [p.split()[0] for p in procs] == ["start", "stop"]
    assert all("node2 2 all.q@node2" in p and "testhost 2 all.q@testhost" in p for p in procs)
    records = wait_for(lambda: [r for r in cell.accounting() if r[5] == str(jid)] if
                       len([r for r in cell.accounting() if r[5] == str(jid)]) == 2 else None)
    by_task = {r[41]: r for r in records}                       # pe_taskid
    assert set(by_task) == {"NONE", "1.node2"}
    assert by_task["1.node2"][1] == "node2" and by_task["1.node2"][12] == "7"


def test_summary_gives_one_record_and_control_slaves_is_needed(two_hosts, workdir):
    cell = two_hosts
    jid = run_job(cell, workdir, "TRUE")
    wait_for(lambda: [r for r in cell.accounting() if r[5] == str(jid)])
    assert len([r for r in cell.accounting() if r[5] == str(jid)]) == 1
    second = run_job(cell, workdir, "TRUE", control="FALSE", out="second")
    out = open(f"{workdir}/second").read().splitlines()
    assert out[0] == "inherit status 1"
    assert 'execution daemon on host "node2" didn\'t accept task' in open(f"{workdir}/second.err").read()
    assert len([r for r in cell.accounting() if r[5] == str(second)]) == 1


LIMITED = """#!/bin/sh
other=$(awk -v h="$HOSTNAME" '$1 != h {{print $1}}' "$PE_HOSTFILE")
qrsh -inherit "$HOSTNAME" sleep 8 &
qrsh -inherit "$other" sleep 8 &
qrsh -inherit "$other" sleep 8 &
sleep 4
qrsh -inherit "$HOSTNAME" true
echo "master host $?"
qrsh -inherit "$other" true
echo "other host $?"
wait
"""


def test_tasks_per_host_are_bounded_by_the_granted_slots(two_hosts, workdir):
    """2 slots on each host; the job script is the first task on the master host."""
    cell = two_hosts
    run_job(cell, workdir, "FALSE", out="limited", first="TRUE", job=LIMITED)
    out = open(f"{workdir}/limited").read().splitlines()
    assert out == ["master host 1", "other host 1"]
    assert "didn't accept task" in open(f"{workdir}/limited.err").read()


ORPHAN = """#!/bin/sh
other=$(awk -v h="$HOSTNAME" '$1 != h {{print $1}}' "$PE_HOSTFILE")
qrsh -inherit "$other" sleep 60 &
sleep 1.5
"""


def test_tasks_end_with_their_job(two_hosts, workdir):
    cell = two_hosts
    began = time.time()
    jid = run_job(cell, workdir, "FALSE", out="orphan", job=ORPHAN)
    records = wait_for(lambda: [r for r in cell.accounting() if r[5] == str(jid)]
                       if len([r for r in cell.accounting() if r[5] == str(jid)]) == 2 else None, timeout=20)
    assert time.time() - began < 30                            # the slave's sleep 60 was ended
    slave = [r for r in records if r[41] != "NONE"][0]
    assert int(slave[10]) - int(slave[9]) < 20


CLIENT = """#!/bin/sh
other=$(awk -v h="$HOSTNAME" '$1 != h {{print $1}}' "$PE_HOSTFILE")
echo "$other" > {dir}/other
qrsh -inherit "$other" 'echo $$ > {dir}/slave.pid; exec sleep 120' &
echo $! > {dir}/client.pid
wait
echo "client ended"
sleep 120
"""


def _client_and_slave(cell, workdir, script, *streams):
    """Submit ``script`` (which notes the pids of its qrsh -inherit client and of the
    task it started) to a PE of 4 slots that controls its slave tasks; (job id, client
    pid, slave pid) once both run."""
    text = PE.format(name="rr", dir=workdir, control="TRUE", summary="FALSE", first="FALSE")
    add_object(cell, "-Ap", text)
    cell.run("qconf", "-aattr", "queue", "pe_list", "rr", "all.q", check=True)
    jid = jid_of(cell.qsub("-V", "-pe", "rr", "4", *streams, input=script.format(dir=workdir), cwd=workdir))

    def pids():
        try:
            return [int(open(f"{workdir}/{n}.pid").read()) for n in ("client", "slave")]
        except (OSError, ValueError):
            return None
    return (jid, *wait_for(pids, timeout=30))


def _alive(pid):
    """(a process that ends while its stat is read is gone too: process_state says None)"""
    return process_state(pid) not in (None, "Z", "X")


def test_a_task_whose_qrsh_inherit_was_killed_ends(two_hosts, workdir):
    """As an interactive job whose qrsh went away: nobody reads its output any more."""
    cell = two_hosts
    jid, client, slave = _client_and_slave(cell, workdir, CLIENT, "-o", f"{workdir}/client.out", "-j", "y")
    assert _alive(slave)
    os.kill(client, 9)                  # SIGKILL: qrsh -inherit cannot end its task
    wait_for(lambda: not _alive(slave), timeout=15)
    records = wait_for(lambda: [r for r in cell.accounting() if r[5] == str(jid) and r[41] != "NONE"],
                       timeout=15)
    assert records[0][1] == open(f"{workdir}/other").read().strip()
    assert records[0][12] == "137"                      # killed (128 + SIGKILL), as qdel kills
    wait_for(lambda: "client ended" in open(f"{workdir}/client.out").read(), timeout=10)
    cell.run("qdel", str(jid), check=True)


OPTIONS = """#!/bin/sh
other=$(awk -v h="$HOSTNAME" '$1 != h {{print $1}}' "$PE_HOSTFILE")
FOO=bar; export FOO
echo "$other"
qrsh -inherit -nostdin -V "$other" /bin/echo ompi; echo "ompi $?"
qrsh -V -inherit "$other" 'echo hydra $FOO on $HOSTNAME'; echo "hydra $?"
qrsh -inherit "$other" 'echo "without -V [$FOO]"; ls / > /dev/null; exit 4'; echo "shell $?"
qrsh -inherit -v X=1,FOO "$other" 'echo "-v $X $FOO"'; echo "v $?"
qrsh -inherit -noshell "$other" /bin/echo 'a;b' '$FOO'; echo "noshell $?"
qrsh -inherit -noshell "$other" echo on the PATH; echo "noshell path $?"
qrsh -inherit -pty y -verbose "$other" true; echo "ignored $?"
qrsh -inherit "$other" /nonexist/x; echo "missing $?"
qrsh -inherit -noshell "$other" /nonexist/x; echo "missing noshell $?"
qrsh -inherit -bogus "$other" true; echo "bogus $?"
qrsh -inherit -noshell "$(echo "$other" | tr a-z A-Z)" /bin/sh -c 'echo "upper on $HOSTNAME"'; echo "upper $?"
"""


def test_inherit_takes_the_mpi_launchers_options_and_runs_a_shell(two_hosts, workdir):
    cell = two_hosts
    run_job(cell, workdir, "FALSE", out="options", job=OPTIONS)
    other, *out = open(f"{workdir}/options").read().splitlines()
    assert out == ["ompi", "ompi 0", f"hydra bar on {other}", "hydra 0", "without -V []", "shell 4",
                   "-v 1 bar", "v 0", "a;b $FOO", "noshell 0", "on the PATH", "noshell path 0", "ignored 0", "missing 127",
                   "missing noshell 1", "bogus 2", f"upper on {other}", "upper 0"]
    err = open(f"{workdir}/options.err").read().splitlines()
    assert any("/nonexist/x" in line for line in err if not line.startswith("qrsh_starter"))  # the shell's
    assert ("qrsh_starter: executing child process /nonexist/x failed: No such file or directory"
            in err)
    # -verbose: Grid Engine's two lines, the second naming the task (k.host)
    assert f'Starting server daemon at host "{other}"' in err
    assert any(line.startswith("Server daemon successfully started with task id ")
               and line.endswith(f'.{other}"') for line in err)
    assert any("-bogus" in line for line in err)


WHERE = """#!/bin/sh
other=$(awk -v h="$HOSTNAME" '$1 != h {{print $1}}' "$PE_HOSTFILE")
mkdir -p {dir}/elsewhere/sub {dir}/abs
cd {dir}/elsewhere
qrsh -inherit "$other" pwd -P
qrsh -inherit -cwd "$other" pwd -P
qrsh -inherit -wd sub "$other" pwd -P
qrsh -inherit -wd {dir}/abs -noshell "$other" /bin/pwd -P
"""


def test_a_task_runs_where_its_job_does_unless_cwd_or_wd_say_otherwise(two_hosts, workdir):
    """Not in the caller's current directory: in the job's (qsub -cwd), else the owner's
    home; -cwd and -wd given to qrsh -inherit choose another (as Grid Engine's execd)."""
    import pwd as pwdb
    cell = two_hosts
    real = os.path.realpath(workdir)
    home = os.path.realpath(pwdb.getpwuid(os.getuid()).pw_dir)
    expected = [f"{real}/elsewhere", f"{real}/elsewhere/sub", f"{real}/abs"]
    run_job(cell, workdir, "FALSE", out="home", job=WHERE)
    assert open(f"{workdir}/home").read().splitlines() == [home] + expected
    jid = jid_of(cell.qsub("-V", "-cwd", "-pe", "rr", "4", "-o", f"{workdir}/cwd", "-e", f"{workdir}/cwd.err",
                           input=WHERE.format(dir=workdir), cwd=workdir))
    cell.wait_finished(jid, timeout=40)
    assert open(f"{workdir}/cwd").read().splitlines() == [real] + expected


EXECD_TASK = """#!/bin/sh
qrsh -inherit node2 'echo $$ > {dir}/task.pid; sleep 5; echo done on $HOSTNAME; exit 3'
echo "status $?"
"""


def test_a_task_for_a_host_with_an_execd_is_started_by_that_execd(two_hosts, workdir):
    cell = two_hosts
    pidfile = os.path.join(cell.root, "spool", "execd", "node2", "execd.pid")
    execd_pid = int(wait_for(lambda: os.path.exists(pidfile) and open(pidfile).read().strip()))
    text = PE.format(name="rr", dir=workdir, control="TRUE", summary="FALSE", first="FALSE")
    add_object(cell, "-Ap", text)
    cell.run("qconf", "-aattr", "queue", "pe_list", "rr", "all.q", check=True)
    jid = jid_of(cell.qsub("-V", "-pe", "rr", "4", "-o", f"{workdir}/et.out",
                           "-e", f"{workdir}/et.err", input=EXECD_TASK.format(dir=workdir), cwd=workdir))
    pid = int(wait_for(lambda: os.path.exists(f"{workdir}/task.pid") and open(f"{workdir}/task.pid").read().strip(),
                       timeout=30))
    lineage = []
    proc = psutil.Process(pid)
    while proc is not None:
        lineage.append(proc.pid)
        proc = proc.parent()
    assert execd_pid in lineage                 # the task's shepherd is a child of node2's execd
    cell.wait_finished(jid, timeout=30)
    assert open(f"{workdir}/et.out").read().splitlines() == ["done on node2", "status 3"]
    records = wait_for(lambda: [r for r in cell.accounting() if r[5] == str(jid) and r[41] != "NONE"],
                       timeout=15)
    assert records[0][1] == "node2" and records[0][12] == "3"


def test_without_execds_the_dispatcher_starts_the_tasks(workdir):
    cell = make_cell(slots=2, hosts=["testhost", "node2"])
    try:
        with open(os.path.join(workdir, "proc.sh"), "w") as fh:
            fh.write("true\n")
        jid = run_job(cell, workdir, "FALSE", out="noexecd", job=JOB)
        assert open(f"{workdir}/noexecd").read().splitlines() == [
            "slave on node2", "inherit status 7", "elsewhere status 1"]
        records = wait_for(lambda: [r for r in cell.accounting() if r[5] == str(jid) and r[41] != "NONE"],
                           timeout=15)
        assert records[0][1] == "node2" and records[0][12] == "7"
    finally:
        destroy_cell(cell)


def test_per_slot_limits_of_the_master_and_of_a_task(two_hosts, workdir):
    """The job script gets h_vmem times the slots granted on its own host (2 of the 4), as
    Grid Engine's shepherd does; a task started with qrsh -inherit gets one slot's value."""
    cell = two_hosts
    job = ("#!/bin/sh\n#$ -l h_vmem=300M\n"
           'echo "master $(ulimit -v)"\n'
           'other=$(awk -v me="$HOSTNAME" \'$1 != me {{print $1}}\' "$PE_HOSTFILE")\n'
           "qrsh -inherit $other 'echo \"task $(ulimit -v)\"; echo $HOSTNAME'\n"
           'echo "$HOSTNAME"\n')
    run_job(cell, workdir, "FALSE", out="limits", job=job)
    lines = open(f"{workdir}/limits").read().splitlines()
    assert lines[:2] == ["master 614400", "task 307200"]
    assert sorted(lines[2:]) == ["node2", "testhost"]


def test_a_refused_task_request_leaves_no_folder(cell, workdir, users):
    """The owner of a running job asks for tasks the daemon refuses (no command; streams
    that are not a mapping): each is answered with one error line, and the job's task
    folder holds no ``pe.<n>`` folder for them (each used to leave one, and every later
    request listed them all)."""
    from attack_tools import forge_request
    alice = users[0]
    text = PE.format(name="rr", dir=workdir, control="TRUE", summary="FALSE", first="FALSE")
    add_object(cell, "-Ap", "".join(line.split()[0] + " NONE\n" if "_proc_args" in line else line + "\n"
                                    for line in text.splitlines()))
    cell.run("qconf", "-aattr", "queue", "pe_list", "rr", "all.q", check=True)
    jid = jid_of(cell.qsub("-pe", "rr", "1", "-o", "/dev/null", "-j", "y", "-b", "y", "sleep", "300",
                           user=alice, cwd=workdir))
    wait_state(cell, jid, "r")
    folder = os.path.join(cell.root, "spool", "jobs", str(jid), "1")
    host = cell.host
    for body, why in (({"job_id": jid, "task": 1, "host": host, "command": [], "streams": {}},
                       "error: no command given"),
                      ({"job_id": jid, "task": 1, "host": host, "command": ["true"], "streams": "x"},
                       "error: invalid request")):
        for _ in range(3):
            _name, reply = forge_request(cell, alice, "pe_task", body)
            assert reply[0] == 1 and reply[2] == why + "\n", reply
    assert [n for n in os.listdir(folder) if n.startswith("pe.")] == []
    cell.run("qdel", str(jid), user=alice, check=True)


TERMINATED = """#!/bin/sh
other=$(awk -v h="$HOSTNAME" '$1 != h {{print $1}}' "$PE_HOSTFILE")
qrsh -inherit -wd /nonexistent.gt "$other" true; echo "wd $?"
qrsh -inherit "$other" 'echo $$ > {dir}/slave.pid; exec sleep 120' &
c=$!; echo $c > {dir}/client.pid
wait $c; echo "client $?"
ls -d "$TMPDIR"/gtqrsh-* 2>/dev/null | wc -l | sed 's/^ */left /'
"""


def test_qrsh_inherit_says_why_a_task_did_not_start_and_cleans_up_when_terminated(two_hosts, workdir):
    """A task that could not start (its working directory is missing) is told in Grid
    Engine's words; a qrsh -inherit ended by SIGTERM ends with 143 and leaves none of
    its FIFOs behind, and its task ends."""
    cell = two_hosts
    jid, client, slave = _client_and_slave(cell, workdir, TERMINATED, "-o", f"{workdir}/term.out",
                                           "-e", f"{workdir}/term.err")
    os.kill(client, 15)
    wait_for(lambda: not _alive(slave), timeout=15)
    cell.wait_finished(jid, timeout=30)
    assert open(f"{workdir}/term.out").read() == "wd 1\nclient 143\nleft 0\n"
    assert open(f"{workdir}/term.err").read() == (
        f"executing task of job {jid} failed: can't chdir to /nonexistent.gt: No such file or directory\n")


def test_a_task_sees_the_jobs_sizes_and_a_deleted_job_still_runs_its_stop_procedure(two_hosts, workdir):
    """A task started by qrsh -inherit sees NSLOTS, NHOSTS and NQUEUES of the whole job,
    as Grid Engine's execd sets them; a job deleted while it runs still has its PE stop
    procedure run after it, as Grid Engine's shepherd runs it (the clean-up MPI needs)."""
    cell = two_hosts
    job = ("#!/bin/sh\necho \"master $NSLOTS $NHOSTS $NQUEUES\" > {dir}/sizes\n"
           "qrsh -inherit node2 'echo \"task $NSLOTS $NHOSTS $NQUEUES\"' >> {dir}/sizes\n"
           "touch {dir}/running\nsleep 60\n")
    text = PE.format(name="rr", dir=workdir, control="TRUE", summary="FALSE", first="FALSE")
    add_object(cell, "-Ap", text)
    cell.run("qconf", "-aattr", "queue", "pe_list", "rr", "all.q", check=True)
    jid = jid_of(cell.qsub("-pe", "rr", "4", "-o", "/dev/null", "-j", "y", input=job.format(dir=workdir),
                           cwd=workdir))
    wait_for(lambda: os.path.exists(f"{workdir}/running"), timeout=30)
    assert open(f"{workdir}/sizes").read().splitlines() == ["master 4 2 2", "task 4 2 2"]
    cell.run("qdel", str(jid), check=True)
    cell.wait_finished(jid, timeout=40)
    procs = wait_for(lambda: open(f"{workdir}/procs").read().split("\n")[1:2] != [""]
                     and open(f"{workdir}/procs").read().splitlines(), timeout=20)
    assert [p.split()[0] for p in procs] == ["start", "stop"]


def test_what_a_task_inside_the_job_used_counts_for_its_owners_share(two_hosts, workdir):
    """The usage of a task started by qrsh -inherit is its job's: the share tree's usage of
    the owner grows by what every record of the job says, the task's included."""
    import json
    cell = two_hosts
    job = ("#!/bin/sh\nqrsh -inherit node2 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done'\n")
    add_object(cell, "-Ap", PE.format(name="rr", dir=workdir, control="TRUE", summary="FALSE", first="FALSE"))
    cell.run("qconf", "-aattr", "queue", "pe_list", "rr", "all.q", check=True)
    jid = jid_of(cell.qsub("-pe", "rr", "4", "-o", "/dev/null", "-j", "y", input=job, cwd=workdir))
    cell.wait_finished(jid, timeout=60)
    records = wait_for(lambda: [r for r in cell.accounting() if r[5] == str(jid)] if
                       len([r for r in cell.accounting() if r[5] == str(jid)]) == 2 else None)
    task_cpu = sum(float(r[36]) for r in records if r[41] != "NONE")
    assert task_cpu > 0.2

    def counted():
        with open(os.path.join(cell.root, "spool", "usage.json")) as fh:
            accounts = json.load(fh)["accounts"]
        return sum(a["long_term"]["cpu"] for a in accounts if a["name"] == "root" and a.get("kind", "user") == "user")
    wait_for(lambda: counted() >= task_cpu, timeout=30)


def test_the_summary_record_keeps_what_the_tasks_used_across_a_daemon_restart(two_hosts, workdir):
    """accounting_summary TRUE: the job's one record sums what its tasks used, also when
    the daemon started again between a task's end and the job's."""
    cell = two_hosts
    job = ("#!/bin/sh\nqrsh -inherit node2 'i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done'\n"
           "touch {dir}/task-done\nsleep 4\n")
    add_object(cell, "-Ap", PE.format(name="rr", dir=workdir, control="TRUE", summary="TRUE", first="FALSE"))
    cell.run("qconf", "-aattr", "queue", "pe_list", "rr", "all.q", check=True)
    jid = jid_of(cell.qsub("-pe", "rr", "4", "-o", "/dev/null", "-j", "y", input=job.format(dir=workdir),
                           cwd=workdir))
    wait_for(lambda: os.path.exists(f"{workdir}/task-done"), timeout=40)
    cell.stop_daemon()
    cell.start_daemon()
    cell.wait_finished(jid, timeout=60)
    records = wait_for(lambda: [r for r in cell.accounting() if r[5] == str(jid)])
    assert len(records) == 1 and float(records[0][36]) > 0.2, records

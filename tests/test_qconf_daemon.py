"""Configuration changes obeyed by the running daemon, and daemon control via qconf."""

import os
import re
import time

from conftest import wait_for

NULL = ("-o", "/dev/null", "-e", "/dev/null")


def submit(cell, *args):
    proc = cell.qsub(*NULL, *args)
    assert proc.returncode == 0, proc.stderr
    return int(re.search(r"Your job (\d+)", proc.stdout).group(1))


def running(cell, job_id):
    return cell.task_states(job_id).get(1) == "running"


def test_slot_change_is_obeyed_from_the_next_pass(cell):
    proc = cell.run("qconf", "-mattr", "queue", "slots", "1", "all.q")
    assert proc.stderr == 'root@testhost modified "all.q" in cluster queue list\n'
    first = submit(cell, "-b", "y", "sleep", "1")
    second = submit(cell, "-b", "y", "sleep", "1")
    seen_one_waiting = False
    end = time.time() + 30
    while True:                  # what qstat shows (a job's own spool file may lag its end)
        rows = {int(line.split()[0]): line.split()[4] for line in cell.run("qstat").stdout.splitlines()[2:]}
        states = [rows.get(j) for j in (first, second)]
        if states == [None, None]:
            break
        assert states.count("r") <= 1, states
        if states.count("r") == 1 and "qw" in states:
            seen_one_waiting = True
        assert time.time() < end, states
        time.sleep(0.05)
    cell.wait_finished(first)
    cell.wait_finished(second)
    assert seen_one_waiting


def test_added_queue_runs_jobs(cell, workdir):
    text = cell.run("qconf", "-sq", "all.q").stdout.replace("qname                 all.q",
                                                            "qname                 new.q")
    # a busy test machine must not put the new queue into alarm state
    text = re.sub(r"(?m)^load_thresholds .*$", "load_thresholds       NONE", text)
    path = os.path.join(workdir, "new.q")
    with open(path, "w") as fh:
        fh.write(text)
    proc = cell.run("qconf", "-Aq", path)
    assert proc.stderr == 'root@testhost added "new.q" to cluster queue list\n'
    job = submit(cell, "-q", "new.q", "-b", "y", "true")
    cell.wait_finished(job)
    assert cell.job_state(job)["tasks"]["1"]["queue"] == "new.q"


def test_queue_added_through_the_editor(cell):
    editor = ("sed -i -e 's/^hostlist .*/hostlist @allhosts/' -e 's/^slots .*/slots 1/' "
              "-e 's/^load_thresholds .*/load_thresholds NONE/'")
    proc = cell.run("qconf", "-aq", "ed.q", env={"EDITOR": editor})
    assert (proc.stderr, proc.returncode) == ('root@testhost added "ed.q" to cluster queue list\n', 0)
    job = submit(cell, "-q", "ed.q", "-b", "y", "true")
    cell.wait_finished(job)
    assert cell.job_state(job)["tasks"]["1"]["queue"] == "ed.q"


def test_unknown_pe_reference_refused(cell):
    proc = cell.run("qconf", "-aattr", "queue", "pe_list", "nope", "all.q")
    assert proc.returncode == 1
    assert proc.stderr == 'error: attribute "pe_list" refers to parallel environment "nope" which does not exist\n'
    assert "pe_list               make smp mpi\n" in cell.run("qconf", "-sq", "all.q").stdout


def test_referenced_objects_cannot_be_deleted(cell, workdir):
    proc = cell.run("qconf", "-dp", "smp")
    assert proc.stderr == 'denied: parallel environment "smp" is still referenced in pe_list of cluster queue "all.q"\n'
    proc = cell.run("qconf", "-dhgrp", "@allhosts")
    assert proc.stderr == 'denied: following cluster queues still reference "@allhosts": all.q\n'
    cell.run("qconf", "-aattr", "queue", "user_lists", "arusers", "all.q", check=True)
    proc = cell.run("qconf", "-dul", "arusers")
    assert proc.stderr == 'denied: userset "arusers" is still referenced in user_lists of cluster queue "all.q"\n'
    cell.run("qconf", "-dattr", "queue", "user_lists", "arusers", "all.q", check=True)
    proc = cell.run("qconf", "-dul", "arusers")
    assert proc.stderr == 'root@testhost removed "arusers" from userset list\n'
    assert "arusers" not in cell.run("qconf", "-sul").stdout
    cell.run("qconf", "-dattr", "queue", "pe_list", "smp", "all.q", check=True)
    assert cell.run("qconf", "-dp", "smp").returncode == 0
    for code, args in ((1, ("-sp", "smp")), (1, ("-dp", "smp"))):
        assert cell.run("qconf", *args).returncode == code


def test_queue_with_running_job_cannot_be_deleted(cell):
    job = submit(cell, "-b", "y", "sleep", "30")
    wait_for(lambda: running(cell, job))
    proc = cell.run("qconf", "-dq", "all.q")
    assert proc.returncode == 1
    assert proc.stderr == "There are still running jobs in the queue. Deletion denied.\n"
    cell.run("qdel", str(job))


def test_clean_queue_deletes_its_jobs(cell):
    job = submit(cell, "-b", "y", "sleep", "100")
    wait_for(lambda: running(cell, job))
    proc = cell.run("qconf", "-cq", "all.q")
    assert (proc.stderr, proc.returncode) == ('root@testhost cleaned queue "all.q@testhost"\n', 0)
    wait_for(lambda: cell.task_states(job).get(1) in ("finished", None), timeout=15)
    proc = cell.run("qconf", "-cq", "nosuch.q")
    assert proc.returncode == 1


def test_kill_execution_daemons(cell):
    job = submit(cell, "-b", "y", "sleep", "100")
    wait_for(lambda: running(cell, job))
    proc = cell.run("qconf", "-ke", "testhost")
    assert (proc.stderr, proc.returncode) == ("no execd known on host testhost\n", 0)
    assert running(cell, job)
    proc = cell.run("qconf", "-kej", "all")
    assert proc.returncode == 0
    wait_for(lambda: cell.task_states(job).get(1) in ("finished", None), timeout=15)
    proc = cell.run("qconf", "-ke", "nohost")
    assert (proc.stderr, proc.returncode) == ('"nohost" is not an execution host\n', 1)


def test_stop_and_restart_scheduling(cell):
    proc = cell.run("qconf", "-ks")
    assert (proc.stderr, proc.returncode) == ("root@testhost kills scheduler\n", 0)
    job = submit(cell, "-b", "y", "true")
    time.sleep(1.0)
    assert cell.task_states(job).get(1) in (None, "pending")
    assert cell.run("qconf", "-ks").returncode == 1
    proc = cell.run("qconf", "-at", "scheduler")
    assert (proc.stderr, proc.returncode) == ("scheduler has been started\n", 0)
    cell.wait_finished(job)


#: a ctime(3) time stamp, the day padded with a space ("Wed Dec  2 20:51:54 2026")
CTIME = r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ 123]\d \d\d:\d\d:\d\d \d{4}"


def test_trigger_scheduler_monitoring(cell):
    cell.run("qconf", "-mattr", "queue", "slots", "1", "all.q", check=True)
    job = submit(cell, "-b", "y", "sleep", "30")
    wait_for(lambda: running(cell, job))
    proc = cell.run("qconf", "-tsm")
    assert (proc.stderr, proc.returncode) == ("root@testhost triggers scheduler monitoring\n", 0)
    path = os.path.join(cell.root, "spool", "schedule")
    wait_for(lambda: os.path.exists(path) and open(path).read().endswith("::::::::\n"))
    text = open(path).read()
    record = re.search(rf"^{job}:1:RUNNING:(\d+):(\d+):Q:all\.q@testhost:slots:1\.000000$", text, re.M)
    assert record, text
    start, duration = map(int, record.groups())
    assert start + duration == 4294967295
    runlog = open(os.path.join(cell.root, "spool", "schedd_runlog")).read()
    assert "|-------------START-SCHEDULER-RUN-------------\n" in runlog
    assert runlog.endswith("|--------------STOP-SCHEDULER-RUN-------------\n")
    assert all(re.match(CTIME + r"\|", line) for line in runlog.splitlines()), runlog
    # as in capture sched-qconf-tsm-schedd_runlog.txt: the load correction of the task
    # started lately, then the full queue instance
    assert re.search(rf"\|JOB {job}\.1 \[1\] in queue all\.q@testhost increased absolute lc of "
                     r"host testhost by (\d+) to \1\n", runlog), runlog
    assert '|queue instance "all.q@testhost" dropped because it is full\n' in runlog
    assert "|queues dropped because they are full: all.q@testhost\n" in runlog
    cell.run("qdel", str(job))


def test_monitor_in_params_keeps_the_schedule_file_only(cell):
    text = cell.run("qconf", "-ssconf", check=True).stdout
    path = os.path.join(cell.root, "conf.txt")
    with open(path, "w") as fh:
        fh.write(re.sub(r"^params .*$", "params MONITOR=1", text, flags=re.M))
    cell.run("qconf", "-Msconf", path, check=True)
    submit(cell, "-b", "y", "true")
    schedule = os.path.join(cell.root, "spool", "schedule")
    wait_for(lambda: os.path.exists(schedule) and open(schedule).read().count("::::::::\n") >= 2)
    assert not os.path.exists(os.path.join(cell.root, "spool", "schedd_runlog"))


def test_kill_master_stops_the_daemon(cell):
    proc = cell.run("qconf", "-km")
    assert (proc.stderr, proc.returncode) == ("root@testhost kills qmaster\n", 0)
    assert cell.run("gridtools", "daemon", "status").returncode == 1


def test_changes_need_a_daemon(idle_cell):
    proc = idle_cell.run("qconf", "-as", "node1")
    assert proc.returncode == 1
    assert "daemon" in proc.stderr and "not running" in proc.stderr
    assert idle_cell.run("qconf", "-ss").stdout == "testhost\n"

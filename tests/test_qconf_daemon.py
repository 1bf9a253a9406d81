"""Configuration changes obeyed by the running daemon, and daemon control via qconf."""

import os
import re
import time

import pytest

from conftest import wait_for
from passwait import last_pass, reschedule

NULL = ("-o", "/dev/null", "-e", "/dev/null")


def submit(cell, *args):
    proc = cell.qsub(*NULL, *args)
    assert proc.returncode == 0, proc.stderr
    return int(re.search(r"Your job (\d+)", proc.stdout).group(1))


def running(cell, job_id):
    return cell.task_states(job_id).get(1) == "running"


def test_slot_change_is_obeyed_from_the_next_pass(cell):
    proc = cell.run("qconf", "-mattr", "queue", "slots", "1", "all.q")
    assert proc.stdout == 'root@testhost modified "all.q" in cluster queue list\n'
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


@pytest.mark.parametrize("option", ["-ae", "-aq", "-ap", "-acal", "-ackpt", "-arqs", "-ah", "-as", "-am"])
def test_a_name_that_is_not_utf8_is_refused_in_one_line(cell, option):
    """(-a* put it into the editor's file and died there with a traceback; -ah and -as
    stored it as U+FFFD, the same name as another.)"""
    proc = cell.run("qconf", option, os.fsdecode(b"\xff"), env={"EDITOR": "true"})
    assert (proc.returncode, proc.stdout, proc.stderr) == \
        (1, "", "Non-graphic character (hex ff) not allowed in objectname\n")


def test_unknown_pe_reference_refused(cell):
    proc = cell.run("qconf", "-aattr", "queue", "pe_list", "nope", "all.q")
    assert proc.returncode == 1
    assert proc.stderr == 'Parallel environment "nope" does not exist\n'
    assert "pe_list               make smp mpi\n" in cell.run("qconf", "-sq", "all.q").stdout


def test_referenced_objects_cannot_be_deleted(cell, workdir):
    proc = cell.run("qconf", "-dp", "smp")
    assert proc.stderr == 'denied: Parallel environment "smp" is still referenced in queue "all.q".\n'
    proc = cell.run("qconf", "-dhgrp", "@allhosts")
    assert proc.stderr == 'denied: following cluster queues still reference "@allhosts": all.q\n'
    cell.run("qconf", "-aattr", "queue", "user_lists", "arusers", "all.q", check=True)
    proc = cell.run("qconf", "-dul", "arusers")
    assert proc.stderr == 'denied: userset "arusers" is still referenced in user list of queue "all.q"\n'
    cell.run("qconf", "-dattr", "queue", "user_lists", "arusers", "all.q", check=True)
    proc = cell.run("qconf", "-dul", "arusers")
    assert proc.stderr == 'root@testhost removed "arusers" from userset list\n'
    assert "arusers" not in cell.run("qconf", "-sul").stdout
    cell.run("qconf", "-dattr", "queue", "pe_list", "smp", "all.q", check=True)
    assert cell.run("qconf", "-dp", "smp").returncode == 0
    for code, args in ((1, ("-sp", "smp")), (1, ("-dp", "smp"))):
        assert cell.run("qconf", *args).returncode == code
    path = os.path.join(workdir, "obj")
    for option, text in (("-Acal", "calendar_name night\nyear NONE\nweek NONE\n"),
                         ("-Aprj", "name projA\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n")):
        with open(path, "w") as fh:
            fh.write(text)
        cell.run("qconf", option, path, check=True)
    cell.run("qconf", "-mattr", "queue", "calendar", "night", "all.q", check=True)
    cell.run("qconf", "-aattr", "queue", "xprojects", "projA", "all.q", check=True)
    assert cell.run("qconf", "-dcal", "night").stderr == 'denied: Calendar "night" is still referenced in queue "all.q"\n'
    assert cell.run("qconf", "-dprj", "projA").stderr == \
        'denied: project "projA" is still referenced in xprojects of queue "all.q"\n'


CKPT = ("ckpt_name ckm\ninterface USERDEFINED\nckpt_command none\nmigr_command none\n"
        "restart_command none\nclean_command none\nckpt_dir /tmp\nsignal none\nwhen x\n")


def test_pe_and_ckpt_requested_by_a_job_cannot_be_deleted(cell, workdir):
    path = os.path.join(workdir, "ckm")
    with open(path, "w") as fh:
        fh.write(CKPT)
    cell.run("qconf", "-Ackpt", path, check=True)
    job = submit(cell, "-h", "-pe", "ma*", "1", "-ckpt", "ckm", "-b", "y", "true")
    cell.run("qconf", "-dattr", "queue", "pe_list", "make", "all.q", check=True)
    proc = cell.run("qconf", "-dp", "make")
    assert (proc.stderr, proc.returncode) == (
        f'denied: Parallel environment "make" is still referenced in job {job}.\n', 1)
    proc = cell.run("qconf", "-dckpt", "ckm")
    assert (proc.stderr, proc.returncode) == (
        f'denied: Checkpointing object "ckm" is still referenced in job {job}.\n', 1)
    assert "make" in cell.run("qconf", "-spl").stdout.split()
    cell.run("qdel", str(job), check=True)
    cell.wait_finished(job)
    assert cell.run("qconf", "-dp", "make").returncode == 0
    assert cell.run("qconf", "-dckpt", "ckm").returncode == 0


def _write_complex(cell, workdir, text):
    path = os.path.join(workdir, "cx")
    with open(path, "w") as fh:
        fh.write(text)
    return cell.run("qconf", "-Mc", path)


def test_complex_attribute_in_use_cannot_be_removed(cell, workdir):
    text = cell.run("qconf", "-sc").stdout
    extra = "lic lic INT <= YES YES 0 0\nfoo foo DOUBLE >= NO NO 0 0\n"
    assert _write_complex(cell, workdir, text + extra).returncode == 0
    cell.run("qconf", "-mattr", "queue", "complex_values", "lic=4", "all.q", check=True)
    sched = cell.run("qconf", "-ssconf").stdout
    path = os.path.join(workdir, "sc")
    with open(path, "w") as fh:
        fh.write(re.sub(r"(?m)^load_formula .*$", "load_formula np_load_avg+foo", sched))
    cell.run("qconf", "-Msconf", path, check=True)
    for kept, where in (("foo", 'queue "all.q"'), ("lic", "scheduler configuration")):
        proc = _write_complex(cell, workdir, text + [ln for ln in extra.splitlines(True)
                                                     if ln.startswith(kept)][0])
        gone = "lic" if kept == "foo" else "foo"
        assert (proc.stderr, proc.returncode) == (
            f'denied: Complex attribute "{gone}" is still referenced in {where}.\n', 1)


def test_complex_definitions_grid_engine_refuses(cell, workdir):
    text = cell.run("qconf", "-sc").stdout
    for row, answer in (("c1 c1 DOUBLE >= YES YES 0 0", 'Consumable "c1" can have only <= as an relational operator'),
                        ("c2 c2 INT <= YES NO 5 0", 'Complex "c2" cannot have a (non-zero) default value'),
                        ("c3 c3 INT <= NO YES 0 0",
                         'Consumable "c3" needs a default value because it is not requestable.')):
        proc = _write_complex(cell, workdir, text + row + "\n")
        assert (proc.stderr, proc.returncode) == (answer + "\n", 1)
    proc = _write_complex(cell, workdir, re.sub(r"(?m)^tmpdir .*$", "tmpdir tmp STRING == YES NO NONE 0", text))
    assert (proc.stderr, proc.returncode) == ('Complex attribute "tmpdir" is not requestable\n', 1)
    assert cell.run("qconf", "-sc").stdout == text


def test_scheduler_configurations_grid_engine_refuses(cell, workdir):
    text = cell.run("qconf", "-ssconf").stdout
    path = os.path.join(workdir, "sc")
    for changes, answer in (
            ({"params": "bogus"}, 'found unknown param: "bogus"'),
            ({"load_formula": "np_load_avg+foo"}, '"load_formula" references not existing complex attribute "foo"'),
            ({"max_pending_tasks_per_job": "0"}, 'invalid setting for param: "max_pending_tasks_per_job"(should be ">0")'),
            ({"max_reservation": "10", "default_duration": "0:0:0"},
             "denied: resource reservation requires valid default duration")):
        changed = text
        for key, value in changes.items():
            changed = re.sub(rf"(?m)^{key} .*$", f"{key} {value}", changed)
        with open(path, "w") as fh:
            fh.write(changed)
        proc = cell.run("qconf", "-Msconf", path)
        assert (proc.stderr, proc.returncode) == (answer + "\n", 1)
    assert cell.run("qconf", "-ssconf").stdout == text
    with open(path, "w") as fh:
        fh.write(re.sub(r"(?m)^load_formula .*$", "load_formula np_load_avg*2+$slots-1e3", text))
    assert cell.run("qconf", "-Msconf", path).returncode == 0


def test_usersets_grid_engine_refuses(cell, workdir):
    path = os.path.join(workdir, "us")

    def load(option, text):
        with open(path, "w") as fh:
            fh.write(text)
        return cell.run("qconf", option, path)
    acl = "name acl9\ntype ACL\nfshare {}\noticket {}\nentries root\n"
    assert load("-Au", acl.format(10, 5)).returncode == 0          # (checked on changes only)
    for fshare, oticket, answer in ((10, 0, '"fshare"'), (0, 5, '"oticket"')):
        proc = load("-Mu", acl.format(fshare, oticket))
        assert (proc.stderr, proc.returncode) == (f"not allowed to set {answer} for ACL lists\n", 1)
    assert load("-Mu", acl.format(0, 0)).returncode == 0
    dept = "name defaultdepartment\ntype {}\nfshare 0\noticket 0\nentries {}\n"
    for kind, entries, answer in (("DEPT", "root", 'all users are assigned to the "defaultdepartment" automatically'),
                                  ("ACL", "NONE", 'the "defaultdepartment" has to be of type "DEPT"')):
        proc = load("-Mu", dept.format(kind, entries))
        assert (proc.stderr, proc.returncode) == (answer + "\n", 1)
    proc = cell.run("qconf", "-au", "root", "defaultdepartment")
    assert (proc.stderr, proc.returncode) == (
        'all users are assigned to the "defaultdepartment" automatically\n', 1)
    assert cell.run("qconf", "-su", "defaultdepartment").stdout.endswith("entries NONE\n")
    # numbers are kept in 32 unsigned bits, as Grid Engine keeps them: a bigger one would
    # stop every scheduling pass that weighs the department's tickets
    big = "name bigdept\ntype DEPT\nfshare 0\noticket {}\nentries root\n"
    for value in ("4294967296", "1" + "0" * 400, "1" + "0" * 5000):
        proc = load("-Au", big.format(value))
        shown = value if len(value) < 20 else value[:60] + "..."
        assert (proc.stderr, proc.returncode) == (
            f'error: line 4: invalid value "{shown}" for attribute "oticket": expected a non-negative '
            "integer of at most 4294967295\n", 1)
    assert load("-Au", big.format(4294967295)).returncode == 0


def test_quota_sets_refused_in_grid_engines_words(cell, workdir):
    path = os.path.join(workdir, "rqs")
    for limit, answer in (("users * to nosuch=1", '"resource_quota" references not existing complex attribute "nosuch"'),
                          ("users * to slots=$num_proc*2", "dynamic limits are only supported for per host rules")):
        with open(path, "w") as fh:
            fh.write(f"{{\n name r1\n enabled true\n limit {limit}\n}}\n")
        proc = cell.run("qconf", "-Arqs", path)
        assert (proc.stderr, proc.returncode) == (answer + "\n", 1)


def test_host_groups_add_only_hosts_that_resolve(cell, workdir):
    path = os.path.join(workdir, "hg")
    with open(path, "w") as fh:
        fh.write("group_name @hgx\nhostlist testhost no-such-host.invalid\n")
    proc = cell.run("qconf", "-Ahgrp", path)
    assert (proc.stderr, proc.returncode) == ('unable to resolve host "no-such-host.invalid"\n', 1)
    with open(path, "w") as fh:
        fh.write("group_name @hgx\nhostlist testhost localhost\n")    # a cell host, a host that resolves
    assert cell.run("qconf", "-Ahgrp", path).returncode == 0
    proc = cell.run("qconf", "-aattr", "hostgroup", "hostlist", "other.invalid", "@hgx")
    assert (proc.stderr, proc.returncode) == ('unable to resolve host "other.invalid"\n', 1)
    assert cell.run("qconf", "-shgrp", "@hgx").stdout == "group_name @hgx\nhostlist testhost localhost\n"


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
    stopped_at = last_pass(cell)
    job = submit(cell, "-b", "y", "true")
    # answered after the round that took the submission in (requests are taken in order):
    # that round, asked for a pass, runs none
    reschedule(cell)
    assert last_pass(cell) == stopped_at
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

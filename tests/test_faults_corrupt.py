"""Corrupt spool and configuration files: the daemon starts anyway, sets the bad
object aside (spool/quarantine), names it in spool/messages and in qstat/qconf
output; ``gridtools daemon start`` fails with one line when the daemon does not
come up; a read-only spool gives one clear line to every command."""

import os
import shutil

import pytest

from conftest import wait_for
from faulttools import messages, quarantined, small_spool


def _submit_held(cell, n, workdir):
    return [int(cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True).stdout)
            for _ in range(n)]


def _taken(cell, ids):
    return all(os.path.exists(os.path.join(cell.root, "spool", "jobs", str(j), "job.yaml")) for j in ids)


@pytest.mark.parametrize("damage", ["garbled", "empty", "binary"])
@pytest.mark.parametrize("which", ["job.yaml", "state.yaml"])
def test_a_corrupt_job_file_is_set_aside_and_the_daemon_starts(cell, workdir, which, damage):
    ids = _submit_held(cell, 3, workdir)
    wait_for(lambda: _taken(cell, ids))
    cell.run("qrls", str(ids[2]), check=True)        # job 3 runs: it has a state file
    cell.wait_finished(ids[2])
    cell.stop_daemon()
    bad = ids[1] if which == "job.yaml" else ids[2]
    path = os.path.join(cell.root, "spool", "jobs", str(bad), which)
    with open(path, "wb") as fh:
        fh.write({"garbled": b"tasks: [\n  - {", "empty": b"", "binary": b"\xff\xfe\x00\x01"}[damage])
    start = cell.run("gridtools", "daemon", "start")
    assert start.returncode == 0, start.stderr
    wait_for(lambda: cell.run("gridtools", "daemon", "status").returncode == 0)
    # set aside, named in messages, shown by qstat
    assert not os.path.exists(os.path.join(cell.root, "spool", "jobs", str(bad)))
    assert any(str(bad) in name for name in quarantined(cell))
    assert any(f"jobs/{bad}/{which}" in line for line in messages(cell)), messages(cell)
    # (the status that names it comes with the daemon's first pass, after its start-up)
    qstat = wait_for(lambda: (lambda p: p if "quarantine" in p.stderr else None)(cell.run("qstat", "-u", "*")))
    assert qstat.returncode == 0
    assert f"job {bad}" in qstat.stderr and "quarantine" in qstat.stderr, qstat.stderr
    assert str(ids[0]) in qstat.stdout
    # the cell keeps working: the good held job is still there and runs when released
    cell.run("qrls", str(ids[0]), check=True)
    cell.wait_finished(ids[0])
    jid = int(cell.qsub("-terse", "-b", "y", "true", cwd=workdir, check=True).stdout)
    cell.wait_finished(jid)


QUEUE_DAMAGE = {"garbled": "qname all.q\nslots ][ :: nonsense\n", "empty": "", "unknown": "garbage ][ ::\n"}


@pytest.mark.parametrize("damage", sorted(QUEUE_DAMAGE))
def test_a_corrupt_queue_file_is_set_aside_and_named_by_qconf_and_qstat(idle_cell, workdir, damage):
    cell = idle_cell
    shutil.copy(os.path.join(cell.root, "etc", "queues", "all.q"), os.path.join(cell.root, "etc", "queues", "other.q"))
    other = os.path.join(cell.root, "etc", "queues", "other.q")
    with open(other) as fh:
        text = fh.read().replace("qname                 all.q", "qname                 other.q")
    with open(other, "w") as fh:
        fh.write(text.replace("\nqname ", "\nqname "))
    with open(os.path.join(cell.root, "etc", "queues", "all.q"), "w") as fh:
        fh.write(QUEUE_DAMAGE[damage])
    start = cell.run("gridtools", "daemon", "start")
    assert start.returncode == 0, start.stderr
    assert cell.run("gridtools", "daemon", "status").returncode == 0
    assert not os.path.exists(os.path.join(cell.root, "etc", "queues", "all.q"))
    assert any("all.q" in name for name in quarantined(cell))
    assert any("etc/queues/all.q" in line for line in messages(cell)), messages(cell)
    # (the status that names it comes with the daemon's first pass, after its start-up)
    sql = wait_for(lambda: (lambda p: p if "quarantine" in p.stderr else None)(cell.run("qconf", "-sql")))
    assert sql.returncode == 0 and sql.stdout.split() == ["other.q"]
    assert "all.q" in sql.stderr and "quarantine" in sql.stderr, sql.stderr
    assert "all.q" in cell.run("qstat", "-f").stderr
    # the remaining queue serves jobs
    jid = int(cell.qsub("-terse", "-b", "y", "true", cwd=workdir, check=True).stdout)
    cell.wait_finished(jid)
    # repaired (put back in its place) the warning goes, without a daemon restart
    shutil.copy(other, os.path.join(cell.root, "etc", "queues", "all.q"))
    with open(os.path.join(cell.root, "etc", "queues", "all.q")) as fh:
        text = fh.read().replace("qname                 other.q", "qname                 all.q")
    with open(os.path.join(cell.root, "etc", "queues", "all.q"), "w") as fh:
        fh.write(text)
    wait_for(lambda: cell.run("qstat", "-f").stderr == "", timeout=15)
    assert any("etc/queues/all.q is in its place again and reads" in line for line in messages(cell))
    assert cell.run("qconf", "-sql").stdout.split() == ["all.q", "other.q"]


@pytest.mark.parametrize("relpath", ["sched_conf", "complex", "conf/global", "exechosts/testhost",
                                     "hostgroups/@allhosts", "pe/smp", "usersets/arusers"])
def test_any_corrupt_configuration_file_does_not_stop_the_daemon(idle_cell, workdir, relpath):
    cell = idle_cell
    with open(os.path.join(cell.root, "etc", relpath), "w") as fh:
        fh.write("\x00garbage ][ ::\nbroken\n")
    start = cell.run("gridtools", "daemon", "start")
    assert start.returncode == 0, start.stderr
    assert cell.run("gridtools", "daemon", "status").returncode == 0
    assert any(f"etc/{relpath}" in line for line in messages(cell)), messages(cell)
    # (the status that names it comes with the daemon's first pass, after its start-up)
    wait_for(lambda: f"etc/{relpath}" in cell.run("qstat").stderr)
    if relpath in ("sched_conf", "complex", "conf/global", "pe/smp", "usersets/arusers"):
        jid = int(cell.qsub("-terse", "-b", "y", "true", cwd=workdir, check=True).stdout)
        cell.wait_finished(jid)


def test_a_corrupt_queue_state_file_is_set_aside(idle_cell):
    cell = idle_cell
    with open(os.path.join(cell.root, "spool", "qstates.yaml"), "w") as fh:
        fh.write("queues: [\n")
    assert cell.run("gridtools", "daemon", "start").returncode == 0
    assert any("qstates.yaml" in line for line in messages(cell))
    assert any("qstates.yaml" in name for name in quarantined(cell))


def test_a_corrupt_file_found_while_running_is_named_and_the_old_object_kept(cell, workdir):
    queue = os.path.join(cell.root, "etc", "queues", "all.q")
    with open(queue, "w") as fh:
        fh.write("qname all.q\nslots ][\n")
    wait_for(lambda: any("etc/queues/all.q" in line for line in messages(cell)), timeout=10)
    jid = int(cell.qsub("-terse", "-b", "y", "true", cwd=workdir, check=True).stdout)
    cell.wait_finished(jid)
    assert os.path.exists(queue), "a file being edited is not taken away from a running cell"


def test_daemon_start_fails_with_one_line_when_the_daemon_does_not_come_up(idle_cell):
    cell = idle_cell
    proc = cell.run("gridtools", "daemon", "start", env={"GRIDTOOLS_CRASH_AT": "startup:1"})
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "did not start" in lines[0] and "signal 9" in lines[0], proc.stderr
    assert "daemon started" not in proc.stdout
    assert cell.run("gridtools", "daemon", "status").returncode == 1


def test_daemon_start_names_the_cause_of_a_failed_start(idle_cell):
    cell = idle_cell
    wakeup = os.path.join(cell.root, "spool", "wakeup")
    if os.path.lexists(wakeup):
        os.unlink(wakeup)
    os.mkdir(wakeup)                                            # not a FIFO
    proc = cell.run("gridtools", "daemon", "start")
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "wakeup" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


CLIENTS = [
    ("qsub", "-b", "y", "true"), ("qsub", "-sync", "y", "-b", "y", "true"), ("qrsh", "true"),
    ("qdel", "1"), ("qhold", "1"), ("qrls", "1"), ("qalter", "-N", "x", "1"), ("qmod", "-d", "all.q"),
    ("qconf", "-Aq", "/dev/null"), ("qconf", "-mattr", "queue", "slots", "3", "all.q"),
    ("qstat",), ("qstat", "-j", "1"), ("qstat", "-f"), ("qhost",), ("qacct", "-j", "1"),
    ("gridtools", "daemon", "start"), ("gridtools", "daemon", "status"), ("gridtools", "daemon", "stop"),
    ("gridtools", "host", "drain", "testhost"),
]


def test_a_read_only_spool_gives_one_clear_line_to_every_command(idle_cell):
    cell = idle_cell
    cell.run("gridtools", "daemon", "start", check=True)
    jid = int(cell.qsub("-terse", "-h", "-b", "y", "true", check=True).stdout)
    assert jid == 1
    cell.stop_daemon()
    with small_spool(cell, 2048, read_only=True):
        for argv in CLIENTS:
            proc = cell.run(*argv, env={"EDITOR": "true"}, timeout=30)
            text = proc.stdout + proc.stderr
            assert "Traceback" not in text, (argv, text)
            if argv[0] in ("qsub", "qrsh", "qdel", "qhold", "qrls", "qalter", "qmod", "qconf") or \
                    argv[1:2] == ("host",) or argv[1:] == ("daemon", "start"):
                assert proc.returncode != 0, argv
                errs = [line for line in proc.stderr.splitlines() if line.strip()]
                assert errs and len(errs) <= 2, (argv, proc.stderr)
            if argv[1:] == ("daemon", "start"):
                assert "read-only" in proc.stderr.lower(), proc.stderr
            if argv[0] == "qsub":
                assert "read-only" in proc.stderr.lower(), proc.stderr

"""condor_preen: the cell's stale files, reported and removed; nothing a job still uses."""

import os
import subprocess
import time

from conftest import wait_for
from condortools import submit, wait_status, write
from qtools import set_global

from gridtools.exec import tmpdir

HOURS_AGO = time.time() - 7200
MINUTES_AGO = time.time() - 120


def dead_pid():
    """The pid of a process that has ended."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def old(path, when=HOURS_AGO):
    """``path`` last modified two hours ago (or ``when``)."""
    os.utime(path, (when, when), follow_symlinks=False)
    return path


def touch(path):
    with open(path, "w"):
        pass
    return path


def report(*paths, how="Not Removed"):
    return "".join(f"  {path} - {how}\n" for path in paths)


def test_preen_reports_then_removes_only_what_nothing_uses(cell, users, workdir):
    spool = os.path.join(cell.root, "spool")
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("INVALID_LOG_FILES = core.1, core.2\n")
    cell.run("condor_reconfig", check=True)
    proc = cell.run("condor_preen", check=True)
    assert proc.stdout == ""                            # a fresh cell has nothing stale

    running = submit(cell, "executable = /bin/sleep\narguments = 300\nqueue\n", cwd=workdir)
    wait_status(cell, f"{running}.0", 2)
    cell_tmp = os.path.join("/tmp", tmpdir.cell_folder_name(cell.root))
    in_use = os.path.join(cell_tmp, f"{running}.1.all.q")
    wait_for(lambda: os.path.isdir(in_use))             # (made by its shepherd as the job starts)
    old(in_use)
    old(os.path.join(spool, "jobs", str(running)))      # a job the queue holds: never stale

    dead, live = dead_pid(), os.getpid()
    stale_temp = old(touch(os.path.join(spool, f".status.{dead}.tmp")), MINUTES_AGO)
    young_dead = touch(os.path.join(spool, f".other.{dead}.tmp"))     # (its write may go on elsewhere)
    young_live = touch(os.path.join(spool, "public", f".0.{live}.tmp"))
    old_live = old(touch(os.path.join(spool, "public", f".1.{live}.tmp")))
    job_temp = old(touch(os.path.join(spool, "jobs", str(running), f".state.yaml.{dead}.tmp")), MINUTES_AGO)
    lost_job = os.path.join(spool, "jobs", "987654")
    os.mkdir(lost_job)
    touch(os.path.join(lost_job, "job.yaml"))
    old(lost_job)
    young_job = os.path.join(spool, "jobs", "987655")
    os.mkdir(young_job)
    lost_task = os.path.join(cell_tmp, "987654.1.all.q")
    os.mkdir(lost_task)
    touch(os.path.join(lost_task, "left"))
    old(lost_task)
    kept = os.path.join(cell_tmp, f".kept.{dead}")
    os.mkdir(kept)
    core = touch(os.path.join(spool, "core.1"))
    messages = touch(os.path.join(spool, "other.log"))

    stale = [stale_temp, old_live, lost_job, job_temp, kept, lost_task, core]
    proc = cell.run("condor_preen", check=True)
    assert sorted(proc.stdout.splitlines()) == sorted(report(*stale).splitlines())
    assert all(os.path.lexists(path) for path in stale)     # reported, not removed

    proc = cell.run("condor_preen", "-verbose", check=True)
    lines = proc.stdout.splitlines()
    for path in (young_live, young_dead, young_job, in_use):
        assert f"{path} - OK" in lines
    for path in stale:
        assert f"{path} - BAD" in lines and f"  {path} - Not Removed" in lines

    proc = cell.run("condor_preen", "-remove", check=True)
    assert sorted(proc.stdout.splitlines()) == sorted(report(*stale, how="Removed").splitlines())
    assert not any(os.path.lexists(path) for path in stale)
    for path in (young_live, young_dead, young_job, in_use, messages,
                 os.path.join(spool, "jobs", str(running), "job.yaml")):
        assert os.path.lexists(path), path
    assert cell.run("condor_preen", check=True).stdout == ""
    # the job goes on and ends as it would have
    cell.run("condor_rm", str(running), check=True)
    wait_for(lambda: not os.path.lexists(in_use))
    log = open(os.path.join(spool, "messages")).read()
    assert f"condor_preen: {lost_job} - Removed" in log and "condor_preen: Results: 7 files preened" in log


def test_preen_needs_administrator_and_its_options(cell, users, workdir):
    proc = cell.run("condor_preen", user="gtbob")
    assert proc.returncode == 1 and 'DENIED' in proc.stderr and proc.stdout == ""
    proc = cell.run("condor_preen", "-bogus")
    assert proc.returncode == 1
    assert proc.stderr == ("ERROR: unknown option -bogus\n"
                           "Usage: condor_preen [-mail] [-remove] [-verbose] [-debug] [-log <filename>]\n")
    proc = cell.run("condor_preen", "-log")
    assert proc.returncode == 1 and proc.stderr.startswith("ERROR: -log requires another argument\n")
    log = os.path.join(workdir, "preen.log")
    proc = cell.run("condor_preen", "-d", "-log", log, check=True)
    assert "STARTING: condor_preen PID:" in proc.stderr and "Results: No files preened" in proc.stderr
    text = open(log).read()
    assert "STARTING: condor_preen PID:" in text and "ENDING: condor_preen PID:" in text


def test_preen_mails_its_report(cell, users, workdir):
    got = os.path.join(workdir, "mail")
    mailer = write(os.path.join(workdir, "mailer"), f'#!/bin/sh\nprintf "%s|" "$@" > {got}\ncat >> {got}\n',
                   0o755)
    set_global(cell, mailer=mailer)
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("PREEN_ADMIN = admin@example.org\n")
    cell.run("condor_reconfig", check=True)
    assert cell.run("condor_preen", "-mail", check=True).stdout == ""
    assert not os.path.exists(got)                          # nothing found: no mail
    stale = old(touch(os.path.join(cell.root, "spool", f".status.{dead_pid()}.tmp")), MINUTES_AGO)
    proc = cell.run("condor_preen", "-m", check=True)
    assert proc.stdout == ""
    text = open(got).read()
    assert text.startswith(f"-s|condor_preen results {cell.host}: 1 old file found|admin@example.org|")
    assert text.endswith(f"stale condor files on <{cell.host}>:\n\n  {stale} - Not Removed\n")
    write(mailer, "#!/bin/sh\nexit 1\n", 0o755)
    proc = cell.run("condor_preen", "-mail")
    assert proc.returncode == 2 and "Can't do email_open" in proc.stderr


def test_the_daemon_preens_every_preen_interval(cell, users):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("PREEN_INTERVAL = 1\n")
    cell.run("condor_reconfig", check=True)
    stale = old(touch(os.path.join(cell.root, "spool", f".status.{dead_pid()}.tmp")), MINUTES_AGO)

    def gone():
        cell.run("condor_reschedule", check=True)           # (a pass: the daemon looks)
        return not os.path.lexists(stale)
    wait_for(gone, timeout=20)
    # (the daemon writes its messages after the pass that removed the file)
    wait_for(lambda: f"condor_preen: {stale} - Removed" in open(os.path.join(cell.root, "spool", "messages")).read())

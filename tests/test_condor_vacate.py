"""condor_vacate: the startd vacates the jobs in the slots named, of either dialect; they
wait and run again. Refusals as HTCondor's tool words them."""

import os

from conftest import wait_for
from condortools import events, submit

#: a job that notes the signal that asks it to leave, and leaves
POLITE = """#!/bin/sh
trap 'echo TERM >> "$1"; exit 0' TERM
echo started >> "$1"
sleep 60 & wait
"""


def started(path):
    return open(path).read().count("started") if os.path.exists(path) else 0


def test_vacated_jobs_leave_politely_or_at_once_and_run_again(cell, workdir):
    script = os.path.join(workdir, "polite.sh")
    with open(script, "w") as fh:
        fh.write(POLITE)
    os.chmod(script, 0o755)
    notes = [os.path.join(workdir, f"notes.{n}") for n in range(2)]
    cluster = submit(cell, f"executable = {script}\narguments = {workdir}/notes.$(Process)\n"
                           "log = job.log\nqueue 2\n", cwd=workdir)
    wait_for(lambda: all(started(n) == 1 for n in notes))
    proc = cell.run("condor_vacate", check=True)
    assert proc.stdout == 'Sent "Vacate-All-Claims" command to local startd\n'
    # each asked to leave (its kill signal), evicted, and started again
    wait_for(lambda: all(started(n) == 2 for n in notes), timeout=20)
    assert all(open(n).read().count("TERM") == 1 for n in notes)
    log = os.path.join(workdir, "job.log")
    found = events(log)
    assert [found[f"{cluster}.{proc}"].count(4) for proc in (0, 1)] == [1, 1]       # evicted once each
    out = cell.run("condor_q", str(cluster), "-af", "JobRunCount").stdout.split()
    assert out == ["2", "2"]
    # -fast on one slot: killed, no signal to catch; the other slot's job goes on
    slot = cell.run("condor_q", f"{cluster}.0", "-af", "RemoteHost").stdout.strip()
    proc = cell.run("condor_vacate", "-fa", slot, check=True)
    assert proc.stdout == f'Sent "Vacate-Claim-Fast" command to startd {slot}\n'
    wait_for(lambda: started(notes[0]) == 3, timeout=20)
    assert open(notes[0]).read().count("TERM") == 1 and started(notes[1]) == 2
    cell.run("condor_rm", str(cluster), check=True)


def test_grid_engine_jobs_are_vacated_too(cell, workdir):
    jid = cell.qsub("-terse", "-b", "y", "sleep", "60", cwd=workdir, check=True).stdout.strip()
    wait_for(lambda: cell.task_states(int(jid)).get(1) == "running")
    proc = cell.run("condor_vacate", "-all", check=True)
    assert proc.stdout == f'Sent "Vacate-All-Claims" command to startd {cell.host}\n'
    wait_for(lambda: (cell.job_state(int(jid))["tasks"]["1"].get("restarted") or 0) >= 1)
    wait_for(lambda: cell.task_states(int(jid)).get(1) == "running")
    cell.run("qdel", jid, check=True)


def test_names_no_startd_has_vacate_nothing(cell, workdir):
    cluster = submit(cell, "executable = /bin/sleep\narguments = 60\nqueue\n", cwd=workdir)
    wait_for(lambda: cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.strip() == "2")
    proc = cell.run("condor_vacate", cell.host, "nohost", "slot9@" + cell.host)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == ("Can't find address for startd nohost\nCan't find address for startd slot9@"
                           f"{cell.host}\nPerhaps you need to query another pool.\n")
    proc = cell.run("condor_vacate", "-constraint", "SlotID == 99")
    assert proc.returncode == 1 and "Can't find addresses for startd's for constraint 'SlotID == 99'" in proc.stderr
    assert cell.run("condor_q", str(cluster), "-af", "JobRunCount").stdout.strip() == "1"
    proc = cell.run("condor_vacate", "-x")
    assert proc.returncode == 1 and proc.stderr.startswith("ERROR: unknown option -x\nUsage: condor_vacate")
    cell.run("condor_rm", str(cluster), check=True)


def test_only_administrators_vacate(cell, users, workdir):
    cluster = submit(cell, "executable = /bin/sleep\narguments = 60\nqueue\n", cwd=workdir)
    wait_for(lambda: cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.strip() == "2")
    proc = cell.run("condor_vacate", user="gtbob")
    assert proc.returncode == 1 and proc.stdout == ""
    assert 'SECMAN:2010:Received "DENIED" from server for user gtbob' in proc.stderr
    assert proc.stderr.endswith("Can't send Vacate-All-Claims command to local startd\n")
    assert cell.run("condor_q", str(cluster), "-af", "JobRunCount").stdout.strip() == "1"
    cell.run("condor_rm", str(cluster), check=True)

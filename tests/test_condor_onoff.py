"""condor_off, condor_on and condor_restart: the startd of a host off (its jobs put back
to wait, or left to finish with -peaceful) and on again, the cell's daemon restarted;
what cannot be done apart is refused, as are callers the ADMINISTRATOR level does not
allow."""

import os

from conftest import wait_for
from condortools import submit


def statuses(cell, cluster):
    return cell.run("condor_q", str(cluster), "-af", "JobStatus").stdout.split()


def test_off_puts_the_jobs_back_and_on_runs_them_again(cell, workdir):
    cluster = submit(cell, "executable = /bin/sleep\narguments = 60\nqueue\n", cwd=workdir)
    wait_for(lambda: statuses(cell, cluster) == ["2"])
    proc = cell.run("condor_off", check=True)
    assert proc.stdout == 'Sent "Kill-All-Daemons" command to local master\n'
    wait_for(lambda: statuses(cell, cluster) == ["1"])
    # the startd is off: no slot ads, and the jobs wait (a pass looked at them)
    wait_for(lambda: cell.run("condor_status", "-af", "Name").stdout == "")
    jid = cell.qsub("-terse", "-b", "y", "true", cwd=workdir, check=True).stdout.strip()
    wait_for(lambda: "scheduling info" in cell.run("qstat", "-j", jid).stdout)
    assert cell.task_states(int(jid)).get(1) != "finished"
    proc = cell.run("condor_on", "-startd", check=True)
    assert proc.stdout == 'Sent "Spawn-Daemon" command for "startd" to local master\n'
    wait_for(lambda: statuses(cell, cluster) == ["2"])
    cell.wait_finished(int(jid))
    assert len(cell.run("condor_status", "-af", "Name").stdout.split()) == 2
    cell.run("condor_rm", str(cluster), check=True)


def test_a_peaceful_off_lets_running_jobs_finish(cell, workdir):
    release = os.path.join(workdir, "release")
    running = submit(cell, f"executable = /bin/sh\narguments = \"-c 'while [ ! -e {release} ]; do sleep 0.1; done'\"\n"
                           "queue\n", cwd=workdir)
    wait_for(lambda: statuses(cell, running) == ["2"])
    proc = cell.run("condor_off", "-peaceful", "-startd", cell.host, check=True)
    assert proc.stdout == f'Sent "Kill-Daemon-Peacefully" command for "startd" to master {cell.host}\n'
    waiting = submit(cell, "executable = /bin/true\nqueue\n", cwd=workdir)
    wait_for(lambda: "scheduling info" in cell.run("qstat", "-j", str(waiting)).stdout)
    assert statuses(cell, running) == ["2"] and statuses(cell, waiting) == ["1"]
    open(release, "w").close()
    wait_for(lambda: statuses(cell, running) == [])
    assert statuses(cell, waiting) == ["1"]
    proc = cell.run("condor_on", "-all", check=True)
    assert proc.stdout == f'Sent "Spawn-All-Daemons" command to master {cell.host}\n'
    wait_for(lambda: statuses(cell, waiting) == [])


def test_restart_starts_the_daemon_again_and_its_jobs_go_on(cell, workdir):
    cluster = submit(cell, "executable = /bin/sleep\narguments = 60\nqueue\n", cwd=workdir)
    wait_for(lambda: statuses(cell, cluster) == ["2"])
    messages = os.path.join(cell.root, "spool", "messages")

    def starts():
        with open(messages) as fh:
            return fh.read().count("|I|daemon started")
    before = starts()
    proc = cell.run("condor_restart", check=True)
    assert proc.stdout == 'Sent "Restart" command to local master\n'
    wait_for(lambda: starts() == before + 1)
    assert statuses(cell, cluster) == ["2"]
    assert cell.run("condor_q", str(cluster), "-af", "JobRunCount").stdout.strip() == "1"
    cell.run("condor_rm", str(cluster), check=True)


def test_refusals(cell, users):
    proc = cell.run("condor_off", "-schedd")
    assert proc.returncode == 1 and proc.stderr.startswith("ERROR: one daemon is every HTCondor daemon of the cell")
    proc = cell.run("condor_on", "-master")
    assert proc.returncode == 1 and "its master cannot be turned on" in proc.stderr
    proc = cell.run("condor_off", "elsewhere")
    assert (proc.returncode, proc.stderr) == (1, "Can't find address for master elsewhere\n"
                                                 "Perhaps you need to query another pool.\n")
    proc = cell.run("condor_off", "-bogus")
    assert proc.returncode == 1 and proc.stderr.startswith("ERROR: unknown option -bogus\nUsage: condor_off")
    proc = cell.run("condor_off", user="gtbob")
    assert proc.returncode == 1 and 'SECMAN:2010:Received "DENIED" from server for user gtbob' in proc.stderr
    assert len(cell.run("condor_status", "-af", "Name").stdout.split()) == 2      # still on
    assert cell.run("condor_on", "-help").stdout.startswith("Usage: condor_on [general-options]")

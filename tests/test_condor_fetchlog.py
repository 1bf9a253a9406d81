"""condor_fetchlog: a daemon's log, as an administrator fetches it."""

import os

from condortools import submit, wait_gone


def test_fetch_the_daemon_log_and_the_history(cell, users, workdir):
    cluster = submit(cell, "executable = /bin/true\nqueue\n", cwd=workdir)
    wait_gone(cell, f"{cluster}.0")
    with open(os.path.join(cell.root, "spool", "messages"), "rb") as fh:
        logged = fh.read()
    for log in ("MASTER", "schedd", "STARTER.slot2"):
        proc = cell.run("condor_fetchlog", cell.host, log, text=False)
        assert proc.returncode == 0 and proc.stdout.startswith(logged[:200]) and b"daemon started" in proc.stdout
    proc = cell.run("condor_fetchlog", "-startd", cell.host, "HISTORY")
    assert proc.returncode == 0 and f"ClusterId = {cluster}\n" in proc.stdout
    proc = cell.run("condor_fetchlog", cell.host, "NOSUCH")
    assert (proc.returncode, proc.stderr) == (1, "Couldn't fetch log: no log file by that name.\n")
    proc = cell.run("condor_fetchlog", "elsewhere", "MASTER")
    assert proc.returncode == 1 and proc.stderr.startswith("Couldn't locate daemon on elsewhere")
    proc = cell.run("condor_fetchlog", cell.host)
    assert proc.returncode == 1 and proc.stderr.startswith("Usage: condor_fetchlog [options] <machine-name>")
    # ADMINISTRATOR: by default the cell's managers
    proc = cell.run("condor_fetchlog", cell.host, "MASTER", user="gtbob")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "Couldn't fetch log: permission denied.\n")

"""condor_reschedule: a pass now; WRITE at the SCHEDD (by default open to every user)."""

from condortools import submit, wait_gone


def test_reschedule_asks_for_a_pass(cell, users, workdir):
    proc = cell.run("condor_reschedule", check=True)
    assert proc.stdout == 'Sent "Reschedule" command to local schedd\n'
    proc = cell.run("condor_reschedule", cell.host, user="gtbob", check=True)
    assert proc.stdout == f'Sent "Reschedule" command to schedd {cell.host}\n'
    cluster = submit(cell, "executable = /bin/true\nqueue\n", cwd=workdir)
    cell.run("condor_reschedule", check=True)
    wait_gone(cell, f"{cluster}.0")
    proc = cell.run("condor_reschedule", "elsewhere")
    assert (proc.returncode, proc.stderr) == (1, "Can't find address for schedd elsewhere\n"
                                                 "Perhaps you need to query another pool.\n")
    with open(f"{cell.root}/etc/condor_config", "a") as fh:
        fh.write("DENY_WRITE = gtbob@*\n")
    cell.run("condor_reconfig", check=True)
    proc = cell.run("condor_reschedule", user="gtbob")
    assert proc.returncode == 1 and 'SECMAN:2010:Received "DENIED" from server for user gtbob' in proc.stderr

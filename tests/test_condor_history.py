"""condor_history -file: a history file named on the command line."""

HEADING = " ID          OWNER            SUBMITTED   RUN_TIME   ST   COMPLETED CMD\n"


def test_file_that_cannot_be_opened_is_an_error(idle_cell, tmp_path):
    """As HTCondor's condor_history: the heading, then the error, exit 1 (it listed
    nothing and exited 0)."""
    missing = tmp_path / "nosuch"
    proc = idle_cell.run("condor_history", "-file", str(missing))
    assert (proc.returncode, proc.stdout) == (1, HEADING)
    assert proc.stderr == f"Error opening history file {missing}: No such file or directory\n"
    proc = idle_cell.run("condor_history", "-file", str(missing), "-af", "ClusterId")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"Error opening history file {missing}: No such file or directory\n"


def test_file_is_read(idle_cell, tmp_path):
    history = tmp_path / "history"
    history.write_text('ClusterId = 7\nProcId = 0\nOwner = "alice"\nJobStatus = 4\n'
                       '*** ClusterId=7 ProcId=0 Owner="alice"\n')
    proc = idle_cell.run("condor_history", "-file", str(history), "-af", "ClusterId", "Owner")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "7 alice\n", "")


def test_the_cells_own_file_shows_every_column(cell, tmp_path):
    """-file naming the cell's own history file (by any path) shows the job as
    condor_history without -file does, its command (CMD) and private attributes too."""
    import os
    from condortools import history, submit
    from conftest import wait_for
    cluster = submit(cell, "executable = /bin/echo\narguments = hello there\nqueue\n", cwd=str(tmp_path))
    jid = f"{cluster}.0"
    wait_for(lambda: jid in history(cell))
    own = os.path.join(cell.root, "spool", "history")
    link = tmp_path / "hist"
    link.symlink_to(own)
    for path in (own, str(link)):
        assert cell.run("condor_history", "-file", path).stdout == history(cell)
        assert history(cell, "-file", path, jid, "-af", "Cmd", "Arguments") == \
            history(cell, jid, "-af", "Cmd", "Arguments")
    row = history(cell, "-file", own).splitlines()[1]
    assert row.startswith(jid) and row.endswith(" echo hello there")

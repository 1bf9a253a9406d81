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

"""Commands started with a standard stream closed, or whose output cannot be written (a
full disk, here /dev/full): a submission that was made is never reported as failed (a
caller would submit again), nothing prints a traceback, and a command whose output is all
it does says in one line that it could not write it, and fails."""

from qtools import jid_of


def sh(cell, line, user=None):
    """Run ``line`` with /bin/sh (for its redirections) in the cell's environment."""
    return cell.run("/bin/sh", "-c", line, user=user)


def no_traceback(proc):
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr


def queued_names(cell):
    out = cell.run("qstat", "-u", "*", check=True).stdout.splitlines()[2:]
    return [line.split()[2] for line in out]


def test_qsub_with_stdin_closed_submits_a_binary_job(cell):
    proc = sh(cell, "qsub -h -N closedin -b y true <&-")
    no_traceback(proc)
    assert proc.returncode == 0
    assert proc.stdout.startswith("Your job ") and '("closedin") has been submitted' in proc.stdout
    assert "closedin" in queued_names(cell)


def test_qsub_with_stdin_closed_and_no_script_reads_nothing(cell):
    proc = sh(cell, "qsub -h -N nothing <&-")
    no_traceback(proc)
    assert proc.returncode != 0
    assert "no input read from stdin" in proc.stderr
    assert "nothing" not in queued_names(cell)


def test_a_directory_as_stdin_reads_as_nothing(cell):
    """``qstat < /tmp``: the launcher gives the command an empty standard input, where
    Python would stop before any of its code ran with a multi-line fatal error."""
    jid_of(cell.qsub("-h", "-N", "before", "-b", "y", "true"))
    proc = sh(cell, "qstat < /tmp")
    no_traceback(proc)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert "before" in proc.stdout
    proc = sh(cell, "qsub -h -N dirbin -b y true < /tmp")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert '("dirbin") has been submitted' in proc.stdout
    proc = sh(cell, "qsub -h -N dirscript < /tmp")
    assert proc.returncode != 0
    assert proc.stderr.splitlines() == ["Unable to read script file because of error: "
                                        "no input read from stdin"]
    proc = sh(cell, "condor_q < /tmp")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert "dirscript" not in queued_names(cell) and "dirbin" in queued_names(cell)


def test_a_submission_whose_report_cannot_be_written_succeeds(cell, workdir):
    with open(f"{workdir}/one.sub", "w") as fh:
        fh.write("executable = /bin/true\nhold = true\nqueue\n")
    for line, name in (("qsub -h -N fullout -b y true >/dev/full", "fullout"),
                       ("qsub -h -N closedout -b y true >&-", "closedout"),
                       (f"condor_submit -batch-name fullsub {workdir}/one.sub >/dev/full", None)):
        proc = sh(cell, line)
        no_traceback(proc)
        assert proc.returncode == 0, (line, proc.stderr)
        if "/dev/full" in line:
            assert proc.stderr.splitlines() == [
                f"{line.split()[0]}: cannot write to standard output: No space left on device"]
        if name:
            assert name in queued_names(cell)
    batches = cell.run("condor_q", "-af", "JobBatchName", check=True).stdout.split()
    assert batches.count("fullsub") == 1


def test_a_listing_that_cannot_be_written_fails_in_one_line(cell):
    jid_of(cell.qsub("-h", "-b", "y", "true"))
    for line in ("qstat >/dev/full", "qconf -sq all.q >/dev/full", "condor_q >/dev/full"):
        proc = sh(cell, line)
        no_traceback(proc)
        assert proc.returncode == 1, line
        assert proc.stderr.splitlines() == [f"{line.split()[0]}: error: No space left on device"]


def test_output_that_is_the_whole_result_of_a_submitting_command_fails_when_lost(cell, workdir):
    """A submitting command that only prints (its -help, a dry run's ads on standard
    output) has done nothing when that cannot be written: it fails as a listing does."""
    with open(f"{workdir}/dry.sub", "w") as fh:
        fh.write("executable = /bin/echo\nbatch_name = drybatch\nqueue\n")
    for line in ("qsub -help >/dev/full", "qrsub -help >/dev/full", "condor_submit -help >/dev/full",
                 "condor_submit_dag -help >/dev/full",
                 f"condor_submit -dry-run - {workdir}/dry.sub >/dev/full"):
        proc = sh(cell, line)
        no_traceback(proc)
        assert proc.returncode == 1, line
        assert proc.stderr.splitlines() == [f"{line.split()[0]}: error: No space left on device"]
    assert "drybatch" not in cell.run("condor_q", "-af", "JobBatchName", check=True).stdout


def test_commands_started_without_output_streams_run(cell):
    """Descriptors 1 and 2 closed (as some daemons start their children): the commands
    act and exit 0, their output gone."""
    for line in ("qsub -h -N nostreams -b y true >&- 2>&-", "qstat >&- 2>&-", "qconf -sql >&- 2>&-"):
        assert sh(cell, line).returncode == 0, line
    assert "nostreams" in queued_names(cell)

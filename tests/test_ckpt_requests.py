"""What a checkpointing job's requests look like to its user (qsub(1) -ckpt, -c;
qstat -j; qalter -ckpt), against a running daemon: -c that cannot apply is refused
at submission as Grid Engine's qmaster refuses it, qstat -j shows the occasions and
the interval, and a queue that does not offer the environment says so."""

from qtools import add_object, jid_of

CKPT = ("ckpt_name ck\ninterface userdefined\nckpt_command none\nmigr_command none\n"
        "restart_command none\nclean_command none\nckpt_dir /tmp\nsignal usr1\nwhen sx\n")


def test_minus_c_that_cannot_apply_is_refused(cell, workdir):
    add_object(cell, "-Ackpt", CKPT)
    for args, message in ((("-ckpt", "ck", "-c", "n"), 'job rejected: checkpointing with "-c n" requested'),
                          (("-c", "nx"), 'job rejected: checkpointing with "-c n" requested'),
                          (("-c", "s"), "checkpointing denied"),
                          (("-c", "0:1:0"), "checkpointing denied")):
        proc = cell.qsub("-h", *args, "-b", "y", "true", cwd=workdir)
        assert (proc.returncode, proc.stderr) == (1, f"Unable to run job: {message}\nExiting.\n"), args
    assert cell.run("qstat", "-u", "*").stdout == ""
    jid_of(cell.qsub("-h", "-c", "n", "-b", "y", "true", cwd=workdir))   # -c n alone is no request


def test_qstat_j_shows_the_occasions_and_the_interval(cell, workdir):
    add_object(cell, "-Ackpt", CKPT)
    plain = jid_of(cell.qsub("-h", "-ckpt", "ck", "-b", "y", "true", cwd=workdir))
    lettered = jid_of(cell.qsub("-h", "-ckpt", "ck", "-c", "xm", "-b", "y", "true", cwd=workdir))
    timed = jid_of(cell.qsub("-h", "-ckpt", "ck", "-c", "0:10:0", "-b", "y", "true", cwd=workdir))

    def lines(jid):
        return [line for line in cell.run("qstat", "-j", str(jid)).stdout.splitlines()
                if line.startswith("checkpoint_")]
    assert lines(plain) == ["checkpoint_object:          ck", "checkpoint_attr:            sx"]
    assert lines(lettered) == ["checkpoint_object:          ck", "checkpoint_attr:            mx"]
    assert lines(timed) == ["checkpoint_object:          ck", "checkpoint_attr:            sx",
                            "checkpoint_interval:        600 seconds"]


def test_qalter_and_the_scheduler_name_the_environment_as_grid_engine_does(cell, workdir):
    add_object(cell, "-Ackpt", CKPT)
    jid = jid_of(cell.qsub("-ckpt", "ck", "-b", "y", "true", cwd=workdir))
    proc = cell.run("qalter", "-ckpt", "nosuch", str(jid))
    assert (proc.returncode, proc.stderr) == (1, 'checkpointing environment "nosuch" does not exist\n')
    from conftest import wait_for
    wanted = (f'cannot run in queue instance "all.q@{cell.host}" because ckpt object "ck" is not in '
              "ckpt list of queue")
    wait_for(lambda: wanted in cell.run("qstat", "-j", str(jid)).stdout)

"""What the manual pages promise, as a user sees it: a forced qdel refused before any job
is looked at (qdel(1)), the knob defaults condor_config_val prints (condor_config(5)),
the hold counters of Grid Engine holds (condor_q(1)), a trace that cannot be read
(gridtools(8)) and a usage error of gridtools host (gridtools-host(8))."""

import os

from conftest import REPO, wait_for
from qtools import jid_of


def _refusal(user):
    return f'"{user}" - forcing a job deletion requires manager privileges\n'


def test_a_forced_qdel_of_another_users_job_is_refused_for_forcing(cell, workdir, users):
    """Without ENABLE_FORCED_QDEL a user who is no manager may not force a deletion at
    all: Grid Engine's qmaster says so before it looks at the jobs named, whoever owns
    them and whether they exist."""
    alice = users[0]
    jid = jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir))
    own = jid_of(cell.qsub("-b", "y", "sleep", "300", user=alice))
    for words in ([str(jid)], [str(jid), str(own)], ["99999"], [f"{own}.5"]):
        proc = cell.run("qdel", "-f", *words, user=alice)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, _refusal(alice), ""), words
    assert cell.run("qstat", "-j", str(jid)).returncode == 0
    assert cell.run("qstat", "-j", str(own)).returncode == 0
    # without -f the owner check answers as before
    proc = cell.run("qdel", str(jid), user=alice)
    assert (proc.returncode, proc.stdout) == (
        1, f'{alice} - you do not have the necessary privileges to delete the job "{jid}"\n')
    proc = cell.run("qdel", "-f", str(jid))
    assert (proc.returncode, proc.stdout) == (0, f"root forced the deletion of job {jid}\n")


def test_condor_config_val_prints_the_defaults_the_pages_give(cell):
    knobs = {"SYSTEM_MAX_RELEASES": "-1", "ENABLE_HISTORY_ROTATION": "true",
             "MAX_HISTORY_LOG": "20971520", "MAX_HISTORY_ROTATIONS": "2",
             "ROTATE_HISTORY_DAILY": "false", "ROTATE_HISTORY_MONTHLY": "false",
             "MAX_EPOCH_HISTORY_LOG": "20971520", "MAX_EPOCH_HISTORY_ROTATIONS": "2",
             "SCHEDD_INTERVAL": "300", "STARTD_CRON_MAX_JOB_LOAD": "0.1",
             "STARTD_CRON_LOG_NON_ZERO_EXIT": "false"}
    for option in ((), ("-default",)):
        proc = cell.run("condor_config_val", *option, *knobs)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "".join(v + "\n" for v in knobs.values()), "")
    proc = cell.run("condor_config_val", "-v", "SYSTEM_MAX_RELEASES")
    assert proc.stdout.startswith("SYSTEM_MAX_RELEASES = -1\n # at: <Default>\n")
    # a file's reference to the knob sees its default
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("\nMY_RELEASES = $(SYSTEM_MAX_RELEASES)\n")
    assert cell.run("condor_config_val", "MY_RELEASES").stdout == "-1\n"


def _counters(cell, jid):
    proc = cell.run("condor_q", str(jid), "-af", "JobStatus", "NumHolds", "NumHoldsByReason")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_grid_engine_holds_count_in_numholds(cell, workdir):
    """qsub -h, qhold and qalter -h hold a job as condor_hold does: NumHolds and
    NumHoldsByReason count them (UserRequest, the HoldReasonCode the ad shows)."""
    held = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    assert _counters(cell, held) == "5 1 [ UserRequest = 1 ]\n"
    later = jid_of(cell.qsub("-a", "203001010000", "-b", "y", "true", cwd=workdir))
    assert _counters(cell, later) == "1 undefined undefined\n"
    for command, counted in (("qhold", 1), ("qrls", 1), ("qhold", 2), ("qhold", 2)):
        assert cell.run(command, str(later)).returncode == 0
        status = 5 if command == "qhold" else 1
        assert _counters(cell, later) == f"{status} {counted} [ UserRequest = {counted} ]\n"
    assert cell.run("qrls", str(later)).returncode == 0
    assert cell.run("qalter", "-h", "u", str(later)).returncode == 0
    assert _counters(cell, later) == "5 3 [ UserRequest = 3 ]\n"
    # an array: a whole-job hold counts for the tasks it held, a task's own hold for it
    array = jid_of(cell.qsub("-h", "-a", "203001010000", "-t", "1-3", "-b", "y", "true", cwd=workdir))
    assert _counters(cell, array) == "5 1 [ UserRequest = 1 ]\n" * 3
    assert cell.run("qrls", f"{array}.2").returncode == 0
    assert cell.run("qhold", f"{array}.2").returncode == 0
    assert _counters(cell, array).splitlines() == ["5 1 [ UserRequest = 1 ]", "5 2 [ UserRequest = 2 ]",
                                                   "5 1 [ UserRequest = 1 ]"]


def test_a_whole_job_hold_counts_for_its_waiting_tasks_only(cell, workdir):
    """(As condor_hold of a cluster counts for its waiting procs: a hold letter does not
    stop a running task.)"""
    jid = jid_of(cell.qsub("-t", "1-3", "-b", "y", "sleep", "300", cwd=workdir))
    wait_for(lambda: [cell.task_states(jid).get(n) for n in (1, 2)] == ["running", "running"], timeout=30)
    assert cell.run("qhold", str(jid)).returncode == 0
    proc = cell.run("condor_q", str(jid), "-af", "NumHolds", "NumHoldsByReason")
    assert proc.stdout.splitlines() == ["undefined undefined", "undefined undefined", "1 [ UserRequest = 1 ]"]


def test_a_trace_that_is_no_yaml_gives_one_line(cell, tmp_path):
    trace = tmp_path / "t.yaml"
    trace.write_text("garbage: [\n")
    proc = cell.run("gridtools", "simulate", str(trace))
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == (f"error: cannot read trace {trace}: while parsing a flow node: "
                           "did not find expected node content (line 2, column 1)\n")


def test_gridtools_host_usage_error_exits_2_as_the_page_says(cell):
    proc = cell.run("gridtools", "host", "drain")
    assert proc.returncode == 2 and "name at least one host (or --all)" in proc.stderr
    proc = cell.run("gridtools", "host", "drain", "nohost")
    assert proc.returncode == 1
    with open(os.path.join(REPO, "man", "man8", "gridtools-host.8")) as fh:
        page = fh.read()
    status = page.split(".SH EXIT STATUS\n")[1].split(".SH")[0]
    assert ".B 2\n" in status and "usage error" in status

"""An HTCondor job's own policy run by the daemon: exit policy, retries, periodic
expressions, removal; the user log and the history it leaves."""

import os
import re
import time

from condortools import events, history, statuses, submit, wait_events, wait_status, write
from conftest import wait_for
from gridtools.formats.condor.userlog import EventType, parse_events

FAST = "PERIODIC_EXPR_INTERVAL = 1\n"
#: the attributes of the stages of a run's file copying
STAGES = ("TransferInQueued", "TransferInStarted", "TransferInFinished", "TransferOutQueued",
          "TransferOutStarted", "TransferOutFinished", "NumInputTransferStarts", "NumOutputTransferStarts")


def _fast_periodic(cell):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(FAST)


def _sample_every_second(cell, workdir):
    """The dispatcher looks at the running jobs (and records when their jobs began to
    execute) every second: its schedule_interval."""
    text = re.sub(r"^schedule_interval\s+.*$", "schedule_interval 0:0:1",
                  cell.run("qconf", "-ssconf", check=True).stdout, flags=re.M)
    with open(os.path.join(workdir, "sconf"), "w") as fh:
        fh.write(text)
    cell.run("qconf", "-Msconf", os.path.join(workdir, "sconf"), check=True)


def test_events_of_a_run_and_the_history(cell, workdir):
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'exit 3'\"\nlog = r.log\nqueue\n",
                     cwd=workdir)
    log = os.path.join(workdir, "r.log")
    wait_events(log, f"{cluster}.0", [0, 1, 5])
    text = open(log).read()
    assert "(1) Normal termination (return value 3)" in text
    done = cell.run("condor_wait", "-wait", "30", log)
    assert (done.returncode, done.stdout) == (0, "All jobs done.\n")
    wait_for(lambda: f"{cluster}.0" in history(cell))
    row = [ln for ln in history(cell).splitlines() if ln.startswith(f"{cluster}.0 ")][0]
    assert " C " in row and row.endswith("sh -c exit 3")
    assert history(cell, str(cluster), "-af", "ExitCode", "JobStatus") == "3 4\n"
    assert "Environment" not in history(cell, "-l", str(cluster))
    assert history(cell, "-constraint", f"ClusterId == {cluster} && ExitCode == 3", "-af", "ProcId") == "0\n"
    assert history(cell, "-constraint", "ExitCode == 99", "-af", "ProcId") == ""
    assert len(history(cell, "-limit", "1").splitlines()) == 2            # the heading and one row
    import json
    text = history(cell, str(cluster), "-json")
    [ad] = json.loads(text)
    assert '  "Requirements": "\\/Expr(' in text
    assert re.fullmatch(r"\d+\.\d+ 3\.0\n", history(cell, str(cluster), "-af", "RemoteWallClockTime", "real(3)"))
    assert re.fullmatch(r"\d+\.\d+\n", history(cell, str(cluster), "-format", "%s\\n", "RemoteWallClockTime"))
    assert (ad["ClusterId"], ad["ExitCode"], ad["Cmd"]) == (cluster, 3, "/bin/sh")


def test_max_retries_runs_again_until_success_or_the_limit(cell, workdir):
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'echo x >> runs; exit 1'\"\n"
                           "max_retries = 2\nlog = m.log\nqueue\n", cwd=workdir)
    log = os.path.join(workdir, "m.log")
    wait_events(log, f"{cluster}.0", [0, 1, 4, 1, 4, 1, 5], timeout=40)
    assert open(os.path.join(workdir, "runs")).read() == "x\nx\nx\n"


def test_retry_until_and_success_exit_code_end_the_retries(cell, workdir):
    """success_exit_code alone retries twice (HTCondor's default); retry_until stops at
    its exit code before max_retries runs out."""
    plain = submit(cell, "executable = /bin/sh\narguments = \"-c 'echo x >> a; exit 0'\"\n"
                         "success_exit_code = 3\nlog = a.log\nqueue\n", cwd=workdir)
    until = submit(cell, "executable = /bin/sh\narguments = \"-c 'echo x >> b; exit 5'\"\n"
                         "max_retries = 4\nretry_until = 5\nlog = b.log\nqueue\n", cwd=workdir)
    wait_events(os.path.join(workdir, "a.log"), f"{plain}.0", [0, 1, 4, 1, 4, 1, 5], timeout=40)
    wait_events(os.path.join(workdir, "b.log"), f"{until}.0", [0, 1, 5], timeout=40)
    assert open(os.path.join(workdir, "a")).read() == "x\nx\nx\n"
    assert open(os.path.join(workdir, "b")).read() == "x\n"


def test_on_exit_hold_holds_with_the_jobs_reason(cell, workdir):
    cluster = submit(cell, "executable = /bin/false\non_exit_hold = ExitCode != 0\n"
                           'on_exit_hold_reason = strcat("failed: ", string(ExitCode))\n'
                           "on_exit_hold_subcode = 7\nlog = h.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 5)
    held = cell.run("condor_q", jid, "-af", "HoldReason", "HoldReasonCode", "HoldReasonSubCode").stdout
    assert held == "failed: 1 3 7\n"
    wait_events(os.path.join(workdir, "h.log"), jid, [0, 1, 12])
    # (the held listing is of the published status, which follows within PUBLISH_EVERY)
    wait_for(lambda: cell.run("condor_q", "-hold").stdout.count(jid) == 1)


def test_a_policys_own_reason_spells_the_expression_as_htcondor_does(cell, workdir):
    """Without a reason of the job's, the hold reason quotes the expression in the
    old-ClassAd spelling (=!=, reals as 1.5), as HTCondor's user_job_policy does."""
    cluster = submit(cell, "executable = /bin/false\n"
                           "on_exit_hold = ExitCode =!= 0 && 1.5 > 1\nlog = w.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 5)
    reason = ("The job attribute OnExitHold expression 'ExitCode =!= 0 && 1.5 > 1' "
              "evaluated to TRUE")
    assert cell.run("condor_q", jid, "-af", "HoldReason").stdout == reason + "\n"
    wait_events(os.path.join(workdir, "w.log"), jid, [0, 1, 12])
    assert f"\t{reason}\n" in open(os.path.join(workdir, "w.log")).read()


def test_on_exit_remove_false_keeps_running_it(cell, workdir):
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'echo x >> n; test $(wc -l < n) -ge 2'\"\n"
                           "on_exit_remove = ExitCode == 0\nlog = e.log\nqueue\n", cwd=workdir)
    wait_events(os.path.join(workdir, "e.log"), f"{cluster}.0", [0, 1, 4, 1, 5], timeout=30)


def test_periodic_hold_release_and_remove(cell, workdir):
    _fast_periodic(cell)
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nlog = p.log\n"
                           "periodic_hold = (CurrentTime - QDate) > 0 && NumJobStarts > 0\n"
                           'periodic_hold_reason = "too slow"\nqueue\n', cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 5, timeout=30)
    assert cell.run("condor_q", jid, "-af", "HoldReason", "HoldReasonCode", "NumJobStarts").stdout == \
        "too slow 3 1\n"                            # held after its one start
    wait_events(os.path.join(workdir, "p.log"), jid, [0, 1, 12])
    other = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\n"
                         "periodic_remove = JobStatus == 5\nlog = q.log\nqueue\n", cwd=workdir, name="q.sub")
    wait_for(lambda: f"{other}.0" not in statuses(cell, str(other)), timeout=30)
    wait_events(os.path.join(workdir, "q.log"), f"{other}.0", [0, 12, 9])


def test_a_running_job_s_disk_usage_grows_as_the_starter_measures_it_and_a_policy_on_it_holds_it(
        cell, workdir):
    """While a job runs in its scratch folder (should_transfer_files), the folder is
    measured when HTCondor's starter reports (STARTER_INITIAL_UPDATE_INTERVAL after the
    start, then every STARTER_UPDATE_INTERVAL): its DiskUsage grows with what it wrote
    there, and a periodic_hold on DiskUsage holds it."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(FAST + "STARTER_INITIAL_UPDATE_INTERVAL = 1\nSTARTER_UPDATE_INTERVAL = 1\n")
    _sample_every_second(cell, workdir)
    cluster = submit(cell, "executable = /bin/sh\n"
                           f"arguments = \"-c 'head -c 512000 /dev/zero > big; touch {workdir}/wrote; sleep 300'\"\n"
                           "transfer_executable = false\n"     # (only what it wrote is measured)
                           "should_transfer_files = YES\nperiodic_hold = DiskUsage > 400\nlog = w.log\nqueue\n",
                     cwd=workdir)
    jid = f"{cluster}.0"
    before = int(cell.run("condor_q", jid, "-af", "DiskUsage").stdout)
    assert before < 400
    wait_events(os.path.join(workdir, "w.log"), jid, [0, 40, 40, 1, 12], timeout=40)
    assert os.path.exists(os.path.join(workdir, "wrote"))
    # (the log has the hold event as the pass applies it; the queue shows it once published)
    wait_for(lambda: cell.run("condor_q", jid, "-af", "JobStatus").stdout.strip() == "5")
    disk, files, code, reason = cell.run("condor_q", jid, "-af", "DiskUsage", "ScratchDirFileCount",
                                         "HoldReasonCode", "HoldReason").stdout.split(" ", 3)
    assert 500 <= int(disk) < 500 + 64 and int(files) >= 2 and code == "3"
    assert reason.strip() == "The job attribute PeriodicHold expression 'DiskUsage > 400' evaluated to TRUE"


def test_allowed_job_and_execute_durations_hold_a_job_that_runs_longer(cell, workdir):
    _fast_periodic(cell)
    whole = submit(cell, "executable = /bin/sleep\narguments = 300\nlog = d.log\n"
                         "allowed_job_duration = 1\nqueue\n", cwd=workdir)
    execute = submit(cell, "executable = /bin/sleep\narguments = 300\nlog = d.log\n"
                           "allowed_execute_duration = 1\nqueue\n", cwd=workdir, name="e.sub")
    for cluster in (whole, execute):
        wait_status(cell, f"{cluster}.0", 5, timeout=30)
    assert cell.run("condor_q", "-af", "ClusterId", "AllowedJobDuration", "AllowedExecuteDuration",
                    "HoldReasonCode", "HoldReason").stdout.splitlines() == [
        f"{whole} 1 undefined 46 The job exceeded allowed job duration of 00:01",
        f"{execute} undefined 1 47 The job exceeded allowed execute duration of 00:01"]
    log = open(os.path.join(workdir, "d.log")).read()
    assert "Job was held.\n\tThe job exceeded allowed execute duration of 00:01\n\tCode 47 Subcode 0\n" in log


def test_allowed_execute_duration_counts_from_when_the_job_began_to_execute(cell, workdir):
    """HTCondor counts it from JobCurrentStartExecutingDate, after the files are copied in
    and the job is spawned: a slow start (here the queue's prolog) is not counted."""
    _fast_periodic(cell)
    done = os.path.join(workdir, "prolog.done")
    prolog = os.path.join(workdir, "prolog.sh")
    with open(prolog, "w") as fh:
        fh.write(f"#!/bin/sh\nsleep 6\ntouch {done}\n")
    os.chmod(prolog, 0o755)
    assert cell.run("qconf", "-mattr", "queue", "prolog", prolog, "all.q").returncode == 0
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nlog = x.log\n"
                           "allowed_execute_duration = 2\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 2, timeout=30)
    wait_status(cell, jid, 5, timeout=30)
    assert os.path.exists(done)                       # held once it ran, not in its prolog
    held = time.time()
    # began to execute after the prolog ended, counted in whole seconds as HTCondor counts
    # it: held more than 2 s after the second the job began, so more than 1 s after the prolog
    assert held - os.stat(done).st_mtime > 1 - 0.2
    assert cell.run("condor_q", jid, "-af", "HoldReasonCode", "HoldReason").stdout == \
        "47 The job exceeded allowed execute duration of 00:02\n"


def test_job_ads_show_when_the_job_began_to_execute(cell, workdir):
    """JobCurrentStartExecutingDate, as HTCondor's shadow sets it: when the job began to
    execute (after the queue's prolog), not when the run began (JobCurrentStartDate); in
    condor_q's ads while it runs and in the history after. A job that moves no files has
    no JobCurrentStartTransferInputDate, nor JobCurrentFinishTransferInputDate."""
    prolog = os.path.join(workdir, "prolog.sh")
    with open(prolog, "w") as fh:
        fh.write("#!/bin/sh\nsleep 2\n")
    os.chmod(prolog, 0o755)
    assert cell.run("qconf", "-mattr", "queue", "prolog", prolog, "all.q").returncode == 0
    _sample_every_second(cell, workdir)
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'sleep 4'\"\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    names = ("JobCurrentStartDate", "JobCurrentStartExecutingDate", "JobCurrentStartTransferInputDate",
             "JobCurrentFinishTransferInputDate")

    def shown():
        return cell.run("condor_q", jid, "-af", *names).stdout.split()
    wait_for(lambda: shown()[1:2] not in ([], ["undefined"]), timeout=30)
    started, began, *transfer = shown()
    assert int(began) - int(started) >= 1 and transfer == ["undefined", "undefined"]
    assert cell.run("condor_q", jid, "-l").stdout.count(f"JobCurrentStartExecutingDate = {began}\n") == 1
    wait_for(lambda: f"{jid} " in history(cell), timeout=30)
    ended = cell.run("condor_history", jid, "-af", *names).stdout.split()
    assert ended == [started, began, "undefined", "undefined"]
    assert cell.run("condor_history", jid, "-af", *STAGES).stdout.split() == ["undefined"] * 8


def test_job_ads_show_the_stages_of_the_file_copying_as_they_happen(cell, workdir, users):
    """TransferInStarted and TransferInFinished, as HTCondor's shadow sets them when the
    copying of the input files begins and ends: in condor_q's ads while the job runs, for
    every user; TransferOutStarted and TransferOutFinished once the output files came
    back. A later run's replace an earlier run's, NumInputTransferStarts and
    NumOutputTransferStarts count the runs that began each; the history ad keeps them.
    No copying waits in a transfer queue: TransferInQueued and TransferOutQueued stay
    undefined."""
    _sample_every_second(cell, workdir)
    write(os.path.join(workdir, "in.txt"), "payload\n")
    runs = os.path.join(workdir, "runs")
    cluster = submit(cell, "executable = /bin/sh\n"
                           f"arguments = \"-c 'echo x >> {runs}; cat in.txt > out.txt; "
                           f"test $(wc -l < {runs}) -ge 2 && exit 0; sleep 8; exit 1'\"\n"
                           "should_transfer_files = YES\ntransfer_input_files = in.txt\n"
                           "transfer_output_files = out.txt\nmax_retries = 1\nlog = t.log\nqueue\n",
                     cwd=workdir)
    jid = f"{cluster}.0"

    def shown(command="condor_q", user=None):
        return cell.run(command, jid, "-af", "JobStatus", "JobCurrentStartDate", *STAGES,
                        user=user).stdout.split()
    first = wait_for(lambda: shown()[3:4] not in ([], ["undefined"]) and shown(), timeout=30)
    status, started, queued, began, ended, *out = first
    assert status == "2" and queued == "undefined"
    assert int(started) <= int(began) <= int(ended)
    assert out == ["undefined"] * 3 + ["1", "undefined"]        # the output files not yet
    wait_for(lambda: shown(user=users[0]) == first)      # (as soon as the status is published)
    log = os.path.join(workdir, "t.log")
    wait_events(log, jid, [0, 40, 40, 1, 40, 40, 4, 40, 40, 1, 40, 40, 5], timeout=40)
    wait_for(lambda: f"{jid} " in history(cell), timeout=30)
    assert open(os.path.join(workdir, "out.txt")).read() == "payload\n"
    last = shown("condor_history")
    assert last[0] == "4" and int(last[1]) > int(started) and int(last[3]) > int(ended)
    assert last[2] == last[5] == "undefined" and last[8:] == ["2", "2"]
    copied = cell.run("condor_history", jid, "-af", "JobCurrentStartTransferInputDate",
                      "JobCurrentFinishTransferInputDate", "JobCurrentStartTransferOutputDate",
                      "JobCurrentFinishTransferOutputDate").stdout.split()
    assert [last[i] for i in (3, 4, 6, 7)] == copied              # the second run's copying
    assert int(last[1]) <= int(last[3]) <= int(last[4]) <= int(last[6]) <= int(last[7])
    # each stage of each run is a file transfer event (040) dated when it happened, as
    # HTCondor's shadow writes them; each run executes (001) once its input files are in
    found = parse_events(open(log).read())
    stages = [(int(e.timestamp), e.info["Type"]) for e in found if e.type == EventType.FILE_TRANSFER]
    assert [kind for _when, kind in stages] == [2, 3, 5, 6, 2, 3, 5, 6]
    assert [when for when, _kind in stages[:2]] == [int(began), int(ended)]
    assert [when for when, _kind in stages[4:]] == [int(last[i]) for i in (3, 4, 6, 7)]
    assert [int(e.timestamp) for e in found if e.type == EventType.EXECUTE] == [int(ended), int(last[4])]


def test_a_job_that_copies_its_input_executes_as_soon_as_the_files_are_in(cell, workdir):
    """Its execute event (001) follows the events of the copying of its input files at
    once, while it runs: its shepherd wakes the dispatcher, which does not wait for its
    next look at the running jobs (ten minutes away here)."""
    text = re.sub(r"^schedule_interval\s+.*$", "schedule_interval 0:10:0",
                  cell.run("qconf", "-ssconf", check=True).stdout, flags=re.M)
    write(os.path.join(workdir, "sconf"), text)
    cell.run("qconf", "-Msconf", os.path.join(workdir, "sconf"), check=True)
    write(os.path.join(workdir, "in.txt"), "payload\n")
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nshould_transfer_files = YES\n"
                           "transfer_input_files = in.txt\nlog = t.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    log = os.path.join(workdir, "t.log")
    wait_events(log, jid, [0, 40, 40, 1], timeout=10)
    assert cell.run("condor_q", jid, "-af", "JobStatus").stdout == "2\n"        # (still running)
    found = [e for e in parse_events(open(log).read()) if e.type != EventType.SUBMIT]
    assert [e.info.get("Type") for e in found[:2]] == [2, 3]
    assert int(found[2].timestamp) == int(found[1].timestamp)
    assert found[2].info["SlotName"].endswith(f"@{cell.host}")
    assert found[2].info["ExecuteProps"]["CondorScratchDir"].startswith('"/')
    assert cell.run("condor_rm", jid).returncode == 0


def test_a_job_whose_input_files_cannot_be_copied_in_never_executes(cell, workdir, users):
    """It is held (TransferInputError, 13) after the events of its copying, with no
    execute event between: it never began to execute, and NumJobStarts does not count
    the run NumShadowStarts counts."""
    cluster = submit(cell, "executable = /bin/true\nshould_transfer_files = YES\n"
                           "transfer_input_files = missing.txt\nlog = t.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    log = os.path.join(workdir, "t.log")
    wait_events(log, jid, [0, 40, 40, 12])
    # (the hold shows in condor_q once the status is published, a moment after its event)
    wait_for(lambda: cell.run("condor_q", jid, "-af", "HoldReasonCode").stdout == "13\n")
    assert events(log)[jid] == [0, 40, 40, 12]
    # its run began (a shadow's start, as HTCondor counts them) but its job never started
    for user in (None, users[0]):           # (the owner, and another user once it is published)
        wait_for(lambda: cell.run("condor_q", "-allusers", jid, "-af", "NumJobStarts", "NumShadowStarts",
                                  "JobRunCount", user=user).stdout == "0 1 1\n", timeout=15)


def _system_policy(cell, text):
    """condor_config's system policy is ``text`` (any earlier one replaced), then condor_reconfig."""
    path = os.path.join(cell.root, "etc", "condor_config")
    with open(path) as fh:
        kept = fh.read().partition("# system policy\n")[0]
    with open(path, "w") as fh:
        fh.write(kept + "# system policy\n" + FAST + text)
    assert cell.run("condor_reconfig").returncode == 0


def test_system_periodic_hold_and_remove_apply_to_every_job_after_a_reconfig(cell, workdir):
    _system_policy(cell, "SYSTEM_PERIODIC_HOLD = JobStatus == 2 && NumJobStarts > 0\n")
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nlog = s.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 5, timeout=30)
    assert cell.run("condor_q", jid, "-af", "HoldReasonCode", "HoldReasonSubCode", "HoldReason").stdout == \
        "26 0 The system macro SYSTEM_PERIODIC_HOLD expression 'JobStatus == 2 && NumJobStarts > 0' " \
        "evaluated to TRUE\n"
    _system_policy(cell, "SYSTEM_PERIODIC_REMOVE = HoldReasonCode == 26\n"
                         'SYSTEM_PERIODIC_REMOVE_REASON = "held by the system"\n')
    wait_for(lambda: jid not in statuses(cell, str(cluster)), timeout=30)
    # (the final ad is written to the history after the status that shows the job gone)
    wait_for(lambda: cell.run("condor_history", jid, "-af", "JobStatus", "RemoveReason").stdout)
    assert cell.run("condor_history", jid, "-af", "JobStatus", "RemoveReason").stdout == \
        "3 held by the system\n"
    wait_events(os.path.join(workdir, "s.log"), jid, [0, 1, 12, 9])
    log = open(os.path.join(workdir, "s.log")).read()
    assert "\tCode 26 Subcode 0\n" in log and "Job was aborted.\n\theld by the system\n" in log


def test_periodic_release_of_a_policy_hold(cell, workdir):
    _fast_periodic(cell)
    cluster = submit(cell, "executable = /bin/false\non_exit_hold = NumJobCompletions < 2\n"
                           "periodic_release = HoldReasonCode == 3\nlog = pr.log\nqueue\n", cwd=workdir)
    wait_events(os.path.join(workdir, "pr.log"), f"{cluster}.0", [0, 1, 12, 13, 1, 5], timeout=40)


def test_periodic_release_never_lifts_an_operators_hold(cell, workdir, users):
    """A job's own PeriodicRelease lifts its owner's hold, not one an operator or a
    manager put on it (which its owner may not lift with qrls either)."""
    _fast_periodic(cell)
    user = users[0]
    os.chmod(workdir, 0o777)
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\n"
                           "periodic_release = ReleaseMe =?= true\nlog = rel.log\nqueue 2\n",
                     cwd=workdir, user=user)
    for letter in "os":
        assert cell.run("qhold", "-h", letter, f"{cluster}.1").returncode == 0
    refused = cell.run("qrls", "-h", "o", f"{cluster}.1", user=user)
    assert "must be" in refused.stdout + refused.stderr
    assert cell.run("condor_qedit", str(cluster), "ReleaseMe", "true", user=user).returncode == 0
    log = os.path.join(workdir, "rel.log")
    wait_events(log, f"{cluster}.1", [0, 12, 13])         # the policy ran on both procs
    assert statuses(cell, f"{cluster}.0")[f"{cluster}.0"] == 5
    assert events(log)[f"{cluster}.0"] == [0, 12]
    rows = [ln.split() for ln in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]]
    first = [row for row in rows if row[0] == str(cluster) and row[-1] == "1"]      # task 1 = proc 0
    assert first and first[0][4] == "hqw", rows


def test_removal_writes_aborted_and_kill_sig_reaches_the_job(cell, workdir):
    write(os.path.join(workdir, "trap.sh"), "#!/bin/sh\ntrap 'echo got USR1 > sig.out; exit 0' USR1\n"
                                           "echo started > ready\nwhile :; do sleep 0.1; done\n", 0o755)
    cluster = submit(cell, "executable = trap.sh\nkill_sig = SIGUSR1\nlog = k.log\nqueue\n", cwd=workdir)
    wait_for(lambda: os.path.exists(os.path.join(workdir, "ready")))
    out = cell.run("condor_rm", f"{cluster}.0")
    assert out.stdout == f"Job {cluster}.0 marked for removal\n" and out.returncode == 0
    wait_events(os.path.join(workdir, "k.log"), f"{cluster}.0", [0, 1, 9])
    assert open(os.path.join(workdir, "sig.out")).read() == "got USR1\n"


def test_remove_kill_sig_ends_a_removed_job_and_a_held_one(cell, workdir):
    """As HTCondor's RemoveKillSig: condor_rm sends it, and so does condor_hold (the
    starter's graceful shutdown prefers it to KillSig)."""
    write(os.path.join(workdir, "trap.sh"), "#!/bin/sh\ntrap 'echo got USR1 > $1.out; exit 0' USR1\n"
                                           "trap 'echo got TERM > $1.out; exit 0' TERM\n"
                                           "echo started > $1.ready\nwhile :; do sleep 0.1; done\n", 0o755)
    text = "executable = trap.sh\narguments = {0}\nremove_kill_sig = SIGUSR1\nlog = {0}.log\nqueue\n"
    removed = submit(cell, text.format("rm"), cwd=workdir)
    held = submit(cell, text.format("hold"), cwd=workdir)
    wait_for(lambda: all(os.path.exists(os.path.join(workdir, f"{n}.ready")) for n in ("rm", "hold")))
    assert cell.run("condor_rm", str(removed)).returncode == 0
    assert cell.run("condor_hold", str(held)).returncode == 0
    wait_events(os.path.join(workdir, "rm.log"), f"{removed}.0", [0, 1, 9])

    def said(name):             # (the trap's line, once written: the shell makes the file first)
        path = os.path.join(workdir, name)
        return open(path).read() if os.path.exists(path) else ""
    wait_for(lambda: said("hold.out").endswith("\n") and said("rm.out").endswith("\n"))
    assert said("rm.out") == "got USR1\n"
    assert said("hold.out") == "got USR1\n"
    assert cell.run("condor_rm", str(held)).returncode == 0


def test_user_log_refuses_a_planted_link(cell, workdir, users):
    target = os.path.join(workdir, "victim")
    write(target, "untouched\n", 0o666)
    os.symlink(target, os.path.join(workdir, "link.log"))
    proc = cell.run("condor_submit", "-", input="executable = /bin/true\nlog = link.log\nqueue\n",
                    cwd=workdir, user=users[1])
    assert proc.returncode == 1 and "Invalid log file" in proc.stderr
    assert open(target).read() == "untouched\n"


def test_the_daemon_never_follows_a_link_put_in_place_of_a_log(cell, workdir, users):
    cluster = submit(cell, "executable = /bin/sleep\narguments = 1\nlog = sw.log\nhold = true\nqueue\n",
                     cwd=workdir, user=users[2])
    log = os.path.join(workdir, "sw.log")
    wait_events(log, f"{cluster}.0", [0, 12])
    secret = os.path.join(cell.root, "secret")
    write(secret, "root only\n", 0o600)
    os.unlink(log)
    os.symlink(secret, log)
    assert cell.run("condor_release", str(cluster), user=users[2]).returncode == 0
    wait_for(lambda: not statuses(cell, str(cluster)), timeout=20)
    assert open(secret).read() == "root only\n"
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert f"job {cluster}: cannot open its user log {log}" in messages


def test_notification_mail_is_sent_when_the_job_starts_or_ends(cell, workdir):
    """notification = start mails when the job starts; complete when it ends, to
    notify_user (the messages say so, or why the mailer could not take it)."""
    from faulttools import messages
    start = submit(cell, "executable = /bin/true\nnotification = Start\nlog = n.log\nqueue\n", cwd=workdir)
    done = submit(cell, "executable = /bin/true\nnotification = complete\nnotify_user = me@example.org\n"
                        "log = n.log\nqueue\n", cwd=workdir)
    wait_events(os.path.join(workdir, "n.log"), f"{done}.0", [0, 1, 5])
    wait_events(os.path.join(workdir, "n.log"), f"{start}.0", [0, 1, 5])
    # (the daemon writes its messages at the end of the pass that wrote the events)
    def mailed(found):
        return [line for line in found if "mail to" in line and "Condor Job" in line]
    lines = wait_for(lambda: (lambda found: found if any(f"Condor Job {done}.0" in line for line in found)
                              else None)(mailed(messages(cell))))
    assert len([line for line in lines if f"Condor Job {start}.0" in line]) == 1, lines
    assert any("mail to me@example.org" in line and f"Condor Job {done}.0" in line for line in lines), lines


def test_a_job_that_ended_while_no_daemon_ran_is_logged_at_its_end(cell, workdir):
    """Event 005 carries the time the job ended, not the time a later daemon reaped it."""
    import time
    from gridtools.formats.condor.userlog import EventType, parse_events
    log, mark = os.path.join(workdir, "job.log"), os.path.join(workdir, "mark")
    write(os.path.join(workdir, "end.sub"),
          f"executable = /bin/sh\narguments = \"-c 'sleep 1; touch {mark}'\"\nlog = {log}\nqueue\n")
    cluster = submit(cell, open(os.path.join(workdir, "end.sub")).read(), cwd=workdir)
    wait_events(log, f"{cluster}.0", [0, 1])
    cell.stop_daemon()
    wait_for(lambda: os.path.exists(mark))
    ended = os.path.getmtime(mark)
    time.sleep(2.5)                             # the daemon comes back well after the end
    restarted = time.time()
    cell.start_daemon()
    wait_events(log, f"{cluster}.0", [0, 1, 5])
    with open(log) as fh:
        done = [e for e in parse_events(fh.read()) if e.type == EventType.JOB_TERMINATED]
    assert ended - 1 <= done[0].timestamp <= ended + 1 < restarted


def test_hold_counters_count_every_hold_by_its_reason(cell, workdir):
    """NumHolds counts every hold of a job, NumHoldsByReason each by the name of its
    HoldReasonCode, in condor_q and then in condor_history."""
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 5)
    for command in ("condor_release", "condor_hold", "condor_release", "condor_hold"):
        assert cell.run(command, jid).returncode == 0
        wait_status(cell, jid, 5 if command == "condor_hold" else 2, timeout=30)
    assert cell.run("condor_q", jid, "-af", "NumHolds", "NumHoldsByReason").stdout == \
        "3 [ SubmittedOnHold = 1; UserRequest = 2 ]\n"
    policy = submit(cell, "executable = /bin/false\non_exit_hold = true\nqueue\n", cwd=workdir, name="p.sub")
    pid = f"{policy}.0"
    wait_status(cell, pid, 5)
    assert cell.run("condor_release", pid).returncode == 0
    wait_for(lambda: cell.run("condor_q", pid, "-af", "NumHolds", "JobStatus").stdout == "2 5\n", timeout=30)
    assert "NumHoldsByReason = [ JobPolicy = 2 ]\n" in cell.run("condor_q", pid, "-l").stdout
    assert cell.run("condor_rm", pid).returncode == 0
    wait_for(lambda: pid in history(cell))
    assert history(cell, pid, "-af", "NumHolds", "NumHoldsByReason") == "2 [ JobPolicy = 2 ]\n"


def test_periodic_vacate_evicts_a_running_job_back_to_the_queue(cell, workdir):
    """PeriodicVacate true of a running proc: it is evicted (event 004 with
    JobPolicyVacate's code and the reason) and runs again; SYSTEM_PERIODIC_VACATE the same
    for every job, with SystemPolicyVacate's code."""
    _fast_periodic(cell)
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nlog = v.log\n"
                           "periodic_vacate = NumJobStarts < 2\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_events(os.path.join(workdir, "v.log"), jid, [0, 1, 4, 1], timeout=30)
    log = open(os.path.join(workdir, "v.log")).read()
    assert "Job was evicted. Code 1000 Subcode 0\n\t(0) CPU times\n" in log
    assert "\tReason: The job attribute PeriodicVacate expression 'NumJobStarts < 2' evaluated to TRUE\n" in log
    # (the second run is in the log before the dispatcher publishes it: a view that shows
    # the job running may still be one of its first run)
    def vacated():
        return cell.run("condor_q", jid, "-af", "NumJobStarts", "NumVacates", "NumVacatesByReason",
                        "VacateReasonCode").stdout
    wait_for(lambda: vacated().startswith("2 "))
    wait_status(cell, jid, 2)
    assert vacated() == "2 1 [ JobPolicyVacate = 1 ] 1000\n"
    _system_policy(cell, "SYSTEM_PERIODIC_VACATE = NumJobStarts < 2\n"
                         'SYSTEM_PERIODIC_VACATE_REASON = "go elsewhere"\n')
    other = submit(cell, "executable = /bin/sleep\narguments = 300\nlog = w.log\nqueue\n",
                   cwd=workdir, name="w.sub")
    wait_events(os.path.join(workdir, "w.log"), f"{other}.0", [0, 1, 4, 1], timeout=30)
    log = open(os.path.join(workdir, "w.log")).read()
    assert "Job was evicted. Code 1001 Subcode 0\n" in log and "\tReason: go elsewhere\n" in log
    assert cell.run("condor_q", jid, "-af", "NumVacates").stdout == "1\n"    # (it had run twice)


def test_another_user_sees_the_hold_counters_too(cell, workdir, users):
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 5)
    wait_for(lambda: cell.run("condor_q", jid, "-af", "NumHolds", "NumHoldsByReason", user=users[0]).stdout ==
             "1 [ SubmittedOnHold = 1 ]\n")


def test_job_ads_show_when_a_run_copied_its_files_in_and_back(cell, workdir):
    """A job that transfers files: when its run ended, its ad has when the copying of its
    input files began and ended (before the queue's prolog and the job's start) and when
    that of its output files did (after), as HTCondor's shadow sets them at a run's end;
    none of them while it runs. They stay in the queue's ad of a job left in the queue,
    and are in its history ad once condor_rm and condor_rm -forcex take it out."""
    prolog = os.path.join(workdir, "prolog.sh")
    write(prolog, "#!/bin/sh\nsleep 2\n")
    os.chmod(prolog, 0o755)
    assert cell.run("qconf", "-mattr", "queue", "prolog", prolog, "all.q").returncode == 0
    _sample_every_second(cell, workdir)
    write(os.path.join(workdir, "in.txt"), "payload\n")
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'sleep 4; cat in.txt > made.txt'\"\n"
                           "should_transfer_files = YES\ntransfer_input_files = in.txt\n"
                           "leave_in_queue = true\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    names = ("JobCurrentStartDate", "JobCurrentStartTransferInputDate", "JobCurrentFinishTransferInputDate",
             "JobCurrentStartExecutingDate", "JobCurrentStartTransferOutputDate",
             "JobCurrentFinishTransferOutputDate", "CompletionDate")

    def shown(command="condor_q"):
        return cell.run(command, jid, "-af", *names).stdout.split()
    running = wait_for(lambda: shown()[3:4] not in ([], ["undefined"]) and shown(), timeout=30)
    assert [running[i] for i in (1, 2, 4, 5)] == ["undefined"] * 4
    wait_status(cell, jid, 4, timeout=30)
    ended = [int(v) for v in shown()]
    assert ended == sorted(ended)                   # each after the one before
    assert ended[3] - ended[2] >= 1                 # the prolog ran between
    assert open(os.path.join(workdir, "made.txt")).read() == "payload\n"
    ad = cell.run("condor_q", jid, "-l").stdout
    for name, value in zip(names[1:6], ended[1:6]):
        assert ad.count(f"\n{name} = {value}\n") == 1
    cell.run("condor_rm", jid, check=True)
    wait_status(cell, jid, 3, timeout=30)
    cell.run("condor_rm", "-forcex", jid, check=True)
    wait_for(lambda: f"{jid} " in history(cell), timeout=30)
    assert [int(v) for v in shown("condor_history")[:6]] == ended[:6]

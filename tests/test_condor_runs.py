"""What an HTCondor job's runs leave behind: the holds of starts that failed and of
output files that were not there (with HTCondor's codes, and event 012 in the log),
the event of a run its policy put back, its run times, and the ads' User and
GlobalJobId, for jobs of both dialects."""

import os
import pwd
import re
import shutil
import subprocess
import sys
import time

import pytest

from condortools import (events, history, htcondor_events, statuses, store_plugin, submit, wait_events,
                         wait_status, write)
from conftest import wait_for
from gridtools.formats.condor.userlog import EventType, parse_events


def _hold(cell, jid):
    """(HoldReasonCode, HoldReasonSubCode, HoldReason) as condor_q shows them, once it
    shows the job held (the log's 012 comes before the dispatcher publishes the hold)."""
    wait_status(cell, jid, 5)

    def shown(name):
        return cell.run("condor_q", jid, "-af", name).stdout.rstrip("\n")
    return int(shown("HoldReasonCode")), int(shown("HoldReasonSubCode")), shown("HoldReason")


def _held_events(log, jid):
    """The 012 events of ``jid`` as HTCondor's JobEventLog reads them (gridtools' own
    reader when the htcondor2 package is missing)."""
    cluster, proc = (int(n) for n in jid.split("."))
    read = htcondor_events(log)
    if read is None:
        from gridtools.formats.condor.userlog import parse_events
        with open(log) as fh:
            read = [dict(e.info, type=int(e.type), Cluster=e.cluster, Proc=e.proc) for e in parse_events(fh.read())]
    return [e for e in read if e["type"] == 12 and (e["Cluster"], e["Proc"]) == (cluster, proc)]


def test_a_missing_input_file_holds_the_job_with_one_held_event(cell, workdir):
    cluster = submit(cell, "executable = /bin/cat\ninput = missing.txt\nlog = e9.log\nqueue\n", cwd=workdir)
    jid, log = f"{cluster}.0", os.path.join(workdir, "e9.log")
    wait_events(log, jid, [0, 1, 12])
    missing = os.path.join(workdir, "missing.txt")
    want = f"Failed to open '{missing}' as standard input: No such file or directory (errno 2)"
    code, sub, reason = _hold(cell, jid)
    assert (code, sub) == (8, 2) and reason.endswith(want)                  # UnableToOpenInput
    assert re.fullmatch(r"Error from slot\d+@testhost: ", reason[:-len(want)])    # the slot, as HTCondor
    [held] = _held_events(log, jid)
    assert (held["HoldReasonCode"], held["HoldReasonSubCode"]) == (8, 2) and held["HoldReason"] == reason
    waited = cell.run("condor_wait", "-wait", "1", log)          # a held job has not ended
    assert (waited.returncode, waited.stdout) == (1, "Time expired.\n")
    assert events(log)[jid] == [0, 1, 12]
    assert "can't open " + missing + " as dummy input file" in cell.run("qstat", "-j", str(cluster)).stdout


def test_an_output_file_a_user_cannot_open_holds_with_unable_to_open_output(cell, workdir, users):
    """The job of a plain user is started by a forked child that drops to the user."""
    cluster = submit(cell, "executable = /bin/echo\noutput = nodir/out.txt\nlog = o.log\nqueue\n",
                     cwd=workdir, user=users[0])
    jid = f"{cluster}.0"
    wait_events(os.path.join(workdir, "o.log"), jid, [0, 1, 12])
    code, sub, reason = _hold(cell, jid)
    target = os.path.join(workdir, "nodir", "out.txt")
    assert (code, sub) == (7, 2)
    assert reason.endswith(f"Failed to open '{target}' as standard output: No such file or directory (errno 2)")


def test_a_command_or_initial_directory_gone_before_the_start(cell, workdir):
    write(os.path.join(workdir, "gone.sh"), "#!/bin/sh\necho hi\n", 0o755)
    os.mkdir(os.path.join(workdir, "iw"))
    gone = submit(cell, "executable = gone.sh\narguments = a b\nhold = true\nlog = x.log\nqueue\n", cwd=workdir)
    away = submit(cell, f"executable = /bin/true\ninitialdir = iw\nhold = true\nlog = {workdir}/y.log\n"
                        "queue\n", cwd=workdir, name="y.sub")
    os.unlink(os.path.join(workdir, "gone.sh"))
    os.rmdir(os.path.join(workdir, "iw"))
    assert cell.run("condor_release", str(gone), str(away)).returncode == 0
    wait_events(os.path.join(workdir, "x.log"), f"{gone}.0", [0, 12, 13, 1, 12])
    wait_events(os.path.join(workdir, "y.log"), f"{away}.0", [0, 12, 13, 1, 12])
    code, sub, reason = _hold(cell, f"{gone}.0")
    assert (code, sub) == (6, 2) and reason.endswith(                       # FailedToCreateProcess
        f"Failed to execute '{workdir}/gone.sh' with arguments a b: (errno=2: 'No such file or directory')")
    assert _hold(cell, f"{away}.0") == (14, 2, f"Cannot access initial working directory {workdir}/iw: "
                                                "No such file or directory")              # IwdError


def test_a_qsub_job_that_cannot_start_shows_htcondor_s_hold(cell, workdir):
    out = cell.run("qsub", "-terse", "-b", "y", "-cwd", "-i", "nofile.txt", "/bin/cat", cwd=workdir)
    jid = out.stdout.strip()
    wait_status(cell, f"{jid}.0", 5)
    code, sub, reason = _hold(cell, f"{jid}.0")
    assert (code, sub) == (8, 2) and "Failed to open" in reason and "standard input" in reason


def test_a_retry_is_logged_as_terminated_and_requeued(cell, workdir):
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'exit 3'\"\nmax_retries = 1\n"
                           "log = m.log\nqueue\n", cwd=workdir)
    log = os.path.join(workdir, "m.log")
    wait_events(log, f"{cluster}.0", [0, 1, 4, 1, 5])
    text = open(log).read()
    assert "\t(0) Job terminated and was requeued\n" in text and "Job was not checkpointed" not in text
    read = htcondor_events(log)
    if read is not None:
        [evicted] = [e for e in read if e["type"] == 4]
        assert (evicted["TerminatedAndRequeued"], evicted["TerminatedNormally"], evicted["ReturnValue"]) == \
            (True, True, 3)
        assert evicted["Reason"].startswith("The job attribute OnExitRemove expression ")


#: runs at least 1.5 s, then waits to be held; the run after that takes 2 s and ends
TWO_RUNS = """#!/bin/sh
if [ -e first.done ]; then sleep 2; exit 0; fi
touch first.done
sleep 1.5
echo ready > ready
sleep 60
"""


def test_run_times_add_up_over_a_hold(cell, workdir):
    write(os.path.join(workdir, "two.sh"), TWO_RUNS, 0o755)
    cluster = submit(cell, "executable = two.sh\nlog = t.log\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_for(lambda: os.path.exists(os.path.join(workdir, "ready")), timeout=20)
    # (the job runs before the dispatcher has published it as running)
    wait_for(lambda: cell.run("condor_q", jid, "-af", "CurrentHosts").stdout == "1\n")
    assert cell.run("condor_q", jid, "-af", "CurrentHosts").stdout == "1\n"
    assert cell.run("condor_hold", jid).returncode == 0
    wait_status(cell, jid, 5)
    wait_events(os.path.join(workdir, "t.log"), jid, [0, 1, 12])
    wait_for(lambda: cell.run("condor_q", jid, "-af", "CurrentHosts").stdout == "0\n")   # its run ended

    def run_times():
        """(RemoteWallClockTime, the -nobatch RUN_TIME) when the two agree (the listing
        and the ads come from one publication, which the end of the run may follow)."""
        wall = float(cell.run("condor_q", jid, "-af", "RemoteWallClockTime").stdout)
        row = [line for line in cell.run("condor_q", jid, "-nobatch").stdout.splitlines()
               if line.split()[:1] == [jid]]
        return row and row[0].split()[4] == f"0+00:00:{int(wall):02d}" and (wall, row[0].split()[4])
    first, shown = wait_for(run_times)
    assert first >= 1.5
    time.sleep(1.1)                                     # a held job's RUN_TIME stands still
    assert run_times() == (first, shown)
    assert cell.run("condor_release", jid).returncode == 0
    wait_for(lambda: f"{cluster}.0" in history(cell), timeout=30)
    wall, committed, slot_time, hosts = history(cell, str(cluster), "-af", "RemoteWallClockTime", "CommittedTime",
                                                "CumulativeSlotTime", "CurrentHosts").split()
    assert int(committed) >= 2 and hosts == "0"               # the run that completed it
    assert abs(float(wall) - first - int(committed)) < 1 and float(slot_time) == float(wall)


def test_user_and_global_job_id_in_both_dialects(cell, workdir):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("UID_DOMAIN = example.org\n")
    assert cell.run("condor_reconfig").returncode == 0
    cluster = submit(cell, "executable = /bin/true\nhold = true\nqueue\n", cwd=workdir)
    job = cell.run("qsub", "-terse", "-h", "-b", "y", "/bin/true", cwd=workdir).stdout.strip()
    for jid in (f"{cluster}.0", f"{job}.0"):
        wait_for(lambda jid=jid: jid in statuses(cell, jid))
        user, qdate, global_id = cell.run("condor_q", jid, "-af", "User", "QDate", "GlobalJobId").stdout.split()
        assert user == "root@example.org" and global_id == f"{cell.host}#{jid}#{qdate}"
        assert 'User = "root@example.org"' in cell.run("condor_q", jid, "-l").stdout
    assert cell.run("condor_rm", str(cluster), job).returncode == 0
    wait_for(lambda: f"{job}.0" in history(cell) and f"{cluster}.0" in history(cell))
    assert history(cell, str(cluster), "-af", "User", "GlobalJobId").startswith(f"root@example.org {cell.host}#")


TRANSFER = """executable = /bin/sh
arguments = "-c 'mkdir -p od/sub; echo a > od/a; echo b > od/sub/b; echo x > out.txt'"
should_transfer_files = YES
transfer_output_files = out.txt, od{more}
log = {log}
queue
"""


def test_output_folders_come_back_whole_and_a_missing_file_holds(cell, workdir):
    done = submit(cell, TRANSFER.format(more="", log="d.log"), cwd=workdir)
    wait_events(os.path.join(workdir, "d.log"), f"{done}.0", [0, 40, 40, 1, 40, 40, 5])   # (040: copying)
    assert open(os.path.join(workdir, "od", "sub", "b")).read() == "b\n"
    assert open(os.path.join(workdir, "od", "a")).read() == "a\n"
    os.unlink(os.path.join(workdir, "out.txt"))
    short = submit(cell, TRANSFER.format(more=", nothere.txt", log="n.log"), cwd=workdir, name="n.sub")
    jid, log = f"{short}.0", os.path.join(workdir, "n.log")
    wait_events(log, jid, [0, 40, 40, 1, 40, 40, 12])
    code, sub, reason = _hold(cell, jid)
    assert (code, sub) == (12, 2)                                           # TransferOutputError
    assert re.match(r"Transfer output files failure at execution point slot\d+@testhost while sending ", reason)
    assert re.search(r"Details: Error from slot\d+@testhost: STARTER ", reason)
    assert "/nothere.txt: (errno 2) No such file or directory" in reason
    [held] = _held_events(log, jid)
    assert held["HoldReasonCode"] == 12 and held["HoldReason"] == reason
    assert open(os.path.join(workdir, "out.txt")).read() == "x\n"           # what was there came back
    assert cell.run("condor_q", jid, "-af", "NumJobStarts").stdout == "1\n"


def test_a_running_proc_names_its_slot_as_condor_status_does(cell, workdir):
    """RemoteHost, the log's SlotName and condor_q -run's HOST(S) name the slot the proc
    holds (slotN@host, a name condor_status knows)."""
    log = os.path.join(workdir, "s.log")
    cluster = submit(cell, f"executable = /bin/sleep\narguments = 30\nlog = {log}\nqueue 2\n", cwd=workdir)
    wait_for(lambda: sorted(statuses(cell, str(cluster)).values()) == [2, 2])
    hosts = cell.run("condor_q", str(cluster), "-af", "RemoteHost").stdout.split()
    slots = cell.run("condor_status", "-af", "Name").stdout.split()
    assert sorted(hosts) == sorted(slots) == ["slot1@testhost", "slot2@testhost"]
    mine = cell.run("condor_status", hosts[0], "-af", "JobId").stdout.split()
    assert mine == [f"{cluster}.0"]
    text = wait_for(lambda: (lambda t: t if t.count("SlotName:") == 2 else None)(open(log).read()))
    assert sorted(re.findall(r"SlotName: (\S+)", text)) == slots
    run = cell.run("condor_q", str(cluster), "-run").stdout
    assert f"{cluster}.0" in run and hosts[0] in run
    cell.run("condor_rm", str(cluster), check=True)


def test_a_run_takes_its_slot_s_resources_and_its_end_shows_them_as_htcondor_s_shadow_does(cell, workdir):
    """While it runs its ad names what its slot gave it (ProvisionedResources and
    <Name>Provisioned); its terminate event ends with the table of its resources:
    allocated (the slot's), requested (request_memory), used (its memory), and how long
    it executed and held the slot (ActivationExecutionDuration, ActivationDuration, in
    its history ad)."""
    log = os.path.join(workdir, "u.log")
    write(os.path.join(workdir, "go"), "")          # (it runs a second at least: its memory is sampled)
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'sleep 1; while [ -e go ]; do sleep 0.1; done'\"\n"
                           f"request_memory = 100M\nlog = {log}\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 2)
    slot = cell.run("condor_q", jid, "-af", "RemoteHost").stdout.strip()
    given = cell.run("condor_status", slot, "-af", "Cpus", "Disk", "Memory").stdout.split()
    running = cell.run("condor_q", jid, "-af", "ProvisionedResources", "CpusProvisioned", "DiskProvisioned",
                       "MemoryProvisioned").stdout
    assert running == f"Cpus Disk Memory {' '.join(given)}\n"
    os.unlink(os.path.join(workdir, "go"))
    wait_events(log, jid, [0, 1, 5])
    [end] = [e for e in parse_events(open(log).read()) if e.type == EventType.JOB_TERMINATED]
    usage = end.info["UsageAd"]
    assert [usage["Cpus"], usage["Disk"], usage["Memory"]] == [int(n) for n in given]
    assert (usage["RequestCpus"], usage["RequestMemory"]) == (1, 100)
    assert usage["MemoryUsage"] >= 1 and usage["TimeSlotBusyUsage"] >= usage["TimeExecuteUsage"] >= 0
    assert 0 <= usage["CpusUsage"] < 1                  # (it mostly sleeps)
    wait_for(lambda: jid in history(cell))
    done = history(cell, str(cluster), "-af", "CpusProvisioned", "MemoryProvisioned", "ActivationDuration",
                   "ActivationExecutionDuration", "CpusUsage").split()
    assert done[:4] == [given[0], given[2], str(usage["TimeSlotBusyUsage"]), str(usage["TimeExecuteUsage"])]
    assert 0 <= float(done[4]) < 1


def test_a_run_s_scratch_folder_is_measured_into_disk_usage_as_htcondor_s_starter_measures_it(cell, workdir):
    """A run in a scratch folder (should_transfer_files) leaves DiskUsage the KiB its
    files took there (rounded up; more than the ad held, as the shadow keeps the most)
    and ScratchDirFileCount its entries: in its terminate event's table, in its history
    ad, and in RequestDisk, which reads DiskUsage. A run in its Iwd measures nothing."""
    log = os.path.join(workdir, "d.log")
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'head -c 307200 /dev/zero > big; mkdir d; "
                           "echo a > d/a; echo b > d/b; ln -s /usr d/usr'\"\n"
                           # (the executable left where it is: only what the job wrote is measured)
                           "transfer_executable = false\n"
                           f"should_transfer_files = YES\ntransfer_output_files = big\nlog = {log}\nqueue\n",
                     cwd=workdir)
    jid = f"{cluster}.0"
    wait_events(log, jid, [0, 40, 40, 1, 40, 40, 5])
    [end] = [e for e in parse_events(open(log).read()) if e.type == EventType.JOB_TERMINATED]
    wait_for(lambda: jid in history(cell))
    disk, files, request = (int(n) for n in history(cell, str(cluster), "-af", "DiskUsage", "ScratchDirFileCount",
                                                    "RequestDisk").split())
    assert 301 <= disk < 301 + 64                      # (its 300 KiB, its ad files and streams)
    assert files >= 6 and request == disk == end.info["UsageAd"]["DiskUsage"]
    plain = submit(cell, "executable = /bin/sh\narguments = \"-c 'head -c 307200 /dev/zero > big2'\"\n"
                         f"should_transfer_files = NO\nlog = {log}\nqueue\n", cwd=workdir, name="p.sub")
    wait_events(log, f"{plain}.0", [0, 1, 5])
    wait_for(lambda: f"{plain}.0" in history(cell))
    kept = history(cell, str(plain), "-af", "DiskUsage", "ExecutableSize", "ScratchDirFileCount").split()
    assert kept[0] == kept[1] and kept[2] == "undefined"


def test_a_scratch_folder_deeper_than_any_recursion_limit_is_measured_and_removed(cell, workdir):
    """A job may leave a chain of folders of any depth in its scratch folder: its run
    ends as it exited, its output comes back, its files are counted and the scratch
    folder is removed."""
    log = os.path.join(workdir, "d.log")
    chain = "i=0; while [ $i -lt 1300 ]; do mkdir a; cd a; i=$((i+1)); done; echo deep > f"
    cluster = submit(cell, f"executable = /bin/sh\narguments = \"-c 'pwd > out.txt; ( {chain} )'\"\n"
                           f"should_transfer_files = YES\ntransfer_output_files = out.txt\nlog = {log}\nqueue\n",
                     cwd=workdir)
    jid = f"{cluster}.0"
    wait_events(log, jid, [0, 40, 40, 1, 40, 40, 5], timeout=40)
    [end] = [e for e in parse_events(open(log).read()) if e.type == EventType.JOB_TERMINATED]
    assert end.info["ReturnValue"] == 0
    scratch = open(os.path.join(workdir, "out.txt")).read().strip()
    assert scratch.startswith("/") and scratch != workdir
    wait_for(lambda: jid in history(cell))
    assert int(history(cell, str(cluster), "-af", "ScratchDirFileCount")) > 100    # (counted 128 deep)
    wait_for(lambda: not os.path.lexists(scratch))


GROWING = """import os, sys, time
held = [bytearray(40 << 20)]
open("step1", "w").close()
while not os.path.exists("more"):
    time.sleep(0.05)
held.append(bytearray(40 << 20))
open("step2", "w").close()
while os.path.exists("go"):
    time.sleep(0.05)
"""


def test_a_running_job_s_memory_is_reported_as_htcondor_s_starter_reports_it(cell, workdir):
    """STARTER_INITIAL_UPDATE_INTERVAL seconds after its run began, then every
    STARTER_UPDATE_INTERVAL, a running job's ad takes its memory figures (ImageSize,
    MemoryUsage, ResidentSetSize), which condor_q's SIZE shows (the ImageSize it was
    submitted with before), and its log gets an image size event (006) when they
    changed."""
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("STARTER_INITIAL_UPDATE_INTERVAL = 1\nSTARTER_UPDATE_INTERVAL = 1\n")
    text = re.sub(r"(?m)^schedule_interval\s+.*$", "schedule_interval 0:0:1",
                  cell.run("qconf", "-ssconf", check=True).stdout)
    write(os.path.join(workdir, "sconf"), text)
    cell.run("qconf", "-Msconf", os.path.join(workdir, "sconf"), check=True)
    write(os.path.join(workdir, "grow.py"), GROWING)
    write(os.path.join(workdir, "go"), "")
    log = os.path.join(workdir, "m.log")
    cluster = submit(cell, f"executable = {sys.executable}\narguments = grow.py\nlog = {log}\nqueue\n",
                     cwd=workdir)
    jid = f"{cluster}.0"

    def sizes():
        return [e.info for e in parse_events(open(log).read()) if e.type == EventType.IMAGE_SIZE]

    wait_events(log, jid, [0, 1, 6])
    first = sizes()[0]
    assert first["MemoryUsage"] >= 40 and first["ResidentSetSize"] >= 40 << 10 and first["Size"] > 0
    wait_for(lambda: os.path.exists(os.path.join(workdir, "step1")))
    write(os.path.join(workdir, "more"), "")
    wait_for(lambda: sizes()[-1]["MemoryUsage"] >= first["MemoryUsage"] + 35, timeout=30)
    shown = cell.run("condor_q", jid, "-af", "ImageSize", "MemoryUsage", "ResidentSetSize", "CpusUsage").stdout.split()
    logged = [[s["Size"], s["MemoryUsage"], s["ResidentSetSize"]] for s in sizes()]
    assert [int(n) for n in shown[:3]] in logged[-2:]      # (the last, or the one before if one came since)
    assert 0 <= float(shown[3]) <= 2                        # (the cores it kept busy, on average)
    row = [line for line in cell.run("condor_q", jid, "-nobatch").stdout.splitlines() if jid in line.split()]
    assert row[0].split()[7] in (f"{int(m):.1f}" for _s, m, _r in logged[-2:])   # SIZE: its MemoryUsage
    write(os.path.join(workdir, "big.sh"), "#!/bin/sh\n" + "#" * (3 << 20) + "\n", 0o755)
    held = submit(cell, "executable = big.sh\nhold = true\nqueue\n", cwd=workdir, name="h.sub")
    image = int(cell.run("condor_q", f"{held}.0", "-af", "ImageSize").stdout)
    row = [line for line in cell.run("condor_q", f"{held}.0", "-nobatch").stdout.splitlines()
           if f"{held}.0" in line.split()]
    assert image > 1024 and row[0].split()[7] == f"{image / 1024:.1f}"   # (before a run: its ImageSize)
    os.unlink(os.path.join(workdir, "go"))
    wait_events(log, jid, [0, 1, 6])
    wait_for(lambda: 5 in events(log).get(jid, []))
    kinds = events(log)[jid]
    assert kinds.index(1) < kinds.index(6) and kinds[-1] == 5


def test_last_remote_host_names_the_slot_a_run_left(cell, workdir):
    """A proc that left its slot (held, or gone to the history) names it in
    LastRemoteHost, as HTCondor's schedd does; a qsub job names its queue instance."""
    log = os.path.join(workdir, "l.log")
    cluster = submit(cell, f"executable = /bin/sleep\narguments = 30\nlog = {log}\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_status(cell, jid, 2)
    slot = cell.run("condor_q", jid, "-af", "RemoteHost").stdout.strip()
    assert re.fullmatch(r"slot\d+@testhost", slot)
    assert cell.run("condor_q", jid, "-af", "LastRemoteHost").stdout == "undefined\n"
    assert cell.run("condor_hold", jid).returncode == 0
    wait_status(cell, jid, 5)
    left = f"{slot} undefined\n"           # (once its run has left the slot)
    wait_for(lambda: cell.run("condor_q", jid, "-af", "LastRemoteHost", "RemoteHost").stdout == left)
    assert cell.run("condor_rm", jid).returncode == 0
    done = cell.run("qsub", "-terse", "-b", "y", "/bin/true", cwd=workdir).stdout.strip()
    wait_for(lambda: jid in history(cell) and f"{done}.0" in history(cell), timeout=30)
    assert history(cell, str(cluster), "-af", "LastRemoteHost") == f"{slot}\n"
    assert f'LastRemoteHost = "{slot}"\n' in history(cell, str(cluster), "-l")
    assert history(cell, done, "-af", "LastRemoteHost") == "all.q@testhost\n"


ON_SUCCESS = """executable = /bin/sh
arguments = "-c 'echo x > out.txt; exit {code}'"
should_transfer_files = YES
when_to_transfer_output = ON_SUCCESS
success_exit_code = 3
max_retries = 0
log = {log}
queue
"""


def test_output_comes_back_on_success_only(cell, workdir):
    failed = submit(cell, ON_SUCCESS.format(code=1, log="f.log"), cwd=workdir)
    wait_events(os.path.join(workdir, "f.log"), f"{failed}.0", [0, 40, 40, 1, 5])   # (no output copying)
    assert not os.path.exists(os.path.join(workdir, "out.txt"))
    assert cell.run("condor_history", str(failed), "-af", "ExitCode").stdout == "1\n"
    good = submit(cell, ON_SUCCESS.format(code=3, log="s.log"), cwd=workdir, name="s.sub")
    wait_events(os.path.join(workdir, "s.log"), f"{good}.0", [0, 40, 40, 1, 40, 40, 5])
    assert open(os.path.join(workdir, "out.txt")).read() == "x\n"


def test_input_files_given_as_urls_are_fetched(cell, workdir):
    """A URL among the input files: the job asks for machines with that plugin method, and
    its file is fetched into the scratch folder under its last name."""
    import http.server
    import threading

    from gridtools import ads
    from gridtools.exec import movers
    assert ads.PLUGIN_METHODS == ",".join(movers.URL_SCHEMES)
    served = os.path.join(workdir, "served")
    os.mkdir(served)
    write(os.path.join(served, "data.txt"), "from the web\n")
    write(os.path.join(workdir, "local.txt"), "from a file\n")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=served, **kwargs)

        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/data.txt"
        cluster = submit(cell, "executable = /bin/sh\n"
                               "arguments = \"-c 'cat data.txt local.txt > both.txt'\"\n"
                               "should_transfer_files = YES\n"
                               f"transfer_input_files = {url}, file://{workdir}/local.txt\n"
                               "transfer_output_files = both.txt\nlog = u.log\nqueue\n", cwd=workdir)
        assert cell.run("condor_q", str(cluster), "-af", "WantTransferPluginMethods").stdout == "file,http\n"
        wait_events(os.path.join(workdir, "u.log"), f"{cluster}.0", [0, 40, 40, 1, 40, 40, 5])
        assert open(os.path.join(workdir, "both.txt")).read() == "from the web\nfrom a file\n"
        gone = submit(cell, f"executable = /bin/true\nshould_transfer_files = YES\n"
                            f"transfer_input_files = {url}.missing\nlog = g.log\nqueue\n", cwd=workdir, name="g.sub")
        wait_events(os.path.join(workdir, "g.log"), f"{gone}.0", [0, 40, 40, 12])
        assert _hold(cell, f"{gone}.0")[0] == 13                           # TransferInputError
    finally:
        server.shutdown()


def test_a_job_s_own_transfer_plugin_fetches_its_input_and_sends_its_output(cell, workdir, users):
    """transfer_plugins: the plugin of a URL's scheme, brought into the job's scratch
    folder, fetches its input files and sends its output files (output_destination),
    run with the job owner's identity; a transfer it fails holds the job (13,
    TransferInputError) with its error and its exit status as subcode."""
    user = users[0]
    os.chmod(workdir, 0o777)
    store = os.path.join(workdir, "store")
    os.mkdir(store)
    os.chmod(store, 0o777)
    write(os.path.join(store, "data.txt"), "from the store\n", 0o666)
    write(os.path.join(workdir, "plugin.py"), store_plugin(store), 0o755)
    cluster = submit(cell, "executable = /bin/sh\narguments = \"-c 'cat data.txt > got.txt'\"\n"
                           "should_transfer_files = YES\ntransfer_plugins = mystore=plugin.py\n"
                           "transfer_input_files = mystore://box/data.txt\n"
                           "output_destination = mystore://box/\nlog = p.log\nqueue\n", cwd=workdir, user=user)
    wait_events(os.path.join(workdir, "p.log"), f"{cluster}.0", [0, 40, 40, 1, 40, 40, 5])
    assert open(os.path.join(store, "got.txt")).read() == "from the store\n"
    assert not os.path.exists(os.path.join(workdir, "got.txt"))
    uid = pwd.getpwnam(user).pw_uid
    assert open(os.path.join(store, "ran_as")).read() == f"{uid} False\n{uid} True\n"
    gone = submit(cell, "executable = /bin/true\nshould_transfer_files = YES\ntransfer_plugins = mystore=plugin.py\n"
                        "transfer_input_files = mystore://box/nothere.txt\nlog = g.log\nqueue\n",
                  cwd=workdir, user=user, name="g.sub")
    wait_events(os.path.join(workdir, "g.log"), f"{gone}.0", [0, 40, 40, 12])
    code, subcode, reason = _hold(cell, f"{gone}.0")
    assert (code, subcode) == (13, 3)
    assert "non-zero exit (3) from" in reason and "|Error: no such object ( URL file = mystore://box/nothere.txt )|" \
        in reason


REMAPS = """executable = /bin/sh
arguments = "-c 'mkdir d; echo a > a.txt; echo b > b.txt; echo c > c.txt; echo e > d/e'"
should_transfer_files = YES
transfer_output_files = a.txt, b.txt, c.txt, d
{how}
log = {log}
queue
"""


def test_output_files_go_where_transfer_output_remaps_and_output_destination_send_them(cell, workdir):
    """A remapped name goes to its path (relative to the Iwd), a file:// URL or an http URL
    (PUT, as HTCondor's curl plugin uploads); a folder's rule sends its files; the files
    no rule maps go to output_destination, else to the Iwd."""
    import http.server
    import threading
    put = {}

    class Store(http.server.BaseHTTPRequestHandler):
        def do_PUT(self):
            put[self.path] = self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(201)
            self.end_headers()

        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Store)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    os.mkdir(os.path.join(workdir, "res"))
    os.mkdir(os.path.join(workdir, "far"))
    try:
        web = f"http://127.0.0.1:{server.server_address[1]}"
        how = (f'transfer_output_remaps = "a.txt = res/a_$(Cluster).txt; b.txt = {web}/up/b.txt ; '
               f'd = file://{workdir}/far/dd"')
        cluster = submit(cell, REMAPS.format(how=how, log="r.log"), cwd=workdir)
        wait_events(os.path.join(workdir, "r.log"), f"{cluster}.0", [0, 40, 40, 1, 40, 40, 5])
        assert open(os.path.join(workdir, "res", f"a_{cluster}.txt")).read() == "a\n"
        assert put == {"/up/b.txt": b"b\n"}
        assert open(os.path.join(workdir, "far", "dd", "e")).read() == "e\n"
        assert open(os.path.join(workdir, "c.txt")).read() == "c\n"
        assert not any(os.path.exists(os.path.join(workdir, n)) for n in ("a.txt", "b.txt", "d"))
        os.unlink(os.path.join(workdir, "c.txt"))
        put.clear()
        how = f'output_destination = {web}/all/\ntransfer_output_remaps = "c.txt = res/c.txt"'
        cluster = submit(cell, REMAPS.format(how=how, log="o.log"), cwd=workdir, name="o.sub")
        wait_events(os.path.join(workdir, "o.log"), f"{cluster}.0", [0, 40, 40, 1, 40, 40, 5])
        assert put == {"/all/a.txt": b"a\n", "/all/b.txt": b"b\n", "/all/d/e": b"e\n"}
        assert open(os.path.join(workdir, "res", "c.txt")).read() == "c\n"
        assert not os.path.exists(os.path.join(workdir, "c.txt"))
    finally:
        server.shutdown()


def test_output_directory_takes_the_output_files_and_the_relative_streams(cell, workdir):
    """As HTCondor's shadow: the files come back under output_directory, made when not
    there (private to the owner), a relative remap there too, and the job's output
    file, when relative, is written there; an absolute error file stays where it is."""
    how = (f'transfer_output_remaps = "b.txt = b2.txt"\noutput_directory = results/$(Cluster)\n'
           f'output = out.txt\nerror = {workdir}/err.txt\n'
           "arguments = \"-c 'echo a > a.txt; echo b > b.txt; echo said; echo grumbled >&2'\"")
    text = REMAPS.format(how=how, log="d.log").replace("transfer_output_files = a.txt, b.txt, c.txt, d",
                                                       "transfer_output_files = a.txt, b.txt")
    cluster = submit(cell, text, cwd=workdir)
    wait_events(os.path.join(workdir, "d.log"), f"{cluster}.0", [0, 40, 40, 1, 40, 40, 5])
    folder = os.path.join(workdir, "results", str(cluster))
    assert sorted(os.listdir(folder)) == ["a.txt", "b2.txt", "out.txt"]
    assert open(os.path.join(folder, "out.txt")).read() == "said\n"
    assert open(os.path.join(workdir, "err.txt")).read() == "grumbled\n"
    assert os.stat(folder).st_mode & 0o777 == 0o700
    assert not any(os.path.exists(os.path.join(workdir, n)) for n in ("a.txt", "b.txt", "out.txt"))


def test_an_output_file_remapped_into_a_missing_folder_holds_the_job(cell, workdir):
    how = 'transfer_output_remaps = "b.txt = nowhere/b.txt"'
    cluster = submit(cell, REMAPS.format(how=how, log="m.log"), cwd=workdir)
    jid, log = f"{cluster}.0", os.path.join(workdir, "m.log")
    wait_events(log, jid, [0, 40, 40, 1, 40, 40, 12])
    code, sub, reason = _hold(cell, jid)
    assert (code, sub) == (12, 2)                                           # TransferOutputError
    assert re.match(r"Transfer output files failure at access point testhost while receiving files from "
                    r"execution point slot\d+@testhost\. Details: Error from slot\d+@testhost: STARTER ", reason)
    assert reason.endswith(f"failed to write to file {workdir}/nowhere/b.txt: (errno 2) No such file or directory")


def test_allow_transfer_remap_to_mkdir_makes_the_folders_of_relative_remaps(cell, workdir, users):
    """ALLOW_TRANSFER_REMAP_TO_MKDIR = true: the missing folders of a relative remap path are
    made, the job owner's and private, as HTCondor's shadow makes them; a folder that
    cannot be made holds the job in its words (12, the errno as subcode)."""
    user = users[0]
    os.chmod(workdir, 0o777)
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("ALLOW_TRANSFER_REMAP_TO_MKDIR = true\n")
    cell.run("condor_reconfig", check=True)
    how = 'transfer_output_remaps = "b.txt = new/deeper/b.txt"'
    cluster = submit(cell, REMAPS.format(how=how, log="k.log"), cwd=workdir, user=user)
    wait_events(os.path.join(workdir, "k.log"), f"{cluster}.0", [0, 40, 40, 1, 40, 40, 5])
    assert open(os.path.join(workdir, "new", "deeper", "b.txt")).read() == "b\n"
    for folder in ("new", "new/deeper"):
        made = os.stat(os.path.join(workdir, folder))
        assert (made.st_uid, made.st_mode & 0o777) == (pwd.getpwnam(user).pw_uid, 0o700), folder
    write(os.path.join(workdir, "plain"), "a file, not a folder\n", 0o644)
    how = 'transfer_output_remaps = "b.txt = plain/b.txt"'
    stuck = submit(cell, REMAPS.format(how=how, log="s.log"), cwd=workdir, user=user, name="s.sub")
    wait_events(os.path.join(workdir, "s.log"), f"{stuck}.0", [0, 40, 40, 1, 40, 40, 12])
    code, sub, reason = _hold(cell, f"{stuck}.0")
    assert (code, sub) == (12, 17)                                          # EEXIST
    assert reason.endswith(f"SHADOW at 127.0.0.1 failed to create directory {workdir}/plain: File exists "
                           "(errno 17)")


SELF_CHECKPOINT = """#!/bin/sh
n=$(cat ckpt 2>/dev/null || echo 0); n=$((n + 1)); echo $n > ckpt
echo "run $n" >> {workdir}/runs
if [ $n -lt 3 ]; then exit 85; fi
if [ ! -e {workdir}/evicted ]; then touch {workdir}/sleeping; sleep 300; fi
echo $n > result
"""


def test_a_self_checkpointing_job_starts_again_and_resumes_after_eviction(cell, workdir):
    """checkpoint_exit_code: the job that exits with it starts again at once in the same
    folder; its checkpoint files are kept, and a run after an eviction starts from them
    (HTCondor's self-checkpointing)."""
    write(os.path.join(workdir, "count.sh"), SELF_CHECKPOINT.format(workdir=workdir), 0o755)
    cluster = submit(cell, "executable = count.sh\ncheckpoint_exit_code = 85\nshould_transfer_files = YES\n"
                           "transfer_checkpoint_files = ckpt\ntransfer_output_files = result\nlog = c.log\n"
                           "queue\n", cwd=workdir)
    jid = f"{cluster}.0"
    assert cell.run("condor_q", jid, "-af", "WantFTOnCheckpoint", "SuccessCheckpointExitCode").stdout == "true 85\n"
    wait_for(lambda: os.path.exists(os.path.join(workdir, "sleeping")))
    with open(os.path.join(workdir, "runs")) as fh:
        assert fh.read() == "run 1\nrun 2\nrun 3\n"          # two checkpoints, each started again
    open(os.path.join(workdir, "evicted"), "w").close()
    cell.run("condor_hold", jid, check=True)
    wait_status(cell, jid, 5)
    cell.run("condor_release", jid, check=True)
    wait_for(lambda: events(os.path.join(workdir, "c.log")).get(jid, [])[-1:] == [5])
    seen = events(os.path.join(workdir, "c.log"))[jid]
    assert seen[:4] == [0, 40, 40, 1] and 12 in seen and 13 in seen and seen[-4:] == [1, 40, 40, 5]
    with open(os.path.join(workdir, "runs")) as fh:
        assert fh.read() == "run 1\nrun 2\nrun 3\nrun 3\n"   # the last run began from checkpoint 2
    assert open(os.path.join(workdir, "result")).read() == "3\n"
    assert not os.path.exists(os.path.join(workdir, "ckpt"))        # checkpoints stay with the job


@pytest.mark.skipif(shutil.which("javac") is None, reason="no Java compiler on this machine")
def test_a_java_universe_job_runs_its_class_with_the_machine_s_java(cell, workdir):
    """universe = java: the class named first among the arguments runs with the machine's
    java, the job's JVM arguments and its folder and jar files on the class path."""
    write(os.path.join(workdir, "Hello.java"),
          'public class Hello { public static void main(String[] a) {\n'
          '  System.out.println("hello " + String.join(",", a) + " " + System.getProperty("greeting")); } }\n')
    subprocess.run(["javac", "Hello.java"], cwd=workdir, check=True)
    cluster = submit(cell, "universe = java\nexecutable = Hello.class\narguments = Hello a b\n"
                           "java_vm_args = -Dgreeting=hi\noutput = out.txt\nlog = j.log\nqueue\n", cwd=workdir)
    assert cell.run("condor_q", str(cluster), "-af", "JobUniverse", "Cmd", "JavaVMArgs").stdout == "10 java -Dgreeting=hi\n"
    assert "Requirements = TARGET.HasJava && " in cell.run("condor_q", str(cluster), "-l").stdout
    wait_events(os.path.join(workdir, "j.log"), f"{cluster}.0", [0, 1, 5])
    assert open(os.path.join(workdir, "out.txt")).read() == "hello a,b hi\n"
    proc = cell.run("condor_submit", cwd=workdir, input="universe = java\nexecutable = Hello.class\nqueue\n")
    assert proc.returncode == 1 and proc.stderr.startswith("ERROR: In Java universe, you must specify the class name")

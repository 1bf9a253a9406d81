"""The startd policy and the negotiator in a running daemon: a desktop host suspends and resumes a
job as its keyboard is used; START refuses jobs of both dialects in Grid Engine's order; with
sched_conf params NEGOTIATOR=1 two users with priority factors 1 and 2 share six slots 4:2, group
quotas order the groups, and PREEMPTION_REQUIREMENTS lets a better user take a slot."""

import os
import time

import pytest

from conftest import destroy_cell, make_cell, wait_for
from qtools import passes_every_second
from condortools import DESKTOP


def configure(cell, text):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(text)


def set_params(cell, value):
    path = os.path.join(cell.root, "etc", "sched_conf")
    with open(path) as fh:
        lines = [f"params                            {value}" if ln.startswith("params") else ln
                 for ln in fh.read().splitlines()]
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def keyboard(path, idle_seconds):
    """The owner last touched the keyboard ``idle_seconds`` ago."""
    when = time.time() - idle_seconds
    os.utime(path, (when, when))


def desk(slots, config, every_second=False):
    """A started cell of one host, desk, whose owner last touched its keyboard an hour
    ago; ``config(keyboard path)`` is added to its condor_config; with ``every_second``
    the daemon's own passes (schedule_interval, when it samples the running jobs) come
    every second. (cell, keyboard path)."""
    cell = make_cell(slots=slots, hosts=["desk"], start=False)
    try:
        kbd = os.path.join(cell.root, "etc", "keyboard")
        open(kbd, "w").close()
        keyboard(kbd, 3600)
        configure(cell, config(kbd))
        if every_second:
            passes_every_second(cell)
        cell.start_daemon()
    except BaseException:
        destroy_cell(cell)
        raise
    return cell, kbd


def slot_state(cell, name):
    out = cell.run("condor_status", name, "-af", "State", "Activity").stdout.strip()
    return out


def qstat_state(cell, job_id):
    for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]:
        if line.split()[0] == str(job_id):
            return line.split()[4]
    return None


@pytest.fixture
def desktop():
    cell = make_cell(slots=1, hosts=["desk"], start=False)
    kbd = os.path.join(cell.root, "etc", "keyboard")
    facts = os.path.join(cell.root, "etc", "facts")
    open(kbd, "w").close()
    keyboard(kbd, 3600)
    with open(facts, "w") as fh:
        fh.write("LoadAvg = 0.0\nCondorLoadAvg = 0.0\n")
    configure(cell, DESKTOP + f"CONSOLE_DEVICES = {kbd}\nSTARTD_FACTS_FILE = {facts}\n"
                              "POLLING_INTERVAL = 1\nUPDATE_INTERVAL = 1\n")
    cell.start_daemon()
    try:
        yield cell, kbd
    finally:
        destroy_cell(cell)


def test_a_desktop_suspends_a_job_when_its_owner_types_and_resumes_it_later(desktop, workdir):
    cell, kbd = desktop
    out = os.path.join(workdir, "ticks")
    script = os.path.join(workdir, "ticker.sh")
    with open(script, "w") as fh:
        fh.write(f"#!/bin/sh\nwhile true; do date +%s.%N >> {out}; sleep 0.2; done\n")
    job = cell.qsub("-terse", "-o", "/dev/null", "-j", "y", script, check=True).stdout.strip()
    wait_for(lambda: qstat_state(cell, job) == "r", timeout=20)
    assert slot_state(cell, "slot1@desk") == "Claimed Busy"
    wait_for(lambda: os.path.exists(out) and os.path.getsize(out) > 0, timeout=10)
    keyboard(kbd, 0)                                          # the owner is back
    wait_for(lambda: qstat_state(cell, job) == "S", timeout=15)
    assert slot_state(cell, "slot1@desk") == "Claimed Suspended"
    time.sleep(0.5)
    stopped_at = os.path.getsize(out)
    time.sleep(1.0)
    assert os.path.getsize(out) == stopped_at                 # the job makes no progress
    keyboard(kbd, 600)                                        # idle long enough for CONTINUE
    wait_for(lambda: qstat_state(cell, job) == "r", timeout=15)
    assert slot_state(cell, "slot1@desk") == "Claimed Busy"
    wait_for(lambda: os.path.getsize(out) > stopped_at, timeout=10)
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert f"job {job}.1 suspended by the policy of desk (SUSPEND is true)" in messages
    assert f"job {job}.1 continued by the policy of desk" in messages


def test_start_refuses_jobs_while_the_owner_uses_the_desktop(desktop):
    cell, kbd = desktop
    keyboard(kbd, 5)
    wait_for(lambda: slot_state(cell, "slot1@desk") == "Owner Idle", timeout=15)
    job = cell.qsub("-terse", "-b", "y", "sleep", "30", check=True).stdout.strip()
    wait_for(lambda: "START expression" in cell.run("qstat", "-j", job).stdout, timeout=15)
    assert 'because the START expression of host "desk" is false for it' in cell.run("qstat", "-j", job).stdout
    assert qstat_state(cell, job) == "qw"
    keyboard(kbd, 3600)
    wait_for(lambda: qstat_state(cell, job) == "r", timeout=30)


def test_start_applies_to_owners_and_reconfig_reads_it_again():
    cell = make_cell(slots=2, start=False)
    try:
        configure(cell, 'START = Owner != "root"\n')
        cell.start_daemon()
        job = cell.qsub("-terse", "-b", "y", "sleep", "30", check=True).stdout.strip()
        wait_for(lambda: "START expression" in cell.run("qstat", "-j", job).stdout, timeout=15)
        configure(cell, "START = True\n")
        assert cell.run("condor_reconfig").stdout == 'Sent "Reconfig" command to local master\n'
        wait_for(lambda: qstat_state(cell, job) == "r", timeout=15)
    finally:
        destroy_cell(cell)


def test_a_start_expression_read_again_applies_to_the_free_slots_at_once():
    """condor_reconfig of a constant START: the free slots take their new state at once
    (Owner for false, Unclaimed again for true), not at their next update."""
    cell = make_cell(slots=2, start=False)
    try:
        configure(cell, "UPDATE_INTERVAL = 300\n")
        cell.start_daemon()
        states = lambda: cell.run("condor_status", "-af", "State").stdout.split()  # noqa: E731
        wait_for(lambda: states() == ["Unclaimed", "Unclaimed"])
        configure(cell, "START = False\n")
        cell.run("condor_reconfig", check=True)
        wait_for(lambda: states() == ["Owner", "Owner"], timeout=15)
        configure(cell, "START = True\n")
        cell.run("condor_reconfig", check=True)
        wait_for(lambda: states() == ["Unclaimed", "Unclaimed"], timeout=15)
    finally:
        destroy_cell(cell)


# ---------------------------------------------------------------- the negotiator

@pytest.fixture
def negotiating():
    cell = make_cell(slots=2, hosts=["n1", "n2", "n3"], start=False)
    set_params(cell, "NEGOTIATOR=1")
    configure(cell, "UID_DOMAIN = example.org\n")
    cell.start_daemon()
    try:
        yield cell
    finally:
        destroy_cell(cell)


def running_by_owner(cell, attr="RemoteUser"):
    """How many slots each user (each accounting group, with ``attr`` AccountingGroup) holds."""
    counts = {}
    for line in cell.run("condor_status", "-af", attr).stdout.splitlines():
        if line != "undefined":
            counts[line] = counts.get(line, 0) + 1
    return counts


def test_priority_factors_1_and_2_converge_to_a_2_to_1_split(negotiating, users, workdir):
    cell = negotiating
    assert cell.run("condor_userprio", "-setfactor", "gtbob@example.org", "2").returncode == 0
    ids = []
    # both queues full before anything runs; 20 jobs of 3 s each keep both users waiting,
    # and the six slots full, for some 15 s: time for eight samples on a busy machine too
    for user in ("gtalice", "gtbob"):
        for _ in range(20):
            ids.append(cell.run("qsub", "-terse", "-h", "-b", "y", "-o", "/dev/null", "-j", "y", "sleep", "3",
                                user=user, cwd=workdir, check=True).stdout.strip())
    cell.run("qrls", ",".join(ids), check=True)
    samples = []

    def sample():
        counts = running_by_owner(cell)
        if sum(counts.values()) == 6:
            samples.append((counts.get("gtalice@example.org", 0), counts.get("gtbob@example.org", 0)))
        return len(samples) >= 8
    wait_for(sample, timeout=60, interval=0.3)
    # as in HTCondor, shares are not whole slots: as real priorities move with use, a
    # submitter's limit may fall a hair under a whole slot for a pass (3:3 for a moment)
    assert samples.count((4, 2)) > len(samples) // 2, samples
    assert 3.5 <= sum(a for a, _b in samples) / len(samples) <= 4.5, samples
    table = wait_for(lambda: (lambda t: t if "gtbob@example.org" in t and "gtalice@example.org" in t
                                         else None)(cell.run("condor_userprio").stdout), timeout=10)
    bob = next(ln for ln in table.splitlines() if ln.startswith("gtbob@"))
    assert bob.split()[2] == "2.00"


def test_groups_below_their_quota_negotiate_first(negotiating, users, workdir):
    cell = negotiating
    configure(cell, "GROUP_NAMES = physics, chemistry\nGROUP_QUOTA_physics = 4\nGROUP_QUOTA_chemistry = 2\n")
    for project in ("physics", "chemistry"):
        assert cell.run("qconf", "-aprj", input="", env={"EDITOR": "true"}).returncode in (0, 1)
        text = f"name {project}\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n"
        path = os.path.join(workdir, project)
        with open(path, "w") as fh:
            fh.write(text)
        assert cell.run("qconf", "-Aprj", path).returncode == 0
    cell.run("condor_reconfig", check=True)
    for _ in range(8):
        cell.run("qsub", "-P", "physics", "-b", "y", "-o", "/dev/null", "-j", "y", "sleep", "30",
                 user="gtalice", cwd=workdir, check=True)
        cell.run("qsub", "-P", "chemistry", "-b", "y", "-o", "/dev/null", "-j", "y", "sleep", "30",
                 user="gtbob", cwd=workdir, check=True)
    wait_for(lambda: sum(running_by_owner(cell).values()) == 6, timeout=30)
    assert running_by_owner(cell, "AccountingGroup") == {"physics.gtalice@example.org": 4,
                                                         "chemistry.gtbob@example.org": 2}


def test_preemption_requirements_let_a_better_user_take_a_slot(users, workdir):
    cell = make_cell(slots=1, hosts=["p1"], start=False)
    try:
        set_params(cell, "NEGOTIATOR=1")
        configure(cell, "UID_DOMAIN = example.org\n"
                        "PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmittorPrio * 1.2\n")
        cell.start_daemon()
        cell.run("condor_userprio", "-setprio", "gtbob@example.org", "10", check=True)
        victim = cell.run("qsub", "-terse", "-r", "y", "-b", "y", "-o", "/dev/null", "-j", "y", "sleep", "60",
                          user="gtbob", cwd=workdir, check=True).stdout.strip()
        wait_for(lambda: qstat_state(cell, victim) == "r", timeout=20)
        better = cell.run("qsub", "-terse", "-b", "y", "-o", "/dev/null", "-j", "y", "sleep", "60",
                          user="gtalice", cwd=workdir, check=True).stdout.strip()
        wait_for(lambda: qstat_state(cell, better) == "r", timeout=30)
        assert qstat_state(cell, victim) in ("qw", "Rq")
        assert running_by_owner(cell) == {"gtalice@example.org": 1}
        messages = open(os.path.join(cell.root, "spool", "messages")).read()
        assert f"job {victim}.1 preempted from slot1@p1 by job {better}.1 (priority)" in messages
    finally:
        destroy_cell(cell)


def test_htcondor_requirements_hold_in_grid_engines_order(workdir):
    """Without NEGOTIATOR=1 an HTCondor job's Requirements still choose its hosts."""
    from condortools import statuses, submit
    cell = make_cell(slots=1, hosts=["hosta", "hostb"])
    try:
        cluster = submit(cell, 'executable = /bin/sleep\narguments = 30\nrequirements = TARGET.Machine == "hostb"\n'
                               "queue 2\n", cwd=workdir)
        wait_for(lambda: sorted(statuses(cell, str(cluster)).values()) == [1, 2], timeout=20)
        rows = [ln.split() for ln in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]]
        assert [r[7] for r in rows if r[0] == str(cluster) and r[4] == "r"] == ["all.q@hostb"]
        why = cell.run("qstat", "-j", str(cluster)).stdout
        wait_for(lambda: "Requirements" in cell.run("qstat", "-j", str(cluster)).stdout, timeout=15)
        why = cell.run("qstat", "-j", str(cluster)).stdout
        assert 'because the job\'s Requirements are false for host "hosta"' in why
        assert cell.run("condor_q", f"{cluster}.1", "-af", "JobStatus").stdout == "1\n"
    finally:
        destroy_cell(cell)


def test_a_suspended_htcondor_job_logs_it_and_counts_it(desktop, workdir):
    cell, kbd = desktop
    from condortools import statuses, submit, wait_events
    log = os.path.join(workdir, "d.log")
    cluster = submit(cell, f"executable = /bin/sleep\narguments = 300\nlog = {log}\nqueue\n", cwd=workdir)
    jid = f"{cluster}.0"
    wait_events(log, jid, [0, 1])
    keyboard(kbd, 0)                                          # the owner is back: SUSPEND
    wait_events(log, jid, [0, 1, 10])
    # (the log's 010 comes before the dispatcher publishes the suspension)
    wait_for(lambda: statuses(cell, jid)[jid] == 7)
    assert statuses(cell, jid)[jid] == 7
    assert "Number of processes actually suspended: 1" in open(log).read()
    shown = cell.run("condor_q", jid, "-af", "TotalSuspensions", "LastSuspensionTime").stdout.split()
    assert shown[0] == "1" and int(shown[1]) > 0
    time.sleep(1.1)
    keyboard(kbd, 600)                                        # idle long enough for CONTINUE
    wait_events(log, jid, [0, 1, 10, 11])
    wait_for(lambda: statuses(cell, jid)[jid] == 2)
    shown = cell.run("condor_q", jid, "-af", "TotalSuspensions", "CumulativeSuspensionTime",
                     "LastSuspensionTime").stdout.split()
    assert shown[0] == "1" and int(shown[1]) >= 1 and shown[2] == "0"
    cell.run("condor_rm", str(cluster), check=True)


def test_the_free_slots_of_a_host_running_a_job_follow_its_owner_at_each_poll(workdir):
    """UPDATE_INTERVAL (300 s) paces a host's idle slots, but while one of its slots runs a
    job every slot is evaluated each POLLING_INTERVAL: the free one turns Owner at once."""
    cell, kbd = desk(2, lambda kbd: f"START = KeyboardIdle > 60\nSUSPEND = False\n"
                                    f"CONSOLE_DEVICES = {kbd}\nPOLLING_INTERVAL = 1\n")
    try:
        job = cell.qsub("-terse", "-b", "y", "sleep", "60", check=True).stdout.strip()
        wait_for(lambda: qstat_state(cell, job) == "r", timeout=20)
        busy = next(s for s in ("slot1@desk", "slot2@desk") if slot_state(cell, s) == "Claimed Busy")
        free = ({"slot1@desk", "slot2@desk"} - {busy}).pop()
        assert slot_state(cell, free) == "Unclaimed Idle"
        keyboard(kbd, 0)                                      # the owner is back
        wait_for(lambda: slot_state(cell, free) == "Owner Idle", timeout=10)
        cell.run("qdel", job, check=True)
    finally:
        destroy_cell(cell)


@pytest.mark.parametrize("policy, soft_first", [
    ("KILL = $(ActivityTimer) > 2\n", True),      # Vacating, then KILL: SIGKILL at once
    ("WANT_VACATE = False\n", False),            # straight to Killing: no soft signal at all
])
def test_killing_kills_the_job_at_once(workdir, policy, soft_first):
    """Seed 000's Preempting state: in Killing the job is killed at once (HTCondor's
    starter sends SIGKILL, no SIGCONT, no soft signal); a job that ignores its soft
    signal is gone as soon as KILL turns true, long before the soft kill's timeout."""
    cell, kbd = desk(1, lambda kbd: f"CONSOLE_DEVICES = {kbd}\nPOLLING_INTERVAL = 1\n"
                                    "UPDATE_INTERVAL = 1\n"
                                    "ActivityTimer = (CurrentTime - EnteredCurrentActivity)\n"
                                    "START = KeyboardIdle > 300\nWANT_SUSPEND = False\n"
                                    "PREEMPT = KeyboardIdle < 10\n" + policy)
    try:
        pidfile, termfile = os.path.join(workdir, "pid"), os.path.join(workdir, "term")
        script = os.path.join(workdir, "stubborn.sh")
        with open(script, "w") as fh:
            fh.write(f"#!/bin/sh\ntrap 'echo TERM >> {termfile}' TERM\necho $$ > {pidfile}\n"
                     "while true; do sleep 0.1; done\n")
        os.chmod(script, 0o755)
        sub = os.path.join(workdir, "job.sub")
        with open(sub, "w") as fh:
            fh.write(f"executable = {script}\noutput = /dev/null\nqueue\n")
        cell.run("condor_submit", sub, cwd=workdir, check=True)
        wait_for(lambda: os.path.exists(pidfile) and os.path.getsize(pidfile) > 0, timeout=20)
        pid = int(open(pidfile).read())
        keyboard(kbd, 0)                                          # the owner is back
        began = time.time()

        def gone():
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            return False
        wait_for(gone, timeout=15)
        assert time.time() - began < 15                          # not the 30 s of a soft kill
        assert os.path.exists(termfile) == soft_first
        wait_for(lambda: slot_state(cell, "slot1@desk") == "Owner Idle", timeout=15)
        messages = open(os.path.join(cell.root, "spool", "messages")).read()
        assert "evicted by the policy of desk" in messages
        assert cell.run("condor_q", "-af", "JobStatus").stdout.split() == ["1"]   # idle again
    finally:
        destroy_cell(cell)


def test_want_hold_holds_a_job_that_uses_more_memory_than_its_slot(workdir):
    """``use POLICY : HOLD_IF_MEMORY_EXCEEDED`` where the starter does not hold jobs to
    their memory itself (CGROUP_MEMORY_LIMIT_POLICY = none): once the starter reports a
    MemoryUsage above the slot's Memory, PREEMPT fires with no retirement and WANT_HOLD
    puts the job on hold (code 21, subcode 102, the policy's reason, the user log's
    012); the slot is free again."""
    from condortools import submit, wait_events
    cell, _kbd = desk(1, lambda kbd: "MEMORY = 64\nPOLLING_INTERVAL = 1\nSTARTER_INITIAL_UPDATE_INTERVAL = 1\n"
                                     "STARTER_UPDATE_INTERVAL = 1\nuse POLICY : HOLD_IF_MEMORY_EXCEEDED\n"
                                     "CGROUP_MEMORY_LIMIT_POLICY = none\n", every_second=True)
    try:
        log = os.path.join(workdir, "m.log")
        cluster = submit(cell, "executable = /usr/bin/python3\narguments = \"-c 'import time; "
                               "x = b\"\"x\"\" * (160 << 20); time.sleep(120)'\"\n"
                               f"log = {log}\nqueue\n", cwd=workdir)
        jid = f"{cluster}.0"
        wait_events(log, jid, [0, 1, 12], timeout=40)
        wait_for(lambda: cell.run("condor_q", jid, "-af", "JobStatus").stdout == "5\n", timeout=15)
        shown = cell.run("condor_q", jid, "-af", "JobStatus", "HoldReasonCode", "HoldReasonSubCode",
                         "HoldReason").stdout.strip()
        assert shown == "5 21 102 memory usage exceeded request_memory"
        assert "memory usage exceeded request_memory" in open(log).read()
        wait_for(lambda: slot_state(cell, "slot1@desk") == "Unclaimed Idle", timeout=15)
        messages = open(os.path.join(cell.root, "spool", "messages")).read()
        assert f"job {cluster}.1 held by the policy of desk" in messages
    finally:
        destroy_cell(cell)


#: a job that takes 160 MB, says so, and sleeps ``$(nap)`` seconds
FILLS_MEMORY = ("executable = /usr/bin/python3\narguments = \"-c 'import time; x = b\"\"x\"\" * (160 << 20); "
                "print(len(x) >> 20, flush=True); time.sleep($(nap))'\"\noutput = $(Cluster).out\n")


def test_a_job_that_goes_over_its_slots_memory_is_held_as_htcondors_starter_holds_it(workdir):
    """By default (CGROUP_MEMORY_LIMIT_POLICY = hard) a job whose processes take more
    memory than its slot has is killed at once and held: code 34 (JobOutOfResources),
    subcode 102, the starter's words, event 012, the slot free again; the same job
    under a custom limit above its use (CGROUP_HARD_MEMORY_LIMIT_EXPR) runs to its end."""
    from condortools import submit, wait_events
    cell, _kbd = desk(1, lambda kbd: "MEMORY = 64\nPOLLING_INTERVAL = 1\n")
    try:
        log = os.path.join(workdir, "m.log")
        began = time.time()
        cluster = submit(cell, FILLS_MEMORY + f"nap = 120\nlog = {log}\nqueue\n", cwd=workdir)
        jid = f"{cluster}.0"
        wait_events(log, jid, [0, 1, 12], timeout=40)
        assert time.time() - began < 30                     # (not when the sleep ends)
        wait_for(lambda: cell.run("condor_q", jid, "-af", "JobStatus").stdout == "5\n", timeout=15)
        shown = cell.run("condor_q", jid, "-af:,", "HoldReasonCode", "HoldReasonSubCode", "NumHoldsByReason",
                         "HoldReason").stdout.strip()
        reason = ("Job has gone over cgroup memory limit of 64 megabytes. Last measured usage: 64 megabytes.  "
                  "Consider resubmitting with a higher request_memory.")
        assert shown == f"34, 102, [ JobOutOfResources = 1 ], {reason}"
        assert reason in open(log).read()
        wait_for(lambda: slot_state(cell, "slot1@desk") == "Unclaimed Idle", timeout=15)
        assert cell.run("condor_rm", jid).returncode == 0
        configure(cell, "CGROUP_MEMORY_LIMIT_POLICY = custom\nCGROUP_HARD_MEMORY_LIMIT_EXPR = MY.Memory * 4\n")
        assert cell.run("condor_reconfig").returncode == 0
        cluster = submit(cell, FILLS_MEMORY + f"nap = 2\nlog = {log}\nqueue\n", cwd=workdir)
        wait_events(log, f"{cluster}.0", [0, 1, 5], timeout=40)
        assert open(os.path.join(workdir, f"{cluster}.out")).read() == "160\n"
    finally:
        destroy_cell(cell)


def test_a_dynamic_slot_is_rounded_up_and_holds_its_job_to_that(workdir):
    """A job asking 100 MB of a partitionable slot gets a dynamic slot of 128 MB
    (MODIFY_REQUEST_EXPR_REQUESTMEMORY's default), and is held when it takes more than
    that."""
    from condortools import submit, wait_events
    cell, _kbd = desk(2, lambda kbd: "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = True\n"
                                     "POLLING_INTERVAL = 1\n")
    try:
        log = os.path.join(workdir, "d.log")
        small = submit(cell, f"executable = /bin/sleep\narguments = 60\nrequest_memory = 100\nlog = {log}\nqueue\n",
                       cwd=workdir, name="small.sub")
        wait_events(log, f"{small}.0", [0, 1], timeout=30)
        wait_for(lambda: cell.run("condor_status", "slot1_1@desk", "-af", "Memory").stdout == "128\n", timeout=15)
        big = submit(cell, FILLS_MEMORY + f"nap = 60\nrequest_memory = 100\nlog = {log}\nqueue\n", cwd=workdir)
        wait_events(log, f"{big}.0", [0, 1, 12], timeout=40)
        wait_for(lambda: cell.run("condor_q", f"{big}.0", "-af", "JobStatus").stdout == "5\n", timeout=15)
        assert cell.run("condor_q", f"{big}.0", "-af", "HoldReason").stdout.startswith(
            "Job has gone over cgroup memory limit of 128 megabytes.")
        assert cell.run("condor_q", f"{small}.0", "-af", "JobStatus").stdout == "2\n"    # (its neighbour runs on)
    finally:
        destroy_cell(cell)


def test_a_local_universe_job_is_held_to_its_request_with_local_universe_cgroup_enforcement(workdir):
    """A local universe job has no slot, so no limit, unless LOCAL_UNIVERSE_CGROUP_ENFORCEMENT
    is true: then its request_memory is its limit, as HTCondor's local starter takes it."""
    from condortools import submit, wait_events
    cell, _kbd = desk(1, lambda kbd: "LOCAL_UNIVERSE_CGROUP_ENFORCEMENT = true\n")
    try:
        log = os.path.join(workdir, "l.log")
        cluster = submit(cell, FILLS_MEMORY + f"nap = 60\nuniverse = local\nrequest_memory = 64\nlog = {log}\nqueue\n",
                         cwd=workdir)
        wait_events(log, f"{cluster}.0", [0, 1, 12], timeout=40)
        assert cell.run("condor_q", f"{cluster}.0", "-af", "JobUniverse", "HoldReasonCode", "HoldReason").stdout == (
            "12 34 Job has gone over cgroup memory limit of 64 megabytes. Last measured usage: 64 megabytes.  "
            "Consider resubmitting with a higher request_memory.\n")
    finally:
        destroy_cell(cell)

"""condor_status against a running daemon: the slot table and its summary, -l, -af, -format,
-constraint, -avail, -run, -total, -submitters, -schedd, -json; partitionable slots; READ access."""

import json
import os
import re
from xml.etree import ElementTree

import pytest

from conftest import destroy_cell, make_cell, wait_for


def configure(cell, text):
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(text)


@pytest.fixture
def pool(two_host_pool):
    return two_host_pool


def status(cell, *args, user=None):
    proc = cell.run("condor_status", *args, user=user)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def running(cell, count):
    return wait_for(lambda: len([ln for ln in status(cell, "-af", "Name", "Activity").splitlines()
                                 if ln.endswith("Busy")]) == count, timeout=20)


ROW = re.compile(r"^(slot\d@host[ab]) {24}LINUX      (\S+) +(Unclaimed|Claimed  ) (Idle|Busy)      0\.000   (2048)  "
                 r"(\d+\+\d\d:\d\d:\d\d)$")


def test_the_default_table_and_its_summary(pool):
    out = status(pool)
    lines = out.split("\n")
    # (Name 34 wide at least, as HTCondor's WIDTH -34 FIT)
    assert lines[0] == "Name".ljust(34) + " OpSys      Arch     State     Activity LoadAv Mem     ActvtyTime"
    assert lines[1] == ""
    rows = lines[2:6]
    assert [ROW.match(r).group(1) for r in rows] == ["slot1@hosta", "slot2@hosta", "slot1@hostb", "slot2@hostb"]
    assert all(ROW.match(r).group(3) == "Unclaimed" for r in rows)
    arch = ROW.match(rows[0]).group(2)
    key = f"{arch}/LINUX".rjust(14)
    assert lines[6:] == [
        "",
        "               Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle",
        "",
        f"{key}     4     0       0         4       0          0      0        0      0",
        "",
        "         Total     4     0       0         4       0          0      0        0      0",
        ""]


def test_a_running_job_claims_a_slot(pool):
    pool.qsub("-b", "y", "sleep", "30", check=True)
    running(pool, 1)
    out = status(pool)
    claimed = [ln for ln in out.splitlines() if ln.startswith("slot") and " Claimed " in ln]
    assert len(claimed) == 1 and " Busy " in claimed[0]
    assert re.search(r"\s+4\s+0\s+1\s+3\s+0\s+0\s+0\s+0\s+0$", out.splitlines()[-1])
    run = status(pool, "-run").splitlines()
    assert run[0].split() == ["Name", "OpSys", "Arch", "LoadAv", "RemoteUser", "ClientMachine"]
    assert len([ln for ln in run if ln.startswith("slot")]) == 1 and " root@" in run[2]
    avail = status(pool, "-avail")
    assert len([ln for ln in avail.splitlines() if ln.startswith("slot")]) == 3
    total = status(pool, "-total").splitlines()
    assert total[0].strip().startswith("Total Owner Claimed") and not any(ln.startswith("slot") for ln in total)


def test_run_and_claimed_summarize_machines_mips_kflops_and_load(pool):
    """Every slot publishes Mips 30000 and KFlops 2000000, so no ad is malformed."""
    pool.qsub("-b", "y", "sleep", "30", check=True)
    pool.qsub("-b", "y", "sleep", "30", check=True)
    running(pool, 2)
    arch = status(pool, "slot1@hosta", "-af", "Arch").strip()
    summary = [
        "               Machines         MIPS       KFLOPS   AvgLoadAvg",
        "",
        f"{arch}/LINUX".rjust(14) + "        2        60000      4000000   0.000",
        "",
        "         Total        2        60000      4000000   0.000",
        ""]
    for mode in ("-run", "-claimed"):
        lines = status(pool, mode).split("\n")
        assert len([ln for ln in lines if ln.startswith("slot")]) == 2 and lines[4] == ""
        assert lines[5:] == summary, mode
        assert status(pool, mode, "-total").split("\n") == summary


def test_a_claimed_slot_names_the_job_and_its_user_as_the_queue_does(pool):
    pool.qsub("-b", "y", "sleep", "30", check=True)
    running(pool, 1)
    user, global_id = pool.run("condor_q", "-af", "User", "GlobalJobId").stdout.split()
    claimed = 'State == "Claimed"'
    assert status(pool, "-cons", claimed, "-af", "RemoteUser", "RemoteOwner", "AccountingGroup", "JobId",
                  "GlobalJobId") == f"{user} {user} undefined 1.0 {global_id}\n"
    assert user.startswith("root@") and "#1.0#" in global_id
    assert status(pool, "-af", "Name", "-cons", f'RemoteUser == "{user}"').count("\n") == 1


def test_long_autoformat_format_constraint_and_names(pool):
    long = status(pool, "-l", "slot2@hostb")
    attrs = dict(line.split(" = ", 1) for line in long.strip().splitlines())
    assert attrs["Name"] == '"slot2@hostb"' and attrs["Machine"] == '"hostb"' and attrs["SlotID"] == "2"
    for name in ("Arch", "OpSys", "Cpus", "Memory", "Disk", "LoadAvg", "CondorLoadAvg", "KeyboardIdle",
                 "State", "Activity", "EnteredCurrentState", "CurrentTime", "Start", "Requirements"):
        assert name in attrs
    assert list(attrs) == sorted(attrs, key=str.lower)
    assert status(pool, "-af", "Name", "Cpus", "State", "-cons", 'Machine == "hosta"') == \
        "slot1@hosta 1 Unclaimed\nslot2@hosta 1 Unclaimed\n"
    assert status(pool, "hosta", "-af:l", "SlotID") == "SlotID = 1\nSlotID = 2\n"
    # -af takes every word up to the next option: names come before it
    assert status(pool, "-af:V", "Name", "-constraint", "SlotID == 2") == '"slot2@hosta"\n"slot2@hostb"\n'
    out = status(pool, "-format", "%s ", "Arch", "-format", "%s\\n", "OpSys")
    assert len(out.splitlines()) == 4 and all(ln.endswith(" LINUX") for ln in out.splitlines())
    assert status(pool, "-format", "%d|", "Cpus", "-format", "%d\\n", "TotalCpus", "slot1@hosta") == "1|2\n"


def test_nothing_is_printed_when_no_ad_matches(pool):
    """No headings and no totals, and success, as HTCondor."""
    for args in (("-constraint", 'State == "Nope"'), ("-run",), ("-claimed",), ("-submitters",),
                 ("-total", "-constraint", 'State == "Nope"'), ("-run", "-total"), ("nosuchhost",)):
        proc = pool.run("condor_status", *args)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), args


def test_compact_with_total_warns_that_compact_is_ignored(pool):
    """HTCondor's warning on stderr, then what -total prints (also when no slot matches,
    and with any display option); -nocompact after -compact takes it back, and a mode
    that refuses -compact refuses it before."""
    warning = "Warning: ignoring -compact option because -total option is also set\n"
    for args in ((), ("-avail",), ("-af", "Name"), ("-constraint", 'State == "Nope"')):
        proc = pool.run("condor_status", "-compact", "-total", *args)
        assert (proc.returncode, proc.stderr) == (0, warning), args
        assert proc.stdout == status(pool, "-total", *args), args
    proc = pool.run("condor_status", "-tot", "-com", "-l")
    assert (proc.returncode, proc.stderr) == (0, warning) and 'Name = "slot1@hosta"' in proc.stdout
    proc = pool.run("condor_status", "-compact", "-total", "-nocompact")
    assert (proc.returncode, proc.stderr) == (0, "")
    proc = pool.run("condor_status", "-compact", "-total", "-startd")
    assert proc.returncode == 1 and proc.stderr.startswith("Error:  arg (-compact) contradicts arg 3 (-startd)")
    assert "Warning" not in proc.stderr


def test_json(pool):
    text = status(pool, "-json")
    ads = json.loads(text)
    assert [ad["Name"] for ad in ads] == ["slot1@hosta", "slot2@hosta", "slot1@hostb", "slot2@hostb"]
    assert ads[0]["State"] == "Unclaimed" and ads[0]["Requirements"] == "/Expr(START)/"
    assert (ads[0]["Mips"], ads[0]["KFlops"]) == (30000, 2000000)
    assert status(pool, "slot1@hosta", "-af:,", "Name", "Cpus", "Mips") == "slot1@hosta, 1, 30000\n"
    assert '"Requirements": "\\/Expr(START)\\/"' in text and text.startswith("[\n{\n")
    xml = status(pool, "-xml")
    slots = ElementTree.fromstring(xml.split("\n", 2)[2]).findall("c")
    named = [{a.get("n"): a[0] for a in slot.findall("a")} for slot in slots]
    assert [(s["Name"].tag, s["Name"].text) for s in named][:1] == [("s", "slot1@hosta")]
    assert len(named) == 4 and (named[0]["Requirements"].tag, named[0]["Requirements"].text) == ("e", "START")
    assert (named[0]["Mips"].tag, named[0]["Mips"].text) == ("i", "30000")


def test_submitters_and_schedd(pool):
    for _ in range(5):
        pool.qsub("-b", "y", "sleep", "30", check=True)
    pool.qsub("-h", "-b", "y", "true", check=True)
    running(pool, 4)
    out = status(pool, "-sub").splitlines()
    assert out[0].split() == ["Name", "Machine", "RunningJobs", "IdleJobs", "HeldJobs"]
    assert re.match(r"root@\S+ +testhost|root@\S+ +hosta", out[2]) or out[2].startswith("root@")
    assert out[2].split()[-3:] == ["4", "1", "1"]
    assert out[-1].split() == ["Total", "4", "1", "1"]
    schedd = status(pool, "-schedd").splitlines()
    # HTCondor's scheddNormal format: the Total* attributes under the submitters' headings;
    # Name and Machine 15 and 12 wide at least
    name_w = max(15, len(schedd[2].split()[0]))
    assert schedd[0] == "Name".ljust(name_w) + " " + "Machine".ljust(max(12, len(schedd[2].split()[1]))) + \
        " RunningJobs   IdleJobs   HeldJobs"
    assert schedd[2].split()[-3:] == ["4", "1", "1"]
    assert schedd[4:] == ["                TotalRunningJobs      TotalIdleJobs      TotalHeldJobs", "", " " * 14,
                          "         Total                 4                  1                  1"]
    assert status(pool, "-sub", "-af", "RunningJobs", "IdleJobs", "HeldJobs") == "4 1 1\n"


def test_submitters_are_the_accounting_principals(pool, users, workdir):
    """As HTCondor's schedd publishes them: one submitter ad per accounting principal
    (AccountingGroup group.user, nice-user.<owner>, else the owner), each proc counted for
    its own; every user sees the same (the principal of another user's job is public)."""
    from condortools import submit
    sleep = "executable = /bin/sleep\narguments = 60\n"
    submit(pool, sleep + "accounting_group = gu1\naccounting_group_user = u1\nqueue 4\n", cwd=workdir)
    running(pool, 4)
    submit(pool, sleep + "queue 1\n", cwd=workdir, name="plain.sub")
    submit(pool, sleep + "nice_user = true\nqueue 1\n", cwd=workdir, name="nice.sub")
    submit(pool, sleep + "accounting_group = grp\naccounting_group_user = $(who)\nqueue who in (ann bob bob)\n",
           cwd=workdir, name="each.sub")
    pool.qsub("-h", "-b", "y", "true", check=True)
    wait_for(lambda: "HeldJobs = 1" in status(pool, "-sub", "-l"))
    domain = status(pool, "-sub", "-af", "Name").split("\n")[0].partition("@")[2]
    rows = {"gu1.u1": "4 0 0", "grp.ann": "0 1 0", "grp.bob": "0 2 0", "nice-user.root": "0 1 0",
            "root": "0 1 1"}
    wanted = "".join(f"{name}@{domain} {counts}\n" for name, counts in sorted(rows.items()))
    for user in (None, "gtbob"):
        assert status(pool, "-sub", "-af", "Name", "RunningJobs", "IdleJobs", "HeldJobs", user=user) == wanted
    table = status(pool, "-submitters").splitlines()
    assert [line.split()[0] for line in table[2:7]] == [f"{name}@{domain}" for name in sorted(rows)]
    assert table[-1].split() == ["Total", "4", "5", "1"]
    one = status(pool, "-sub", f"gu1.u1@{domain}", "-l")
    assert f'Name = "gu1.u1@{domain}"' in one and "RunningJobs = 4" in one and "IdleJobs = 0" in one
    assert status(pool, "-sub", "-constraint", "IdleJobs > 1", "-af", "Name") == f"grp.bob@{domain}\n"
    assert status(pool, "-schedd", "-af", "TotalRunningJobs", "TotalIdleJobs", "TotalHeldJobs", "TotalJobAds",
                  "NumUsers", "ScheddName =?= Name") == "4 5 1 10 5 true\n"


def test_unknown_options_and_a_stopped_daemon(pool):
    proc = pool.run("condor_status", "-bogus")
    assert proc.returncode == 1 and proc.stderr.startswith("Error:  Unknown option -bogus")
    proc = pool.run("condor_status", "-cons", "Name ==")
    assert proc.returncode == 1 and "Invalid constraint" in proc.stderr
    pool.stop_daemon()
    proc = pool.run("condor_status")
    assert proc.returncode == 1 and "Couldn't contact the condor_collector" in proc.stderr


def test_partitionable_slots_carve_dynamic_slots():
    cell = make_cell(slots=4, hosts=["bighost"], start=False)
    try:
        configure(cell, "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = True\n")
        cell.start_daemon()
        assert status(cell, "-af", "Name", "Cpus", "SlotType") == "slot1@bighost 4 Partitionable\n"
        cell.qsub("-b", "y", "sleep", "30", check=True)
        cell.qsub("-b", "y", "sleep", "30", check=True)
        wait_for(lambda: status(cell, "-af", "Name").count("\n") == 3, timeout=20)
        assert status(cell, "-af", "Name", "Cpus", "SlotType", "State") == (
            "slot1@bighost 2 Partitionable Unclaimed\n"
            "slot1_1@bighost 1 Dynamic Claimed\nslot1_2@bighost 1 Dynamic Claimed\n")
    finally:
        destroy_cell(cell)


def test_dynamic_slots_name_the_gpus_their_jobs_hold(workdir):
    """A dynamic slot's AssignedGPUs names the devices its job was given (its
    CUDA_VISIBLE_DEVICES, as HTCondor's CUDA0, CUDA1 ...), whatever the other dynamic
    slots hold; the partitionable slot names the rest, and condor_status -gpus lists
    both."""
    from condortools import submit
    cell = make_cell(slots=4, hosts=["bighost"], start=False)
    try:
        configure(cell, "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = True\n")
        cell.start_daemon()
        cell.run("qconf", "-mattr", "exechost", "complex_values", "gpu=3", "bighost", check=True)
        wait_for(lambda: status(cell, "-af", "AssignedGPUs") == "CUDA0,CUDA1,CUDA2\n", timeout=20)
        jobs = []
        for name in ("one", "two"):
            out = os.path.join(workdir, name)
            jobs.append((submit(cell, f"executable = /bin/sh\narguments = \"-c 'echo $CUDA_VISIBLE_DEVICES > {out}; "
                                      "sleep 60'\"\nrequest_gpus = 1\nqueue\n", cwd=workdir, name=f"{name}.sub"),
                         out))
            wait_for(lambda: os.path.exists(out) and open(out).read().endswith("\n"), timeout=30)
        first, second = ("CUDA" + open(out).read().strip() for _cluster, out in jobs)
        assert cell.run("condor_rm", str(jobs[0][0])).returncode == 0       # its device is free again
        wait_for(lambda: status(cell, "-af", "Name").count("\n") == 2, timeout=20)
        rest = sorted({"CUDA0", "CUDA1", "CUDA2"} - {second})
        assert status(cell, "-af", "Name", "GPUs", "AssignedGPUs") == (
            f"slot1@bighost 2 {','.join(rest)}\nslot1_2@bighost 1 {second}\n")
        assert first != second and [line.split()[0] for line in status(cell, "-gpus").splitlines()[2:4]] == [
            "slot1@bighost", "slot1_2@bighost"]
    finally:
        destroy_cell(cell)


def test_read_access_follows_allow_read(pool, users):
    configure(pool, "ALLOW_READ = gtalice@*/*, root@*/*\n")
    assert "slot1@hosta" in status(pool, user="gtalice")
    proc = pool.run("condor_status", user="gtbob")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("Error: Failed to fetch ads from: ")
    assert 'SECMAN:2010:Received "DENIED" from server for user gtbob@' in proc.stderr


def test_an_administrator_reads_though_no_allow_write_names_it(pool, users):
    """Seed 002: ADMINISTRATOR includes READ and WRITE. A user named only in
    ALLOW_ADMINISTRATOR reads (condor_status, condor_q, condor_userprio) whether or not an
    ALLOW_WRITE is set, and one that does not name it changes nothing."""
    pool.qsub("-b", "y", "sleep", "30", check=True)
    running(pool, 1)
    configure(pool, "ALLOW_ADMINISTRATOR = gtalice@*/*, root@*/*\nALLOW_READ = nobody@*/*\n")
    for extra in ("", "ALLOW_WRITE = nobody@*/*\n"):
        configure(pool, extra)
        for user in ("gtalice", "root"):
            assert "slot1@hosta" in status(pool, user=user)
            proc = pool.run("condor_q", "-allusers", "-af", "ClusterId", user=user)
            assert (proc.returncode, proc.stdout) == (0, "1\n"), proc.stderr
            proc = pool.run("condor_userprio", "-allusers", user=user)
            assert proc.returncode == 0, proc.stderr
        for args in (("condor_status",), ("condor_q", "-allusers")):
            proc = pool.run(*args, user="gtbob")
            assert proc.returncode == 1 and proc.stdout == ""
            assert 'SECMAN:2010:Received "DENIED" from server for user gtbob@' in proc.stderr


def test_master_lists_each_machine_of_the_pool(pool):
    """Seed 002: condor_status -master lists the condor_masters, in HTCondor's
    masterNormal columns (Name, Version, Cpus, Memory, Uptime)."""
    out = status(pool, "-master").splitlines()
    assert out[0].split() == ["Name", "Version", "Cpus", "Memory", "Uptime"] and out[1] == ""
    rows = {line.split()[0]: line.split() for line in out[2:]}
    assert {"hosta", "hostb"} <= set(rows)
    assert rows["hosta"][1:5] == ["24.0.0", "2", "4.0", "GB"]
    assert re.fullmatch(r"0\+00:\d\d:\d\d", rows["hosta"][5])
    af = status(pool, "-master", "-af", "MyType", "Name", "DetectedMemory", "-constraint",
                'Name == "hostb"')
    assert af == "DaemonMaster hostb 4096\n"
    assert status(pool, "-master", "-total") == ""


def test_ads_shows_the_ads_of_a_file_instead_of_the_collectors(pool, tmp_path):
    # (status.cpp -ads FILE[:form]: the file's ads go through the same constraints and views)
    saved = tmp_path / "slots.ads"
    saved.write_text(status(pool, "-l"))
    live = status(pool, "-af", "Name", "State")
    assert status(pool, "-ads", str(saved), "-af", "Name", "State") == live
    assert status(pool, "-ads", str(saved), "-af", "Name", "-constraint", 'Name == "slot1@hosta"') == "slot1@hosta\n"
    (tmp_path / "slots.json").write_text(status(pool, "-json"))
    assert status(pool, "-ads:json", str(tmp_path / "slots.json"), "-af", "Name", "State") == live
    missing = pool.run("condor_status", "-ads", str(tmp_path / "nosuch"))
    assert (missing.returncode, missing.stderr) == (1, f"Can't open file of ClassAds: {tmp_path}/nosuch\n")


def test_subsystem_defrag_statistics_and_target(pool, tmp_path):
    """-subsystem names a query mode (schedd, slots, master ...) or a type of ads, of
    which a cell with no such daemon (defrag, accounting) has none: nothing is printed,
    exit 0, as for -defrag; -statistics is taken; -target FILE is the ad TARGET names
    in -af and -format, and a file that cannot be read is said in HTCondor's words."""
    assert status(pool, "-subsystem", "schedd") == status(pool, "-schedd")
    assert status(pool, "-subsystem", "slots", "-af", "Name") == status(pool, "-af", "Name")
    assert status(pool, "-subsystem", "DaemonMaster", "-af", "MyType") == status(pool, "-master", "-af", "MyType")
    assert status(pool, "-subsystem", "Negotiator", "-af", "MyType") == "Negotiator\n"
    assert status(pool, "-subsystem", "accounting") == status(pool, "-defrag") == ""
    assert status(pool, "-statistics", "SCHEDD:2", "-af", "Name") == status(pool, "-af", "Name")
    missing = pool.run("condor_status", "-subsystem")
    assert (missing.returncode, missing.stderr) == (
        1, 'condor_status: -subsystem requires another argument\nUse "condor_status -help subsys" for details\n')
    job = tmp_path / "job.ad"
    job.write_text('RequestMemory = 3000\nOwner = "gtalice"\n')
    fits = status(pool, "-target", str(job), "-af", "Name", "TARGET.RequestMemory <= Memory", "TARGET.Owner")
    assert fits.splitlines()[0] == "slot1@hosta false gtalice"     # (2048 MB each)
    job.write_text("RequestMemory = 1000\n")
    assert set(status(pool, "-target", str(job), "-format", "%v\n", "TARGET.RequestMemory <= Memory")
               .split()) == {"true"}
    unread = pool.run("condor_status", "-target", str(tmp_path / "nosuch"), "-af", "Name")
    assert (unread.returncode, unread.stderr) == (1, f"Cannot open file {tmp_path}/nosuch: errno: 2\n")

"""-print-format (-pr) files of condor_status and condor_q: HTCondor's print masks
(columns, widths, PRINTF and PRINTAS, OR, separators, WHERE, SUMMARY) and its refusals."""

import pytest

from gridtools.cli.condor import printmask, status
from gridtools.classad import ClassAd
from test_condor_status_views import SNAP, shown

SLOTS = """# slots
SELECT
   Name       AS NAME   WIDTH -10 TRUNCATE
   Activity   AS ST     PRINTAS ACTIVITY_CODE
   Memory     AS MEMORY WIDTH 8 PRINTAS READABLE_MB
   LoadAvg    AS LOAD   PRINTAS LOAD_AVG
   EnteredCurrentActivity AS '  ACTIVE' PRINTAS ELAPSED_TIME
   Cpus       AS CPUS   PRINTF %04d
   RemoteUser AS USER   PRINTF %s OR ??
   Missing    AS M      WIDTH 3 PRINTF %d OR --
WHERE Cpus > 0
SUMMARY STANDARD
"""


@pytest.fixture
def cpf(tmp_path):
    def write(text):
        path = tmp_path / "layout.cpf"
        path.write_text(text)
        return str(path)
    return write


def test_status_prints_the_columns_of_the_file_and_the_standard_summary(cpf):
    path = cpf(SLOTS)
    assert shown("-pr", path, snap=SNAP).split("\n") == [
        "NAME       ST MEMORY   LOAD   ACTIVE CPUS USER         M  ",
        "slot1@node Cb   2.0 GB 0.250   0+00:01:00 0001 alice@node10 ---",
        "slot2@node Ui   2.0 GB 0.250   0+00:01:00 0001 [??????????] ---",
        "slot1@node Ui   2.0 GB 0.250   0+00:01:00 0001 [??????????] ---",
        "",
        "               Total Owner Claimed Unclaimed Matched Preempting  Drain Backfill BkIdle",
        "",
        "  X86_64/LINUX     3     0       1         2       0          0      0        0      0",
        "",
        "         Total     3     0       1         2       0          0      0        0      0",
        ""]
    assert shown("-pr", path, "-total", snap=SNAP).startswith("               Total Owner Claimed")
    # the file's WHERE and the query mode both select; the heading is printed without ads
    assert shown("-print-format", path, "-startd", snap=SNAP) == "NAME       ST MEMORY   LOAD   ACTIVE CPUS USER M  \n"
    assert shown("-pr", path, "-l", snap=SNAP).startswith("Activity = ")


def test_no_summary_without_summary_line_and_the_separators(cpf):
    plain = cpf('SELECT NOHEADER FIELDPREFIX | FIELDSUFFIX ;\nName WIDTH AUTO\nMachine\nWHERE State == "Unclaimed"\n')
    assert shown("-pr", plain, snap=SNAP) == "slot2@node10;|node10 \nslot1@node9 ;|node9  \n"
    labels = cpf("SELECT LABEL SEPARATOR ': ' RECORDPREFIX '[' RECORDSUFFIX ']\\n'\nName\nCpus AS C\n")
    assert shown("-pr", labels, snap=SNAP) == \
        "[Name: slot1@node10 C: 1]\n[Name: slot2@node10 C: 1]\n[ Name: slot1@node9 C: 1]\n"


def test_masks_follow_htcondor_widths_and_undefined_values():
    ad = ClassAd({"Name": "a", "Count": 7, "Ratio": 0.5, "Text": "xyz", "Listed": "b, a, b"})
    mask = printmask.parse("SELECT\nCount AS N WIDTH 5\nCount AS L WIDTH -5\nRatio PRINTF %.2f\n"
                           "Nope\nNope AS Q WIDTH 4 OR ??\nNope AS Z PRINTF %d OR 00\n"
                           "Listed AS U PRINTAS UNIQUE\nListed AS C PRINTAS MEMBER_COUNT\n"
                           "Text AS T PRINTF '<%s>'\nplain text\n")
    head, rows = mask.table([ad])
    # headings are as wide as the columns once the values are rendered, before a row's
    # text widens them; a fixed width without PRINTF prints strings only; an undefined
    # value is valid (OR is for values a format cannot print)
    assert head == "N     L     Ratio Nope Q    Z U    C T   plain text\n"
    assert rows == ["             0.50 undefined      0 a, b 3 <xyz>           \n"]
    assert mask.messages == ["attribute or expression is not valid: plain text"]
    truncated = printmask.parse("SELECT\nText AS T WIDTH 2\n", truncate=True)
    assert truncated.table([ad])[1] == ["xy\n"]
    assert printmask.parse("SELECT\nText AS T WIDTH 2\n").table([ad])[1] == ["xyz\n"]


def _status_main(capsys, *argv):
    code = status.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_status_refusals_and_warnings_in_htcondor_words(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path / "root"))
    assert _status_main(capsys, "-pr") == (1, "", "Error: Argument -print-format requires a filename argument\n")
    assert _status_main(capsys, "-pr", "-l") == (1, "", "Error: Argument -print-format requires a filename argument\n")
    missing = str(tmp_path / "none.cpf")
    assert _status_main(capsys, "-pr", missing) == \
        (1, "", f"Can't open select file: {missing}\nError: invalid select file {missing}\n")
    for select in ("SELECT FROM AUTOCLUSTER", "SELECT UNIQUE"):
        path = tmp_path / "agg.cpf"
        path.write_text(select + "\nOwner\n")
        assert _status_main(capsys, "-pr", str(path)) == \
            (1, "", f"print-format aggregation not supported\nError: invalid select file {path}\n")
    mask = printmask.parse("SELECT BOGUS\nName AS N PRINTAS NOSUCH\nMemory AUTO\nCpus AS\nSUMMARY ALL\n")
    assert mask.messages == ["Warning: Unknown header argument BOGUS for SELECT",
                             "Unknown argument NOSUCH for PRINTAS",
                             "AUTO was unexpected at line 3 offset 7 in SELECT",
                             "expected column name after AS at line 4 offset 7 in SELECT",
                             "Unknown argument ALL for SELECT"]
    assert [c.heading for c in mask.columns] == ["N", "Memory", "Cpus"]


def test_condor_q_prints_its_title_the_columns_and_the_totals(cell, workdir, tmp_path):
    for _ in range(2):
        cell.run("condor_submit", "-", input="executable = /bin/sleep\narguments = 300\nhold = true\nqueue\n", check=True)
    layout = tmp_path / "queue.cpf"
    layout.write_text("SELECT\n   ClusterId AS '    ID' NOSUFFIX WIDTH AUTO\n"
                      "   ProcId AS ' ' NOPREFIX PRINTF '.%-3d'\n"
                      "   Owner AS OWNER WIDTH -6 PRINTAS OWNER\n"
                      "   JobStatus AS ST PRINTAS JOB_STATUS\n"
                      "   Cmd AS CMD PRINTAS JOB_DESCRIPTION\n"
                      "WHERE ClusterId > 1\nSUMMARY STANDARD\n")
    out = cell.run("condor_q", "-pr", str(layout), check=True).stdout.split("\n")
    assert out[2].startswith("-- Schedd: ")
    owner = cell.run("id", "-un").stdout.strip()[:6]
    assert out[3:7] == ["    ID     OWNER  ST CMD      ", f"2     .0   {owner:<6} H  sleep 300", "",
                        "Total for query: 1 jobs; 0 completed, 0 removed, 0 idle, 0 running, 1 held, 0 suspended "]
    bare = tmp_path / "bare.cpf"
    bare.write_text("SELECT BARE\nClusterId\n")
    assert cell.run("condor_q", "-print-format", str(bare), check=True).stdout == "1        \n2        \n"
    refused = cell.run("condor_q", "-pr", str(tmp_path / "none"))
    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr.endswith(f"Error: invalid select file {tmp_path / 'none'}\n")


def test_condor_q_prints_the_jobs_of_a_log_with_the_file(cell, workdir, tmp_path):
    import os
    from condortools import submit, wait_events
    log = os.path.join(workdir, "jobs.log")
    cluster = submit(cell, f"log = {log}\nexecutable = /bin/sleep\narguments = 300\nhold = true\nqueue 2\n",
                     cwd=workdir)
    wait_events(log, f"{cluster}.1", [0])
    layout = tmp_path / "ids.cpf"
    layout.write_text("SELECT\nClusterId AS C WIDTH 3\nProcId AS P PRINTF %d\nWHERE ProcId == 1\nSUMMARY STANDARD\n")
    out = cell.run("condor_q", "-userlog", log, "-pr", str(layout), check=True).stdout.split("\n")
    assert out[2] == f"-- Userlog: {log}" or out[2].startswith(f"-- Userlog: {log} ")
    assert out[3:6] == ["C   P", f"  {cluster} 1", ""]
    assert out[6].startswith("1 jobs; ")


def test_job_functions_print_as_htcondors():
    ads = [ClassAd({"ClusterId": 1, "JobStatus": 2, "Cmd": "/bin/sleep", "Arguments": "30", "JobUniverse": 5,
                    "TransferringOutput": True, "ImageSize": 2048}),
           ClassAd({"ClusterId": 2, "JobStatus": 5, "Cmd": "/x/y", "JobDescription": "my job", "JobUniverse": 14,
                    "MemoryUsage": 7, "QDate": -1})]
    mask = printmask.parse("SELECT BARE\nJobStatus PRINTAS JOB_STATUS\nJobStatus PRINTAS JOB_STATUS_RAW\n"
                           "JobUniverse PRINTAS JOB_UNIVERSE\nCmd PRINTAS JOB_DESCRIPTION\n"
                           "Cmd PRINTAS JOB_COMMAND\nImageSize PRINTAS MEMORY_USAGE\nQDate PRINTAS QDATE\n",
                           truncate=True)
    # columns as wide as their headings (the expressions) at least, a number padded to
    # its column by its format, a date before 1970 as HTCondor's ???
    assert mask.table(ads)[1] == [
        " >        Running   Vanilla     sleep 30 /bin/sleep 30       2.0      \n",
        "H         Held      Unknown     (my job) /x/y                7.0     ???    \n"]


def test_condor_q_usage_lists_the_print_format_option(capsys):
    from gridtools.cli.condor import q
    assert q.main(["-help"]) == 0
    lines = capsys.readouterr().out.split("\n")
    at = lines.index("\t-format <fmt> <attr>\t Print attribute attr using format fmt")
    assert lines[at + 1] == "\t-print-format <file>\t Use <file> to set display attributes and formatting"


def test_condor_q_sorts_its_rows_by_group_by(capsys, cpf, tmp_path, monkeypatch):
    from gridtools.cli.condor import q
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path / "root"))
    jobs = tmp_path / "jobs"
    jobs.write_text("".join(f'ClusterId = {c}\nProcId = {p}\nOwner = "{o}"\nJobPrio = {n}\nJobStatus = 1\n\n'
                            for c, p, o, n in [(1, 0, "bob", 9), (2, 0, "ann", 10), (3, 0, "bob", 10),
                                               (10, 0, "ann", 9), (10, 1, "ann", 9)]))
    layout = cpf("SELECT NOTITLE\nClusterId AS C\nProcId AS P\nOwner AS O\nJobPrio AS N\n"
                 "GROUP BY\nOwner DESCENDING\nJobPrio\n")
    assert q.main(["-jobads", str(jobs), "-pr", layout]) == 0
    rows = [line.split() for line in capsys.readouterr()[0].split("\n")[1:] if line.strip()]
    # by the values' text (the strings' quotes, 10 before 9), then by id; DESCENDING changes nothing
    assert rows == [["2", "0", "ann", "10"], ["10", "0", "ann", "9"], ["10", "1", "ann", "9"],
                    ["3", "0", "bob", "10"], ["1", "0", "bob", "9"]]


def test_condor_q_prints_a_custom_summary(capsys, cpf, tmp_path, monkeypatch):
    from gridtools.cli.condor import q
    from gridtools.cli.condor.queue import Proc
    from gridtools.cli.condor.printformat import summary_ad
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path / "root"))
    jobs = tmp_path / "jobs"
    jobs.write_text("ClusterId = 1\nProcId = 0\nJobStatus = 1\n\nClusterId = 2\nProcId = 0\nJobStatus = 5\n\n"
                    "ClusterId = 3\nProcId = 0\nJobStatus = 1\nJobUniverse = 7\n")
    layout = cpf("SELECT NOTITLE\nClusterId AS C\nSUMMARY\nJobs AS ' JOBS' PRINTF '%5d'\n"
                 "Idle AS ' IDLE' PRINTF '%5d'\nSchedulerJobs AS ' SCHED' PRINTF '%6d'\n")
    assert q.main(["-jobads", str(jobs), "-pr", layout]) == 0
    # the summary's heading right after the rows, a blank line, its values; no separators
    assert capsys.readouterr() == ("C\n1\n2\n3\n JOBS IDLE SCHED\n    2    1     1\n", "")
    # the summary ad of the queue counts the caller's (My) and everybody's (Allusers) too
    mine, theirs = Proc(1, 0, "ann", 2, 0), Proc(2, 0, "bob", 5, 0)
    ad = summary_ad([("", [mine]), ("My", [mine]), ("Allusers", [mine, theirs])])
    assert [ad.eval(n) for n in ("Jobs", "Running", "MyJobs", "AllusersJobs", "AllusersHeld")] == [1, 1, 1, 2, 1]


def _cells(text, ads, tool=None):
    """The cells of a BARE mask's rows, split at HTCondor's blank column prefix."""
    mask = printmask.parse("SELECT BARE NOHEADER FIELDPREFIX '' FIELDSUFFIX |\n" + text, tool=tool)
    assert mask.messages == []
    return [[cell.rstrip() for cell in row.rstrip("\n").split("|")] for row in mask.table(ads)[1]]


def test_global_grid_transfer_factory_and_health_functions():
    ads = [ClassAd({"GridResource": "batch pbs", "GridJobId": "batch pbs 12345.node/7", "GridJobStatus": 5,
                    "TransferringInput": True, "TransferQueued": True, "JobMaterializePaused": 1,
                    "Activity": "Idle", "OCU": True}),
           ClassAd({"GridResource": "gt2 gk.example.org/jobmanager-pbs",
                    "GridJobId": "gt2 https://gk.example.org:2119/16130/1234/", "GridJobStatus": "PENDING",
                    "JobMaterializePaused": "x", "Activity": "Busy"}),
           ClassAd({"GridResource": "ec2 https://ec2.amazonaws.com/", "EC2RemoteVirtualMachineName": "vm1",
                    "GridJobStatus": 42, "Activity": ""})]
    text = ("GridJobId PRINTAS GRID_JOB_ID OR -\nGridResource PRINTAS GRID_RESOURCE\n"
            "GridJobStatus PRINTAS GRID_STATUS\nJobUniverse PRINTAS BUFFER_IO_MISC\n"
            "JobMaterializePaused PRINTAS JOB_FACTORY_MODE\nActivity PRINTAS ACTIVITY_OR_OCU\n")
    assert [[c.strip() for c in row] for row in _cells(text, ads)] == [
        ["/7", "batch->[?] pbs", "HELD", "transfer=in,queued", "Held", "OCU"],
        ["16130.1234", "gt2->pbs gk.example.org", "PENDING", "", "????", "Busy"],
        ["-", "ec2 vm1", "42", "", "", "??"]]
    health = ClassAd({"Cpus": 1})
    health.set_expr("HealthExprs", "{ Cpus > 2, Cpus == 1, Cpus > 4 }")
    broken = ClassAd({"SlotBrokenReason": "disk gone"})
    assert _cells("HealthExprs PRINTAS UNHEALTH\n", [health, broken]) == \
        [["Cpus > 2, Cpus > 4"], ["disk gone"]]


def test_each_tools_own_functions():
    slot = ClassAd({"SlotType": "Partitionable", "NumDynamicSlots": 3, "AssignedGPUs": "GPU-1, GPU-2, GPU-3",
                    "OfflineGPUs": "GPU-3"})
    slot.set_expr("AvailableGPUs", '{ [Id = "GPU-1"; Capability = 7.5; GlobalMemoryMB = 16384; '
                  'DeviceName = "Tesla T4"], [Id = "GPU-2"; Capability = 8.0; GlobalMemoryMB = 16384; '
                  'DeviceName = "A10"] }')
    static = ClassAd({"SlotType": "Static"})
    dynamic = ClassAd({"SlotType": "Dynamic", "DynamicSlot": True})
    text = ("SlotType AS T PRINTAS SLOT_TYPE_LETTER\nSlotType AS C PRINTAS SLOT_COUNT_TAG\n"
            "NumDynamicSlots AS N PRINTAS NUM_DSLOTS OR -\nAssignedGPUs PRINTAS TOTAL_GPUS OR -\n"
            "AssignedGPUs PRINTAS GPUS_CAPS OR -\nAssignedGPUs PRINTAS GPUS_MEM OR -\n"
            "AssignedGPUs PRINTAS GPUS_NAMES OR -\n")
    from gridtools.cli.condor import printas
    # the GPUs' properties are known with -gpus only, as in HTCondor
    assert _cells(text, [slot], tool="condor_status")[0][4:] == ["-", "-", "-"]
    assert printas.ingest_gpus([slot, static]) == [["GPU-1", "GPU-2"], []]
    try:
        assert _cells(text, [slot, static, dynamic], tool="condor_status") == [
            ["", "", "   3", "   3-1", "7.5 to 8.0", "16.0 GB", "A10,Tesla T4"],
            ["s", "S", "   1", "-", "-", "-", "-"],
            ["d", "D", "-", "-", "-", "-", "-"]]
    finally:
        printas.GPU_INFO.update(props=None, offline=set())
    # condor_q's CPU_TIME: the wall clock time of the runs, RemoteUserCpu with -cputime
    job = ClassAd({"RemoteUserCpu": 65.0, "RemoteWallClockTime": 100.0, "JobStatus": 2, "ShadowBday": 1000,
                   "ServerTime": 1200})
    assert _cells("RemoteUserCpu PRINTAS CPU_TIME\n", [job], tool="condor_q") == [["   0+00:05:00"]]
    printas.JOB_TIME["cputime"] = True
    try:
        assert _cells("RemoteUserCpu PRINTAS CPU_TIME\n", [job], tool="condor_q") == [["   0+00:01:05"]]
    finally:
        printas.JOB_TIME["cputime"] = False
    # one tool's own functions are unknown to the other, as in HTCondor
    assert printmask.parse("SELECT\nX PRINTAS CPU_TIME\n", tool="condor_status").messages == \
        ["Unknown argument CPU_TIME for PRINTAS"]
    assert printmask.parse("SELECT\nX PRINTAS SLOT_COUNT_TAG\n", tool="condor_q").messages == \
        ["Unknown argument SLOT_COUNT_TAG for PRINTAS"]

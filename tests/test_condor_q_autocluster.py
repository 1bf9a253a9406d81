"""condor_q -autocluster and -group-by: the jobs aggregated on their significant
attributes as HTCondor's schedd does, in its autocluster table."""

import re

import pytest

from gridtools.classad import parse_ad
from gridtools.cli.condor import q, qautocluster


def _ad(text):
    return parse_ad(text)


def test_significant_attributes_come_from_the_slots_and_the_schedd():
    slots = [_ad('Requirements = START && TARGET.RequestCpus <= Cpus\nSTART = TARGET.Owner != "x" '
                 '&& CurrentTime > 0\nCpus = 4\nRank = TARGET.JobPrio'),
             _ad("Requirements = START\nSTART = true\nRank = 0")]
    assert qautocluster.significant(slots) == ["JobPrio", "Owner", "RequestCpus", "ConcurrencyLimits",
                                               "FlockTo", "Rank", "Requirements"]
    assert qautocluster.significant([]) == list(qautocluster.REQUIRED)


def test_jobs_with_the_same_signature_share_an_autocluster():
    jobs = [_ad(f'ClusterId = {c}\nProcId = 0\nOwner = "{o}"\nRequestMemory = {m}\n'
                "Requirements = TARGET.Memory >= RequestMemory && MY.Zone == TARGET.Zone\nZone = 3\nRank = 0")
            for c, o, m in ((1, "a", 100), (2, "b", 100), (3, "a", 200))]
    ads = qautocluster.aggregate(jobs, list(qautocluster.REQUIRED), "AutoClusterId")
    assert [(ad.eval("AutoClusterId"), ad.eval("JobCount"), ad.eval("RequestMemory")) for ad in ads] == \
        [(1, 2, 100), (2, 1, 200)]
    # the schedd's attributes and those their values refer to in the job (not Owner, not
    # ClusterId), and the ids of its jobs
    assert {name.lower() for name in ads[0]} == {"rank", "requirements", "requestmemory", "zone",
                                                 "autoclusterid", "jobcount", "jobids"}
    assert [ad.eval("JobIds") for ad in ads] == ["1.0 2.0", "3.0"]
    by_owner = qautocluster.aggregate(jobs, ["Owner"], "Id")
    assert [(ad.eval("Id"), ad.eval("Owner"), ad.eval("JobCount")) for ad in by_owner] == [(1, "a", 2), (2, "b", 1)]


def test_the_autocluster_table_in_htcondors_columns():
    ads = [_ad("AutoClusterId = 1\nJobCount = 12\nJobUniverse = 5\nRequestCpus = 1\nRequestMemory = 2048\n"
               "RequestDisk = 1000000\nRequirements = TARGET.Memory >= 2048"),
           _ad("AutoClusterId = 2\nJobCount = 1\nRequirements = true")]
    assert qautocluster.table(ads) == (
        "   ID COUNT UNIVERSE CPUS MEMORY     DISK REQUIREMENTS\n"
        "    1    12 Vanilla     1   2048  1000000 TARGET.Memory >= 2048\n"
        "    2     1 ??         ??     ??       ?? true\n")


def test_autocluster_ads_of_a_file(capsys, tmp_path, monkeypatch):
    """-autocluster -jobads FILE: the file's ads are autocluster ads (as -autocluster -l
    writes them), shown in the autocluster table."""
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path / "root"))
    path = tmp_path / "ac.ads"
    path.write_text("AutoClusterId = 3\nJobCount = 2\nRequestMemory = 100\nRequirements = true\n\n"
                    "AutoClusterId = 4\nJobCount = 7\nJobUniverse = 7\nRequirements = false\n")
    assert q.main(["-jobads", str(path), "-autocluster"]) == 0
    lines = capsys.readouterr()[0].split("\n")
    assert lines[2].startswith(f"-- Jobads: {path} @ ")
    assert lines[3:] == ["   ID COUNT UNIVERSE CPUS MEMORY     DISK REQUIREMENTS",
                         "    3     2 ??         ??    100       ?? true",
                         "    4     7 Scheduler   ??     ??       ?? false", ""]
    assert q.main(["-jobads", str(path), "-autocluster", "-af", "JobCount", "-constraint", "JobCount > 2"]) == 0
    assert capsys.readouterr()[0] == "7\n"


def test_group_by_and_autocluster_of_files(capsys, tmp_path, monkeypatch):
    """-group-by -jobads FILE takes the file's ads as group ads, in the order of their Id;
    -autocluster and -group-by with -userlog show the log's job ads, as HTCondor's do."""
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path / "root"))
    path = tmp_path / "groups"
    path.write_text('Id = 2\nJobCount = 3\nClusterId = 7\nProcId = 1\nOwner = "bob"\nJobStatus = 2\n'
                    'QDate = 1764842400\nCmd = "/bin/sleep"\n\n'
                    'Id = 1\nJobCount = 1\nClusterId = 4\nProcId = 0\nOwner = "ann"\nJobStatus = 1\n'
                    'QDate = 1764842400\nCmd = "/bin/true"\n')
    assert q.main(["-jobads", str(path), "-group-by", "-af", "Id", "JobCount"]) == 0
    assert capsys.readouterr() == ("1 1\n2 3\n", "")
    assert q.main(["-jobads", str(path), "-group-by"]) == 0
    lines = capsys.readouterr()[0].split("\n")
    assert lines[2].startswith(f"-- Jobads: {path} @ ")
    assert [line.split()[:2] for line in lines[4:6]] == [["4.0", "ann"], ["7.1", "bob"]]
    assert lines[6:] == ["", "2 jobs; 0 completed, 0 removed, 1 idle, 1 running, 0 held, 0 suspended", ""]
    log = tmp_path / "jobs.log"
    log.write_text("000 (012.000.000) 2026-12-04 10:00:00 Job submitted from host: <127.0.0.1:9618>\n...\n"
                   "000 (012.001.000) 2026-12-04 10:00:00 Job submitted from host: <127.0.0.1:9618>\n...\n")
    assert q.main(["-userlog", str(log), "-autocluster"]) == 0
    lines = capsys.readouterr()[0].split("\n")
    assert lines[2].startswith(f"-- Userlog: {log} @ ")
    assert lines[3:] == ["   ID COUNT UNIVERSE CPUS MEMORY     DISK REQUIREMENTS",
                         "            ??         ??     ??       ?? ",
                         "            ??         ??     ??       ?? ", ""]
    assert q.main(["-userlog", str(log), "-group-by", "-af", "ClusterId", "ProcId"]) == 0
    assert capsys.readouterr() == ("12 0\n12 1\n", "")


@pytest.mark.parametrize("argv, line", [
    (["-autocluster", "-batch"], "Error: -batch conflicts with -autocluster"),
    (["-group-by", "-batch"], "Error: -batch conflicts with -group-by"),
    (["-autocluster", "-unmatchable"], "Error: -autocluster conflicts with -unmatchable"),
])
def test_refusals(capsys, tmp_path, monkeypatch, argv, line):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path / "root"))
    assert q.main(argv) == 1
    assert capsys.readouterr() == ("", line + "\n")


def test_autoclusters_of_the_queue(cell, workdir):
    from condortools import submit
    submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue 3\n", cwd=workdir)
    submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nrequest_memory = 2048\nqueue\n",
           cwd=workdir, name="big.sub")
    shown = cell.run("condor_q", "-autocluster")
    assert (shown.returncode, shown.stderr) == (0, "")
    lines = shown.stdout.split("\n")
    assert re.match(r"^-- Schedd: .* @ \d\d/\d\d/\d\d \d\d:\d\d:\d\d$", lines[2])
    assert lines[3] == "   ID COUNT UNIVERSE CPUS MEMORY     DISK REQUIREMENTS"
    rows = [line.split()[:3] + [line.split()[4]] for line in lines[4:6]]
    assert rows == [["1", "3", "??", "1"], ["2", "1", "??", "2048"]]
    assert lines[6:] == [""]
    counts = cell.run("condor_q", "-autocluster", "-af", "AutoClusterId", "JobCount",
                      "-constraint", "RequestMemory > 1000")
    assert counts.stdout == "2 1\n"
    groups = cell.run("condor_q", "-group-by", "-af", "RequestMemory", "JobCount")
    assert groups.stdout.split("\n")[1:] == ["2048 1", ""]
    # without -af and the like: the per-job table over the groups (one a job), of all users
    table = cell.run("condor_q", "-group-by")
    assert (table.returncode, table.stderr) == (0, "")
    lines = table.stdout.split("\n")
    assert re.match(r"^-- Schedd: .* @ \d\d/\d\d/\d\d \d\d:\d\d:\d\d$", lines[2])
    assert lines[3].split() == ["ID", "OWNER", "SUBMITTED", "RUN_TIME", "ST", "PRI", "SIZE", "CMD"]
    assert [line.split()[0] for line in lines[4:8]] == ["1.0", "1.1", "1.2", "2.0"]
    assert [line.split()[5] for line in lines[4:8]] == ["H"] * 4
    assert lines[8:] == ["", "4 jobs; 0 completed, 0 removed, 0 idle, 0 running, 4 held, 0 suspended", ""]

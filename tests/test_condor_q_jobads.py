"""condor_q -jobads FILE: the jobs of a file of job ads (condor_q -l's form) instead of
the queue, in condor_q's views."""

import os
import re

import pytest

from gridtools.cli.condor import q

ADS = """\
-- Schedd: sub.example.org : <10.0.0.1:9618?addrs=10.0.0.1-9618> @ 12/04/26 10:00:00
ClusterId = 12
ProcId = 0
Owner = "bob"
JobStatus = 1
QDate = 1764842400
Cmd = "/bin/sleep"
Arguments = "60"
JobPrio = 0
TotalSubmitProcs = 2
RequestMemory = 1024

ClusterId = 12
ProcId = 1
Owner = "bob"
JobStatus = 2
QDate = 1764842400
Cmd = "/bin/sleep"
Arguments = "60"
JobPrio = 0
TotalSubmitProcs = 2
RemoteHost = "slot1@n1"
ShadowBday = 1764842400
RemoteWallClockTime = 0.0

*** Offset = 0 ClusterId = 13 ProcId = 0 Owner = "carol"
ClusterId = 13
ProcId = 0
Owner = "carol"
JobStatus = 5
QDate = 1764842400
HoldReason = "by hand"
HoldReasonCode = 1
HoldReasonSubCode = 0
EnteredCurrentStatus = 1764842400
Cmd = "/bin/true"
# a comment
...
ClusterId = 14
ProcId = 0
Owner = "carol"
JobStatus = 1
Broken = (1 +
"""


@pytest.fixture(autouse=True)
def _root(tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path / "root"))


@pytest.fixture
def ads(tmp_path):
    path = tmp_path / "jobs.ads"
    path.write_text(ADS)
    return str(path)


def _main(capsys, *argv):
    code = q.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_every_job_of_the_file_in_the_per_job_view(capsys, ads):
    code, out, err = _main(capsys, "-jobads", ads, "-nobatch")
    assert (code, err) == (0, "")
    lines = out.split("\n")
    assert lines[:2] == ["", ""]
    assert re.match(rf"^-- Jobads: {re.escape(ads)} @ \d\d/\d\d/\d\d \d\d:\d\d:\d\d$", lines[2])
    assert lines[3] == " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD"
    rows = [line.split()[:2] + line.split()[5:6] + line.split()[-2:] for line in lines[4:7]]
    assert rows == [["12.0", "bob", "I", "sleep", "60"], ["12.1", "bob", "R", "sleep", "60"],
                    ["13.0", "carol", "H", "0.0", "true"]]
    assert lines[7:] == ["", "3 jobs; 0 completed, 0 removed, 1 idle, 1 running, 1 held, 0 suspended", ""]


def test_the_batch_view_counts_the_procs_each_cluster_was_submitted_with(capsys, ads):
    lines = _main(capsys, "-jobads", ads)[1].split("\n")
    assert lines[3] == "OWNER BATCH_NAME    SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS"
    assert re.match(r"^bob   ID: 12 +\S+ +\S+ +_ +1 +1 +_ +2 12\.0-1$", lines[4])
    assert re.match(r"^carol ID: 13 +\S+ +\S+ +_ +_ +_ +1 +_ 13\.0$", lines[5])


def test_selections_and_attribute_views_work_on_the_file(capsys, ads):
    assert _main(capsys, "-jobads", ads, "-af", "ClusterId", "ProcId", "-constraint", "JobStatus =!= 5") == \
        (0, "12 0\n12 1\n", "")
    assert _main(capsys, "-jobads", ads, "carol", "-af", "HoldReason") == (0, "by hand\n", "")
    assert _main(capsys, "-jobads", ads, "12.1", "-af", "RemoteHost") == (0, "slot1@n1\n", "")
    code, out, _err = _main(capsys, "-jobads", ads, "-l", "13")
    assert code == 0 and out.startswith('ClusterId = 13\nCmd = "/bin/true"\n')      # (sorted by name)
    assert 'Owner = "carol"\nProcId = 0\n' in out
    hold = _main(capsys, "-jobads", ads, "-hold")[1].split("\n")
    assert hold[3:5] == [" ID      OWNER          HELD_SINCE  CODE/SUB HOLD_REASON",
                         hold[4]] and hold[4].endswith("   1/0   by hand")


def test_aaf_appends_columns_to_the_files_tables(capsys, ads, tmp_path):
    """-aaf adds its columns to the tables of the file's jobs as to the queue's, to the rows
    of -batch:0 (HTCondor's batch mode 0, which is no batch mode for -aaf), and to a
    -print-format table (whose last column of width 0 then grows with its values); -aaf:r
    prints the expression as written, -aaf:V quotes a string."""
    lines = _main(capsys, "-jobads", ads, "-nobatch", "-aaf:r", "RequestMemory", "Owner")[1].split("\n")
    assert lines[3].endswith(" SIZE CMD      RequestMemory Owner  ")
    assert [line[line.index(" 0.0 ") + 5:] for line in lines[4:7]] == [
        "sleep 60 1024          \"bob\"  ", "sleep 60 undefined     \"bob\"  ", "true     undefined     \"carol\""]
    raw = _main(capsys, "-jobads", ads, "-batch:0", "-aaf", "Owner")[1].split("\n")    # (batch mode 0 takes it)
    assert raw[3].endswith(" TOTAL JOB_IDS Owner") and [line[-13:] for line in raw[4:7]] == [
        "I       bob  ", "R       bob  ", "H       carol"]
    assert _main(capsys, "-jobads", ads, "-batch", "-aaf", "Owner")[0] == 1
    layout = tmp_path / "layout.cpf"
    layout.write_text("SELECT\n  ClusterId AS ID WIDTH 4\n  Owner AS WHO WIDTH 0\n")
    table = _main(capsys, "-jobads", ads, "-print-format", str(layout), "-aaf:V", "JobStatus", "Owner")[1]
    assert table.split("\n")[3:7] == ["ID   WHO   JobStatus Owner", "  12 bob   1         \"bob\"",
                                       "  12 bob   2         \"bob\"", "  13 carol 5         \"carol\""]


def test_the_standard_input_is_read_for_a_dash(capsys, ads, monkeypatch):
    import io
    monkeypatch.setattr("sys.stdin", io.StringIO(ADS))
    assert _main(capsys, "-jobads", "-", "-af", "Owner") == (0, "bob\nbob\ncarol\n", "")


def test_the_analysis_names_the_schedd_of_the_file(capsys, ads):
    out = _main(capsys, "-jobads", ads, "-better-analyze", "12.0")[1]
    assert out.startswith("\n\n-- Schedd: sub.example.org : <10.0.0.1:9618?addrs=10.0.0.1-9618>\n---\n012.000:")


@pytest.mark.parametrize("argv, line", [
    (["-jobads"], "Error: -jobads requires a filename"),
    (["-jobads", "/nonexistent/ads"], "Can't open file of ClassAds: /nonexistent/ads"),
])
def test_refusals(capsys, argv, line):
    assert _main(capsys, *argv) == (1, "", line + "\n")


NEW_FORM = """{
[ ClusterId = 5; ProcId = 0; Owner = "x"; JobStatus = 1; QDate = 0; Note = "a]b" ],
[ ClusterId = 6; ProcId = 0; Owner = "y"; JobStatus = 2; QDate = 0; Req = TARGET.Memory > 10 ]
}
"""


@pytest.mark.parametrize("form", ["", ":new", ":auto", ":bogus"])
def test_the_new_classad_form_is_read(capsys, tmp_path, form):
    path = tmp_path / "new.ads"
    path.write_text(NEW_FORM)
    assert _main(capsys, f"-jobads{form}", str(path), "-af", "ClusterId", "Owner", "Note") == \
        (0, "5 x a]b\n6 y undefined\n", "")
    assert _main(capsys, f"-jobads{form}", str(path), "6", "-af:r", "Req") == (0, "TARGET.Memory > 10\n", "")


def test_a_form_the_file_is_not_in_reads_no_ads(capsys, ads):
    assert _main(capsys, "-jobads:json", ads, "-af", "Owner") == (0, "", "")


@pytest.mark.parametrize("form", ["-l", "-json", "-xml", "-long:json"])
def test_the_queue_written_by_condor_q_reads_back_the_same(cell, workdir, form):
    from condortools import submit, wait_status
    from conftest import wait_for
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nqueue 2\n", cwd=workdir)
    wait_status(cell, f"{cluster}.0", 2)

    def unchanged():
        """The dump and proc 1's ad read from one publication: the dispatcher publishes
        the runs' news (a start, when a run began to execute) as it learns them, so the
        queue is dumped again after the ad is read until the two dumps are the same."""
        dump = cell.run("condor_q", form)
        whole = cell.run("condor_q", "-l", f"{cluster}.1").stdout
        return (dump, whole) if cell.run("condor_q", form).stdout == dump.stdout else None
    dump, whole = wait_for(unchanged)
    assert dump.returncode == 0, dump.stderr
    path = os.path.join(workdir, "queue.ads")
    with open(path, "w") as fh:
        fh.write(dump.stdout)
    cell.run("condor_rm", str(cluster))
    shown = cell.run("condor_q", "-jobads", path, "-af", "ClusterId", "ProcId", "Cmd")
    assert (shown.returncode, shown.stderr) == (0, "")
    assert shown.stdout == f"{cluster} 0 /bin/sleep\n{cluster} 1 /bin/sleep\n"
    again = cell.run("condor_q", "-jobads", path, "-l", f"{cluster}.1").stdout
    assert sorted(again.splitlines()) == sorted(whole.splitlines())

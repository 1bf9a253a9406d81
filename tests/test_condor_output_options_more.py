"""More of condor_q's and condor_status' output options as HTCondor prints them:
condor_q -idle in HTCondor's columns, -print-format files that aggregate
(``SELECT FROM AUTOCLUSTER``, ``SELECT UNIQUE``), and condor_status -slots
and -natural."""

import re

import pytest

from gridtools.cli.condor import q, status
from test_condor_status_views import SNAP, shown

IDLE_HEAD = " ID      OWNER          UNIVERSE  CPUS MEMORY STARTS LAST_HOST"

JOBS = """ClusterId = 9
ProcId = 0
Owner = "alice"
JobStatus = 1
JobUniverse = 5
RequestCpus = 1
RequestMemory = 128
NumJobStarts = 4
QDate = 1764842400
Cmd = "/bin/sleep"

ClusterId = 10
ProcId = 3
Owner = "bob"
JobStatus = 1
JobUniverse = 7
NumShadowStarts = 2
NumJobStarts = 5
LastRemoteHost = "slot1@node7"
QDate = 1764842400
Cmd = "/bin/sleep"

ClusterId = 11
ProcId = 0
Owner = "bob"
JobStatus = 2
JobUniverse = 5
QDate = 1764842400
Cmd = "/bin/sleep"
"""


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path / "root"))
    return tmp_path


def _main(capsys, *argv):
    code = q.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- condor_q -idle

def test_idle_prints_htcondors_columns(capsys, root):
    """The universe by its name, STARTS from NumShadowStarts (0 without it, whatever
    NumJobStarts says), and empty CPUS and MEMORY cells when the job has none."""
    path = root / "jobs.ads"
    path.write_text(JOBS)
    code, out, err = _main(capsys, "-jobads", str(path), "-idle")
    assert (code, err) == (0, "")
    lines = out.split("\n")
    assert lines[2].startswith(f"-- Jobads: {path} @ ")
    assert lines[3:] == [IDLE_HEAD,
                         "   9.0   alice          Vanilla      1    128      0 ",
                         "  10.3   bob            Scheduler                  2 slot1@node7",
                         ""]


def test_idle_of_the_queue(cell, workdir):
    from condortools import submit
    cluster = submit(cell, "executable = /bin/sleep\narguments = 300\nrequirements = Memory > 99999999\nqueue\n",
                     cwd=workdir)
    shown = cell.run("condor_q", "-idle")
    assert (shown.returncode, shown.stderr) == (0, "")
    lines = shown.stdout.split("\n")
    assert lines[3] == IDLE_HEAD
    assert lines[4].split()[0] == f"{cluster}.0" and lines[4].split()[2] == "Vanilla"
    assert lines[4].split()[5] == "0"


# ---------------------------------------------------------------- condor_q -pr: aggregation

AUTOCLUSTER_PF = """SELECT FROM AUTOCLUSTER
   AutoClusterId AS ' ID'   WIDTH 3 PRINTF %3d
   JobCount      AS COUNT   WIDTH 5 PRINTF %5d
   RequestMemory AS MEMORY  WIDTH 6 PRINTF %6d
SUMMARY NONE
"""

UNIQUE_PF = """SELECT UNIQUE NOTITLE
   RequestMemory AS MEMORY  WIDTH 6 PRINTF %6d
   JobCount      AS COUNT   WIDTH 5 PRINTF %5d
"""


def test_print_format_aggregates_the_ads_of_a_file(capsys, root):
    """With -jobads, the file's ads are the autocluster (or group) ads: shown in the
    file's columns in the order of their ids; SUMMARY STANDARD leaves two empty lines."""
    ads = root / "ac.ads"
    ads.write_text("AutoClusterId = 2\nJobCount = 3\nRequestMemory = 2048\n\n"
                   "AutoClusterId = 1\nJobCount = 7\nRequestMemory = 128\n")
    pf = root / "ac.pf"
    pf.write_text(AUTOCLUSTER_PF.replace("SUMMARY NONE", "SUMMARY STANDARD"))
    code, out, err = _main(capsys, "-jobads", str(ads), "-pr", str(pf))
    assert (code, err) == (0, "")
    lines = out.split("\n")
    assert lines[2].startswith(f"-- Jobads: {ads} @ ")
    assert lines[3:] == [" ID COUNT MEMORY", "  1     7    128", "  2     3   2048", "", "", ""]
    pf.write_text(AUTOCLUSTER_PF.replace("SELECT FROM AUTOCLUSTER", "SELECT FROM AUTOCLUSTER BARE"))
    assert _main(capsys, "-jobads", str(ads), "-pr", str(pf), "-constraint", "JobCount > 5") == \
        (0, "  1     7    128\n", "")


def test_print_format_from_autocluster_and_unique_of_the_queue(cell, workdir):
    from condortools import submit, write
    submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nqueue 3\n", cwd=workdir)
    submit(cell, "executable = /bin/sleep\narguments = 300\nhold = true\nrequest_memory = 2048\nqueue\n",
           cwd=workdir, name="big.sub")
    pf = write(f"{workdir}/ac.pf", AUTOCLUSTER_PF)
    shown = cell.run("condor_q", "-pr", pf)
    assert (shown.returncode, shown.stderr) == (0, "")
    lines = shown.stdout.split("\n")
    assert re.match(r"^-- Schedd: .* @ \d\d/\d\d/\d\d \d\d:\d\d:\d\d$", lines[2])
    assert lines[3] == " ID COUNT MEMORY"
    assert [line.split()[:2] for line in lines[4:6]] == [["1", "3"], ["2", "1"]]
    assert lines[5].split()[2] == "2048" and lines[6:] == [""]
    # the file's WHERE selects among the autoclusters
    where = write(f"{workdir}/where.pf", AUTOCLUSTER_PF.replace("SUMMARY NONE", "WHERE JobCount == 1"))
    shown = cell.run("condor_q", "-pr", where)
    assert [line.split()[:2] for line in shown.stdout.split("\n")[4:-1]] == [["2", "1"]]
    # SELECT UNIQUE: the jobs grouped on the attributes the columns refer to
    unique = write(f"{workdir}/unique.pf", UNIQUE_PF)
    shown = cell.run("condor_q", "-pr", unique)
    assert (shown.returncode, shown.stderr) == (0, "")
    lines = shown.stdout.split("\n")
    assert lines[0] == "MEMORY COUNT" and lines[2:] == ["  2048     1", ""]
    assert lines[1].split()[1] == "3"


def test_condor_status_still_refuses_aggregation(capsys, tmp_path):
    pf = tmp_path / "ac.pf"
    pf.write_text(AUTOCLUSTER_PF)
    assert status.main(["-pr", str(pf)]) == 1
    assert capsys.readouterr() == ("", f"print-format aggregation not supported\nError: invalid select file {pf}\n")


# ---------------------------------------------------------------- condor_status -slots and -natural

def test_slots_is_the_default_mode_without_compact():
    plain = shown(snap=SNAP)
    assert shown("-slots", snap=SNAP) == plain == shown("-sl", snap=SNAP)
    assert shown("-compact", "-slots", snap=SNAP) == plain
    assert shown("-slots", "-compact", snap=SNAP) == shown("-compact", snap=SNAP) != plain
    assert shown("-slots", "-run", snap=SNAP) == shown("-run", snap=SNAP)
    assert shown("-slots", "-af", "Name", snap=SNAP) == "slot1@node10\nslot2@node10\nslot1@node9\n"


@pytest.mark.parametrize("argv, line", [
    (["-slots", "-startd"], "Error:  Arg 2 (-startd) contradicts arg 1 (-slots)"),
    (["-avail", "-slots"], "Error:  Arg 2 (-slots) contradicts arg 1 (-avail)"),
])
def test_slots_contradicts_other_modes(capsys, argv, line):
    assert status.main(argv) == 1
    assert capsys.readouterr() == ("", line + "\n")


def test_natural_is_accepted():
    plain = shown(snap=SNAP)
    assert shown("-natural", snap=SNAP) == shown("-natural:off", snap=SNAP) == shown("-nat", snap=SNAP) == plain

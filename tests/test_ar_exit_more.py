"""qrsub, qrdel and qrstat end every error of their command line with status 1, as Grid
Engine's do; a qrsub without -e or -d gets the qmaster's answer on standard output, and
qrsub or qrdel without any option their usage and "error: no option argument"."""

import os

import pytest

from conftest import cell_fixture
from test_ar import reference

cell = cell_fixture(scope="module")

MISSING = 'missing value for "end time or duration" in advance reservation request\n'


def no_reservation(cell):
    assert os.listdir(os.path.join(cell.root, "spool", "ars")) == []


@pytest.mark.parametrize("args, err", [
    (["-d", "60", "-x"], 'qrsub: invalid option argument "-x"\n'),
    (["-d", "60", "-N", ""], "qrsub: empty string argument to -N option invalid\n"),
    (["-d", "60", "-N", "a b"], None),
    (["-d"], None),
    (["-a", "tomorrow", "-d", "1:0:0"], None),
    (["-d", "60", "-m", "x"], None),
])
def test_qrsub_command_line_errors_exit_1(cell, args, err):
    proc = cell.run("qrsub", *args)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    if err is not None:
        assert proc.stderr == err
    else:
        assert proc.stderr.count("\n") == 1 and proc.stderr.strip()
    no_reservation(cell)


def test_qrsub_without_end_or_duration_gets_the_qmasters_answer(cell):
    for args in (["-N", "x"], ["-a", "203001010000"], ["-A", "acct", "-q", "all.q"]):
        proc = cell.run("qrsub", *args)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, MISSING, "")
    no_reservation(cell)


def test_bare_qrsub_prints_its_usage_and_no_option_argument(cell):
    code, usage = reference("qrsub-help.txt")
    assert code == 0
    proc = cell.run("qrsub")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == usage + "error: no option argument\n"
    no_reservation(cell)


def test_qrsub_with_an_option_file_is_not_bare(cell, tmp_path):
    # the options of sge_ar_request count: without -e nor -d, the qmaster's answer
    path = os.path.join(cell.root, "etc", "sge_ar_request")
    with open(path, "w") as fh:
        fh.write("-A fromfile\n")
    try:
        proc = cell.run("qrsub")
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, MISSING, "")
    finally:
        os.unlink(path)


def test_bare_qrdel_prints_its_usage_and_no_option_argument(cell):
    usage = cell.run("qrdel", "-help", check=True).stdout
    assert usage.startswith("SGE 8.1.9\nusage: qrdel [options] ar_id_list\n")
    for args in ([], ["-f"]):
        proc = cell.run("qrdel", *args)
        assert (proc.returncode, proc.stdout) == (1, "")
        assert proc.stderr == usage + "error: no option argument\n"


def test_qrdel_bad_options_exit_1_after_the_usage(cell):
    usage = cell.run("qrdel", "-help", check=True).stdout
    proc = cell.run("qrdel", "-x", "1")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == usage + 'error: invalid option argument "-x"\n'
    missing = cell.run("qrdel", "-u")
    assert missing.returncode == 1 and missing.stderr.startswith(usage)


@pytest.mark.parametrize("args, err", [
    (["-x"], 'qrstat: invalid option argument "-x"\n'),
    (["-u"], 'qrstat: option "-u" requires an argument\n'),
    (["-ar"], 'qrstat: option "-ar" requires an argument\n'),
])
def test_qrstat_bad_options_exit_1(cell, args, err):
    proc = cell.run("qrstat", *args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", err)


def test_a_granted_reservation_still_exits_0(cell):
    proc = cell.run("qrsub", "-d", "600", "-N", "fine")
    assert proc.returncode == 0 and proc.stdout.startswith("Your advance reservation ")
    ar_id = proc.stdout.split()[3]
    assert cell.run("qrdel", ar_id).returncode == 0

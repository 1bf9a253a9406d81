"""qrstat, qrsub and qquota as Grid Engine 8.1.9's clients answer: qrstat -ar's ids
(unknown ones, ids only), its long form (the requested slot range, error_handling),
qrsub's refusals of its command line (-u, -d 0, -a/-e/-d formats, -w), qsub's bad
-a, qquota with nothing to show, and qstat -j's summary of jobs held back by a quota."""

import os
import re

import pytest

from conftest import cell_fixture, wait_for
from qtools import add_object, jid_of, wait_state
from test_ar import ar_of, at

cell = cell_fixture(slots=4)

MISSING = 'missing value for "end time or duration" in advance reservation request\n'


def no_reservation(cell):
    assert os.listdir(os.path.join(cell.root, "spool", "ars")) == []


def test_qrstat_ar_names_unknown_ids_only_when_none_exists(cell):
    """Grid Engine's qrstat_print: when none of the ids exists, stdout says so (the ids
    joined by ", "), exit 1; an existing id among unknown ones is shown alone, exit 0."""
    ar = ar_of(cell.run("qrsub", "-a", at(7200), "-d", "1:0:0", "-N", "arx"))
    one = cell.run("qrstat", "-ar", "999")
    assert (one.returncode, one.stdout, one.stderr) == (
        1, "Following advance reservations do not exist:\n999\n", "")
    two = cell.run("qrstat", "-ar", "999,998")
    assert (two.returncode, two.stdout, two.stderr) == (
        1, "Following advance reservations do not exist:\n999, 998\n", "")
    alone = cell.run("qrstat", "-ar", str(ar))
    mixed = cell.run("qrstat", "-ar", f"{ar},999")
    assert (mixed.returncode, mixed.stdout, mixed.stderr) == (0, alone.stdout, "")
    assert alone.stdout.splitlines()[1] == f"id                             {ar}"
    xml = cell.run("qrstat", "-ar", "999,998", "-xml")
    assert xml.returncode == 1 and xml.stderr == ""
    assert xml.stdout.splitlines()[2:] == [
        "   <ar_unknown>", "      <id>999</id>", "   </ar_unknown>",
        "   <ar_unknown>", "      <id>998</id>", "   </ar_unknown>", "</qrstat>"]


@pytest.mark.parametrize("item", ["arx", "a*", "12x"])
def test_qrstat_ar_takes_ids_only(cell, item):
    """-ar is an ar_id_list: a name or a pattern is no unsigned number."""
    ar_of(cell.run("qrsub", "-a", at(7200), "-d", "1:0:0", "-N", "arx"))
    proc = cell.run("qrstat", "-ar", item)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "", "error: ERROR! invalid id, must be an unsigned integer\n")


def test_qrstat_ar_shows_the_requested_slot_range_and_error_handling(cell):
    """granted_parallel_environment prints the requested range as Grid Engine prints a
    range list (2-3 as "2,3"), the granted count being in granted_slots_list; -he y
    shows error_handling true before granted_slots_list."""
    ar = ar_of(cell.run("qrsub", "-a", at(7200), "-d", "0:30:0", "-pe", "smp", "2-3", "-q", "all.q",
                        "-he", "y", "-N", "rng"))
    long = cell.run("qrstat", "-ar", str(ar)).stdout.splitlines()
    assert long[-3:] == ["error_handling                 true",
                         "granted_slots_list             all.q@testhost=3",
                         "granted_parallel_environment   smp slots 2,3"]
    xml = cell.run("qrstat", "-ar", str(ar), "-xml").stdout
    assert ("      <error_handling>true</error_handling>\n      <granted_slots_list>\n"
            '         <granted_slots  queue_instance="all.q@testhost" slots="3"/>\n') in xml
    assert "<parallel_environment>smp</parallel_environment>\n         <slots>2,3</slots>" in xml
    wide = ar_of(cell.run("qrsub", "-a", at(9000), "-d", "0:30:0", "-pe", "smp", "1-4"))
    assert cell.run("qrstat", "-ar", str(wide)).stdout.splitlines()[-1] == \
        "granted_parallel_environment   smp slots 1-4"
    plain = ar_of(cell.run("qrsub", "-a", at(14400), "-d", "0:30:0"))
    assert "error_handling" not in cell.run("qrstat", "-ar", str(plain)).stdout


@pytest.mark.parametrize("users", ["nosuchuser", "root,nosuchuser", "!nosuchuser"])
def test_qrsub_refuses_an_unknown_user(cell, users):
    proc = cell.run("qrsub", "-a", at(7200), "-d", "1:0:0", "-u", users)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "error: nosuchuser is not known as user\n")
    no_reservation(cell)


@pytest.mark.parametrize("args", [["-d", "0"], ["-a", "A", "-d", "0"], ["-d", "0:0:0"]])
def test_qrsub_duration_0_is_no_duration(cell, args):
    args = [at(7200) if a == "A" else a for a in args]
    proc = cell.run("qrsub", *args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, MISSING, "")
    no_reservation(cell)


@pytest.mark.parametrize("args, err", [
    (["-a", "1301", "-d", "600"], '\nInvalid format of date/hour-minute field.\n'
                                  'qrsub: ERROR! Wrong date/time format "1301" specified to -a option\n'),
    (["-e", "1301", "-d", "600"], '\nInvalid format of date/hour-minute field.\n'
                                  'qrsub: ERROR! Wrong date/time format "1301" specified to -a option\n'),
    (["-d", "0:10"], 'qrsub: ERROR! Wrong time format "0:10" specified to -d option\n'),
    (["-d", "1:0:0", "-w", "p"], 'qrsub: invalid option argument "-w p"\n'),
    (["-d", "1:0:0", "-w", "n"], 'qrsub: invalid option argument "-w n"\n'),
    (["-d", "1:0:0", "-w", "w"], 'qrsub: invalid option argument "-w w"\n'),
    (["-d", "1:0:0", "-w", "x"], 'qrsub: invalid option argument "-w x"\n'),
])
def test_qrsub_command_line_refusals(cell, args, err):
    proc = cell.run("qrsub", *args)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", err)
    no_reservation(cell)


def test_qsub_and_qalter_bad_date_time(cell, workdir):
    proc = cell.qsub("-a", "1301", "-b", "y", "true", cwd=workdir)
    assert proc.returncode != 0 and proc.stdout == ""
    assert proc.stderr == '\nInvalid format of date/hour-minute field.\n' \
        'qsub: ERROR! Wrong date/time format "1301" specified to -a option\n'
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    alter = cell.run("qalter", "-a", "1301", str(jid))
    assert alter.returncode != 0
    assert 'ERROR! Wrong date/time format "1301" specified to -a option' in alter.stdout + alter.stderr


RQS = "{\n   name         r3\n   description  NONE\n   enabled      TRUE\n" \
      "   limit        users {gtalice,gtbob} queues all.q to slots=1\n}\n"


def test_qquota_prints_nothing_without_rows(cell):
    """The header comes with the first rule printed: none, nothing at all."""
    add_object(cell, "-Arqs", RQS)
    for args in (["-l", "slots"], ["-h", "nosuchhost"], []):
        proc = cell.run("qquota", *args)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", ""), args


def test_qquota_l_with_an_unknown_resource_shows_nothing(cell):
    add_object(cell, "-Arqs", RQS)
    proc = cell.run("qquota", "-u", "*", "-l", "nosuch")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_qstat_j_summary_of_jobs_over_a_quota(cell, users, workdir):
    os.chmod(workdir, 0o777)
    add_object(cell, "-Arqs", RQS)
    first, second = (jid_of(cell.qsub("-q", "all.q", "-l", "h_rt=60", "-b", "y", "sleep", "30",
                                      user="gtalice", cwd=workdir)) for _ in range(2))
    wait_state(cell, first, "r")

    def summary():
        lines = cell.run("qstat", "-j").stdout.splitlines()
        if "Jobs dropped because exceeds limit in rule" not in lines:
            return None
        return lines[lines.index("Jobs dropped because exceeds limit in rule") + 1]
    assert wait_for(summary), cell.run("qstat", "-j").stdout
    assert str(second) in re.split(r"[\s,]+", summary())
    assert "exceeding" not in cell.run("qstat", "-j").stdout

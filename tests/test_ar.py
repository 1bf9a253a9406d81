"""Advance reservations end to end: qrsub, qrstat, qrdel, qsub -ar, qacct -ar, qstat -f,
against a real daemon and real users; texts compared with the 8.1.9 captures."""

import os
import re
import time

import pytest

from conftest import machine_lock, wait_for
from qtools import add_object, jid_of, queue_line, reasons, state_of, wait_state


def reference(name):
    from conftest import REPO
    text = open(os.path.join(REPO, "tests", "data", "reference", "sge", name)).read()
    code = int(re.search(r"# exit_code: (\d+)", text).group(1))
    out = text.split("# ---- stdout ----\n", 1)[1].split("# ---- stderr ----", 1)[0]
    return code, out


def at(seconds_from_now):
    """A -a/-e date_time (with seconds) ``seconds_from_now`` in the future."""
    return time.strftime("%Y%m%d%H%M.%S", time.localtime(time.time() + seconds_from_now))


@pytest.fixture
def alice_home():
    """gtalice's home folder, where one test puts a .sge_ar_request that her qrsub reads:
    the tests that run qrsub as gtalice take turns across test processes."""
    with machine_lock("home-gtalice"):
        yield os.path.expanduser("~gtalice")


def ar_of(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = re.fullmatch(r"Your advance reservation (\d+) has been granted\n", proc.stdout)
    assert found, proc.stdout
    return int(found.group(1))


def test_help_texts_are_the_captures(cell):
    for cmd, name in (("qrsub", "qrsub-help.txt"), ("qrstat", "qrstat-help.txt")):
        code, out = reference(name)
        got = cell.run(cmd, "-help")
        assert (got.returncode, got.stdout) == (code, out)


def test_only_arusers_and_managers_reserve(cell, users, alice_home):
    code, out = reference("qrsub-d-as-user-not-in-arusers.txt")
    denied = cell.run("qrsub", "-a", at(3600), "-d", "1:0:0", user="gtalice")
    assert (denied.returncode, denied.stdout) == (code, out.replace("alice", "gtalice"))
    assert os.listdir(os.path.join(cell.root, "spool", "ars")) == []
    cell.run("qconf", "-au", "gtalice", "arusers", check=True)
    ar_of(cell.run("qrsub", "-a", at(3600), "-d", "1:0:0", "-N", "ar_alice", "-pe", "make", "1",
                   user="gtalice"))
    ar_of(cell.run("qrsub", "-d", "1:0:0", "-N", "ar_root"))


def test_reservation_ids_as_grid_engine_numbers_them(cell, users):
    """A refusal before the request is checked (not a reserver) uses up no id; one checked
    against the cell and refused (no slots) does, as Grid Engine numbers a reservation
    before it looks for slots; no claim is left behind."""
    first = ar_of(cell.run("qrsub", "-d", "1:0:0", "-pe", "make", "2"))
    denied = cell.run("qrsub", "-a", at(3600), "-d", "1:0:0", user="gtalice")
    assert denied.returncode == 1 and "arusers" in denied.stdout
    assert ar_of(cell.run("qrsub", "-a", at(7200), "-d", "0:10:0")) == first + 1
    assert cell.run("qrsub", "-d", "1:0:0", "-pe", "make", "2").returncode == 1
    assert ar_of(cell.run("qrsub", "-a", at(7200), "-d", "0:10:0")) == first + 3
    assert os.listdir(os.path.join(cell.root, "spool", "arids")) == []
    with open(os.path.join(cell.root, "spool", "arseqnum")) as fh:
        assert fh.read() == f"{first + 3}\n"
    proc = cell.run("qrsub", "-d", "1:0:0", "-pe", "make", "0")       # refused before it is numbered
    assert (proc.returncode, proc.stderr) == (1, '"advance_reservation" rejected: pe range must be greater than zero\n')
    assert ar_of(cell.run("qrsub", "-a", at(14400), "-d", "0:10:0")) == first + 4


def test_qrstat_forms_and_qrdel_rights(cell, users, alice_home):
    cell.run("qconf", "-au", "gtalice", "arusers", check=True)
    mine = ar_of(cell.run("qrsub", "-a", at(7200), "-d", "1:0:0", "-N", "ar_alice", "-pe", "make", "1",
                          user="gtalice"))
    root = ar_of(cell.run("qrsub", "-d", "1:0:0", "-N", "ar_now"))
    table = cell.run("qrstat", user="gtalice").stdout.splitlines()
    _, ref = reference("qrstat.txt")
    assert table[:2] == ref.splitlines()[:2]
    assert len(table) == 3 and re.fullmatch(
        rf"\s+{mine} ar_alice   gtalice      w     \d\d/\d\d/\d{{4}} \d\d:\d\d:\d\d  "
        r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d  01:00:00", table[2])
    everyone = cell.run("qrstat", "-u", "*", user="gtalice").stdout.splitlines()
    assert [line.split()[:4] for line in everyone[2:]] == [
        [str(mine), "ar_alice", "gtalice", "w"], [str(root), "ar_now", "root", "r"]]
    long = cell.run("qrstat", "-ar", str(mine)).stdout.splitlines()
    # an ar_id_list holds ids only, as Grid Engine's qrstat reads it
    both = cell.run("qrstat", "-ar", f"{root},{mine}").stdout
    assert both.count("\nname ") == 2 and both.index(" ar_alice") < both.index(" ar_now")
    proc = cell.run("qrstat", "-ar", "no_such_ar")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "", "error: ERROR! invalid id, must be an unsigned integer\n")
    _, ref_long = reference("qrstat-ar.txt")
    assert [line[:31] for line in long] == [line[:31] for line in ref_long.splitlines()]
    assert long[-1] == "granted_parallel_environment   make slots 1"
    assert long[-2] == "granted_slots_list             all.q@testhost=1"
    xml = cell.run("qrstat", "-ar", str(mine), "-xml").stdout
    _, ref_xml = reference("qrstat-ar-xml.txt")
    tags = re.compile(r"^\s*<(/?[a-z_]+)", re.M)
    assert tags.findall(xml) == tags.findall(ref_xml)
    assert '<granted_slots  queue_instance="all.q@testhost" slots="1"/>' in xml
    other = cell.run("qrdel", str(root), user="gtalice")
    code, out = reference("qrdel-other-users-ar.txt")
    assert (other.returncode, other.stdout) == (code, out.replace("alice", "gtalice").replace('"6"', f'"{root}"'))
    missing = cell.run("qrdel", "9999", user="gtalice")
    assert (missing.returncode, missing.stdout) == reference("qrdel-nonexistent.txt")
    huge = "x" * 100000                       # no reservation has such a name: the same answer
    missing = cell.run("qrdel", huge, user="gtalice")
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        1, f'denied: advance_reservation "{huge}" does not exist\n', "")
    gone = cell.run("qrdel", "ar_alice", user="gtalice")
    assert (gone.returncode, gone.stdout) == (0, f"gtalice has deleted advance_reservation {mine}\n")
    assert [line.split()[0] for line in cell.run("qrstat", "-u", "*").stdout.splitlines()[2:]] == [str(root)]
    everything = cell.run("qrdel", "-u", "*")
    assert everything.stdout == f"root has deleted advance_reservation {root}\n"
    assert cell.run("qrstat", "-u", "*").stdout == ""


def test_no_suitable_queues_when_the_slots_are_taken(cell):
    ar_of(cell.run("qrsub", "-d", "1:0:0", "-pe", "make", "2"))
    code, out = reference("qrsub-d-now-alice-no-slots-left.txt")
    refused = cell.run("qrsub", "-d", "1:0:0")
    assert (refused.returncode, refused.stdout) == (code, out)
    later = cell.run("qrsub", "-a", at(7200), "-d", "1:0:0")
    ar_of(later)                                  # the slots are free after the first one ends
    # a job without a run time limit holds its slot for ever: nothing can be reserved on it
    cell.run("qrdel", "-u", "*", check=True)
    for _ in range(2):
        wait_state(cell, jid_of(cell.qsub("-b", "y", "sleep", "60")), "r")
    code, out = reference("qrsub-a-d-while-infinite-jobs-running.txt")
    refused = cell.run("qrsub", "-a", at(7200), "-d", "0:30:0")
    assert (refused.returncode, refused.stdout) == (code, out)


def test_qsub_ar_refusals(cell, users):
    code = cell.qsub("-ar", "-N", "x", "-b", "y", "true")
    ref_code, _ = reference("qsub-ar.txt")
    assert (code.returncode, code.stderr) == (ref_code, "qsub: invalid advance reservation id, "
                                                        "must be an unsigned integer\n")
    absent = cell.qsub("-ar", "77", "-b", "y", "true")
    assert (absent.returncode, absent.stderr) == (
        1, "Unable to run job: the advance reservation id 77 is invalid\nExiting.\n")
    private = ar_of(cell.run("qrsub", "-a", at(3600), "-d", "1:0:0", "-u", "gtbob"))
    # a reservation alice may not use: the -w e that -ar implies finds her job can never run
    # there (qsub does not refuse it otherwise, see test_ar_acl_and_inherit)
    denied = cell.qsub("-ar", str(private), "-b", "y", "true", user="gtalice")
    assert (denied.returncode, denied.stderr) == (1, "Unable to run job: error: no suitable queues\nExiting.\n")
    ok = cell.qsub("-ar", str(private), "-b", "y", "true", user="gtbob")
    assert ok.returncode == 0, ok.stderr
    long = cell.qsub("-ar", str(private), "-l", "h_rt=2:0:0", "-b", "y", "true", user="gtbob")
    assert long.stderr == ("Unable to run job: the job duration is longer than duration of the "
                           f"advance reservation id {private}\nExiting.\n")
    everyone = ar_of(cell.run("qrsub", "-a", at(3600), "-d", "1:0:0"))
    assert cell.qsub("-ar", str(everyone), "-b", "y", "true", user="gtalice").returncode == 0
    # qalter -ar refuses a reservation that is not there (one whose users leave the job's
    # owner out it accepts, as Grid Engine does: test_ar_acl_and_inherit)
    held = jid_of(cell.qsub("-h", "-b", "y", "true", user="gtalice"))
    assert cell.run("qalter", "-ar", "77", str(held), user="gtalice").returncode == 1
    # and a job in a reservation gets no run time longer than its window by qalter -l
    inside = jid_of(cell.qsub("-ar", str(private), "-h", "-b", "y", "true", user="gtbob"))
    longer = cell.run("qalter", "-l", "h_rt=2:0:0", str(inside), user="gtbob")
    assert longer.returncode == 1
    assert "the job duration is longer than duration of the advance reservation id " \
           f"{private}" in longer.stdout + longer.stderr
    assert cell.run("qalter", "-l", "h_rt=0:30:0", str(inside), user="gtbob").returncode == 0
    assert "ar_id" not in cell.run("qstat", "-j", str(held)).stdout
    assert cell.run("qalter", "-ar", str(everyone), str(held), user="gtalice").returncode == 0
    assert re.search(rf"^ar_id: +{everyone}$", cell.run("qstat", "-j", str(held)).stdout, re.M)


def test_a_job_of_a_reservation_is_verified_against_it_as_with_w_e(cell):
    """As Grid Engine's clients: -ar without -w means -w e (qstat -j: verify_suitable_queues 2,
    as capture qstat-j-ar-job.txt shows), and the job is verified against what the
    reservation holds, whenever its window starts; -w n skips that, -w w is 1."""
    later = ar_of(cell.run("qrsub", "-a", at(3600), "-d", "1:0:0", "-N", "later"))
    job = jid_of(cell.qsub("-h", "-ar", str(later), "-N", "in_ar_future", "-b", "y", "true"))
    shown = cell.run("qstat", "-j", str(job)).stdout
    _, captured = reference("qstat-j-ar-job.txt")
    wanted = [line for line in captured.splitlines() if line.startswith(("verify_suitable_queues:", "ar_id:"))]
    assert wanted == ["verify_suitable_queues:     2", "ar_id:                      7"]
    assert [line for line in shown.splitlines() if line.startswith(("verify_suitable_queues:", "ar_id:"))] == [
        wanted[0], f"ar_id:                      {later}"]
    assert "<JB_verify_suitable_queues>2</JB_verify_suitable_queues>" in \
        cell.run("qstat", "-j", str(job), "-xml").stdout
    too_big = cell.qsub("-ar", str(later), "-pe", "smp", "2", "-b", "y", "true")
    assert (too_big.returncode, too_big.stderr) == (
        1, "Unable to run job: error: no suitable queues\nExiting.\n")     # (it holds one slot)
    elsewhere = cell.qsub("-ar", str(later), "-l", "h=nosuchhost", "-b", "y", "true")
    assert elsewhere.returncode == 1
    unchecked = jid_of(cell.qsub("-h", "-ar", str(later), "-w", "n", "-l", "h=nosuchhost", "-b", "y", "true"))
    assert "verify_suitable_queues" not in cell.run("qstat", "-j", str(unchecked)).stdout
    warned = jid_of(cell.qsub("-h", "-w", "w", "-b", "y", "true"))
    assert "verify_suitable_queues:     1\n" in cell.run("qstat", "-j", str(warned)).stdout
    cleared = jid_of(cell.qsub("-h", "-w", "n", "-clear", "-ar", str(later), "-b", "y", "true"))
    assert "verify_suitable_queues:     2\n" in cell.run("qstat", "-j", str(cleared)).stdout


def test_reserved_slots_serve_only_the_reservations_jobs(cell, workdir):
    ar = ar_of(cell.run("qrsub", "-d", "1:0:0", "-N", "held"))
    outside = [jid_of(cell.qsub("-b", "y", "sleep", "60")) for _ in range(2)]
    wait_state(cell, outside[0], "r")
    wait_for(lambda: reasons(cell, outside[1]))          # (a pass has looked at it)
    assert state_of(cell, outside[1]) == "qw"             # the second slot is the reservation's
    assert queue_line(cell, "all.q@testhost").split()[2] == "1/1/2"
    inside = jid_of(cell.qsub("-ar", str(ar), "-b", "y", "sleep", "1"))
    wait_state(cell, inside, "r")
    assert state_of(cell, outside[1]) == "qw"
    assert "ar_id:                      %d" % ar in cell.run("qstat", "-j", str(inside)).stdout
    cell.wait_finished(inside)
    records = [r for r in cell.accounting() if r[5] == str(inside)]
    assert records and wait_for(lambda: "\n    %d " % ar in cell.run("qacct", "-ar").stdout)
    per_ar = cell.run("qacct", "-ar", str(ar))
    _, ref = reference("qacct-ar-5.txt")
    assert per_ar.stdout.splitlines()[:2] == ref.splitlines()[:2]
    assert per_ar.stdout.splitlines()[2].split()[0] == str(ar)
    assert "arid         %d" % ar in cell.run("qacct", "-j", str(inside)).stdout
    cell.run("qrdel", str(ar), check=True)
    wait_state(cell, outside[1], "r")                    # the slot is the cell's again


def test_jobs_run_only_inside_the_window(cell):
    ar = ar_of(cell.run("qrsub", "-a", at(8), "-e", at(14), "-N", "window"))
    start = time.time()
    job = jid_of(cell.qsub("-ar", str(ar), "-b", "y", "sleep", "60"))
    # a pass has looked at the job and left it waiting
    wait_for(lambda: "execution time not reached" in cell.run("qstat", "-j", str(job)).stdout)
    assert state_of(cell, job) == "qw"
    wait_state(cell, job, "r", timeout=20)
    began = [r for r in cell.run("qstat").stdout.splitlines() if r.split()[:1] == [str(job)]]
    assert began and time.time() - start >= 6
    cell.wait_finished(job, timeout=30)                   # ended by the reservation's end
    record = [r for r in cell.accounting() if r[5] == str(job)][0]
    assert int(record[10]) - int(record[9]) < 30          # end - start: killed, not finished
    assert wait_for(lambda: cell.run("qrstat", "-u", "*").stdout == "", timeout=10)


def test_a_disabled_reserved_queue_puts_the_reservation_in_error(cell):
    ar = ar_of(cell.run("qrsub", "-a", at(3600), "-d", "1:0:0", "-he", "y", "-N", "err"))
    cell.run("qmod", "-d", "all.q@testhost", check=True)
    cell.qsub("-b", "y", "true")                           # something to make a pass
    # (W: waiting with an error; E is running with one)
    assert wait_for(lambda: cell.run("qrstat").stdout.splitlines()[2].split()[3] == "W")
    long = cell.run("qrstat", "-ar", str(ar)).stdout.splitlines()
    assert long[7:9] == ["duration                       01:00:00",
                         "message                        reserved queue all.q@testhost is disabled"]
    table = cell.run("qrstat", "-explain").stdout.splitlines()
    assert table[3:] == ["       reserved queue all.q@testhost is disabled"]
    assert len(cell.run("qrstat").stdout.splitlines()) == 3
    xml = cell.run("qrstat", "-explain", "-xml").stdout
    assert ("<duration>01:00:00</duration>\n      <message>reserved queue all.q@testhost is disabled"
            "</message>\n   </ar_summary>") in xml
    cell.run("qmod", "-e", "all.q@testhost", check=True)
    cell.qsub("-b", "y", "true")
    assert wait_for(lambda: cell.run("qrstat").stdout.splitlines()[2].split()[3] == "w")


def test_verify_only_and_default_request_files(cell, users, alice_home):
    verified = cell.run("qrsub", "-w", "v", "-d", "1:0:0")
    assert (verified.returncode, verified.stdout) == (0, "verification: found suitable queue(s)\n")
    assert cell.run("qrstat", "-u", "*").stdout == ""                  # nothing reserved
    too_many = cell.run("qrsub", "-w", "v", "-d", "1:0:0", "-pe", "make", "3")
    assert too_many.returncode == 1 and too_many.stdout.endswith("advance_reservation: no suitable queues\n")
    code, out = reference("qrsub-d-now-alice-too-many-slots.txt")
    refused = cell.run("qrsub", "-d", "1:0:0", "-pe", "make", "3")
    assert (refused.returncode, refused.stdout) == (code, out)
    with open(os.path.join(cell.root, "etc", "sge_ar_request"), "w") as fh:
        fh.write("-N from_cell -A cellacct\n")
    home = alice_home
    with open(os.path.join(home, ".sge_ar_request"), "w") as fh:
        fh.write("-N from_home\n")
    cell.run("qconf", "-au", "gtalice", "arusers", check=True)
    try:
        mine = ar_of(cell.run("qrsub", "-d", "600", user="gtalice"))
        long = cell.run("qrstat", "-ar", str(mine)).stdout
        assert "name                           from_home" in long
        assert "account                        cellacct" in long
        named = ar_of(cell.run("qrsub", "-d", "600", "-N", "given", user="gtalice"))
        assert "given" in cell.run("qrstat", "-ar", str(named)).stdout
    finally:
        os.unlink(os.path.join(home, ".sge_ar_request"))


def test_bad_qrsub_input(cell):
    assert cell.run("qrsub", "-a", at(3600)).returncode == 1              # no -e nor -d
    bad_date = cell.run("qrsub", "-a", "tomorrow", "-d", "1:0:0")
    assert bad_date.returncode != 0 and "tomorrow" in bad_date.stderr
    assert cell.run("qrsub", "-d", "1:0:0", "-pe", "nosuchpe", "1").returncode == 1
    unknown = cell.run("qrsub", "-d", "1:0:0", "-l", "nosuchres=1")
    assert unknown.returncode == 1 and 'unknown resource "nosuchres"' in unknown.stderr
    assert cell.run("qrsub", "-x").returncode == 1
    # -N as qsub checks it: an empty name, or one that is not UTF-8 (stored altered, before)
    empty = cell.run("qrsub", "-d", "1:0:0", "-N", "")
    assert (empty.returncode, empty.stderr) == (1, "qrsub: empty string argument to -N option invalid\n")
    odd = cell.run("qrsub", "-d", "1:0:0", "-N", os.fsdecode(b"\xff"))
    assert (odd.returncode, odd.stderr) == (1, "qrsub: Non-graphic character (hex ff) not allowed in objectname\n")
    assert os.listdir(os.path.join(cell.root, "spool", "ars")) == []


def test_now_checkpointing_and_mail_options(cell):
    cell.run("qconf", "-mattr", "queue", "qtype", "BATCH", "all.q", check=True)
    refused = cell.run("qrsub", "-d", "1:0:0", "-now", "y")
    assert (refused.returncode, refused.stdout) == (1, "advance_reservation: no suitable queues\n")
    cell.run("qconf", "-mattr", "queue", "qtype", "BATCH INTERACTIVE", "all.q", check=True)
    interactive = ar_of(cell.run("qrsub", "-d", "1:0:0", "-now", "y"))
    add_object(cell, "-Ackpt", "ckpt_name ck\ninterface userdefined\nckpt_command none\nmigr_command none\n"
               "restart_command none\nclean_command none\nckpt_dir /tmp\nsignal none\nwhen sx\n")
    assert cell.run("qrsub", "-d", "1:0:0", "-ckpt", "ck").returncode == 1        # not in ckpt_list
    assert cell.run("qrsub", "-d", "1:0:0", "-ckpt", "absent").returncode == 1
    cell.run("qconf", "-aattr", "queue", "ckpt_list", "ck", "all.q", check=True)
    ckpt = ar_of(cell.run("qrsub", "-d", "1:0:0", "-ckpt", "ck", "-M", "me@example.org", "-m", "be"))
    long = cell.run("qrstat", "-ar", str(ckpt)).stdout.splitlines()
    assert "checkpoint_name                ck" in long
    assert "mail_options                   be" in long and "mail_list                      me@example.org" in long
    assert interactive != ckpt


def test_deleting_a_reservation_deletes_its_jobs(cell):
    ar = ar_of(cell.run("qrsub", "-d", "1:0:0", "-pe", "make", "2"))
    running = jid_of(cell.qsub("-ar", str(ar), "-b", "y", "sleep", "60"))
    waiting = jid_of(cell.qsub("-ar", str(ar), "-pe", "make", "2", "-b", "y", "sleep", "60"))
    wait_state(cell, running, "r")
    assert state_of(cell, waiting) == "qw"
    gone = cell.run("qrdel", "-f", str(ar))
    assert (gone.returncode, gone.stdout) == (0, f"root has deleted advance_reservation {ar}\n")
    cell.wait_finished(running, timeout=20)
    cell.wait_finished(waiting, timeout=20)
    assert [r for r in cell.accounting() if r[5] == str(waiting)] == []        # it never ran
    assert cell.run("qrstat", "-u", "*").stdout == ""


def test_on_hosts_with_their_own_execution_daemons_a_window_serves_only_its_jobs(workdir):
    """Two hosts of one slot, each with its own execd. The reservation takes node2's slot
    from 10 s from now for 5 s: a job without a run time limit never gets node2, a 2 s
    job runs there before the window, the reservation's job only inside it (killed at
    its end); afterwards node2 is the cell's again."""
    from conftest import destroy_cell, make_cell
    cell = make_cell(slots=1, hosts=["testhost", "node2"], execds=True)
    try:
        ar = ar_of(cell.run("qrsub", "-a", at(10), "-e", at(15), "-q", "all.q@node2"))
        window = [line.split(None, 1)[1] for line in cell.run("qrstat", "-ar", str(ar)).stdout.splitlines()
                  if line.split()[:1] in (["start_time"], ["end_time"])]
        begin, end = (time.mktime(time.strptime(w, "%m/%d/%Y %H:%M:%S")) for w in window)
        endless = [jid_of(cell.qsub("-b", "y", "sleep", "120", cwd=workdir)) for _ in range(2)]
        wait_state(cell, endless[0], "r")
        short = jid_of(cell.qsub("-l", "h_rt=2", "-b", "y", "sleep", "1", cwd=workdir))
        inside = jid_of(cell.qsub("-ar", str(ar), "-b", "y", "sleep", "120", cwd=workdir))
        cell.wait_finished(short, timeout=20)
        wait_state(cell, inside, "r", timeout=30)
        assert state_of(cell, endless[1]) == "qw"
        cell.wait_finished(inside, timeout=30)
        wait_state(cell, endless[1], "r", timeout=30)
        records = {int(r[5]): r for r in cell.accounting()}
        assert records[short][1] == "node2" and int(records[short][10]) <= begin
        assert records[inside][1] == "node2"
        assert begin <= int(records[inside][9]) and int(records[inside][10]) <= end + 5
        assert [line.split()[7] for line in cell.run("qstat").stdout.splitlines()[2:]] == [
            "all.q@testhost", "all.q@node2"]
    finally:
        destroy_cell(cell)


def test_a_reservation_from_now_starts_on_a_whole_second():
    """qrsub -e alone: the start is now in whole seconds, so that the duration qrstat shows
    is the time between the start and the end it shows."""
    from gridtools.cli.sge.qrsub import window
    assert window({"start": None, "end": 14_412.0, "duration": None}, 12.75) == (12, 14_412.0)
    assert window({"start": None, "end": None, "duration": 60}, 12.75) == (12, 72)
    assert window({"start": 100, "end": None, "duration": 60}, 12.75) == (100, 160)


def test_a_reservation_of_a_duration_from_now_lasts_that_long(cell):
    """qrsub -d alone: the daemon starts it on its own whole second and ends it the
    duration later, however long the request took to reach it."""
    for _ in range(3):
        ar = ar_of(cell.run("qrsub", "-d", "0:1:0"))
        assert cell.run("qrstat").stdout.splitlines()[2].split()[-1] == "00:01:00"
        text = open(os.path.join(cell.root, "spool", "ars", str(ar))).read()
        start = float(re.search(r"(?m)^start: (.*)$", text).group(1))
        end = float(re.search(r"(?m)^end: (.*)$", text).group(1))
        assert (start == int(start), end - start) == (True, 60.0)
        cell.run("qrdel", str(ar), check=True)


def test_state_letters_of_a_reservation_in_error():
    """qrstat(1): W is waiting with an error, E running with one."""
    from gridtools.cli.sge.arlist import letter
    ar = {"state": "error", "start": 100.0, "end": 200.0}
    assert [letter(ar, now) for now in (50, 150)] == ["W", "E"]
    assert [letter(dict(ar, state="granted"), now) for now in (50, 150, 250)] == ["w", "r", "x"]


def test_calendars_are_judged_over_the_reservations_window(cell):
    """A weekend-off calendar: a Saturday reservation is refused, with Grid Engine's note
    on the queue instance. A calendar that disables the queue today only (state D now):
    a reservation for tomorrow is granted. A calendar change that would close the
    reserved queue instance in that window is refused, by -mattr and by -Mcal."""
    import datetime
    import zoneinfo
    from gridtools.formats.sge.calendar import WEEKDAYS
    zone = zoneinfo.ZoneInfo(cell.env["TZ"])
    today = datetime.datetime.now(zone)
    saturday = (today + datetime.timedelta(days=(5 - today.weekday()) % 7 or 7)).replace(
        hour=10, minute=0, second=0, microsecond=0)
    tomorrow = (today + datetime.timedelta(days=1)).replace(hour=10, minute=0, second=0, microsecond=0)
    weekday = WEEKDAYS[today.weekday()]
    add_object(cell, "-Acal", "calendar_name wkend\nyear NONE\nweek sat-sun=off\n")
    add_object(cell, "-Acal", f"calendar_name today\nyear NONE\nweek {weekday}=off\n")
    cell.run("qconf", "-mattr", "queue", "calendar", "wkend", "all.q", check=True)
    refused = cell.run("qrsub", "-a", saturday.strftime("%Y%m%d%H%M"), "-d", "1:0:0")
    assert (refused.returncode, refused.stdout) == (
        1, 'queue "all.q@testhost" is calendar disabled in selected time frame\n'
           "advance_reservation: no suitable queues\n")
    cell.run("qconf", "-mattr", "queue", "calendar", "today", "all.q", check=True)
    assert wait_for(lambda: "D" in queue_line(cell, "all.q@testhost").split()[-1])
    ar = ar_of(cell.run("qrsub", "-a", tomorrow.strftime("%Y%m%d%H%M"), "-d", "1:0:0"))
    # the calendar closes the queue now, not in the window: the reservation is not in error
    # (as Grid Engine sets none in error for a calendar's states); passes ran (a job was
    # submitted and looked at) before it is looked at
    probe = cell.run("qsub", "-terse", "-b", "y", "true", check=True).stdout.strip()
    wait_for(lambda: "dropped because it is disabled" in cell.run("qstat", "-j", probe).stdout)
    assert "is disabled" not in cell.run("qrstat", "-explain").stdout
    assert " W " not in cell.run("qrstat").stdout
    cell.run("qdel", probe, check=True)
    closing = WEEKDAYS[tomorrow.weekday()]
    add_object(cell, "-Acal", f"calendar_name closing\nyear NONE\nweek {closing}=off\n")
    changed = cell.run("qconf", "-mattr", "queue", "calendar", "closing", "all.q")
    assert changed.returncode == 1
    assert changed.stderr == f'denied: changing "closing" to calendar would break advance reservation {ar}\n'
    assert cell.run("qconf", "-sq", "all.q").stdout.count("calendar              today") == 1
    path = os.path.join(cell.root, "today.cal")
    with open(path, "w") as fh:
        fh.write(f"calendar_name today\nyear NONE\nweek {weekday},{closing}=off\n")
    modified = cell.run("qconf", "-Mcal", path)
    assert modified.returncode == 1
    assert modified.stderr == f'denied: changing "today" to calendar would break advance reservation {ar}\n'
    assert f"week             {weekday}=off" in cell.run("qconf", "-scal", "today").stdout
    cell.run("qrdel", str(ar), check=True)
    cell.run("qconf", "-mattr", "queue", "calendar", "closing", "all.q", check=True)


def test_max_advance_reservations_caps_the_reservations_of_the_cell(cell):
    text = cell.run("qconf", "-sconf", "global", check=True).stdout + "max_advance_reservations 1\n"
    path = os.path.join(cell.root, "global")
    with open(path, "w") as fh:
        fh.write(text)
    cell.run("qconf", "-Mconf", path, check=True)
    first = ar_of(cell.run("qrsub", "-a", at(3600), "-d", "0:10:0"))
    proc = cell.run("qrsub", "-a", at(7200), "-d", "0:10:0")
    assert (proc.returncode, proc.stderr) == (1, "rejected: only 1 advance reservations are allowed per cluster\n")
    cell.run("qrdel", str(first), check=True)
    ar_of(cell.run("qrsub", "-a", at(7200), "-d", "0:10:0"))


def test_a_duration_that_does_not_fit_the_start_and_end_is_refused(cell):
    """qrsub -a, -e and -d together must agree, as Grid Engine checks them."""
    base = time.time() + 3600
    start, end = (time.strftime("%Y%m%d%H%M.%S", time.localtime(base + s)) for s in (0, 600))
    proc = cell.run("qrsub", "-a", start, "-e", end, "-d", "2:0:0")
    assert (proc.returncode, proc.stdout + proc.stderr) == (
        1, "difference between end and start time does not correspond to duration\n")
    assert cell.run("qrstat").stdout == ""
    assert ar_of(cell.run("qrsub", "-a", start, "-e", end, "-d", "0:10:0"))

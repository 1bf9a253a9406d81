"""qstat's queue selection of pending jobs with a project, the answers of qdel, qhold,
qrls, qalter and qrdel to a ``-u`` list that matches nothing, and the order of
``qstat -s z``: as Grid Engine 8.1.9 shows them.

- ``qstat -q/-pe/-l`` shows a pending job only when it fits one of the queue
  instances selected, and a job submitted with ``-P`` fits only a queue whose
  ``projects`` list names its project (and whose ``xprojects`` does not).
- ``qdel/qhold/qrls/qalter -u`` that match no job print Grid Engine's sentence on
  standard output; qdel and qalter exit 1, qhold and qrls 3 (the answer's status).
- ``qrdel -u`` that matches no reservation says so and exits 1.
- ``qstat -s z`` lists finished jobs in the order they ended, after the others.
"""

import re
import time

from conftest import wait_for
from qtools import add_object, jid_of, set_attr


def add_project(cell, name):
    add_object(cell, "-Aprj", f"name {name}\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n")


def job_ids(text):
    """The job ids of a qstat listing's job lines, in order."""
    return [int(m.group(1)) for m in re.finditer(r"^\s*(\d+) \d\.\d{5} ", text, re.M)]


# ---------------------------------------------------------------- qstat -q/-pe/-l


def test_queue_selection_hides_pending_jobs_with_a_project_the_queue_does_not_name(cell, workdir):
    add_project(cell, "projA")
    plain = jid_of(cell.qsub("-h", "-b", "y", "-N", "plain", "true", cwd=workdir))
    prj = jid_of(cell.qsub("-h", "-b", "y", "-N", "withprj", "-P", "projA", "true", cwd=workdir))
    wait_for(lambda: {plain, prj} <= set(job_ids(cell.run("qstat", "-u", "*").stdout)))
    selections = (("-q", "all.q"), ("-pe", "make"), ("-l", "h_rt=0:10:0"))
    for option in selections:         # all.q has projects NONE: the project job fits nowhere
        out = cell.run("qstat", "-u", "*", *option)
        assert out.returncode == 0, out.stderr
        assert job_ids(out.stdout) == [plain], (option, out.stdout)
    full = cell.run("qstat", "-f", "-u", "*", "-q", "all.q").stdout
    assert job_ids(full) == [plain], full
    set_attr(cell, "all.q", "projects", "projA")
    for option in selections:
        assert sorted(job_ids(cell.run("qstat", "-u", "*", *option).stdout)) == [plain, prj], option
    set_attr(cell, "all.q", "xprojects", "projA")
    assert job_ids(cell.run("qstat", "-u", "*", "-q", "all.q").stdout) == [plain]


# ---------------------------------------------------------------- -u matching no job


def test_qdel_u_matching_no_job_says_so_and_exits_1(cell, workdir):
    everyone = cell.run("qdel", "-u", "*")
    assert (everyone.returncode, everyone.stdout, everyone.stderr) == (
        1, "There are no jobs registered\n", "")
    some = cell.run("qdel", "-u", "nosuchu1,nosuchu2")
    assert (some.returncode, some.stdout, some.stderr) == (
        1, "There is no job registered for the following users: nosuchu1,nosuchu2\n", "")
    many = cell.run("qdel", "-u", ",".join(f"u{n}" for n in range(25)))
    assert many.stdout == ("There is no job registered for the following users: "
                           + ",".join(f"u{n}" for n in range(20)) + ",...\n")
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: jid in job_ids(cell.run("qstat").stdout))
    other = cell.run("qdel", "-u", "nosuchu1")
    assert (other.returncode, other.stdout) == (
        1, "There is no job registered for the following users: nosuchu1\n")
    mine = cell.run("qdel", "-u", "root")
    assert (mine.returncode, mine.stdout) == (0, f"root has deleted job {jid}\n")


def test_qhold_qrls_qalter_u_matching_no_job(cell, workdir):
    for cmd, code in (("qhold", 3), ("qrls", 3)):
        out = cell.run(cmd, "-u", "nosuchu1")
        assert (out.returncode, out.stdout, out.stderr) == (
            code, "There is no job registered for the following users: nosuchu1\n", ""), cmd
        everyone = cell.run(cmd, "-u", "*")
        assert (everyone.returncode, everyone.stdout) == (code, "There are no jobs registered\n"), cmd
    alter = cell.run("qalter", "-u", "nosuchu1", "-N", "renamed")
    assert (alter.returncode, alter.stdout, alter.stderr) == (
        1, "There is no job registered for the following users: nosuchu1\n", "")
    jid = jid_of(cell.qsub("-h", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: jid in job_ids(cell.run("qstat").stdout))
    released = cell.run("qrls", "-u", "root")
    assert (released.returncode, released.stdout) == (0, f"modified hold of job {jid}\n")


# ---------------------------------------------------------------- qrdel -u


def _at(seconds_from_now):
    return time.strftime("%Y%m%d%H%M.%S", time.localtime(time.time() + seconds_from_now))


def test_qrdel_u_matching_no_reservation_says_so_and_exits_1(cell):
    everyone = cell.run("qrdel", "-u", "*")
    assert (everyone.returncode, everyone.stdout, everyone.stderr) == (
        1, "There is no advance_reservation registered for the following users: *\n", "")
    many = cell.run("qrdel", "-u", "a1,a2,a3,a4,a5,a6,a7")
    assert (many.returncode, many.stdout) == (
        1, "There is no advance_reservation registered for the following users: a1,a2,a3,a4,a5,...\n")
    granted = cell.run("qrsub", "-a", _at(3600), "-d", "1:0:0")
    ar = int(re.fullmatch(r"Your advance reservation (\d+) has been granted\n", granted.stdout).group(1))
    other = cell.run("qrdel", "-u", "nosuchu1")
    assert (other.returncode, other.stdout) == (
        1, "There is no advance_reservation registered for the following users: nosuchu1\n")
    mine = cell.run("qrdel", "-u", "root")
    assert (mine.returncode, mine.stdout) == (0, f"root has deleted advance_reservation {ar}\n")


# ---------------------------------------------------------------- qstat -s z


def test_finished_jobs_listed_in_the_order_they_ended_after_the_others(cell, workdir):
    slow = jid_of(cell.qsub("-b", "y", "-N", "slow", "sleep", "3", cwd=workdir))
    quick = jid_of(cell.qsub("-b", "y", "-N", "quick", "true", cwd=workdir))
    cell.wait_finished(quick)
    cell.wait_finished(slow)
    held = jid_of(cell.qsub("-h", "-b", "y", "-N", "held", "true", cwd=workdir))
    wait_for(lambda: held in job_ids(cell.run("qstat").stdout))
    wait_for(lambda: job_ids(cell.run("qstat", "-s", "z").stdout) == [quick, slow])
    for args in (("-s", "z"), ("-s", "z", "-ext"), ("-s", "z", "-xml")):
        out = cell.run("qstat", "-u", "*", *args).stdout
        ids = ([int(n) for n in re.findall(r"<JB_job_number>(\d+)<", out)] if "-xml" in args
               else job_ids(out))
        assert ids == [quick, slow], (args, out)
    assert job_ids(cell.run("qstat", "-u", "*", "-s", "pz").stdout) == [held, quick, slow]
    assert job_ids(cell.run("qstat", "-u", "*", "-s", "hz", "-ext").stdout) == [held, quick, slow]

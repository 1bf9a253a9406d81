"""Grid Engine behaviour of qalter, qdel, qhold, qrls and qstat that gridtools matches:
-u with a job list (qalter drops the list; qdel, qhold and qrls answer each word in its
place), the priority of an array held by -hold_jid_ad alone, and what the reserved
column of qstat -f and -g c counts."""

from conftest import wait_for
from qtools import jid_of, set_sched, state_of


def held(cell, *words, user=None, cwd=None):
    return jid_of(cell.qsub("-h", *words, "-b", "y", "true", user=user, cwd=cwd))


def prio_of(cell, jid):
    for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]:
        fields = line.split()
        if fields and fields[0] == str(jid):
            return fields[1]
    return None


def test_qalter_u_with_job_ids_changes_every_job_of_the_users_and_drops_the_ids(cell, workdir, users):
    alice = users[0]
    mine = held(cell, "-N", "mine")
    hers = held(cell, "-N", "hers", user=alice, cwd=workdir)
    proc = cell.run("qalter", "-u", alice, "-N", "renamed", str(mine))
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert proc.stderr == ""
    names = {int(l.split()[0]): l.split()[2] for l in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]}
    assert names[hers] == "renamed" and names[mine] == "mine"


def test_qdel_qhold_qrls_u_answer_the_job_words_in_their_order(cell, workdir):
    first, second = held(cell, "-N", "one"), held(cell, "-N", "two")
    proc = cell.run("qhold", "-u", "root", "999998", str(first), "999997")
    assert (proc.returncode, proc.stdout.splitlines()) == (
        3, ["The job 999998 of user(s) root does not exist", f"modified hold of job {first}",
            "The job 999997 of user(s) root does not exist"])
    proc = cell.run("qdel", "-u", "root", "999999", str(second), "nosuchname")
    assert (proc.returncode, proc.stdout.splitlines()) == (
        1, ["The job 999999 of user(s) root does not exist", f"root has deleted job {second}",
            "The job nosuchname of user(s) root does not exist"])
    proc = cell.run("qrls", "-u", "root", "999999", str(first))
    assert (proc.returncode, proc.stdout.splitlines()) == (
        3, ["The job 999999 of user(s) root does not exist", f"modified hold of job {first}"])


def test_a_forced_qdel_u_of_a_user_is_refused_even_when_it_matches_nothing(cell, workdir, users):
    alice = users[0]
    mine = held(cell)
    for words in (["999999"], [str(mine)]):
        proc = cell.run("qdel", "-f", "-u", alice, *words, user=alice)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            1, f'"{alice}" - forcing a job deletion requires manager privileges\n', ""), words
    assert state_of(cell, mine) == "hqw"


def test_an_array_held_by_hold_jid_ad_alone_has_priority_zero(cell, workdir):
    pred = jid_of(cell.qsub("-h", "-t", "1-2", "-b", "y", "true", cwd=workdir))
    succ = jid_of(cell.qsub("-t", "1-2", "-hold_jid_ad", str(pred), "-b", "y", "true", cwd=workdir))
    runner = jid_of(cell.qsub("-b", "y", "sleep", "300", cwd=workdir))
    # (a pass after succ's submission gave the running job its priority)
    wait_for(lambda: prio_of(cell, runner) not in (None, "0.00000"), timeout=30)
    assert state_of(cell, succ) == "hqw"
    assert prio_of(cell, succ) == "0.00000"
    line = [l for l in cell.run("qstat", "-pri").stdout.splitlines() if l.split()[:1] == [str(succ)]][0]
    assert line.split()[1:6] == ["0.00000", "0.00000", "0.00000", "0.00000", "0"]
    cell.run("qdel", str(runner), check=True)


def test_a_resource_reservation_is_not_counted_as_reserved_slots(cell, workdir):
    set_sched(cell, max_reservation="10")
    busy = [jid_of(cell.qsub("-l", "h_rt=300", "-b", "y", "sleep", "300", cwd=workdir)) for _ in range(2)]
    wait_for(lambda: all(state_of(cell, j) == "r" for j in busy), timeout=30)
    big = jid_of(cell.qsub("-R", "y", "-l", "h_rt=60", "-b", "y", "true", cwd=workdir))
    wait_for(lambda: prio_of(cell, big) not in (None, "0.00000"), timeout=30)
    lines = cell.run("qstat", "-f").stdout.splitlines()
    row = [l for l in lines if l.startswith("all.q@")][0]
    assert row.split()[2] == "0/2/2"
    summary = cell.run("qstat", "-g", "c").stdout.splitlines()[2].split()
    assert summary[0] == "all.q" and summary[2:6] == ["2", "0", "0", "2"]
    for jid in busy:
        cell.run("qdel", str(jid), check=True)

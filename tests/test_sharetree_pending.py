"""Pending jobs' share tree tickets as Grid Engine hands them out, and what reports them.

Grid Engine's scheduler (sge_sort_pending_job_nodes) gives the n-th pending
job of a node ``stt / (running + finished + n)``: running jobs count one
each whatever their slots, and so does each job that ended lately (the
decayed ``finished_jobs`` usage of the user or project). When one child of
the root alone has pending jobs, that child is taken as the root, down the
tree. With report_pjob_tickets FALSE pending jobs show no tickets and no
priority, and qstat lists them by submission time. qconf -mstnode says what
it sets and names a missing node without quotes.
"""

import os

import pytest

from conftest import wait_for
from qtools import add_object, jid_of

from gridtools.accounting.usage import AccountKey, HalfLife, Ledger
from gridtools.sched.policy import tickets
from gridtools.sched.policy.config import PolicyConfig
from gridtools.sched.policy.inputs import Member, Members, PolicyJob, ProjectUsage, ShareNode

T = 10000.0
CONFIG = PolicyConfig(weight_tickets_share=T)


def audit_tree():
    """Root: alice 50, bob 30, project p1 10 (carol 1 below it), default 10."""
    return ShareNode("Root", 1, (ShareNode("alice", 50), ShareNode("bob", 30),
                                 ShareNode("p1", 10, (ShareNode("carol", 1),), project=True),
                                 ShareNode("default", 10)))


def members(finished=None, carol_in_p1=0.0, p1=0.0):
    finished = finished or {}

    def counted(count):
        return {"finished_jobs": count} if count else {}
    users = [Member(n, **counted(finished.get(n))) for n in ("alice", "bob")]
    users.append(Member("carol", in_projects=(ProjectUsage("p1", **counted(carol_in_p1)),)))
    return Members.of(users=users, projects=[Member("p1", **counted(p1))])


def running(job_id, owner, **kw):
    return PolicyJob(job_id, owner, float(job_id), pending=(), running=(1,), **kw)


def queued(job_id, owner, **kw):
    return PolicyJob(job_id, owner, float(job_id), **kw)


def stckts(result, ids):
    return [result.of(i).stckt for i in ids]


# ---------------------------------------------------------------- the root short-cut

def test_a_lone_pending_subtree_is_taken_as_the_root_when_the_others_only_run():
    """alice runs 4 jobs, carol waits with 3 in p1: only p1 has pending jobs, so p1 and
    then carol become the root and carol's stt among p1's children (1) is handed out:
    10000, 5000, 3333."""
    jobs = [running(i, "alice") for i in range(1, 5)]
    jobs += [queued(i, "carol", project="p1") for i in (5, 6, 7)]
    result = tickets.compute(jobs, members(), CONFIG, audit_tree())
    assert stckts(result, (5, 6, 7)) == pytest.approx([10000.0, 5000.0, 10000.0 / 3])


def test_two_subtrees_with_pending_jobs_keep_their_level():
    """bob waits too: the root has two children with pending jobs; each keeps its stt
    (bob 30 / 90 of the active shares, p1 10 / 90)."""
    jobs = [running(1, "alice"), queued(2, "carol", project="p1"), queued(3, "bob")]
    result = tickets.compute(jobs, members(), CONFIG, audit_tree())
    assert stckts(result, (3, 2)) == pytest.approx([T * 30 / 90, T * 10 / 90])


# ---------------------------------------------------------------- jobs, not slots

def test_a_parallel_job_ahead_counts_as_one_job():
    """bob's 3-slot job, then two one-slot jobs: 3333, 3333/2, 3333/3 (not /4, /5)."""
    jobs = [running(i, "alice") for i in range(1, 5)]
    jobs += [queued(5, "carol", project="p1"), queued(6, "bob", min_slots=3),
             queued(7, "bob"), queued(8, "bob")]
    result = tickets.compute(jobs, members(), CONFIG, audit_tree())
    share = T * 30 / 90
    assert stckts(result, (6, 7, 8)) == pytest.approx([share, share / 2, share / 3])


def test_a_running_parallel_job_counts_as_one_job():
    """bob runs a 4-slot job: his pending job gets stt / (1 + 1)."""
    jobs = [running(1, "bob", min_slots=4, slots=4), queued(2, "bob"), queued(3, "carol", project="p1")]
    result = tickets.compute(jobs, members(), CONFIG, audit_tree())
    shares = 30 + 10
    assert result.of(2).stckt == pytest.approx(T * 30 / shares / 2)


# ---------------------------------------------------------------- finished jobs

def test_finished_jobs_count_against_the_next_pending_ones():
    """bob has 4 finished jobs (decayed count 4): his pending job gets stt / 5."""
    jobs = [queued(1, "bob"), queued(2, "carol", project="p1")]
    plain = tickets.compute(jobs, members(), CONFIG, audit_tree())
    counted = tickets.compute(jobs, members({"bob": 4.0}), CONFIG, audit_tree())
    assert counted.of(1).stckt == pytest.approx(plain.of(1).stckt / 5)
    assert counted.of(2).stckt == pytest.approx(plain.of(2).stckt)


def test_finished_jobs_of_a_project_count_at_the_project_node():
    """carol's jobs in p1 ended: at the leaf her count; at p1 the project's own count.
    With bob waiting too, p1's stt is handed out at p1 (count 2 + n) and carol's at her
    leaf (count 3 + n): the job gets carol's share there."""
    jobs = [queued(1, "bob"), queued(2, "carol", project="p1")]
    result = tickets.compute(jobs, members(carol_in_p1=3.0, p1=2.0), CONFIG, audit_tree())
    # the tickets the level below gave a job are replaced at each node going up:
    # p1 hands out its stt / (2 + 1)
    assert result.of(2).stckt == pytest.approx(T * 10 / 40 / 3)


def test_the_ledger_counts_and_decays_finished_jobs():
    day = 86400.0
    ledger = Ledger(HalfLife(3600.0, 3600.0, 3600.0, jobs=day))
    for t in (0.0, 0.0):
        ledger.count_finished("bob", None, t)
    ledger.count_finished("carol", "p1", 0.0)
    assert ledger.finished_jobs(AccountKey.user("bob"), 0.0) == 2.0
    assert ledger.finished_jobs(AccountKey.user("bob"), day) == pytest.approx(1.0, rel=1e-3)
    assert ledger.finished_jobs(AccountKey.user_in("carol", "p1"), 0.0) == 1.0
    assert ledger.finished_jobs(AccountKey.of_project("p1"), 0.0) == 1.0
    again = Ledger.from_data(ledger.to_data())
    assert again.half_life.jobs == day
    assert again.finished_jobs(AccountKey.user("bob"), day) == pytest.approx(1.0, rel=1e-3)
    forgetful = Ledger(HalfLife(3600.0, 3600.0, 3600.0))       # without a decay list
    forgetful.count_finished("bob", None, 0.0)
    assert forgetful.finished_jobs(AccountKey.user("bob"), 0.0) == 0.0


def test_a_usage_record_without_finished_jobs_still_loads():
    data = {"version": 1, "half_life": {"cpu": 3600.0, "mem": 3600.0, "io": 3600.0},
            "accounts": [{"holder": "user", "name": "bob", "project": "",
                          "usage": {"cpu": 5.0, "mem": 0.0, "io": 0.0},
                          "long_term": {"cpu": 5.0, "mem": 0.0, "io": 0.0}, "stamp": 10.0}],
            "debited": []}
    ledger = Ledger.from_data(data)
    assert ledger.usage(AccountKey.user("bob"), 10.0).cpu == 5.0
    assert ledger.finished_jobs(AccountKey.user("bob"), 10.0) == 0.0


def test_halflife_decay_list_decides_how_long_finished_jobs_count():
    assert PolicyConfig(halftime=2.0).finished_half_life() < 0
    assert PolicyConfig(halftime=2.0, decay_minutes=(("cpu", 60.0),)).finished_half_life() == 7200.0
    assert PolicyConfig(halftime=2.0, decay_minutes=(("finished_jobs", 30.0),)
                        ).finished_half_life() == 1800.0


# ---------------------------------------------------------------- live: finished jobs

def _tree2():
    return ("id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,2\n"
            "id=1\nname=gtalice\ntype=0\nshares=50\nchildnodes=NONE\n"
            "id=2\nname=gtbob\ntype=0\nshares=50\nchildnodes=NONE\n")


def _configure(cell, fshare=(0, 0), **more):
    for user, shares in zip(("gtalice", "gtbob"), fshare):
        add_object(cell, "-Auser", f"name {user}\noticket 0\nfshare {shares}\ndelete_time 0\n"
                                   "default_project NONE\n")
    add_object(cell, "-Astree", _tree2())
    settings = {"weight_tickets_share": "10000", "weight_waiting_time": "0"}
    settings.update(more)
    text = cell.run("qconf", "-ssconf", check=True).stdout
    lines = []
    for line in text.splitlines():
        key = line.split(" ", 1)[0]
        lines.append(f"{key} {settings[key]}" if key in settings else line)
    add_object(cell, "-Msconf", "\n".join(lines) + "\n")


def _stckt(cell):
    """{job id: stckt} of the pending jobs qstat -ext lists (a pending row ends with
    stckt, share and slots)."""
    rows = {}
    for line in cell.run("qstat", "-ext", "-u", "*").stdout.splitlines()[2:]:
        fields = line.split()
        if "qw" in fields:
            rows[int(fields[0])] = int(fields[-3])
    return rows


def test_jobs_that_just_ended_count_against_their_owner(cell, users, workdir):
    """gtbob's two jobs end; then gtalice and gtbob each wait with one job: with a
    halflife_decay_list, gtbob's counts 2 finished jobs, so it gets stt / 3."""
    os.chmod(workdir, 0o777)
    _configure(cell, halflife_decay_list="cpu=10080")
    ids = [jid_of(cell.qsub("-b", "y", "-o", "/dev/null", "-j", "y", "true", user="gtbob", cwd=workdir))
           for _ in range(2)]
    for jid in ids:
        cell.wait_finished(jid, timeout=30)
    cell.run("qmod", "-d", "all.q", check=True)
    alice = jid_of(cell.qsub("-b", "y", "true", user="gtalice", cwd=workdir))
    bob = jid_of(cell.qsub("-b", "y", "true", user="gtbob", cwd=workdir))

    def shown():
        rows = _stckt(cell)
        return rows if len(rows) == 2 and all(rows.values()) else None
    rows = wait_for(shown, timeout=15)
    assert rows[alice] == pytest.approx(5000, abs=2)
    assert rows[bob] == pytest.approx(5000 / 3, abs=2)


# ---------------------------------------------------------------- report_pjob_tickets

def test_unreported_pending_jobs_show_no_priority_and_come_in_submission_order(cell, users, workdir):
    os.chmod(workdir, 0o777)
    _configure(cell, fshare=(100, 300), weight_tickets_share="0", weight_tickets_functional="10000",
               weight_user="1", weight_project="0", weight_department="0", weight_job="0",
               report_pjob_tickets="FALSE")
    cell.run("qmod", "-d", "all.q", check=True)
    ids = [jid_of(cell.qsub("-b", "y", "true", user=user, cwd=workdir))
           for user in ("gtalice", "gtalice", "gtbob")]

    def listed():
        """The rows once a pass has ordered the jobs (before, a job shows 0.5 for each
        normalized number)."""
        lines = cell.run("qstat", "-pri", "-u", "*").stdout.splitlines()[2:]
        ordered = len(lines) == 3 and all(line.split()[4] != "0.50000" for line in lines)
        return lines if ordered else None
    lines = wait_for(listed, timeout=15)
    assert [int(line.split()[0]) for line in lines] == ids       # gtbob's job last
    for line in lines:
        prior, nurg, _npprior, ntckts = line.split()[1:5]
        assert (prior, nurg, ntckts) == ("0.00000", "0.00000", "0.00000"), line
    ext = cell.run("qstat", "-ext", "-u", "*").stdout.splitlines()
    assert int(ext[2].split()[0]) == ids[0] and ext[2].split()[1] == "0.00000"
    urg = cell.run("qstat", "-urg", "-u", "*").stdout.splitlines()
    assert [int(line.split()[0]) for line in urg[2:]] == ids
    assert all(line.split()[1:7] == ["0.00000", "0.00000", "0", "0", "0", "0"] for line in urg[2:]), urg


# ---------------------------------------------------------------- qconf -mstnode / -sstnode

def test_mstnode_says_what_it_sets_and_what_it_cannot_find(cell, users):
    for user in ("gtalice", "gtbob"):
        add_object(cell, "-Auser", f"name {user}\noticket 0\nfshare 0\ndelete_time 0\n"
                                   "default_project NONE\n")
    add_object(cell, "-Astree", _tree2())
    proc = cell.run("qconf", "-mstnode", "/gtbob=30")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "setting \n/gtbob=30\nmodified sharetree\n")
    proc = cell.run("qconf", "-mstnode", "/nosuch=4")
    assert (proc.returncode, proc.stderr) == (
        1, "Unable to locate /nosuch in sharetree\nno modifications to sharetree\n")
    proc = cell.run("qconf", "-mstnode", "/nosuch=4,gtalice=20")
    assert (proc.returncode, proc.stderr) == (
        0, "Unable to locate /nosuch in sharetree\nsetting \n/gtalice=20\nmodified sharetree\n")
    assert cell.run("qconf", "-sst").stdout == "Root=1\n   gtalice=20\n   gtbob=30\n"
    proc = cell.run("qconf", "-sstnode", "/nosuch")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "Unable to locate /nosuch in sharetree\n")

"""Late materialization (max_materialize, max_idle): a whole daemon tick in this
process brings a cluster's procs into the queue a few at a time, as procs leave or
start; real processes show the limits kept while the jobs run."""

import os
import re

from conftest import wait_for
from condortools import statuses, submit
from gridtools.formats.condor.userlog import EventType, parse_events
from test_daemon_tick import ask


def condor_submit(cell, daemon, text, *options):
    path = os.path.join(cell.root, "job.sub")
    with open(path, "w") as fh:
        fh.write(text)
    out = ask(cell, daemon, "condor_submit", *options, path)
    return int(re.search(r"(\d+) job\(s\) submitted to cluster (\d+)", out).group(2))


def in_queue(cell, cluster):
    """The procs condor_q lists, with their JobStatus."""
    out = cell.run("condor_q", str(cluster), "-af:j", "JobStatus").stdout
    return [tuple(line.split()) for line in out.splitlines()]


def tick(daemon, times=1):
    """Ticks that publish what they did (ends are otherwise published a moment later)."""
    for _ in range(times):
        daemon.published = 0.0
        daemon.tick()


def events(path):
    with open(path) as fh:
        return [(e.type, e.proc) for e in parse_events(fh.read())]


def test_at_most_max_materialize_procs_are_in_the_queue_and_the_next_comes_when_one_leaves(ticking):
    cell, daemon, fake = ticking
    log = os.path.join(cell.root, "f.log")
    cluster = condor_submit(cell, daemon, f"executable = /bin/true\nlog = {log}\nmax_materialize = 3\nqueue 5\n")
    tick(daemon)
    # two slots: two run, the third waits; procs 3 and 4 are not in the queue yet
    assert in_queue(cell, cluster) == [(f"{cluster}.0", "2"), (f"{cluster}.1", "2"), (f"{cluster}.2", "1")]
    assert sorted(n for j, n, _p in fake.launched if j == cluster) == [1, 2]
    assert [e for e in events(log) if e[0] == EventType.SUBMIT] == [(EventType.SUBMIT, p) for p in (0, 1, 2)]
    fake.finish(cluster, 1)
    tick(daemon, 2)
    assert in_queue(cell, cluster) == [(f"{cluster}.1", "2"), (f"{cluster}.2", "2"), (f"{cluster}.3", "1")]
    kinds = [e for e in events(log) if e[0] in (EventType.SUBMIT, EventType.JOB_TERMINATED)]
    # proc 3 enters the queue after proc 0 left it
    assert kinds.index((EventType.JOB_TERMINATED, 0)) < kinds.index((EventType.SUBMIT, 3))
    out = cell.run("condor_q", str(cluster)).stdout
    row = [line for line in out.splitlines() if f"ID: {cluster}" in line][0].split()
    # DONE RUN IDLE TOTAL: one done, two running, one idle, five in all
    assert row[-5:] == ["1", "2", "1", "5", f"{cluster}.1-3"]

    # the same counts where condor_q counts the procs itself (a constraint)
    out = cell.run("condor_q", str(cluster), "-constraint", "true").stdout
    row = [line for line in out.splitlines() if f"ID: {cluster}" in line][0].split()
    assert row[-5:] == ["1", "2", "1", "5", f"{cluster}.1-3"]
    assert "Total for query: 3 jobs; 0 completed, 0 removed, 1 idle, 2 running, 0 held, 0 suspended" in out


def test_max_idle_lets_a_proc_in_as_another_starts(ticking):
    cell, daemon, fake = ticking
    daemon.state.scheduling = False         # (taken in, not started: one idle proc in the queue; set
    #                                          before the submission, which the ticks may take in at once)
    cluster = condor_submit(cell, daemon, "executable = /bin/true\nmax_idle = 1\nqueue 6\n")
    tick(daemon)
    assert in_queue(cell, cluster) == [(f"{cluster}.0", "1")]
    daemon.state.scheduling = True
    tick(daemon, 3)
    # two slots: procs 0 and 1 run, proc 2 is the one idle proc; 3 to 5 wait outside the queue
    assert in_queue(cell, cluster) == [(f"{cluster}.0", "2"), (f"{cluster}.1", "2"), (f"{cluster}.2", "1")]
    fake.finish(cluster, 1)
    tick(daemon, 3)
    assert in_queue(cell, cluster) == [(f"{cluster}.1", "2"), (f"{cluster}.2", "2"), (f"{cluster}.3", "1")]
    # qstat lists what is in the queue too
    out = cell.run("qstat", "-u", "*").stdout
    assert [line.split()[-1] for line in out.splitlines()[2:]] == ["2", "3", "4"]


def test_held_procs_count_against_the_limit_and_a_removal_takes_the_rest_with_it(ticking):
    cell, daemon, fake = ticking
    log = os.path.join(cell.root, "h.log")
    cluster = condor_submit(cell, daemon, f"executable = /bin/true\nlog = {log}\nhold = true\nmax_materialize = 2\n"
                                          "queue 4\n")
    tick(daemon, 2)
    assert in_queue(cell, cluster) == [(f"{cluster}.0", "5"), (f"{cluster}.1", "5")]
    assert [e for e in events(log)] == [(EventType.CLUSTER_SUBMIT, -1), (EventType.SUBMIT, 0), (EventType.SUBMIT, 1),
                                        (EventType.JOB_HELD, 0), (EventType.JOB_HELD, 1)]
    assert fake.launched == []
    # (the batch view the daemon publishes, which a plain condor_q shows)
    row = [line for line in cell.run("condor_q").stdout.splitlines() if f"ID: {cluster}" in line][0]
    assert row.split()[-6:] == ["_", "_", "_", "2", "4", f"{cluster}.0-1"]     # none done yet
    ask(cell, daemon, "condor_rm", str(cluster))
    tick(daemon, 2)
    assert in_queue(cell, cluster) == []
    assert [e for e in events(log)][5:] == [(EventType.JOB_ABORTED, 0), (EventType.JOB_ABORTED, 1),
                                            (EventType.CLUSTER_REMOVE, -1)]
    with open(log) as fh:
        removal = [e for e in parse_events(fh.read()) if e.type == EventType.CLUSTER_REMOVE][0]
    # two of its four procs were made when it was removed
    assert removal.info == {"NextProcId": 2, "NextRow": 0, "Completion": 0}
    history = cell.run("condor_history", str(cluster), "-af:j", "JobStatus").stdout.split()
    assert history == [f"{cluster}.1", "3", f"{cluster}.0", "3"]
    tick(daemon, 2)
    assert daemon.state.factories == {}


def test_a_daemon_that_starts_again_goes_on_where_it_was(ticking):
    cell, daemon, fake = ticking
    cluster = condor_submit(cell, daemon, "executable = /bin/true\nmax_materialize = 1\nqueue 3\n")
    tick(daemon)
    assert in_queue(cell, cluster) == [(f"{cluster}.0", "2")]
    daemon.close()
    from gridtools.daemon.loop import Daemon
    again = Daemon(execution=fake)
    again.open()
    try:
        fake.finish(cluster, 1)
        tick(again, 3)
        assert in_queue(cell, cluster) == [(f"{cluster}.1", "2")]
        assert sorted(n for j, n, _p in fake.launched if j == cluster) == [1, 2]
    finally:
        again.close()
        daemon.open()           # (the fixture closes it)


def test_real_jobs_enter_the_queue_as_others_leave_it(cell, workdir):
    sub = ("executable = /bin/sh\n"
           "arguments = \"-c 'touch started.$(Process); while [ ! -e go.$(Process) ]; do sleep 0.05; done'\"\n"
           "log = m.log\nmax_materialize = 2\nqueue 4\n")
    cluster = submit(cell, sub, cwd=workdir)
    started = [os.path.join(workdir, f"started.{p}") for p in range(4)]
    wait_for(lambda: os.path.exists(started[0]) and os.path.exists(started[1]))
    wait_for(lambda: statuses(cell, str(cluster)) == {f"{cluster}.0": 2, f"{cluster}.1": 2})
    open(os.path.join(workdir, "go.0"), "w").close()
    wait_for(lambda: os.path.exists(started[2]))
    # (a start is published a moment after it is made)
    wait_for(lambda: statuses(cell, str(cluster)) == {f"{cluster}.1": 2, f"{cluster}.2": 2})
    assert not os.path.exists(started[3])
    for proc in (1, 2, 3):
        open(os.path.join(workdir, f"go.{proc}"), "w").close()
    wait_for(lambda: not statuses(cell, str(cluster)), timeout=20)
    log = os.path.join(workdir, "m.log")
    order = [(e.type, e.proc) for e in parse_events(open(log).read())
             if e.type in (EventType.SUBMIT, EventType.JOB_TERMINATED)]
    assert order.index((EventType.JOB_TERMINATED, 0)) < order.index((EventType.SUBMIT, 2))
    assert sorted(p for kind, p in order if kind == EventType.SUBMIT) == [0, 1, 2, 3]
    # the cluster's own events open and close the log, as HTCondor's schedd writes them
    wait_for(lambda: "Cluster removed" in open(log).read())
    text = open(log).read()
    assert text.startswith(f"035 ({cluster:03d}.-01.000) ") and "Cluster submitted from host: <" in text
    assert text.rstrip().endswith("Cluster removed\n\tMaterialized 4 jobs from 0 items.\tComplete\n...")
    assert cell.run("condor_history", str(cluster), "-af", "JobStatus").stdout.split() == ["4"] * 4


def test_every_proc_shows_its_clusters_total_and_a_factory_its_limit(ticking):
    cell, daemon, fake = ticking
    cluster = condor_submit(cell, daemon, "executable = /bin/true\nhold = true\nmax_materialize = 2\nqueue 3\n")
    plain = condor_submit(cell, daemon, "executable = /bin/true\nhold = true\nqueue 2\n")
    tick(daemon)
    out = cell.run("condor_q", str(cluster), str(plain), "-af:j", "TotalSubmitProcs", "JobMaterializeLimit").stdout
    assert out.splitlines() == [f"{cluster}.0 3 2", f"{cluster}.1 3 2", f"{plain}.0 2 undefined",
                                f"{plain}.1 2 undefined"]


def test_condor_qedit_of_the_cluster_raises_its_limit_for_the_procs_to_come(ticking):
    cell, daemon, fake = ticking
    cluster = condor_submit(cell, daemon, "executable = /bin/true\nhold = true\nmax_materialize = 1\nqueue 4\n")
    tick(daemon)
    assert in_queue(cell, cluster) == [(f"{cluster}.0", "5")]
    ask(cell, daemon, "condor_qedit", str(cluster), "JobMaterializeLimit", "3")
    tick(daemon, 2)
    assert in_queue(cell, cluster) == [(f"{cluster}.0", "5"), (f"{cluster}.1", "5"), (f"{cluster}.2", "5")]
    out = cell.run("condor_q", str(cluster), "-af", "JobMaterializeLimit").stdout
    assert out.split() == ["3", "3", "3"]


def test_the_cluster_removed_event_says_how_many_procs_came_from_how_many_items(ticking):
    cell, daemon, fake = ticking
    log = os.path.join(cell.root, "i.log")
    cluster = condor_submit(cell, daemon, f"executable = /bin/true\nlog = {log}\nmax_materialize = 5\n"
                                          "queue x in (a, b, c)\n")
    tick(daemon)
    fake.finish(cluster, 1)
    fake.finish(cluster, 2)
    tick(daemon, 2)
    fake.finish(cluster, 3)
    tick(daemon, 2)
    with open(log) as fh:
        found = [e for e in parse_events(fh.read()) if e.proc == -1]
    assert [(e.type, e.info) for e in found] == [
        (EventType.CLUSTER_SUBMIT, {"SubmitHost": found[0].info["SubmitHost"]}),
        (EventType.CLUSTER_REMOVE, {"NextProcId": 3, "NextRow": 3, "Completion": 1})]
    assert daemon.state.factories == {}


def test_condor_q_factory_lists_the_clusters_materialized_late(ticking):
    cell, daemon, fake = ticking
    late = condor_submit(cell, daemon, "executable = /bin/true\nmax_materialize = 3\nqueue 6\n")
    idle = condor_submit(cell, daemon, "executable = /bin/true\nhold = true\nmax_idle = 1\nqueue 2\n")
    plain = condor_submit(cell, daemon, "executable = /bin/true\nqueue 2\n")
    tick(daemon)
    out = cell.run("condor_q", "-factory").stdout.splitlines()
    assert out[3] == " ID      OWNER            SUBMITTED  LIMIT PRESNT   RUN    IDLE   HOLD NEXTID MODE DIGEST"
    # two slots: two of the first cluster's three procs run; the second's two are held, all
    # made (its LIMIT, which it does not set, is all of its procs)
    digest = os.path.join(cell.root, "spool", "jobs", "{}", "job.yaml")
    assert [(line[:9], line[35:]) for line in out[4:]] == [
        (f"{late:4d}.    ", "      3      3      2      1      0      3 Norm " + digest.format(late)),
        (f"{idle:4d}.    ", "      2      2      0      0      2      2 Done " + digest.format(idle))]
    af = cell.run("condor_q", "-factory", "-af", "ClusterId", "TotalSubmitProcs", "JobMaterializeLimit",
                  "JobMaterializeMaxIdle", "ProcId", "-constraint", "JobsHeld > 0").stdout
    assert af == f"{idle} 2 2 1 undefined\n"
    assert cell.run("condor_q", "-factory", str(plain), "-af", "ClusterId").stdout == ""


def test_periodic_policy_acts_on_the_procs_in_the_queue_only(ticking):
    cell, daemon, fake = ticking
    log = os.path.join(cell.root, "p.log")
    cluster = condor_submit(cell, daemon, f"executable = /bin/true\nlog = {log}\nperiodic_hold = true\n"
                                          "requirements = TARGET.Memory < 0\nmax_materialize = 1\nqueue 3\n")
    tick(daemon)
    daemon.periodic_last = None             # (the periodic expressions are looked at now)
    tick(daemon, 2)
    # proc 0 is held by its policy and still counts against the limit; procs 1 and 2 are
    # not in the queue, so no policy reaches them
    assert in_queue(cell, cluster) == [(f"{cluster}.0", "5")]
    assert events(log) == [(EventType.CLUSTER_SUBMIT, -1), (EventType.SUBMIT, 0), (EventType.JOB_HELD, 0)]
    assert sorted(daemon.state.jobs[cluster].tasks) == [1]


def test_condor_submit_factory_makes_any_cluster_a_factory_of_all_its_procs(ticking):
    """-factory (or -generator): the cluster is materialized late with every proc let in at
    once, as HTCondor's schedd makes a factory whose max_materialize is not given; its
    user log shows the cluster's own events."""
    cell, daemon, fake = ticking
    log = os.path.join(cell.root, "f.log")
    cluster = condor_submit(cell, daemon, f"executable = /bin/true\nhold = true\nlog = {log}\nqueue 3\n",
                            "-factory")
    single = condor_submit(cell, daemon, "executable = /bin/true\nhold = true\nqueue\n", "-gen")
    tick(daemon)
    assert in_queue(cell, cluster) == [(f"{cluster}.{p}", "5") for p in range(3)]
    out = cell.run("condor_q", "-factory", "-af", "ClusterId", "JobMaterializeLimit", "JobsPresent").stdout
    assert out.splitlines() == [f"{cluster} 3 3", f"{single} 1 1"]
    ask(cell, daemon, "condor_rm", str(cluster))
    tick(daemon, 2)
    assert events(log)[0] == (EventType.CLUSTER_SUBMIT, -1)
    assert events(log)[-1] == (EventType.CLUSTER_REMOVE, -1)


def test_submit_factory_jobs_by_default_makes_every_cluster_of_more_than_one_proc_a_factory(ticking):
    cell, daemon, fake = ticking
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("SUBMIT_FACTORY_JOBS_BY_DEFAULT = True\n")
    many = condor_submit(cell, daemon, "executable = /bin/true\nhold = true\nqueue 2\n")
    one = condor_submit(cell, daemon, "executable = /bin/true\nhold = true\nqueue\n")
    tick(daemon)
    assert cell.run("condor_q", "-factory", "-af", "ClusterId").stdout.split() == [str(many)]
    assert len(in_queue(cell, many)) == 2 and len(in_queue(cell, one)) == 1


def test_condor_q_factory_options_show_every_clusters_ad_or_the_factories_with_their_procs(ticking):
    cell, daemon, fake = ticking
    late = condor_submit(cell, daemon, "executable = /bin/true\nhold = true\nmax_materialize = 2\nqueue 3\n")
    plain = condor_submit(cell, daemon, "executable = /bin/true\nhold = true\nqueue 2\n")
    tick(daemon)
    digest = os.path.join(cell.root, "spool", "jobs", f"{late}", "job.yaml")
    rows = cell.run("condor_q", "-factory:clusters_only").stdout.splitlines()[4:]
    assert [(line[:9], line[35:]) for line in rows] == [
        (f"{late:4d}.    ", "      2      2      0      0      2      2 Norm " + digest),
        (f"{plain:4d}.    ", "             2      0      0      2        _")]
    af = cell.run("condor_q", "-factory:c", "-af", "ClusterId", "ProcId", "JobsHeld", "JobMaterializeDigestFile")
    assert af.stdout.splitlines() == [f"{late} undefined 2 {digest}", f"{plain} undefined 2 undefined"]
    rows = cell.run("condor_q", "-factory:l").stdout.splitlines()[4:]
    assert [line[:9] for line in rows] == [f"{late:4d}.    ", f"{late:4d}.0   ", f"{late:4d}.1   "]
    assert rows[1][35:] == "      2                                  2 Norm " + digest
    assert cell.run("condor_q", "-fact:c,l", "-af", "ClusterId").stdout == f"{late}\n"
    wrong = cell.run("condor_q", "-factory:x")
    assert (wrong.returncode, wrong.stdout, wrong.stderr) == (1, "", "Error: unknown option x for -factory\n")


def test_procs_made_later_are_held_to_the_cells_job_limits(ticking):
    """MAX_JOBS_PER_OWNER holds for the procs a cluster makes later too, whatever limit
    its own ad gives: the next comes in once one of the owner's procs left the queue."""
    cell, daemon, fake = ticking
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("MAX_JOBS_PER_OWNER = 3\n")
    ask(cell, daemon, "condor_reconfig")
    cluster = condor_submit(cell, daemon, "executable = /bin/true\nhold = true\nmax_materialize = 1\n"
                                          "+JobMaterializeLimit = 20\nqueue 20\n")
    tick(daemon, 3)
    assert in_queue(cell, cluster) == [(f"{cluster}.{p}", "5") for p in range(3)]
    ask(cell, daemon, "condor_qedit", str(cluster), "JobMaterializeLimit", "50")
    tick(daemon, 3)
    assert len(in_queue(cell, cluster)) == 3
    ask(cell, daemon, "condor_rm", f"{cluster}.0")
    tick(daemon, 3)
    assert in_queue(cell, cluster) == [(f"{cluster}.{p}", "5") for p in range(1, 4)]

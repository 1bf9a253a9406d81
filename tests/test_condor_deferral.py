"""Job deferral and cron schedules of HTCondor jobs: a whole daemon tick in this process
works out a schedule's next time and hands it to the shepherd's plan; real processes
show a job beginning at its deferral time, and removed while it waits."""

import os
import re
import time

from conftest import wait_for
from condortools import submit, wait_gone
from gridtools.formats.condor.userlog import EventType, parse_events
from test_daemon_tick import ask


def condor_submit(cell, daemon, text):
    path = os.path.join(cell.root, "job.sub")
    with open(path, "w") as fh:
        fh.write(text)
    return int(re.search(r"submitted to cluster (\d+)", ask(cell, daemon, "condor_submit", path)).group(1))


def logged(workdir):
    with open(os.path.join(workdir, "job.log")) as fh:
        return list(parse_events(fh.read()))


def attrs(cell, cluster, *names):
    return cell.run("condor_q", f"{cluster}.0", "-af", *names).stdout.split()


def test_a_cron_job_runs_at_each_time_of_its_schedule(ticking):
    cell, daemon, fake = ticking
    before = time.time()
    cluster = condor_submit(cell, daemon, "executable = /bin/true\ncron_minute = *\non_exit_remove = false\nqueue\n")
    daemon.tick()
    first = int(attrs(cell, cluster, "DeferralTime")[0])
    assert first % 60 == 0 and before < first <= time.time() + 60      # the next minute
    # matched within its prep time: the shepherd is told to begin it then
    assert [(j, plan.get("not_before")) for j, _n, plan in fake.launched] == [(cluster, first)]
    fake.finish(cluster, 1)
    done = time.time()
    daemon.tick()
    second = int(attrs(cell, cluster, "DeferralTime")[0])
    assert second % 60 == 0 and done < second <= done + 60                  # worked out again after the run
    assert attrs(cell, cluster, "NumJobCompletions") == ["1"]
    daemon.tick()
    assert fake.launched[-1][2]["not_before"] == second


def test_a_schedule_that_does_not_read_holds_the_job(ticking):
    cell, daemon, fake = ticking
    cluster = condor_submit(cell, daemon, "executable = /bin/true\ncron_hour = 5-3\nqueue\n")
    daemon.tick()
    assert fake.launched == []
    out = cell.run("condor_q", f"{cluster}.0", "-af:j", "JobStatus", "HoldReasonCode", "HoldReason").stdout
    assert out.strip() == f"{cluster}.0 5 25 Invalid cron schedule parameters: Invalid cron attribute: 5-3"


def test_a_deferral_time_gone_by_never_matches(ticking):
    cell, daemon, fake = ticking
    cluster = condor_submit(cell, daemon, f"executable = /bin/true\ndeferral_time = {int(time.time()) - 60}\nqueue\n")
    daemon.tick()
    assert fake.launched == []
    assert "the job's Requirements are false" in cell.run("qstat", "-j", str(cluster)).stdout


def test_a_job_begins_at_its_deferral_time_and_may_be_removed_meanwhile(cell, workdir):
    when = int(time.time()) + 8
    out = os.path.join(workdir, "began")
    text = (f"executable = /bin/sh\narguments = \"-c 'date +%s.%N > {out}'\"\n"
            f"log = job.log\ndeferral_time = {when}\nqueue\n")
    cluster = submit(cell, text, cwd=workdir)
    # matched at once (within its prep time), it waits in its slot: running, not begun,
    # and its log has no execute event yet
    wait_for(lambda: attrs(cell, cluster, "JobStatus") == ["2"])
    starts, events, began = attrs(cell, cluster, "NumJobStarts"), logged(workdir), os.path.exists(out)
    if time.time() < when:              # (all read before it could begin; a very slow machine may be past it)
        assert starts == ["0"]
        assert [e.type for e in events] == [EventType.SUBMIT]
        assert not began
    wait_gone(cell, f"{cluster}.0")
    with open(out) as fh:
        assert float(fh.read()) >= when
    found = {e.type: e.timestamp for e in logged(workdir)}
    assert list(found)[:3] == [EventType.SUBMIT, EventType.EXECUTE, EventType.JOB_TERMINATED]
    assert found[EventType.EXECUTE] >= when             # (logged when it began, not when matched)
    # removed while it waits: it never begins
    later = submit(cell, text.replace(str(when), str(int(time.time()) + 60)), cwd=workdir)
    os.unlink(out)
    wait_for(lambda: attrs(cell, later, "JobStatus") == ["2"])
    cell.run("condor_rm", str(later), check=True)
    wait_gone(cell, f"{later}.0")
    assert cell.run("condor_history", str(later), "-af", "JobStatus", "NumJobStarts").stdout.split() == ["3", "0"]
    assert EventType.EXECUTE not in [e.type for e in logged(workdir) if e.cluster == later]
    assert not os.path.exists(out)
    assert cell.run("condor_status", "-af", "HasJobDeferral").stdout.split() == ["true", "true"]


def test_a_cron_cluster_s_deferral_window_is_read_once_not_for_every_proc(ticking, monkeypatch):
    """A DeferralWindow given as an expression that takes long to evaluate, on a cron
    cluster of many procs: the window is read once for the cluster (its procs share
    it), not for every proc at every evaluation of the periodic expressions, which would
    hold the daemon up for everybody."""
    from gridtools.classad import ClassAd
    from gridtools.daemon import condorjob
    cell, daemon, _fake = ticking
    evaluated = []
    original = ClassAd.eval

    def counting(ad, name, target=None):
        if name == "DeferralWindow":
            evaluated.append(name)
        return original(ad, name, target)
    cluster = condor_submit(cell, daemon, "executable = /bin/true\ncron_minute = *\nrequirements = False\n"
                                          "+DeferralWindow = 10 + 20\nqueue 40\n")
    monkeypatch.setattr(ClassAd, "eval", counting)
    daemon.tick()
    for _ in range(3):
        condorjob.periodic(daemon.state, daemon.dispatcher, time.time())
    assert len(evaluated) <= 1
    assert all("deferral" in info for info in daemon.state.jobs[cluster].condor["tasks"].values())

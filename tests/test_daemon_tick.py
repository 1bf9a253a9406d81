"""Whole daemon ticks in the test process, with an execution layer that runs nothing.

Requests are written by the real commands (qsub, qhold, qdel with no daemon
running to answer them); each ``tick()`` takes them in, runs the pass,
starts tasks through ``FakeExecution`` and reaps what it says ended.
"""

import os

import pytest


def submit(cell, *args):
    proc = cell.run("qsub", "-terse", *args, "-b", "y", "true", cwd="/tmp")
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout)


def tell(cell, *argv):
    """A command whose answer the daemon gives in a later tick: started, not waited for."""
    import subprocess
    return subprocess.Popen(list(argv), env=cell.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd="/tmp")


def ask(cell, daemon, *argv):
    """Run a command that waits for the daemon's answer, ticking until it has it."""
    import time
    proc = tell(cell, *argv)
    end = time.time() + 30
    while proc.poll() is None and time.time() < end:
        daemon.tick()
        time.sleep(0.01)
    out, err = proc.communicate(timeout=5)
    assert proc.returncode == 0, err
    return out


def test_a_job_is_taken_in_started_and_reaped(ticking):
    cell, daemon, fake = ticking
    jid = submit(cell)
    daemon.tick()
    assert [(j, t) for j, t, _ in fake.launched] == [(jid, 1)]
    assert cell.task_states(jid) == {1: "running"}
    fake.finish(jid, 1, exit_status=3)
    daemon.tick()
    assert cell.task_states(jid) == {1: "finished"}
    record = [r for r in cell.accounting() if int(r[5]) == jid]
    assert len(record) == 1 and record[0][12] == "3"


def test_two_slots_take_two_jobs_and_the_third_waits(ticking):
    cell, daemon, fake = ticking
    ids = [submit(cell) for _ in range(3)]
    daemon.tick()
    assert fake.running() == [(ids[0], 1), (ids[1], 1)]
    reasons = [r.why.value for r in daemon.state.reasons[ids[2]]]
    assert "qi_full" in reasons
    fake.finish(ids[0], 1)
    daemon.tick()
    assert fake.running() == [(ids[1], 1), (ids[2], 1)]


def test_a_pe_of_four_slots_never_runs_eight(ticking):
    """Two -pe smp 4 jobs with the PE's slots 4: the second waits even with room on the host."""
    cell, daemon, fake = ticking
    ask(cell, daemon, "qconf", "-mattr", "queue", "slots", "8", "all.q")
    ask(cell, daemon, "qconf", "-mattr", "pe", "slots", "4", "smp")
    first, second = submit(cell, "-pe", "smp", "4"), submit(cell, "-pe", "smp", "4")
    daemon.tick()
    assert fake.running() == [(first, 1)]
    assert daemon.state.jobs[first].task(1).pe == "smp"
    fake.finish(first, 1)
    daemon.tick()
    assert fake.running() == [(second, 1)]


def test_qdel_of_a_running_task_signals_its_shepherd(ticking):
    cell, daemon, fake = ticking
    jid = submit(cell)
    daemon.tick()
    out = ask(cell, daemon, "qdel", str(jid))
    assert "has registered the job" in out
    import signal
    # told to terminate (again at each tick until its shepherd is gone)
    assert fake.signals and set(fake.signals) == {(jid, 1, signal.SIGTERM)}
    assert daemon.state.jobs[jid].task(1).deleting
    fake.finish(jid, 1, exit_status=143)
    daemon.tick()
    assert cell.task_states(jid) == {1: "finished"}


def test_passes_after_ends_keep_submission_order_and_the_reasons_of_jobs_left_waiting(ticking):
    """Ends alone let the daemon reuse the last full pass's order (a quick pass); a
    release changes a job's facts and the next pass orders every job again."""
    cell, daemon, fake = ticking
    held = submit(cell, "-h")
    ids = [submit(cell) for _ in range(5)]
    daemon.tick()
    assert daemon.memo is not None                      # all jobs alike: the order was kept
    started = [j for j, _ in fake.running()]
    for _ in range(2):
        fake.finish(started[0], 1)
        daemon.tick()
        started = [j for j, _ in fake.running()]
    assert started == ids[2:4]
    assert daemon.memo[1].start == 3                    # quick passes went past jobs 1-3
    assert "qi_full" in [r.why.value for r in daemon.state.reasons[ids[4]]]
    assert [r.why.value for r in daemon.state.reasons[held]] == ["hold"]
    assert ids[0] not in daemon.state.reasons and ids[2] not in daemon.state.reasons
    ask(cell, daemon, "qrls", str(held))                # the released job joins the order,
    fake.finish(started[0], 1)                          # before the later ones
    daemon.tick()
    assert [j for j, _ in fake.running()] == sorted([ids[3], held])
    assert list(daemon.state.reasons) == [ids[4]]


def test_an_array_jobs_ended_tasks_are_appended_once_and_read_back_after_a_restart(ticking):
    """The state file an array job rewrites at every change does not grow with the tasks
    that ended: their records are appended to ended.yaml, once each, and a daemon that
    starts again knows them all as finished (none runs twice)."""
    from gridtools.daemon.loop import Daemon
    from gridtools.formats import spoolyaml
    cell, daemon, fake = ticking
    proc = cell.run("qsub", "-terse", "-t", "1-6", "-b", "y", "true", cwd="/tmp")
    jid = int(proc.stdout.split(".")[0])
    folder = os.path.join(cell.root, "spool", "jobs", str(jid))
    daemon.tick()
    for _ in range(3):
        running = fake.running()
        assert len(running) == 2
        for job_id, number in running:
            fake.finish(job_id, number, exit_status=number)
        daemon.tick()
        with open(os.path.join(folder, "state.yaml")) as fh:
            own = spoolyaml.load(fh.read())["tasks"]
        assert all(rec["state"] != "finished" for rec in own.values()), own
    with open(os.path.join(folder, "ended.yaml")) as fh:
        text = fh.read()
    assert sorted(int(k) for k in spoolyaml.load(text)) == [1, 2, 3, 4, 5, 6]
    assert text.count("state: ") == 6                   # each record written once
    assert cell.task_states(jid) == {n: "finished" for n in range(1, 7)}
    daemon.close()
    daemon.close = lambda: None                         # (closed: the fixture need not)
    again = Daemon(execution=fake)
    again.open()
    try:
        again.tick()
        job = again.state.jobs[jid]
        assert job.is_finished() and job.task(4).exit_status == 4
        assert fake.running() == []
    finally:
        again.close()


def test_a_filed_task_that_is_put_back_is_in_the_state_file_again():
    from gridtools.model import transitions as tr
    from gridtools.model.job import Job, TaskState
    job = Job({"id": 7, "name": "a", "tasks": [1, 3, 1]})
    for n in (1, 2):
        tr.dispatch(job, n, [["all.q", "h", 1]], 10.0)
        tr.finish(job, n, {"exit_status": 0, "end_time": 11.0}, 11.0)
    data, ended = job.state_parts()
    assert sorted(ended) == ["1", "2"] and data["tasks"] == {}
    job.filed_ended(data, ended)
    data, ended = job.state_parts()
    assert ended == {} and data["tasks"] == {}
    tr.fail_to_start(job, 2, "no such file", 12.0)
    data, ended = job.state_parts()
    assert ended == {} and data["tasks"]["2"]["state"] == "error"
    job.filed_ended(data, ended)
    assert job.filed == {1}
    joined = {"hold": "", "deleted": False, "tasks": {**{"1": job.tasks[1].to_dict()}, **data["tasks"]},
              "ended": ["1"]}
    back = Job.from_parts(job.spec, joined)
    assert back.filed == {1} and back.state_of(2) is TaskState.ERROR


def test_a_sched_conf_edit_read_when_a_request_comes_sets_the_usage_half_life(ticking):
    """etc/ read again because a request came in (its intake looks first) is followed
    like any other reload: the usage keeper takes the new halftime in that very tick."""
    cell, daemon, fake = ticking
    daemon.tick()
    assert daemon.state.usage.halftime == (168 * 3600.0,) * 3 + (-1.0,)
    path = os.path.join(cell.root, "etc", "sched_conf")
    with open(path) as fh:
        text = fh.read()
    with open(path, "w") as fh:
        fh.write(text.replace("halftime                          168", "halftime                          2"))
    daemon.state.config_checked = daemon.rested = 0         # (as after a quiet spell)
    submit(cell, "-h")
    daemon.tick()
    assert daemon.state.usage.halftime == (7200.0,) * 3 + (-1.0,)


def test_a_hold_of_many_jobs_keeps_what_their_descriptions_give_and_an_alteration_does_not(ticking,
                                                                                          monkeypatch):
    """A hold changes the jobs' states, not their descriptions: their requests and the
    facts the status shows of them are not made again (a hold of 10,000 jobs makes none);
    qalter sets a new description, and both are made from it."""
    import pwd
    from gridtools.daemon import publish, view
    cell, daemon, fake = ticking
    ask(cell, daemon, "qmod", "-d", "all.q")
    ids = [submit(cell) for _ in range(3)]
    daemon.tick()
    daemon.tick()
    made = []
    request, job_info = view.inputs.request, publish.job_info
    monkeypatch.setattr(view.inputs, "request", lambda spec, *a: made.append(("request", spec["id"])) or
                        request(spec, *a))
    monkeypatch.setattr(publish, "job_info", lambda job, *a: made.append(("facts", job.id)) or job_info(job, *a))
    me = pwd.getpwuid(os.getuid()).pw_name
    assert ask(cell, daemon, "qhold", "-u", me).count("modified hold") == 3
    daemon.tick()
    assert [daemon.state.jobs[i].hold for i in ids] == ["u"] * 3
    assert cell.run("qstat", cwd="/tmp").stdout.count("hqw") == 3
    assert made == []
    ask(cell, daemon, "qalter", "-l", "h_vmem=1G", str(ids[0]))
    daemon.tick()
    assert sorted(set(made)) == [("facts", ids[0]), ("request", ids[0])]
    assert "h_vmem" in repr(daemon.state.jobs[ids[0]].spec_cache().request.hard)
    assert "h_vmem=1G" in cell.run("qstat", "-j", str(ids[0]), cwd="/tmp").stdout


def break_job(cell, daemon, job_id):
    """Write into the spool, by hand, a parallel environment that is a number into the
    description of job ``job_id`` (held so far, now released), and open the cell with a
    new daemon (the given one is closed): every pass that looks at the job fails."""
    import re
    from gridtools.daemon import loop
    daemon.close()
    path = os.path.join(cell.root, "spool", "jobs", str(job_id), "job.yaml")
    with open(path) as fh:
        text = fh.read()
    text = re.sub(r"^user_hold: .*$", "user_hold: false", text, flags=re.M)
    with open(path, "w") as fh:
        fh.write(re.sub(r"^pe: .*$", "pe: 7", text, flags=re.M))
    again = loop.Daemon(execution=daemon.exec)
    again.open()
    return again


def test_a_pass_cut_short_by_a_spool_item_that_makes_no_sense_is_logged_and_the_daemon_goes_on(ticking):
    """A job description that reads but makes no sense (a parallel environment that is a
    number) makes every pass fail. The daemon does not end: each failure goes to
    spool/messages with where it happened (the same one again only after 2, 4, ... passes
    in a row), the passes rest longer and longer, and requests are still taken in."""
    import re
    import time
    cell, daemon, fake = ticking
    bad = int(cell.run("qsub", "-terse", "-h", "-b", "y", "true", cwd="/tmp").stdout)
    daemon.tick()
    again = break_job(cell, daemon, bad)
    daemon.close = lambda: None                         # (closed by break_job: the fixture need not)
    messages = os.path.join(cell.root, "spool", "messages")
    try:
        good = submit(cell)
        rests = []
        for _ in range(5):
            assert again.guarded_tick() is False
            rests.append(again.failures.resume_at - time.time())
        assert good in again.state.jobs and fake.running() == []
        with open(messages) as fh:
            cut = [line for line in fh if "cut short" in line]
        # the first failure (in scheduling, then where the status is written: two places),
        # and the same again after 4 passes in a row; not one line for each pass
        assert len(cut) == 3, cut
        assert re.search(r"\|E\|a pass was cut short, going on: TypeError: .* \(at \S+\.py:\d+ \w+ < ",
                         cut[0]), cut[0]
        assert "4 passes in a row" in cut[-1]
        assert all(want - 0.25 < rest <= want for rest, want in zip(rests, [0.5, 1.0, 2.0, 4.0, 8.0])), rests
    finally:
        again.close()


def test_requirements_over_the_evaluation_budget_are_not_evaluated_again_until_the_job_changes(ticking):
    """A job whose Requirements go over the budget of an evaluation (classad(5), COST)
    matches no slot; later passes do not evaluate them again (each would cost the budget
    once more), until condor_qedit changes the job."""
    from gridtools.classad.budget import over_budget
    cell, daemon, fake = ticking
    redos = 'regexp("^(a|aa)*$", "' + "a" * 100 + 'b")'
    path = os.path.join(cell.root, "costly.sub")
    with open(path, "w") as fh:
        fh.write(f"executable = /bin/true\nrequirements = {redos}\nqueue\n")
    import re
    costly = int(re.search(r"submitted to cluster (\d+)", ask(cell, daemon, "condor_submit", path)).group(1))
    daemon.tick()
    assert costly in daemon.state.jobs
    assert fake.running() == []
    seen = over_budget()
    assert seen >= 1
    plain = submit(cell)
    for _ in range(3):
        daemon.tick()
    assert fake.running() == [(plain, 1)]
    assert over_budget() == seen                        # not evaluated again
    ask(cell, daemon, "condor_qedit", str(costly), "Requirements", "TARGET.Cpus > 0")
    daemon.tick()
    assert (costly, 1) in fake.running()


def _condor_submit(cell, daemon, name, text):
    import re
    path = os.path.join(cell.root, name)
    with open(path, "w") as fh:
        fh.write(text)
    return int(re.search(r"submitted to cluster (\d+)", ask(cell, daemon, "condor_submit", path)).group(1))


def _live(daemon, cluster):
    """The procs of ``cluster`` in the queue, not removed (by their task numbers)."""
    from gridtools.model.job import TaskState
    job = daemon.state.jobs.get(cluster)
    if job is None or job.is_finished():
        return []
    return [n for n in job.numbers() if job.state_of(n) is not TaskState.FINISHED]


def test_other_job_remove_requirements_are_evaluated_once_per_expression_and_job(ticking):
    """condor_rm of a cluster whose procs all carry one OtherJobRemoveRequirements costs
    one evaluation per other job of the owner whose procs share what it reads, not one
    per pair of procs; the jobs it matches are removed all the same, the others stay."""
    from gridtools.daemon import otherremove
    cell, daemon, fake = ticking
    held = "executable = /bin/true\nhold = true\n"
    manager = _condor_submit(cell, daemon, "m.sub", held + "queue\n")
    nodes = _condor_submit(cell, daemon, "n.sub", held + f"+DAGManJobId = {manager}\nqueue 40\n")
    keep = _condor_submit(cell, daemon, "k.sub", held + "queue 40\n")
    doomed = _condor_submit(cell, daemon, "d.sub", held + '+OtherJobRemoveRequirements = '
                            f'"DAGManJobId =?= {manager}"\nqueue 40\n')
    daemon.tick()
    before = otherremove.EVALUATIONS[0]
    ask(cell, daemon, "condor_rm", str(doomed))
    daemon.tick()
    assert _live(daemon, doomed) == [] and _live(daemon, nodes) == []
    assert len(_live(daemon, keep)) == 40 and _live(daemon, manager) == [1]
    assert otherremove.EVALUATIONS[0] - before == 3       # the manager, the nodes, keep
    reason = cell.run("condor_history", f"{nodes}.7", "-af", "RemoveReason").stdout.strip()
    assert reason == (f"removed because <OtherJobRemoveRequirements = DAGManJobId =?= {manager}> "
                      f"fired when job ({doomed}.0) was removed")


def test_other_job_remove_requirements_reading_proc_attributes_carry_work_past_the_pass_budget(
        ticking, monkeypatch):
    """An expression that reads what differs by proc (ProcId) is evaluated per proc, at
    most EVALS_PER_PASS a pass: the rest waits for the next pass, and every proc it
    matches is removed in the end."""
    import time
    from gridtools.daemon import otherremove
    cell, daemon, fake = ticking
    monkeypatch.setattr(otherremove, "EVALS_PER_PASS", 5)
    held = "executable = /bin/true\nhold = true\n"
    target = _condor_submit(cell, daemon, "t.sub", held + "queue 12\n")
    doomed = _condor_submit(cell, daemon, "d.sub", held + '+OtherJobRemoveRequirements = '
                            f'"ProcId >= 4 && ClusterId == {target}"\nqueue 3\n')
    daemon.tick()
    before = otherremove.EVALUATIONS[0]
    removing = tell(cell, "condor_rm", str(doomed))
    steps = []
    end = time.time() + 30
    while time.time() < end and (removing.poll() is None or daemon.state.other_removals):
        seen = otherremove.EVALUATIONS[0]
        daemon.tick()
        steps.append(otherremove.EVALUATIONS[0] - seen)
        time.sleep(0.01)
    assert removing.wait(timeout=5) == 0
    assert [step for step in steps if step] == [5, 5, 2]
    assert _live(daemon, doomed) == []
    assert _live(daemon, target) == [1, 2, 3, 4]
    assert otherremove.EVALUATIONS[0] - before == 12       # one evaluation per proc, once
    assert daemon.state.other_removals == []


def test_a_task_of_several_slots_leaves_the_loop_nothing_due_until_its_policy_is(ticking):
    """The slots a task holds besides its first are not evaluated on their own: they are
    never due, so a running job of two slots leaves the loop a wake-up in the future (it
    used to leave one in the past for the job's whole run: the daemon spun)."""
    import time
    cell, daemon, fake = ticking
    jid = submit(cell, "-pe", "smp", "2")
    daemon.tick()
    assert fake.running() == [(jid, 1)]
    for _ in range(3):
        daemon.tick()
        wake = daemon.state.condor.next_wake()
        assert wake is None or wake > time.time(), wake


def test_procs_of_one_text_whose_cpus_depend_on_procid_are_each_placed_with_their_own(ticking):
    """``request_cpus = ifThenElse(ProcId == 0, 3, ifThenElse(ProcId == 2, 2, 1))`` with
    ``queue 4`` (one stored text) on two slots: proc 0 (3 CPUs) fits nowhere and does not
    keep the others from starting; procs 1 and 3 take a slot each and proc 2 waits for
    two; once they end, proc 2 runs on both slots (smp), and proc 0 still waits."""
    cell, daemon, fake = ticking
    cluster = _condor_submit(cell, daemon, "p.sub", "executable = /bin/true\nrequest_cpus = "
                             "ifThenElse(ProcId == 0, 3, ifThenElse(ProcId == 2, 2, 1))\nqueue 4\n")
    daemon.tick()
    job = daemon.state.jobs[cluster]
    assert isinstance(job.spec["condor_ad"], str)
    assert fake.running() == [(cluster, 2), (cluster, 4)]
    assert [job.task(n).slots for n in (2, 4)] == [1, 1]
    fake.finish(cluster, 2)
    fake.finish(cluster, 4)
    daemon.tick()
    daemon.tick()
    assert fake.running() == [(cluster, 3)]
    assert (job.task(3).pe, job.task(3).slots) == ("smp", 2)
    assert _live(daemon, cluster) == [1, 3]


def test_a_job_that_leaves_the_queue_is_in_the_history_once_the_status_leaves_it_out(ticking, monkeypatch):
    """condor_q and condor_history read two files the daemon writes: a job that left the
    queue is in one or the other at every moment (HTCondor's schedd appends the final ad
    to the history before it takes the job out of its queue), never in neither."""
    import time
    from gridtools.daemon import publish
    cell, daemon, fake = ticking
    cluster = _condor_submit(cell, daemon, "j.sub", "executable = /bin/true\nqueue\n")
    end = time.time() + 10
    while (cluster, 1) not in fake.running() and time.time() < end:
        daemon.tick()
    assert (cluster, 1) in fake.running()
    nowhere = []
    real = publish.publish

    def looked_at(*args, **kw):
        real(*args, **kw)
        listed = cell.run("condor_q", "-af", "ClusterId").stdout.split()
        left = cell.run("condor_history", "-af", "ClusterId").stdout.split()
        if str(cluster) not in listed + left:
            nowhere.append(time.time())
    monkeypatch.setattr(publish, "publish", looked_at)
    fake.finish(cluster, 1)
    end = time.time() + 10
    while str(cluster) not in cell.run("condor_history", "-af", "ClusterId").stdout.split() \
            and time.time() < end:
        daemon.published = 0.0              # (the pass that reaps the end publishes it)
        daemon.tick()
        time.sleep(0.05)
    assert str(cluster) in cell.run("condor_history", "-af", "ClusterId").stdout.split()
    assert nowhere == []


def test_a_new_jobs_private_facts_are_published_before_the_status_that_shows_it(ticking, monkeypatch):
    """The status and its owner's private facts (the command's arguments ...) are two
    files: when the status shows a job, its owner's condor_q table shows its arguments
    (the table is made from the two, without building the job's ad)."""
    from gridtools.spool import status as spool_status
    cell, daemon, _fake = ticking
    seen = []
    real = spool_status.publish

    def looked_at(*args, **kw):
        real(*args, **kw)
        seen.append(cell.run("condor_q", "-nobatch").stdout.splitlines())
    monkeypatch.setattr(spool_status, "publish", looked_at)
    # (the submission's own ticks may take the job in and publish it: every publication
    # is looked at, the job's rows picked out once its number is known)
    cluster = _condor_submit(cell, daemon, "a.sub", "executable = /bin/sleep\narguments = 42\nhold = true\nqueue\n")
    daemon.published = 0.0
    daemon.tick()
    shown = [rows for rows in ([line for line in lines if line.strip().startswith(f"{cluster}.0 ")]
                               for lines in seen) if rows]
    assert shown and all(len(rows) == 1 and rows[0].endswith(" sleep 42") for rows in shown)


def test_the_execute_event_of_a_job_that_copies_its_input_waits_for_the_files_also_over_a_restart(
        ticking, tmp_path):
    """A job that copies its input files in has no execute event (001) until its shepherd
    noted them in: then the next pass writes it after their 040 events, without waiting
    for the sampling of running jobs, also in a daemon started again meanwhile."""
    import time
    from gridtools.daemon.loop import Daemon
    from gridtools.formats.condor.userlog import parse_events
    from gridtools.spool import jobs as jobstore
    cell, daemon, fake = ticking
    (tmp_path / "a").write_text("a\n")
    (tmp_path / "job.sub").write_text("executable = /bin/true\nshould_transfer_files = YES\n"
                                      "transfer_input_files = a\nlog = job.log\nqueue\n")
    proc = cell.run("condor_submit", "-terse", "job.sub", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    jid = int(proc.stdout.split(".")[0])

    def events():
        return [int(e.type) for e in parse_events((tmp_path / "job.log").read_text())]
    daemon.tick()
    assert fake.running() == [(jid, 1)] and events() == [0]
    daemon.tick()
    assert events() == [0]                              # (nothing copied yet)
    daemon.close()
    daemon.close = lambda: None                         # (closed: the fixture need not)
    again = Daemon(execution=fake)
    again.open()
    try:
        again.tick()                                    # (it samples the running jobs once)
        assert events() == [0]
        now = int(time.time())
        jobstore.write_transfers(jobstore.task_dir(jid, 1), {"in_started": now, "in_finished": now})
        again.tick()
        assert events() == [0, 40, 40, 1]
    finally:
        again.close()


def test_one_users_periodic_expressions_take_their_share_of_a_pass_and_the_rest_go_first_next(ticking,
                                                                                                monkeypatch):
    """Once one user's periodic expressions took PERIODIC_OWNER_SECONDS of an evaluation of
    them all, that user's other jobs wait for the next one, which looks at them first."""
    import time
    from gridtools.daemon import condorjob
    from gridtools.model.job import TaskState
    cell, daemon, _fake = ticking
    text = "executable = /bin/true\nrequirements = False\nperiodic_hold = True\nqueue\n"
    first = _condor_submit(cell, daemon, "a.sub", text)
    second = _condor_submit(cell, daemon, "b.sub", text)
    daemon.tick()
    state = daemon.state

    def held(cluster):
        job = state.jobs[cluster]
        return bool(job.hold or job.task(1).hold) and job.state_of(1) is not TaskState.FINISHED
    assert not held(first) and not held(second)         # (no evaluation of them yet)
    monkeypatch.setattr(condorjob, "PERIODIC_OWNER_SECONDS", 0.0)      # (a share spent by one job)
    condorjob.periodic(state, daemon.dispatcher, time.time())
    assert held(first) and not held(second) and state.periodic_waiting == {second: 0}
    condorjob.periodic(state, daemon.dispatcher, time.time())
    assert held(second) and state.periodic_waiting == {first: 0}   # (the first one's turn comes next)


def test_one_users_share_of_periodic_expressions_is_counted_after_each_task(ticking, monkeypatch):
    """A cluster's tasks are evaluated one by one against their owner's share: one of many
    procs that spent it leaves the others waiting, from where it stopped; a resumption
    does not give a user whose share is spent more, the next whole evaluation does."""
    import time
    from gridtools.daemon import condorjob
    cell, daemon, _fake = ticking
    text = "executable = /bin/true\nrequirements = False\nperiodic_hold = True\nqueue 4\n"
    cluster = _condor_submit(cell, daemon, "many.sub", text)
    daemon.tick()
    state = daemon.state
    job = state.jobs[cluster]

    def held():
        return [number for number in sorted(job.tasks) if job.task(number).hold]
    monkeypatch.setattr(condorjob, "PERIODIC_OWNER_SECONDS", 0.0)
    condorjob.periodic(state, daemon.dispatcher, time.time())
    assert held() == [1] and state.periodic_waiting == {cluster: 1} and not state.periodic_resumable
    condorjob.periodic(state, daemon.dispatcher, time.time(), resume=True)
    assert held() == [1] and state.periodic_waiting == {cluster: 1}
    condorjob.periodic(state, daemon.dispatcher, time.time())
    assert held() == [1, 2] and state.periodic_waiting == {cluster: 2}
    monkeypatch.setattr(condorjob, "PERIODIC_OWNER_SECONDS", 60.0)
    condorjob.periodic(state, daemon.dispatcher, time.time())
    assert held() == [1, 2, 3, 4] and state.periodic_waiting == {}


def test_the_messages_file_is_rotated_past_its_size(ticking, monkeypatch):
    """What the daemon notes (a user's refused requests, say) cannot fill the disk: past
    MESSAGES_MAX the messages file is rotated, the newest MESSAGES_ROTATIONS kept."""
    import glob
    from gridtools.daemon import loop
    cell, daemon, _fake = ticking
    monkeypatch.setattr(loop, "MESSAGES_MAX", 2000)
    path = os.path.join(cell.root, "spool", "messages")
    for round_ in range(5):
        for n in range(30):
            daemon.state.log(f"I|note {round_}.{n} " + "x" * 40)
        daemon.tick()
    rotated = sorted(glob.glob(path + ".*"))
    assert len(rotated) == loop.MESSAGES_ROTATIONS, rotated
    assert all(os.path.getsize(p) > 2000 for p in rotated)
    assert "note 4.29" in open(rotated[-1]).read()
    assert not os.path.exists(path) or os.path.getsize(path) <= 2000


def test_a_start_expression_that_does_not_parse_matches_nothing_and_passes_go_on(ticking):
    """An administrator's START that does not parse (condor_config_val -set 'START = a ==')
    is the ClassAd error: no job starts on the host, and the daemon's passes are not cut
    short by it (they were, every one, until it was repaired)."""
    from gridtools.classad.values import ERROR
    from gridtools.sched.startd import Policy
    assert Policy.from_config({"START": "a =="}).expr("START", False).eval() is ERROR
    cell, daemon, fake = ticking
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("START = a ==\n")
    daemon.state.reload_config(force=True)
    jid = submit(cell)
    for _ in range(3):
        daemon.tick()
    assert fake.launched == []
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert "cut short" not in messages, messages
    assert jid in daemon.state.jobs and not daemon.state.jobs[jid].is_finished()


#: an expression whose evaluation goes over its budget (regular expression backtracking)
REDOS = 'regexp("^(a|aa)*$", strcat("' + "a" * 100 + 'b", ProcId))'


def test_costly_requests_of_a_cluster_s_procs_cost_one_evaluation_not_one_per_proc(ticking):
    """Procs whose requests read ProcId through an expression over the budget of an
    evaluation: the daemon stops reading them at the first that went over (proc 0's
    requests stand in), instead of paying the budget for each proc at each change."""
    from gridtools.classad.budget import over_budget
    cell, daemon, _fake = ticking
    seen = over_budget()
    cluster = _condor_submit(cell, daemon, "req.sub", "executable = /bin/true\nhold = true\n"
                             f"request_memory = ifThenElse({REDOS}, 64, 32 + ProcId)\nqueue 40\n")
    daemon.tick()
    daemon.tick()
    assert cluster in daemon.state.jobs
    assert over_budget() - seen <= 4, over_budget() - seen     # (proc 0 at intake, then one)
    said = open(os.path.join(cell.root, "spool", "messages")).read()
    assert f"job {cluster}: the requests of its procs cannot be read, proc 0's stand in" in said


def test_costly_user_log_paths_cost_one_evaluation_per_change_of_the_job(ticking):
    """A cluster whose UserLog is an expression over the budget: its events go to no log,
    and writing them costs one such evaluation, not one per proc."""
    from gridtools.classad.budget import over_budget
    cell, daemon, _fake = ticking
    seen = over_budget()
    cluster = _condor_submit(cell, daemon, "log.sub", "executable = /bin/true\nhold = true\n"
                             f'+UserLog = ifThenElse({REDOS}, "/tmp/x.log", "/tmp/y.log")\nqueue 40\n')
    daemon.tick()
    assert cluster in daemon.state.jobs
    first = over_budget() - seen
    assert first <= 2, first
    ask(cell, daemon, "condor_rm", str(cluster))
    daemon.tick()
    assert over_budget() - seen - first <= 2
    assert not os.path.exists("/tmp/x.log") and not os.path.exists("/tmp/y.log")


def test_other_job_remove_requirements_over_the_budget_are_given_up(ticking):
    """condor_rm of a job whose OtherJobRemoveRequirements go over the budget of an
    evaluation for the owner's other procs: the daemon gives the expression up at the
    first such evaluation (the messages file says so) and removes nothing else."""
    from gridtools.classad.budget import over_budget
    cell, daemon, _fake = ticking
    others = _condor_submit(cell, daemon, "others.sub", "executable = /bin/true\nhold = true\nqueue 40\n")
    text = REDOS.replace('"', '\\"')
    remover = _condor_submit(cell, daemon, "rm.sub", "executable = /bin/true\nhold = true\n"
                             f'+OtherJobRemoveRequirements = "{text}"\nqueue\n')
    daemon.tick()
    seen = over_budget()
    ask(cell, daemon, "condor_rm", str(remover))
    for _ in range(3):
        daemon.tick()
    assert over_budget() - seen <= 2, over_budget() - seen
    assert len(_live(daemon, others)) == 40
    said = open(os.path.join(cell.root, "spool", "messages")).read()
    assert "OtherJobRemoveRequirements of root's removed jobs went over its budget" in said


@pytest.mark.parametrize("attribute", ["+LeaveJobInQueue", "+OtherJobRemoveRequirements"])
def test_a_costly_attribute_read_at_each_proc_s_removal_costs_one_evaluation(ticking, attribute):
    """condor_rm of a cluster whose procs carry an attribute the daemon reads at each
    removal, as an expression over the budget of an evaluation: it is evaluated once,
    then taken for ERROR in the cluster's other procs."""
    from gridtools.classad.budget import over_budget
    cell, daemon, _fake = ticking
    costly = f'ifThenElse({REDOS}, "x", "")' if "Other" in attribute else REDOS
    cluster = _condor_submit(cell, daemon, "rm.sub", "executable = /bin/true\nhold = true\n"
                             f"{attribute} = {costly}\nqueue 30\n")
    daemon.tick()
    seen = over_budget()
    ask(cell, daemon, "condor_rm", str(cluster))
    daemon.tick()
    assert over_budget() - seen <= 1, over_budget() - seen
    assert _live(daemon, cluster) == []


def test_costly_attributes_read_at_each_proc_s_start_and_end_cost_one_evaluation_each(ticking):
    """DeferralTime, JobNotification and on_exit_hold as expressions over the budget:
    each is evaluated over its budget once for the cluster, not once per proc; the procs
    run and leave as if they were not set."""
    from gridtools.classad.budget import over_budget
    cell, daemon, fake = ticking
    seen = over_budget()
    cluster = _condor_submit(cell, daemon, "run.sub", "executable = /bin/true\n"
                             f"+DeferralTime = ifThenElse({REDOS}, 1, 0)\n"
                             f"+JobNotification = ifThenElse({REDOS}, 1, 0)\n"
                             f"on_exit_hold = {REDOS}\nqueue 6\n")
    for _ in range(4):
        daemon.tick()
        for job_id, number in fake.running():
            fake.finish(job_id, number)
        daemon.tick()
    assert _live(daemon, cluster) == []
    assert over_budget() - seen <= 4, over_budget() - seen


def test_a_costly_attribute_is_remembered_for_its_job_not_for_a_later_job_of_the_same_id():
    """The memory of costly attributes knows a job by its id and its submission: a job
    that has the id again (a new spool, ids wrapped round) is evaluated afresh."""
    from types import SimpleNamespace
    from gridtools.classad import parse_ad
    from gridtools.classad.values import ERROR
    from gridtools.daemon import condorjob
    costly = parse_ad(f"DeferralTime = ifThenElse({REDOS.replace('ProcId', '0')}, 1, 0)\n")
    plain = parse_ad("DeferralTime = 1234\n")
    first = SimpleNamespace(id=7, spec={"submit_time": 100.5})
    assert condorjob.attr_value(first, costly, "DeferralTime") is ERROR
    assert condorjob.attr_value(first, plain, "DeferralTime") is ERROR      # (not evaluated again)
    again = SimpleNamespace(id=7, spec={"submit_time": 200.25})
    assert condorjob.attr_value(again, plain, "DeferralTime") == 1234
    condorjob.forget_costly(first)
    assert condorjob.attr_value(first, plain, "DeferralTime") == 1234


def test_an_end_is_published_within_a_second_however_long_the_last_publication_took(ticking):
    """Ends and starts are coalesced in publications that may take a tenth of the daemon's
    time, but they show within PUBLISH_LATEST of the last one even after a publication that
    took seconds (a large status on a loaded machine)."""
    import time
    cell, daemon, fake = ticking
    jid = submit(cell)
    daemon.tick()
    assert cell.task_states(jid) == {1: "running"}
    assert f"{jid} " in cell.run("qstat", cwd="/tmp").stdout
    fake.finish(jid, 1)
    daemon.publish_cost, daemon.published = 5.0, time.time()
    began = time.time()
    while f"{jid} " in cell.run("qstat", cwd="/tmp").stdout and time.time() - began < 4:
        daemon.tick()
        time.sleep(0.05)
    assert time.time() - began < 2.0         # (PUBLISH_LATEST, 1 s, and the last tick)
    assert f"{jid} " not in cell.run("qstat", cwd="/tmp").stdout

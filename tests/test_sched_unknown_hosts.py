"""Hosts whose execution daemon is gone, as pure functions: their queue instances are
unknown (u) and take no jobs, and once a host has been unknown for its reschedule_unknown
time the tasks there that may run again are picked to be rescheduled (sge_conf(5))."""

from gridtools.daemon.qcontrol import reschedule_unknown
from gridtools.sched import queue_state
from gridtools.sched.snapshot import QState
from schedkit import config, reasons, run


def inst(host):
    return queue_state.Instance(name=f"all.q@{host}", queue="all.q", host=host, slots=2)


def task(job, host, reschedulable=True, queue="all.q"):
    return queue_state.Task(job, 1, ((queue, host, 1),), 100.0, reschedulable=reschedulable)


def test_the_instances_of_an_unknown_host_are_unknown():
    out = queue_state.derive(queue_state.View(instances=(inst("h1"), inst("h2")), unknown={"h2": 50.0}), 60.0)
    assert out.derived == {"all.q@h2": QState.UNKNOWN}
    assert out.reschedule == [] and out.next_wake is None      # reschedule_unknown 0: never


def test_tasks_are_rescheduled_once_the_host_was_unknown_long_enough():
    view = queue_state.View(instances=(inst("h1"), inst("h2")),
                            tasks=(task(1, "h2"), task(2, "h2", reschedulable=False), task(3, "h1")),
                            unknown={"h2": 50.0}, reschedule_after={"h2": 10.0})
    early = queue_state.derive(view, 59.0)
    assert early.reschedule == [] and early.next_wake == 60.0   # woken when it is due
    assert queue_state.derive(view, 60.0).reschedule == [(1, 1)]


def test_a_parallel_job_is_rescheduled_only_from_the_host_of_its_master_task():
    slave_here = queue_state.Task(4, 1, (("all.q", "h1", 1), ("all.q", "h2", 1)), 100.0, reschedulable=True)
    master_here = queue_state.Task(5, 1, (("all.q", "h2", 1), ("all.q", "h1", 1)), 100.0, reschedulable=True)
    view = queue_state.View(instances=(inst("h1"), inst("h2")), tasks=(slave_here, master_here),
                            unknown={"h2": 0.0}, reschedule_after={"h2": 1.0})
    assert queue_state.derive(view, 5.0).reschedule == [(5, 1)]


def test_the_pass_places_no_job_on_an_unknown_host():
    sc = {"hosts": ["h1", "h2"], "jobs": [{"id": 1}, {"id": 2}], "queue_states": {"all.q@h1": "u"}}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h2=1", "2.1 all.q@h2=1"]
    full = {"hosts": ["h1", "h2"], "slots": 1, "jobs": [{"id": 1}, {"id": 2}],
            "queue_states": {"all.q@h1": "u"}}
    decisions, started = run(full)
    assert started == ["1.1 all.q@h2=1"]
    assert 'queue instance "all.q@h1" dropped because it is temporarily not available' in reasons(decisions, 2)


def test_reschedule_unknown_comes_from_the_host_configuration_over_the_global_one():
    conf = config({"hosts": ["h1", "h2"], "objects": {
        "conf/global": "reschedule_unknown 0:0:30", "conf/h2": "reschedule_unknown 0:2:0"}})
    assert reschedule_unknown(conf, "h1") == 30.0
    assert reschedule_unknown(conf, "h2") == 120.0
    assert reschedule_unknown(config({"hosts": ["h1"]}), "h1") == 0.0

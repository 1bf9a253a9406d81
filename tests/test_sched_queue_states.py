"""The scheduler as a pure function: queue instance states, host states and thresholds."""

import pytest

from gridtools.sched.cycle import cycle
from gridtools.sched.snapshot import Complex, Host, PendingJob, QueueInstance, Snapshot

NP_LOAD = Complex("np_load_avg", "nla", "DOUBLE", ">=", "NO", "NO", "0", 0.0)
COMPLEXES = {"np_load_avg": NP_LOAD, "nla": NP_LOAD}


def job(jid=1, **kw):
    return PendingJob(id=jid, owner="alice", group="alice", name=f"j{jid}", submit_time=float(jid),
                      priority=0, slots=1, tasks=(1,), holds={1: ""}, **kw)


def queue(name="all.q", host="h1", **kw):
    kw.setdefault("slots", 2)
    return QueueInstance(queue=name, host=host, **kw)


def snapshot(queues, jobs=None, hosts=None, params=None, load=0.25):
    hosts = hosts or {q.host: Host(q.host, load=(("np_load_avg", load),), num_proc=2) for q in queues}
    return Snapshot(now=1000.0, jobs=tuple(jobs or [job()]), running=(), queues=tuple(queues),
                    hosts=hosts, complexes=COMPLEXES,
                    params={"np_load_adjustment": 0.0, **(params or {})})


def placed(decisions):
    return [(s.job_id, s.granted[0][0], s.granted[0][1]) for s in decisions.starts]


@pytest.mark.parametrize("letter,word", [("d", "disabled"), ("D", "disabled"), ("s", "suspended"),
                                         ("S", "suspended"), ("C", "suspended"),
                                         ("E", "in error state"),
                                         ("c", "in configuration ambiguous state")])
def test_closed_queue_instances_take_no_jobs(letter, word):
    decisions = cycle(snapshot([queue(states=letter)]))
    assert decisions.starts == []
    assert f'queue instance "all.q@h1" dropped because it is {word}' in decisions.reasons[1]


def test_the_job_goes_to_an_open_instance():
    decisions = cycle(snapshot([queue(states="d"), queue(host="h2")]))
    assert placed(decisions) == [(1, "all.q", "h2")]


@pytest.mark.parametrize("state,word", [("drain", "draining"), ("flush", "flushed"),
                                        ("suspend", "suspended")])
def test_closed_hosts_take_no_jobs(state, word):
    hosts = {"h1": Host("h1", state=state, load=(("np_load_avg", 0.0),))}
    decisions = cycle(snapshot([queue()], hosts=hosts))
    assert decisions.starts == []
    assert f'queue instance "all.q@h1" dropped because host "h1" is {word}' in decisions.reasons[1]


def test_load_threshold_alarm():
    decisions = cycle(snapshot([queue(load_thresholds=(("np_load_avg", "0.2"),))], load=0.25))
    assert decisions.starts == []
    assert decisions.reasons[1][0] == ('queue instance "all.q@h1" dropped because it is overloaded: '
                                       'np_load_avg=0.250000 (= 0.250000 + 0.000000) >= 0.2')
    assert decisions.load_alarms                # the daemon looks again when the load changes
    calm = cycle(snapshot([queue(load_thresholds=(("np_load_avg", "0.3"),))], load=0.25))
    assert placed(calm) and not calm.load_alarms


def test_suspend_threshold_alarm_comes_first():
    qi = queue(load_thresholds=(("np_load_avg", "0.1"),), suspend_thresholds=(("np_load_avg", "0.2"),))
    decisions = cycle(snapshot([qi], load=0.25))
    assert decisions.reasons[1][0] == ('queue instance "all.q@h1" is in suspend alarm: '
                                       'np_load_avg=0.250000 (= 0.250000 + 0.000000) >= 0.2')


def test_seq_no_orders_instances_with_seqno_sorting():
    queues = [queue("a.q", seq_no=20), queue("b.q", seq_no=10)]
    assert placed(cycle(snapshot(queues, params={"queue_sort_method": "seqno"}))) == [(1, "b.q", "h1")]


def test_bool_resources_must_be_offered():
    bigmem = Complex("bigmem", "bm", "BOOL", "==", "YES", "NO", "FALSE", 0.0)
    snap = snapshot([queue("all.q"), queue("big.q", values=(("bigmem", "TRUE"),))],
                    jobs=[job(hard_resources=(("bigmem", "TRUE"),))])
    snap = Snapshot(**{**{f: getattr(snap, f) for f in snap.__slots__},
                       "complexes": {**COMPLEXES, "bigmem": bigmem}})
    assert placed(cycle(snap)) == [(1, "big.q", "h1")]

"""The scheduler as a pure function: queue instance states, host states and thresholds."""

import pytest

from schedkit import reasons, run


def scenario(**kw):
    return {"hosts": ["h1"], "jobs": [{"id": 1}], **kw}


@pytest.mark.parametrize("letter,word", [("d", "disabled"), ("D", "disabled"), ("s", "suspended"),
                                         ("S", "suspended"), ("C", "suspended"),
                                         ("E", "in error state"),
                                         ("c", "in configuration ambiguous state"),
                                         ("u", "temporarily not available"), ("o", "orphaned")])
def test_closed_queue_instances_take_no_jobs(letter, word):
    decisions, started = run(scenario(queue_states={"all.q@h1": letter}))
    assert started == []
    assert f'queue instance "all.q@h1" dropped because it is {word}' in reasons(decisions, 1)


def test_the_job_goes_to_an_open_instance():
    _, started = run(scenario(hosts=["h1", "h2"], queue_states={"all.q@h1": "d"}))
    assert started == ["1.1 all.q@h2=1"]


@pytest.mark.parametrize("state,word", [("drain", "draining"), ("flush", "flushed"),
                                        ("suspend", "suspended")])
def test_closed_hosts_take_no_jobs(state, word):
    decisions, started = run(scenario(host_states={"h1": state}))
    assert started == []
    assert f'queue instance "all.q@h1" dropped because host "h1" is {word}' in reasons(decisions, 1)


def test_load_threshold_alarm():
    decisions, started = run(scenario(queue={"load_thresholds": "np_load_avg=0.2"},
                                      load={"h1": {"np_load_avg": 0.25}}, sched={"job_load_adjustments": "NONE"}))
    assert started == []
    assert reasons(decisions, 1)[0] == ('queue instance "all.q@h1" dropped because it is overloaded: '
                                        'np_load_avg=0.250000 (no load adjustment) >= 0.2')
    assert decisions.load_alarms                # the daemon looks again when the load changes
    calm, started = run(scenario(queue={"load_thresholds": "np_load_avg=0.3"},
                                 load={"h1": {"np_load_avg": 0.25}}, sched={"job_load_adjustments": "NONE"}))
    assert started and not calm.load_alarms


def test_load_adjustment_of_a_start_counts_in_the_same_pass():
    """Each start adds job_load_adjustments (np_load_avg=0.50 per slot / num_proc 2) to the
    host's load: the second job finds the host overloaded."""
    decisions, started = run(scenario(queue={"load_thresholds": "np_load_avg=0.2"},
                                      jobs=[{"id": 1}, {"id": 2}]))
    assert started == ["1.1 all.q@h1=1"]
    assert reasons(decisions, 2)[0] == ('queue instance "all.q@h1" dropped because it is overloaded: '
                                        'np_load_avg=0.250000 (= 0.000000 + 0.50 * 1.000000 with nproc=2) '
                                        '>= 0.2')


def test_suspend_threshold_alarm_comes_first():
    decisions, _ = run(scenario(queue={"load_thresholds": "np_load_avg=0.1",
                                       "suspend_thresholds": "np_load_avg=0.2"},
                                load={"h1": {"np_load_avg": 0.25}}, sched={"job_load_adjustments": "NONE"}))
    assert reasons(decisions, 1)[0] == ('queue instance "all.q@h1" is in suspend alarm: '
                                        'np_load_avg=0.250000 (no load adjustment) >= 0.2')


def test_seq_no_orders_instances_with_seqno_sorting():
    _, started = run(scenario(queue={"seq_no": 20}, queues={"b.q": {"seq_no": 10}},
                              sched={"queue_sort_method": "seqno"}))
    assert started == ["1.1 b.q@h1=1"]


def test_load_orders_instances_with_load_sorting():
    _, started = run(scenario(hosts=["h1", "h2"], load={"h1": {"np_load_avg": 0.9}},
                              jobs=[{"id": 1}, {"id": 2}], slots=4))
    # h2 is idle; after the first start its adjusted load (0.25) is still below h1's 0.9
    assert started == ["1.1 all.q@h2=1", "2.1 all.q@h2=1"]


def test_bool_resources_must_be_offered():
    decisions, started = run(scenario(complex=["bigmem bm BOOL == YES NO FALSE 0"],
                                      queues={"big.q": {"complex_values": "bigmem=TRUE"}},
                                      jobs=[{"id": 1, "qsub": "-l bigmem=TRUE"}]))
    assert started == ["1.1 big.q@h1=1"]
    decisions, started = run(scenario(complex=["bigmem bm BOOL == YES NO FALSE 0"],
                                      jobs=[{"id": 1, "qsub": "-l bm=TRUE"}]))
    assert started == []
    assert reasons(decisions, 1) == ['(-l bm=TRUE) cannot run in queue "all.q@h1" '
                                     "because job requests unknown resource (bigmem)"]


def test_the_state_words_name_the_scheduler_s_states():
    """qstat -j words its messages from formats.sge.statewords, which names the states by
    the members of QState and HostState without importing the scheduler: every name
    there is a member, and every state that blocks an instance or closes a host has its
    word."""
    from gridtools.formats.sge import statewords
    from gridtools.sched.snapshot import _BLOCKING_ORDER, HostState, QState
    assert set(statewords.WORDS) == {member.name for member in _BLOCKING_ORDER}
    assert set(statewords.WORDS) <= set(QState.__members__)
    assert set(statewords.HOST_WORDS) == {member.name for member in HostState if member.closed}

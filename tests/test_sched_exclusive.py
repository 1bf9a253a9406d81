"""Exclusive scheduling (complex(5), relation operator EXCL): a job that requests an
EXCL complex true runs only where no other job runs, and no job starts beside it.
Every case is a scenario: hosts, running tasks and pending jobs in; starts and
reasons out."""

from schedkit import reasons, run

EXCL = "exclusive excl BOOL EXCL YES YES 0 1000"


def cell(**extra):
    sc = {"hosts": ["h1", "h2"], "slots": 4, "complex": [EXCL],
          "exechost": {"h1": {"complex_values": "exclusive=true"},
                       "h2": {"complex_values": "exclusive=true"}}}
    sc.update(extra)
    return sc


def test_an_exclusive_job_goes_to_the_empty_host_and_keeps_others_off_it():
    """h1 runs an ordinary job: the exclusive job 1 takes h2 alone; the ordinary jobs
    2 and 3 share h1; the second exclusive job 4 finds no empty host."""
    sc = cell(running=[{"job": 90, "granted": "all.q@h1=1"}],
              jobs=[{"id": 1, "qsub": "-l excl=true"}, {"id": 2}, {"id": 3},
                    {"id": 4, "qsub": "-l exclusive=true"}])
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h2=1", "2.1 all.q@h1=1", "3.1 all.q@h1=1"]
    assert reasons(decisions, 4) == [
        '(-l exclusive=true) cannot run at host "h1" because it offers only hc:exclusive=0.000000',
        '(-l exclusive=true) cannot run at host "h2" because it offers only hc:exclusive=0.000000']


def test_a_running_exclusive_job_holds_its_whole_host():
    """Job 90 runs exclusively on h1 with one of its two slots: ordinary jobs take h2's
    slots; once h2 is full the next one waits, and never joins job 90."""
    sc = cell(slots=2, running=[{"job": 90, "granted": "all.q@h1=1", "l": "exclusive=true"}],
              jobs=[{"id": 1}, {"id": 2}, {"id": 3}])
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h2=1", "2.1 all.q@h2=1"]
    assert reasons(decisions, 3) == [
        '(-l exclusive=false) cannot run at host "h1" because it offers only hc:exclusive=0.000000',
        'queue instance "all.q@h2" dropped because it is full']


def test_an_exclusive_parallel_job_takes_several_slots_of_its_host():
    """A $pe_slots job of 3 slots asking for exclusivity: all three slots on one empty
    host; its own slots do not count as another job."""
    pe = ("pe_name smp\nslots 99\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
          "stop_proc_args NONE\nallocation_rule $pe_slots\ncontrol_slaves FALSE\n"
          "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")
    sc = cell(objects={"pe/smp": pe}, queue={"pe_list": "smp"},
              running=[{"job": 90, "granted": "all.q@h1=1"}],
              jobs=[{"id": 1, "qsub": "-pe smp 3 -l exclusive=true"}, {"id": 2}])
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h2=3", "2.1 all.q@h1=1"]


def test_hosts_without_the_complex_are_not_exclusive():
    """Only h2 offers exclusive, and an ordinary job runs there: ordinary jobs still
    run on both hosts; the exclusive job can only run on h2 (h1 does not know the
    resource), and h2 is not empty."""
    sc = cell(exechost={"h1": {"complex_values": "NONE"}, "h2": {"complex_values": "exclusive=true"}},
              running=[{"job": 90, "granted": "all.q@h2=1"}],
              jobs=[{"id": 1, "qsub": "-l exclusive=true"}, {"id": 2}, {"id": 3}])
    decisions, started = run(sc)
    assert sorted(started) == ["2.1 all.q@h1=1", "3.1 all.q@h2=1"]
    assert reasons(decisions, 1) == [
        '(-l exclusive=true) cannot run in queue "all.q@h1" because job requests unknown resource (exclusive)',
        '(-l exclusive=true) cannot run at host "h2" because it offers only hc:exclusive=0.000000']


def test_a_queue_level_exclusive_complex_makes_only_that_queue_instance_exclusive():
    """exclusive=true in the queue's complex_values: the exclusive job waits for the
    queue instance to be empty, not for the host."""
    sc = {"hosts": ["h1"], "slots": 4, "complex": [EXCL],
          "queues": {"excl.q": {"complex_values": "exclusive=true", "slots": 4, "seq_no": 0}},
          "running": [{"job": 90, "granted": "all.q@h1=1"}],
          "jobs": [{"id": 1, "qsub": "-q excl.q -l exclusive=true"}, {"id": 2, "qsub": "-q excl.q"}]}
    decisions, started = run(sc)
    assert started == ["1.1 excl.q@h1=1"]
    assert '(-l exclusive=false) cannot run in queue "excl.q@h1" because it offers only qc:exclusive=0.000000' \
        in reasons(decisions, 2)

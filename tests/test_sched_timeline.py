"""Future use of resources (sched.timeline): steps that split and merge, peaks over
windows, the earliest start that fits for a whole duration."""

from gridtools.sched.timeline import INFINITY, Profile, Timeline


def test_steps_split_and_merge():
    use = Profile()
    use.add(0, 30, 4)
    use.add(30, 60, 5)
    assert (use.times, use.used) == ([-INFINITY, 0, 30, 60], [0.0, 4.0, 5.0, 0.0])
    use.add(10, 20, 1)
    assert (use.times, use.used) == ([-INFINITY, 0, 10, 20, 30, 60], [0.0, 4.0, 5.0, 4.0, 5.0, 0.0])
    use.add(10, 20, -1)                                   # back as it was: the steps merge again
    assert (use.times, use.used) == ([-INFINITY, 0, 30, 60], [0.0, 4.0, 5.0, 0.0])
    use.add(60, INFINITY, 2)
    assert (use.at(59), use.at(60), use.at(10 ** 9)) == (5.0, 2.0, 2.0)
    assert (use.peak(0, 30), use.peak(0, 31), use.peak(61, 70)) == (4.0, 5.0, 2.0)


def test_the_earliest_start_for_a_whole_duration():
    """5 licenses; 4 in use until 30, then 5 reserved until 60: one license for 30 s fits
    now, for 31 s only at 60; 5 licenses fit at 30; 6 never."""
    lic = Timeline()
    lic.set_cap("lic", 5)
    lic.add("lic", 0, 30, 4)
    assert lic.earliest([("lic", 5)], 30, 0) == 30
    lic.add("lic", 30, 60, 5)
    assert lic.earliest([("lic", 1)], 30, 0) == 0
    assert lic.earliest([("lic", 1)], 31, 0) == 60
    assert lic.earliest([("lic", 6)], 1, 0) == INFINITY
    lic.add("lic", 100, INFINITY, 5)                      # held for ever from 100
    assert lic.earliest([("lic", 1)], 40, 60) == 60
    assert lic.earliest([("lic", 1)], 50, 60) == INFINITY


def test_several_resources_and_their_changes():
    """A slot free from 50 and memory free from 80: both for 10 s from 80; a resource
    without a capacity never limits."""
    tl = Timeline()
    tl.set_cap("slot", 1)
    tl.set_cap("mem", 8)
    tl.add("slot", 0, 50, 1)
    tl.add("mem", 0, 80, 6)
    assert tl.earliest([("slot", 1), ("mem", 4)], 10, 0) == 80
    assert tl.earliest([("slot", 1), ("mem", 2), ("other", 99)], 10, 0) == 50
    assert tl.conflict([("slot", 1)], 40, 60) == ("slot", 0.0)
    assert tl.conflict([("slot", 1), ("mem", 2)], 50, 60) is None
    assert tl.free("mem", 0, 10) == 2 and tl.free("other", 0, 10) == INFINITY
    assert tl.changes(["slot", "mem"], 0) == [50, 80]
    assert tl.first_free("mem", 4, 0) == 80 and tl.first_free("mem", 9, 0) == INFINITY

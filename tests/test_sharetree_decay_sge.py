"""Share-tree usage decay and settings as Grid Engine computes them: the per-minute decay
constant 1 - ln 2 / half-life, halflife_decay_list -1 (only what was added since the
previous pass), sge_share_mon -u (halftime alone), how halflife_decay_list is read, a
share tree naming a child that has no node, and running jobs' tickets by job shares."""

import math

import pytest

from gridtools.accounting.usage import AccountKey, HalfLife, Ledger, Sample, Usage, decay_factor

MINUTE = 60.0


def test_a_two_minute_half_life_keeps_grid_engines_constant_per_minute():
    """halflife_decay_list cpu=2: Grid Engine keeps 1 - ln 2 / 2 = 0.65343 per minute,
    not 0.5 ** 0.5 = 0.70711: 22.700607 CPU seconds are 14.833 a minute later and 1.4 %
    of them after ten minutes."""
    constant = 1 - math.log(2) / 2
    assert decay_factor(2 * MINUTE, MINUTE) == pytest.approx(0.6534264, abs=1e-7)
    assert decay_factor(2 * MINUTE, 10 * MINUTE) == pytest.approx(constant ** 10)
    assert decay_factor(2 * MINUTE, 90.0) == pytest.approx(constant ** 1.5)
    ledger = Ledger(HalfLife(2 * MINUTE, 0.0, 0.0))
    ledger.record(Sample(1, 1, "alice", "pA", Usage(cpu=22.700607), time=1000.0))
    key = AccountKey.user_in("alice", "pA")
    assert ledger.usage(key, 1060.0).cpu == pytest.approx(14.8331, abs=1e-4)
    assert ledger.usage(key, 1600.0).cpu / 22.700607 == pytest.approx(0.01424, abs=1e-4)


def test_long_half_lives_still_halve_the_usage_in_one_half_life():
    """halftime 168 h: the per-minute constant differs from the exponential by parts in
    a billion per minute."""
    week = 168 * 3600.0
    assert decay_factor(week, week) == pytest.approx(0.5, rel=1e-4)
    assert decay_factor(week, MINUTE) == pytest.approx(0.5 ** (MINUTE / week), rel=1e-8)


def test_a_half_life_of_ln2_minutes_or_less_acts_as_minus_one():
    """cpu=0.5 (30 s): Grid Engine's constant 1 - ln 2 / 0.5 is negative and its usage
    undefined; here the constant is 0, as for -1: usage counts until the pass ends."""
    assert decay_factor(30.0, 45.0) == 0.0
    ledger = Ledger(HalfLife(30.0, 0.0, 0.0))
    alice = AccountKey.user("alice")
    ledger.record(Sample(1, 1, "alice", None, Usage(cpu=40.0), time=10.0))
    assert ledger.usage(alice, 100.0).cpu == 40.0
    assert ledger.end_pass()
    assert ledger.usage(alice, 100.0).cpu == 0.0
    for value in (ledger.usage(alice, t).cpu for t in (100.0, 1e6)):
        assert not math.isnan(value)


def test_minus_one_counts_only_the_growth_since_the_previous_pass():
    """halflife_decay_list cpu=-1: a job that has burnt 600 CPU seconds and 15 more since
    the previous pass weighs 15 in the share tree, not 615."""
    ledger = Ledger(HalfLife(-MINUTE, 0.0, 0.0))
    alice = AccountKey.user("alice")
    ledger.record(Sample(1, 1, "alice", None, Usage(cpu=600.0), time=100.0))
    assert ledger.usage(alice, 101.0).cpu == 600.0       # the pass that first sees it
    ledger.end_pass()
    assert ledger.usage(alice, 110.0).cpu == 0.0         # a pass with nothing new
    ledger.record(Sample(1, 1, "alice", None, Usage(cpu=615.0), time=115.0))
    assert ledger.usage(alice, 116.0).cpu == 15.0
    ledger.end_pass()
    ledger.finish(Sample(1, 1, "alice", None, Usage(cpu=620.0), time=125.0))
    assert ledger.usage(alice, 126.0).cpu == 5.0         # an ended job's last seconds, once
    ledger.end_pass()
    assert ledger.usage(alice, 130.0).cpu == 0.0
    assert ledger.long_term(alice).cpu == 620.0


def test_share_mon_u_decays_with_halftime_alone():
    """sge_share_mon -u with halflife_decay_list cpu=2 and halftime 168: the usage of the
    last pass, 72 s later, decays with the 168-hour half-life (23.366359 -> 23.364)."""
    from gridtools.cli.sge import share_mon
    row = {"path": "/pA/gtalice", "user": "gtalice", "project": "pA", "shares": 30,
           "job_count": 0, "level": 1.0, "total": 0.6, "long_target": 0.6, "short_target": 0.6,
           "actual": 1.0, "usage": 23.366359, "tickets": 0.0, "usage_time": 1000,
           "cpu": 23.366359, "mem": 0.0, "io": 0.0, "ltcpu": 45.0, "ltmem": 0.0, "ltio": 0.0}
    snap = {"time": 1000.0, "share_tree": [row], "share_halflife": [120.0, 604800.0, 604800.0, 604800.0],
            "share_halftime": 604800.0}
    opts = share_mon.parse_args(["-u", "-n", "-f", "cpu"])
    cpu = float(share_mon.collection(snap, opts, 1072.0).strip().rstrip("\t").split("=")[1])
    expected = 23.366359 * (1 - math.log(2) / (168 * 60)) ** (72 / 60)
    assert cpu == pytest.approx(expected, abs=2e-6)
    assert cpu == pytest.approx(23.3644, abs=1e-4)


def test_halflife_decay_list_skips_entries_it_cannot_read():
    """Grid Engine keeps each entry whose value begins with a number and refuses the list
    only when none does."""
    from gridtools.errors import ConfigError
    from gridtools.formats.sge.sched import decay_list
    assert decay_list("cpu=2:mem=x") == {"cpu": 2.0}
    assert decay_list("foo=3") == {}
    assert decay_list("cpu=-5:io=2min") == {"cpu": -5.0, "io": 2.0}
    assert decay_list("cpu=1:cpu=2") == {"cpu": 1.0}
    for text in ("cpu", "mem=x", "cpu=:io"):
        with pytest.raises(ConfigError) as info:
            decay_list(text)
        assert str(info.value) == "Invalid halflife_day_list. Ignoring the setting."


def test_running_tickets_by_job_shares_are_whole_numbers():
    """Two running jobs of a with -js 1 and -js 2 share 10,000 tickets: Grid Engine
    truncates 3333.33 and 6666.67 to 3333 and 6666."""
    from gridtools.sched.policy import tickets
    from gridtools.sched.policy.config import PolicyConfig
    from gridtools.sched.policy.inputs import Member, Members, PolicyJob, ShareNode
    jobs = [PolicyJob(1, "a", 1.0, jobshare=1, pending=(), running=(1,)),
            PolicyJob(2, "a", 2.0, jobshare=2, pending=(), running=(1,))]
    result = tickets.compute(jobs, Members.of(users=[Member("a")]),
                             PolicyConfig(weight_tickets_share=10000.0),
                             ShareNode("Root", 1, (ShareNode("a", 1),)))
    assert [result.of(1).stckt, result.of(2).stckt] == [3333.0, 6666.0]


def test_qconf_refuses_a_child_id_without_a_node_in_grid_engines_words(cell, workdir):
    from test_qconf_change import write
    user = write(workdir, "stbob", "name stbob\noticket 0\nfshare 0\ndelete_time 0\ndefault_project NONE\n")
    assert cell.run("qconf", "-Auser", user).returncode == 0
    bad = write(workdir, "bad", "id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,7\n"
                                "id=1\nname=stbob\ntype=0\nshares=10\nchildnodes=NONE\n")
    for option in ("-Astree", "-Mstree"):
        proc = cell.run("qconf", option, bad)
        assert (proc.returncode, proc.stderr) == (1, "found reference to node 7 but no specification\n")
    shown = cell.run("qconf", "-sstree")
    assert (shown.returncode, shown.stdout + shown.stderr) == (1, "no sharetree element\n")

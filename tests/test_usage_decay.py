"""Decayed usage (accounting.usage): half-life series, job samples, clearing, persisting."""

import json
import math

import pytest

from gridtools.accounting.usage import (
    AccountKey, HalfLife, Ledger, Sample, Usage, ZERO, decay_factor)

DAY = 86400.0
WEEK = 7 * DAY


def test_seed_half_life_series():
    """Seed 004, "The Half-Life Factor": half-life 7 days, 1,000 units of usage.

    u(t) = 1000 * 0.5 ** (t / 7 days): 500 after 7 days, 250 after 14,
    125 after 21, 62.5 after 28 (Grid Engine's per-minute decay constant
    1 - ln 2 / 10080 gives these to a few parts in 100,000).
    """
    ledger = Ledger(HalfLife.uniform(WEEK))
    ledger.record(Sample(1, 1, "alice", None, Usage(cpu=1000.0), time=0.0))
    key = AccountKey.user("alice")
    series = [ledger.usage(key, days * DAY).cpu for days in (0, 7, 14, 21, 28)]
    assert series == pytest.approx([1000.0, 500.0, 250.0, 125.0, 62.5], rel=2e-4)


def test_simulated_week_two_users_halftime_24h():
    """Two users, halftime 24 h, one simulated week in hourly samples.

    alice runs a job using 1 CPU second per second during the first day,
    sampled cumulatively every hour (3,600 s more each time), and nothing
    after; bob's job does the same during the last day. The hour counted
    at hour h has decayed by 0.5 ** ((24 - h) / 24) at the end of the day,
    so alice holds sum(3600 * 0.5 ** ((24 - h) / 24), h = 1..24) = 63,228.76
    after day 1 (a continuous rate would give 86400 / ln 2 / 2 = 62,324.4).
    From then on her usage halves every day: 31,614.38 after day 2 and
    63,228.76 / 64 = 987.95 after day 7, when bob holds 63,228.76 (Grid Engine's
    per-minute decay constant 1 - ln 2 / 1440 decays a little faster: within 0.2 %).
    """
    ledger = Ledger(HalfLife.hours(24))
    hour = 3600.0
    for h in range(1, 25):
        ledger.record(Sample(1, 1, "alice", None, Usage(cpu=h * hour), time=h * hour))
    ledger.finish(Sample(1, 1, "alice", None, Usage(cpu=24 * hour), time=24 * hour))
    for h in range(1, 25):
        t = 6 * DAY + h * hour
        ledger.record(Sample(2, 1, "bob", None, Usage(cpu=h * hour), time=t))
    alice, bob = AccountKey.user("alice"), AccountKey.user("bob")
    hourly = sum(hour * 0.5 ** ((24 - h) / 24) for h in range(1, 25))
    assert ledger.usage(alice, DAY).cpu == pytest.approx(hourly, rel=2e-3)
    assert hourly == pytest.approx(63228.758, abs=1e-3)
    daily = [ledger.usage(alice, d * DAY).cpu for d in range(1, 8)]
    assert daily == pytest.approx([hourly * 0.5 ** (d - 1) for d in range(1, 8)], rel=2e-3)
    assert ledger.usage(bob, WEEK).cpu == pytest.approx(hourly, rel=2e-3)
    assert ledger.usage(alice, WEEK).cpu == pytest.approx(hourly / 64, rel=2e-3)
    assert ledger.long_term(alice).cpu == 24 * hour


def test_samples_are_cumulative_and_only_growth_counts():
    """A job reports 10, 25, then (a bad reading) 20, then 40 CPU seconds:
    with no decay (half-life 0) the account holds 10 + 15 + 0 + 15 = 40."""
    ledger = Ledger(HalfLife.uniform(0))
    for t, cpu in enumerate((10.0, 25.0, 20.0, 40.0)):
        ledger.record(Sample(7, 1, "alice", None, Usage(cpu=cpu), time=float(t)))
    assert ledger.usage(AccountKey.user("alice"), 100.0).cpu == 40.0


def test_project_job_counts_for_project_and_user_in_project_not_user():
    ledger = Ledger(HalfLife.uniform(0))
    ledger.finish(Sample(1, 1, "alice", "projA", Usage(1.0, 2.0, 3.0), time=5.0))
    ledger.finish(Sample(2, 1, "alice", None, Usage(cpu=10.0), time=5.0))
    assert ledger.usage(AccountKey.of_project("projA"), 9.0) == Usage(1.0, 2.0, 3.0)
    assert ledger.usage(AccountKey.user_in("alice", "projA"), 9.0) == Usage(1.0, 2.0, 3.0)
    assert ledger.usage(AccountKey.user("alice"), 9.0) == Usage(cpu=10.0)
    assert ledger.projects_of("alice") == ["projA"]
    assert ledger.debited == {}


def test_usage_kinds_decay_with_their_own_half_life():
    """halflife_decay_list: cpu 1 h, mem never (0), io counted until the pass ends (-1)."""
    ledger = Ledger(HalfLife(3600.0, 0.0, -1.0))
    ledger.finish(Sample(1, 1, "alice", None, Usage(8.0, 8.0, 8.0), time=0.0))
    found = ledger.usage(AccountKey.user("alice"), 7200.0)
    hour = 1 - math.log(2) / 60            # Grid Engine's per-minute constant of 1 h
    assert (found.cpu, found.mem, found.io) == pytest.approx((8.0 * hour ** 120, 8.0, 8.0))
    ledger.end_pass()
    assert ledger.usage(AccountKey.user("alice"), 7200.0).io == 0.0


def test_combined_usage_weights_are_scaled_to_their_sum():
    """usage_weight_list cpu=1,mem=1,io=2: (100*1 + 300*1 + 50*2) / 4 = 125."""
    assert Usage(100.0, 300.0, 50.0).combined(Usage(1.0, 1.0, 2.0)) == 125.0
    assert Usage(100.0, 300.0, 50.0).combined(ZERO) == 0.0


def test_decay_factor_edges():
    assert decay_factor(10.0, 0.0) == 1.0
    assert decay_factor(10.0, -5.0) == 1.0
    assert decay_factor(0.0, 1e9) == 1.0
    assert decay_factor(-1.0, 1.0) == 0.0
    assert decay_factor(7200.0, 14400.0) == pytest.approx((1 - math.log(2) / 120) ** 240)
    assert decay_factor(10.0, 20.0) == 0.0


def test_changing_half_life_decays_past_usage_with_the_old_one():
    """1,000 units at 0; 1 h half-life until t=1 h (500), then 2 h: 250 at t=3 h."""
    ledger = Ledger(HalfLife.uniform(3600.0))
    ledger.record(Sample(1, 1, "alice", None, Usage(cpu=1000.0), time=0.0))
    ledger.set_half_life(HalfLife.uniform(7200.0), 3600.0)
    assert ledger.usage(AccountKey.user("alice"), 3 * 3600.0).cpu == pytest.approx(250.0, rel=1e-2)


def test_clear_forgets_usage_but_running_jobs_count_on():
    ledger = Ledger(HalfLife.uniform(0))
    ledger.record(Sample(1, 1, "alice", None, Usage(cpu=50.0), time=1.0))
    ledger.clear(2.0)
    key = AccountKey.user("alice")
    assert ledger.usage(key, 3.0) == ZERO and ledger.long_term(key) == ZERO
    ledger.record(Sample(1, 1, "alice", None, Usage(cpu=70.0), time=4.0))
    assert ledger.usage(key, 5.0).cpu == 20.0
    ledger.forget(key)
    assert ledger.usage(key, 5.0) == ZERO


def test_plain_data_round_trip_through_json():
    ledger = Ledger(HalfLife.hours(24))
    ledger.record(Sample(3, 2, "alice", "projA", Usage(1.5, 2.5, 0.5), time=100.0))
    ledger.record(Sample(4, 1, "bob", None, Usage(cpu=9.0), time=200.0))
    again = Ledger.from_data(json.loads(json.dumps(ledger.to_data())))
    assert again == ledger
    for key in ledger.accounts:
        assert again.usage(key, 5000.0) == ledger.usage(key, 5000.0)


@pytest.mark.parametrize("data, message", [
    ({"version": 99}, "version"),
    ({"version": 1, "half_life": {"cpu": "x"}}, "not a number"),
    ({"version": 1, "half_life": {}, "accounts": {}}, "not a list"),
    ({"version": 1, "half_life": {}, "accounts": [{"holder": "group", "name": "a"}]},
     "unknown holder"),
    ({"version": 1, "half_life": {}, "accounts": [{"holder": "user", "name": ""}]},
     "valid name"),
    ({"version": 1, "half_life": {}, "accounts": [{"holder": "user_in_project", "name": "a"}]},
     "wrong project"),
    ({"version": 1, "half_life": {}, "debited": [{"job": "1", "task": 1, "used": {}}]},
     "not an integer"),
])
def test_bad_plain_data_is_refused(data, message):
    with pytest.raises(ValueError, match=message):
        Ledger.from_data(data)


def test_halflife_decay_list_gives_each_kind_of_usage_its_own_half_life():
    """sched_conf halflife_decay_list cpu=60:io=-1 beside halftime 2: CPU usage halves
    in an hour, memory in two (halftime), and I/O counts until the pass that reads it ends."""
    from gridtools.daemon.usage import Keeper
    from gridtools.formats.sge.sched import decay_list
    from gridtools.sched.policy.config import PolicyConfig
    minutes = tuple(sorted(decay_list("cpu=60:io=-1").items()))
    config = PolicyConfig(halftime=2, decay_minutes=minutes)
    assert config.half_lives() == (3600.0, 7200.0, -60.0)
    keeper = Keeper()
    keeper.configure(config, now=0.0)
    keeper.task_ended({"id": 1, "owner": "alice"}, 1,
                      {"usage": {"ru_utime": 800.0, "mem": 800.0, "io": 800.0}, "end_time": 0.0}, 0.0)
    used = keeper.usage_of(3600.0)("user", "alice")[0]
    hour, two = 1 - math.log(2) / 60, 1 - math.log(2) / 120       # per-minute constants
    assert (used.cpu, used.mem, used.io) == pytest.approx((800.0 * hour ** 60, 800.0 * two ** 60, 800.0))
    keeper.ledger.end_pass()
    keeper.configure(PolicyConfig(halftime=2), now=3600.0)         # back to halftime alone
    later = keeper.usage_of(3600.0 + 7200.0)("user", "alice")[0]
    assert (later.cpu, later.io) == pytest.approx((800.0 * hour ** 60 * two ** 120, 0.0))


@pytest.mark.parametrize("text", ["cpu", "cpu=x", "cpu=x:mem", "=:"])
def test_a_malformed_halflife_decay_list_is_refused(text):
    from gridtools.errors import ConfigError
    from gridtools.formats.sge.sched import decay_list
    with pytest.raises(ConfigError, match="halflife_day_list"):
        decay_list(text)
    assert decay_list("none") == {} and decay_list("cpu=0:mem=-1") == {"cpu": 0.0, "mem": -1.0}


def test_qconf_refuses_a_bad_halflife_decay_list_and_keeps_a_good_one(cell):
    import os
    import re
    text = cell.run("qconf", "-ssconf", check=True).stdout
    path = os.path.join(cell.root, "sched_conf")
    for value, code in (("cpu=x:gpu", 1), ("cpu=60:io=-1", 0)):
        with open(path, "w") as fh:
            fh.write(re.sub(r"^halflife_decay_list\s.*$", f"halflife_decay_list {value}", text, flags=re.M))
        proc = cell.run("qconf", "-Msconf", path)
        assert proc.returncode == code, proc.stderr
        if code:
            assert proc.stderr.count("\n") == 1 and "halflife_day_list" in proc.stderr
    assert re.search(r"^halflife_decay_list\s+cpu=60:io=-1$", cell.run("qconf", "-ssconf").stdout, re.M)


def test_a_running_tasks_reports_and_its_end_count_its_usage_once():
    """The daemon counts what a running task's shepherd reports, then what its end adds
    (daemon.usage.Keeper): the same seconds never twice, a report of nothing new is no
    change."""
    from gridtools.daemon.usage import Keeper
    keeper = Keeper()
    keeper.ledger = Ledger(HalfLife.uniform(0))          # no decay: plain sums
    spec = {"id": 5, "owner": "alice"}

    def report(cpu, at):
        return keeper.task_running(spec, 1, {"cpu": cpu, "mem": 0.5, "io": 0.0, "time": at})
    assert report(3.0, 100.0) and keeper.dirty
    keeper.dirty = False
    assert not report(3.0, 110.0) and not keeper.dirty
    assert report(5.0, 120.0)
    assert keeper.ledger.usage(AccountKey.user("alice"), 120.0).cpu == pytest.approx(5.0)
    keeper.task_ended(spec, 1, {"usage": {"ru_utime": 6.0, "ru_stime": 1.0}, "end_time": 130.0}, 130.0)
    assert keeper.ledger.usage(AccountKey.user("alice"), 130.0).cpu == pytest.approx(7.0)
    assert keeper.ledger.debited == {}


def test_a_negative_half_life_counts_what_was_added_since_the_previous_pass():
    """halflife_decay_list cpu=-1: an account holds the CPU its jobs added since the
    previous scheduling pass (Grid Engine's decay constant 0); other kinds keep their
    half-life."""
    ledger = Ledger(HalfLife(-60.0, 0.0, 0.0))
    alice = AccountKey.user("alice")
    ledger.record(Sample(1, 1, "alice", None, Usage(cpu=10.0, mem=2.0), time=100.0))
    ledger.record(Sample(2, 1, "alice", None, Usage(cpu=5.0), time=100.0))
    ledger.record(Sample(3, 1, "bob", "p", Usage(cpu=7.0), time=100.0))
    assert ledger.usage(alice, 200.0) == Usage(cpu=15.0, mem=2.0)
    assert ledger.end_pass()
    assert ledger.usage(alice, 200.0) == Usage(mem=2.0)
    ledger.record(Sample(1, 1, "alice", None, Usage(cpu=11.0, mem=2.0), time=205.0))
    assert ledger.usage(alice, 206.0).cpu == pytest.approx(1.0)
    ledger.finish(Sample(1, 1, "alice", None, Usage(cpu=12.0, mem=3.0), time=210.0))
    assert ledger.usage(alice, 220.0) == Usage(cpu=2.0, mem=3.0)
    assert ledger.usage(AccountKey.user_in("bob", "p"), 220.0).cpu == 0.0     # (nothing new)
    back = Ledger.from_data(json.loads(json.dumps(ledger.to_data())))
    assert back.usage(alice, 220.0) == Usage(cpu=2.0, mem=3.0)
    ledger.end_pass()
    assert ledger.usage(alice, 240.0) == Usage(mem=3.0)
    assert ledger.usage(AccountKey.of_project("p"), 240.0).cpu == 0.0


def test_a_task_that_ended_without_a_final_sample_stops_counting_as_running():
    ledger = Ledger(HalfLife(-60.0, 0.0, 0.0))
    alice = AccountKey.user("alice")
    ledger.record(Sample(4, 2, "alice", None, Usage(cpu=9.0), time=10.0))
    assert ledger.usage(alice, 20.0).cpu == 9.0
    assert ledger.drop(4, 2) and not ledger.drop(4, 2)
    assert ledger.debited == {} and ledger.holders == {}
    ledger.end_pass()
    assert ledger.usage(alice, 20.0).cpu == 0.0

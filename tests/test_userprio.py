"""HTCondor user priorities: real priority follows usage with a half-life, effective =
real x factor, accumulated usage, condor_userprio's edits and rows, persistence."""

import pytest

from gridtools.accounting.userprio import MIN_PRIORITY, Accountant, Settings
from gridtools.formats.condor_config import Config

HOUR = 3600.0
DAY = 86400.0
T0 = 1_700_000_000.0


def config(text):
    cfg = Config({})
    cfg.read_text(text)
    return cfg


def test_real_priority_moves_toward_usage_with_the_half_life():
    acc = Accountant(Settings(halflife=HOUR))
    acc.update(T0, {"alice": 4})
    assert acc.real("alice") == 0.5                       # nothing charged yet
    acc.update(T0 + HOUR, {"alice": 4})
    assert acc.real("alice") == pytest.approx(0.5 * 0.5 + 0.5 * 4)     # 2.25
    acc.update(T0 + 2 * HOUR, {"alice": 4})
    assert acc.real("alice") == pytest.approx(2.25 * 0.5 + 0.5 * 4)    # 3.125
    acc.update(T0 + 3 * HOUR, {})                          # held 4 during the third hour
    assert acc.real("alice") == pytest.approx(3.125 * 0.5 + 2)
    acc.update(T0 + 4 * HOUR, {})                          # nothing during the fourth
    assert acc.real("alice") == pytest.approx((3.125 * 0.5 + 2) * 0.5)


def test_real_priority_never_goes_below_one_half():
    acc = Accountant(Settings(halflife=HOUR))
    acc.set_priority("bob", 1.0)
    acc.update(T0, {})
    acc.update(T0 + 10 * HOUR, {})
    assert acc.real("bob") == MIN_PRIORITY
    assert acc.real("nobody") == MIN_PRIORITY


def test_effective_priority_is_real_times_factor():
    acc = Accountant(Settings(halflife=HOUR))
    acc.set_priority("alice", 10.0)
    acc.set_priority("bob", 10.0)
    acc.set_factor("bob", 2.0)
    assert acc.effective("alice") == 10.0                  # DEFAULT_PRIO_FACTOR is 1
    assert acc.effective("bob") == 20.0
    assert acc.effective_map(["alice", "carol"]) == {"alice": 10.0, "carol": 0.5}


def test_default_factors_by_kind_of_name():
    settings = Settings.from_config(config(
        "DEFAULT_PRIO_FACTOR = 10\nNICE_USER_PRIO_FACTOR = 1e6\nGROUP_NAMES = physics\n"
        "GROUP_PRIO_FACTOR_physics = 3\nACCOUNTANT_LOCAL_DOMAIN = here.org\nREMOTE_PRIO_FACTOR = 1000\n"))
    acc = Accountant(settings)
    assert acc.factor("alice") == 10
    assert acc.factor("alice@here.org") == 10
    assert acc.factor("nice-user.alice") == 1e6
    assert acc.factor("physics.alice") == 3
    assert acc.factor("eve@elsewhere.net") == 1000
    acc.set_factor("eve@elsewhere.net", 2)                 # an explicit factor wins
    assert acc.factor("eve@elsewhere.net") == 2


def test_settings_defaults_follow_the_seed():
    s = Settings.from_config(config(""))
    assert (s.halflife, s.default_factor, s.nice_factor) == (86400.0, 1.0, 1e6)


def test_set_factor_and_priority_refuse_out_of_range_values():
    acc = Accountant()
    with pytest.raises(ValueError):
        acc.set_factor("alice", 0.5)
    # a priority under the best one is kept as given, as HTCondor's accountant keeps it,
    # and counts as the best
    acc.set_priority("alice", 0.1)
    assert acc.records["alice"].priority == 0.1 and acc.real("alice") == 0.5


def test_accumulated_usage_counts_weighted_slot_seconds():
    acc = Accountant(Settings(halflife=DAY))
    acc.update(T0, {"alice": 4})
    acc.update(T0 + 1800, {"alice": 2})
    acc.update(T0 + 3600, {})
    row = acc.rows(T0 + 3600, names={"alice"})[0]
    assert row.accumulated_hours == pytest.approx(4 * 0.5 + 2 * 0.5)     # 3 slot-hours
    assert row.begin_usage == T0
    assert row.last_usage == T0 + 3600
    assert row.in_use == 0


def test_charge_counts_a_claim_between_two_updates():
    acc = Accountant(Settings(halflife=HOUR))
    acc.update(T0, {})
    acc.charge("alice", 1800.0, T0 + 2000)                 # one slot for half of the hour
    acc.update(T0 + HOUR, {})
    assert acc.real("alice") == pytest.approx(0.5 * 0.5 + 0.5 * 0.5)
    assert acc.rows(T0 + HOUR, all_users=True)[0].accumulated_hours == pytest.approx(0.5)


def test_reset_usage_keeps_the_priority():
    acc = Accountant(Settings(halflife=HOUR))
    acc.update(T0, {"alice": 2})
    acc.update(T0 + HOUR, {"alice": 2})
    before = acc.real("alice")
    acc.reset_usage("alice", T0 + HOUR)
    row = acc.rows(T0 + HOUR, names={"alice"})[0]
    assert row.accumulated_hours == 0.0 and row.begin_usage == T0 + HOUR
    assert acc.real("alice") == before


def test_group_record_holds_what_its_members_use():
    acc = Accountant(Settings(halflife=HOUR, groups=("physics", "physics.cms")))
    acc.update(T0, {"physics.alice": 2, "physics.cms.bob": 1, "carol": 1})
    assert acc.records["physics"].in_use == 2              # alice only: its own members
    assert acc.records["physics"].hier_in_use == 3         # its priority: the cms subgroup too
    assert acc.records["physics.cms"].in_use == 1
    acc.update(T0 + HOUR, {})
    assert acc.real("physics") == pytest.approx(0.25 + 1.5)
    rows = {r.name: r for r in acc.rows(T0 + HOUR)}
    assert rows["physics"].is_group and not rows["carol"].is_group


def test_rows_list_active_users_best_first_unless_all_users():
    acc = Accountant(Settings(halflife=DAY))
    acc.update(T0, {"alice": 1, "bob": 3})
    acc.update(T0 + HOUR, {"bob": 3})
    acc.set_factor("dave", 5)                              # never used anything
    now = T0 + 2 * DAY
    acc.update(now, {"bob": 1})
    assert [r.name for r in acc.rows(now)] == ["bob"]      # alice last used two days ago
    every = acc.rows(now, all_users=True)
    assert [r.name for r in every] == sorted([r.name for r in every], key=lambda n: acc.effective(n))
    assert {r.name for r in every} == {"alice", "bob", "dave"}
    bob = every[[r.name for r in every].index("bob")]
    assert bob.effective == pytest.approx(bob.real * bob.factor)
    assert bob.since_last_usage == 0.0


def test_plain_data_round_trip():
    acc = Accountant(Settings(halflife=HOUR))
    acc.update(T0, {"alice": 2})
    acc.update(T0 + HOUR, {"alice": 1})
    acc.set_factor("bob", 4)
    again = Accountant.from_data(acc.to_data(), acc.settings)
    assert again.to_data() == acc.to_data()
    assert again.effective("alice") == acc.effective("alice")
    assert again.last_update == T0 + HOUR


@pytest.mark.parametrize("data", [None, {"version": 99}, {"version": 1, "records": []},
                                  {"version": 1, "records": {"a": {"priority": "x"}}}])
def test_bad_data_is_refused(data):
    with pytest.raises(ValueError):
        Accountant.from_data(data)

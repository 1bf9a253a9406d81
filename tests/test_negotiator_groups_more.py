"""Group quotas in the negotiator and condor_userprio, as HTCondor has them: the group
attributes PREEMPTION_REQUIREMENTS can look at, the root group last with autoregroup,
group knobs written as expressions, group records charged with their own members only
(summed up with -grouprollup), and how condor_userprio shows and orders groups."""

import pytest

from gridtools.accounting.userprio import Accountant, Settings
from gridtools.cli.condor import userprio_table
from gridtools.cli.condor.userprio import record_ad
from gridtools.errors import ConfigError
from gridtools.sched import negotiator as N
from gridtools.sched.groups import GroupsConfig

from conftest import cell_fixture
from test_negotiator import NOW, Pool, config, jobs, negotiate, split

HOUR = 3600.0


# ---------------------------------------------------------------- the negotiator's attributes

REGROUP = ("GROUP_NAMES = group_a, group_b\nGROUP_QUOTA_group_a = 2\nGROUP_QUOTA_group_b = 3\n"
           "GROUP_AUTOREGROUP_group_a = true\n")


def test_the_autoregroup_round_tells_its_requests_so_policy_can_spare_other_groups():
    """group_b holds its quota; alice, over group_a's quota, asks again in the root group's
    autoregroup round, where SubmitterAutoregroup is true and her group is not negotiating."""
    pool = Pool(5)
    pool.run("h0", "group_a.alice", job="1.0")
    pool.run("h1", "group_a.alice", job="2.0")
    for n, host in enumerate(("h2", "h3", "h4"), 3):
        pool.run(host, "group_b.bob", job=f"{n}.0")
    idle = jobs("alice", 5, group="group_a")
    prios = {"group_a.alice": 0.5, "group_b.bob": 50.0}
    spared = negotiate(idle, pool.slots(), prios, REGROUP + "PREEMPTION_REQUIREMENTS = SubmitterAutoregroup =!= True\n")
    assert spared.preemptions == []
    assert set(spared.rejected.values()) == {N.Why.PREEMPTION_REQUIREMENTS}
    # (the policy that tells the rounds apart: the regroup round is the root group's)
    regroup = negotiate(idle, pool.slots(), prios, REGROUP +
                        'PREEMPTION_REQUIREMENTS = SubmitterNegotiatingGroup == "<none>" && '
                        'SubmitterGroup == "group_a" && SubmitterGroupQuota == 2 && '
                        'RemoteGroup == "group_b" && RemoteGroupQuota == 3\n')
    assert sorted(p.claim.job for p in regroup.preemptions) == ["3.0", "4.0", "5.0"]
    assert split(regroup) == {"group_a.alice": 3}


def test_users_of_the_root_group_are_in_the_group_none():
    pool = Pool(5)
    pool.run("h0", "carol", job="1.0")
    text = ("GROUP_NAMES = group_a\nGROUP_QUOTA_group_a = 2\n"
            'PREEMPTION_REQUIREMENTS = SubmitterGroup == "<none>" && RemoteGroup == "<none>" && '
            'SubmitterGroupQuota == 3 && RemoteGroupQuota == 3 && SubmitterAutoregroup == false && '
            'SubmitterNegotiatingGroup == "<none>"\n')
    for host in ("h1", "h2", "h3", "h4"):
        pool.run(host, "group_a.bob", job=f"{host}.0")
    out = negotiate(jobs("dave", 1), pool.slots(), {"dave": 0.5, "carol": 50.0}, text)
    assert [(p.slot, p.claim.user) for p in out.preemptions] == [("slot1@h0", "carol")]


def test_with_autoregroup_the_root_group_negotiates_last_whatever_its_sort_key():
    text = REGROUP + "GROUP_SORT_EXPR = 0\n"
    idle = jobs("alice", 10, group="group_a") + jobs("bob", 10, group="group_b")
    out = negotiate(idle, Pool(5).slots(), {}, text)
    assert split(out) == {"group_a.alice": 2, "group_b.bob": 3}
    order = [g.name for g in sorted(out.groups, key=lambda g: g.sort_key)]
    assert order[0] == "<none>"                     # (the sort keys tie: 0)


# ---------------------------------------------------------------- the group knobs

def test_group_quotas_may_be_expressions():
    text = ("TOTAL = 6\nGROUP_NAMES = group_a, group_b\nGROUP_QUOTA_group_a = $(TOTAL)/2\n"
            "GROUP_QUOTA_group_b = (1+2)\n")
    idle = jobs("alice", 10, group="group_a") + jobs("bob", 10, group="group_b") + jobs("carol", 10)
    out = negotiate(idle, Pool(8).slots(), {}, text)
    assert split(out) == {"group_a.alice": 3, "group_b.bob": 3, "carol": 2}
    specs = GroupsConfig.from_config(config(
        "GROUP_NAMES = g, h\nGROUP_QUOTA_DYNAMIC_g = 1.0/4\nGROUP_QUOTA_h = 2\n"
        "GROUP_ACCEPT_SURPLUS_g = (1 == 1)\nGROUP_AUTOREGROUP_h = 2 > 1\n"
        "GROUP_QUOTA_MAX_ALLOCATION_ROUNDS = 2+3\n"))
    g, h = specs.groups
    assert (g.quota, g.static, g.accept_surplus, h.autoregroup, specs.max_rounds) == (0.25, False, True, True, 5)


@pytest.mark.parametrize("line, words", [
    ("GROUP_QUOTA_g = abc", "Invalid result (not a number) for GROUP_QUOTA_g (abc)"),
    ("GROUP_QUOTA_g = 1 +", "Invalid expression for GROUP_QUOTA_g (1 +)"),
    ("GROUP_QUOTA_g = -2", "GROUP_QUOTA_g in the condor configuration is too low (-2)"),
    ("GROUP_QUOTA_DYNAMIC_g = 1.5", "GROUP_QUOTA_DYNAMIC_g in the condor configuration is too high (1.5)"),
    ("GROUP_ACCEPT_SURPLUS_g = maybe", "GROUP_ACCEPT_SURPLUS_g"),
])
def test_a_group_knob_that_cannot_be_read_is_refused_in_htcondors_words(line, words):
    with pytest.raises(ConfigError) as err:
        GroupsConfig.from_config(config("GROUP_NAMES = g\n" + line + "\n"))
    assert words in str(err.value)


# ---------------------------------------------------------------- group records

GROUPED = Settings(halflife=HOUR, groups=("physics", "physics.cms"))


def test_a_group_record_holds_its_own_members_and_rollup_adds_its_subgroups():
    acc = Accountant(GROUPED)
    acc.update(NOW, {"physics.alice": 2, "physics.cms.bob": 1, "carol": 1})
    acc.update(NOW + HOUR, {"physics.alice": 2, "physics.cms.bob": 1, "carol": 1})
    rows = {r.name: r for r in acc.rows(NOW + HOUR)}
    assert (rows["physics"].in_use, rows["physics"].accumulated_hours) == (2, 2.0)
    assert (rows["physics.cms"].in_use, rows["physics.cms"].accumulated_hours) == (1, 1.0)
    assert rows["physics"].real == pytest.approx(0.25 + 1.5)     # (its priority: the whole subtree)
    rolled = {r.name: r for r in acc.rows(NOW + HOUR, rollup=True)}
    assert (rolled["physics"].in_use, rolled["physics"].accumulated_hours) == (3, 3.0)
    assert (rolled["<none>"].in_use, rolled["<none>"].accumulated_hours) == (4, 4.0)
    assert rolled["physics"].effective == 0.0 and rolled["physics.alice"] == rows["physics.alice"]


def test_the_accounting_group_of_a_group_is_its_parent():
    from gridtools.cli.condor.userprio import _group_of_record
    acc = Accountant(GROUPED)
    acc.update(NOW, {"physics.alice": 2, "physics.cms.bob": 1, "carol": 1})
    rows = {r.name: r for r in acc.rows(NOW)}
    found = {name: record_ad(row, "x.org", _group_of_record(acc.settings, row)).eval("AccountingGroup")
             for name, row in rows.items()}
    assert found == {"physics": "<none>", "physics.cms": "physics", "<none>": "<none>",
                     "physics.alice": "physics", "physics.cms.bob": "physics.cms", "carol": "<none>"}


# ---------------------------------------------------------------- condor_userprio's table

def _table(shown, quotas, hier=None, group_order=False, rollup=False):
    acc = Accountant(Settings(halflife=HOUR, groups=("group_a", "group_a.sub", "group_b")))
    use = {"group_a.alice": 2, "group_a.sub.bob": 1, "group_b.carol": 1, "dave": 1}
    acc.update(NOW, use)
    acc.update(NOW + HOUR, use)
    view = userprio_table.View(hier=hier, group_order=group_order, quotas=quotas)
    return userprio_table.render(acc.rows(NOW + HOUR, rollup=rollup), acc, "x.org", NOW + HOUR, shown, view)


def _quotas(keys, policy="no"):
    return {g: {"ConfigQuota": 1.0, "EffectiveQuota": 1.0, "SubtreeQuota": 1.0, "GroupSortKey": key,
                "SurplusPolicy": policy, "Requested": 0.0} for g, key in keys.items()}


def _groups_listed(text):
    return [ln.split()[0] for ln in text.splitlines()[4:-2] if not ln.startswith(" ")]


def test_hierarchical_groups_are_listed_in_negotiation_order():
    keys = {"group_a": 4.0, "group_a.sub": 1.0, "group_b": 0.0, "<none>": 3.4e38}
    text = _table(("priority",), _quotas(keys, "regroup"), hier=True)
    assert _groups_listed(text) == ["group_b", "group_a.sub", "group_a", "<none>"]
    # (<none> last whatever its key, when the groups regroup)
    keys["<none>"] = -1.0
    assert _groups_listed(_table(("priority",), _quotas(keys, "regroup"), hier=True))[-1] == "<none>"


def test_group_rows_show_their_real_priority():
    text = _table(("priority",), _quotas({"group_a": 1.0, "group_a.sub": 2.0, "group_b": 3.0, "<none>": 3.4e38}),
                  hier=True)
    line = next(ln for ln in text.splitlines() if ln.startswith("group_b "))
    # Effective Priority left blank for a group; its Real Priority and its Factor shown
    assert line.split() == ["group_b", "0.75", "1.00"]


def test_grouporder_shows_the_none_group_when_a_user_is_in_a_group():
    text = _table(("most",), _quotas({"group_a": 1.0, "group_a.sub": 2.0, "group_b": 3.0, "<none>": 3.4e38}),
                  hier=False, group_order=True)
    names = [ln.split()[0] for ln in text.splitlines()[4:-2]]
    assert names[:4] == ["<none>", "group_a", "group_b", "group_a.sub"]


def test_grouprollup_sums_subgroups_into_the_parent_row():
    quotas = _quotas({"group_a": 1.0, "group_a.sub": 2.0, "group_b": 3.0, "<none>": 3.4e38})
    own = _table(("usage",), quotas, hier=True)
    rolled = _table(("usage",), quotas, hier=True, rollup=True)
    assert next(ln for ln in own.splitlines() if ln.startswith("group_a ")).split()[1] == "2"
    assert next(ln for ln in rolled.splitlines() if ln.startswith("group_a ")).split()[1] == "3"


# ---------------------------------------------------------------- condor_userprio's edits

cell = cell_fixture(condor_config="UID_DOMAIN = example.org\n")


def test_setprio_reads_its_value_as_atof_does(cell):
    proc = cell.run("condor_userprio", "-setprio", "gtbob@example.org", "abc")
    assert (proc.returncode, proc.stdout, proc.stderr) == \
        (0, "The priority of gtbob@example.org was set to 0.000000\n", "")
    proc = cell.run("condor_userprio", "-setprio", "gtbob@example.org", "7.5xyz")
    assert proc.stdout == "The priority of gtbob@example.org was set to 7.500000\n"
    proc = cell.run("condor_userprio", "-setfactor", "gtbob@example.org", "abc")
    assert (proc.returncode, proc.stderr) == (1, "Priority factors must be greater than or equal to 1.\n")

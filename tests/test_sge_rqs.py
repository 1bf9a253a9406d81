"""Resource quota sets: rule grammar, rendering, validation and evaluation.

The worked example is the admin guide's ("All users together should never
take more than 20 slots; all users at most 5 slots on all Linux hosts;
every user 1 slot per Linux host except MyUser with 2, other hosts 0"),
checked against the running jobs of its qstat listing.
"""

import pytest

from gridtools.errors import ConfigError
from gridtools.formats.sge import complex as complex_
from gridtools.formats.sge import objects, rqs

GUIDE_SETS = """\
{
 name maxujobs
 limit users * to slots=20
}

{
 name max_linux
 limit users * hosts @linux to slots=5
}

{
 name max_per_host
 limit users MyUser hosts {@linux} to slots=2
 limit users {*} hosts {@linux} to slots=1
 limit users * hosts * to slots=0
}
"""

HOSTGROUPS = {"@linux": ("host1", "host2")}
# jobs of the guide's qstat listing: (user, host), one slot each
RUNNING = [("MyUser", "host1"), ("MyUser", "host1"), ("MyUser", "host2"), ("MyUser", "host2"),
           ("user1", "host2")]


def _label(rule_set, number):
    name = rule_set["limit"][number - 1].get("name")
    return f"{rule_set['name']}/{name if name is not None else number}"


def _usage(sets, jobs):
    usage = {}
    for user, host in jobs:
        for rule_set in sets:
            found = rqs.matching_rule(rule_set, user, queue="all.q", host=host, hostgroups=HOSTGROUPS)
            if found:
                number, rule = found
                key = (_label(rule_set, number), rqs.usage_key(rule, user, None, None, "all.q", host))
                usage[key] = usage.get(key, 0) + 1
    return usage


def _allowed(sets, usage, user, host):
    """Would one more slot for ``user`` on ``host`` stay within every set?"""
    for rule_set in sets:
        found = rqs.matching_rule(rule_set, user, queue="all.q", host=host, hostgroups=HOSTGROUPS)
        if found:
            number, rule = found
            key = (_label(rule_set, number), rqs.usage_key(rule, user, None, None, "all.q", host))
            if usage.get(key, 0) + 1 > int(rule["to"]["slots"]):
                return False
    return True


def test_guide_rule_sets_parse_and_render():
    sets = rqs.parse_list(GUIDE_SETS)
    assert [s["name"] for s in sets] == ["maxujobs", "max_linux", "max_per_host"]
    assert sets[0]["enabled"] is False and sets[0]["description"] is None
    rule = sets[2]["limit"][0]
    assert rule["users"] == rqs.Scope(["MyUser"]) and rule["hosts"] == rqs.Scope(["@linux"], expand=True)
    assert rule["to"] == {"slots": "2"} and rule["projects"] is None
    text = rqs.render_list(sets)
    assert text.startswith("{\n   name         maxujobs\n   description  NONE\n   enabled      FALSE\n"
                           "   limit        users * to slots=20\n}\n")
    assert "   limit        users {*} hosts {@linux} to slots=1\n" in text
    assert rqs.render_list(rqs.parse_list(text)) == text
    for rule_set in sets:
        objects.validate("rqs", rule_set, {"complex": {"slots"}})


def test_guide_usage_stays_within_the_limits():
    sets = rqs.parse_list(GUIDE_SETS)
    usage = _usage(sets, RUNNING)
    assert usage[("maxujobs/1", ("", "", "", "", ""))] == 5
    assert usage[("max_linux/1", ("", "", "", "", ""))] == 5
    assert usage[("max_per_host/1", ("", "", "", "", "host1"))] == 2
    assert usage[("max_per_host/1", ("", "", "", "", "host2"))] == 2
    assert usage[("max_per_host/2", ("user1", "", "", "", "host2"))] == 1


def test_guide_limits_block_further_slots():
    sets = rqs.parse_list(GUIDE_SETS)
    usage = _usage(sets, RUNNING)
    assert not _allowed(sets, usage, "user1", "host1")          # max_linux: 5 of 5 used
    assert not _allowed(sets, usage, "MyUser", "host1")
    assert not _allowed(sets, usage, "user2", "host3")          # max_per_host/3: 0 slots elsewhere
    fewer = _usage(sets, RUNNING[:3])
    assert _allowed(sets, fewer, "user1", "host1")
    assert _allowed(sets, fewer, "MyUser", "host2")              # MyUser may have 2 per host
    assert not _allowed(sets, fewer, "MyUser", "host1")          # already 2 on host1


def test_rule_matching_and_labels():
    per_host = rqs.parse_list(GUIDE_SETS)[2]
    assert rqs.matching_rule(per_host, "MyUser", host="host1", hostgroups=HOSTGROUPS)[0] == 1
    assert rqs.matching_rule(per_host, "user1", host="host2", hostgroups=HOSTGROUPS)[0] == 2
    number, rule = rqs.matching_rule(per_host, "user1", host="host9", hostgroups=HOSTGROUPS)
    assert number == 3 and rule["to"]["slots"] == "0"
    assert rqs.matching_rule(rqs.parse_list(GUIDE_SETS)[1], "MyUser", host="host3",
                             hostgroups=HOSTGROUPS) is None


def test_negated_queues_and_per_project_scopes():
    text = """{
      name         30_for_each_project_in_Q001
      description  "not more than 30 per project of F001 in Q001"
      enabled      TRUE
      limit queues !Q001 to F001=0
      limit projects {*} queues Q001 to F001=30
   }"""
    quota = objects.parse("rqs", text)
    assert quota["description"] == "not more than 30 per project of F001 in Q001" and quota["enabled"]
    assert rqs.matching_rule(quota, "u", queue="Q002")[0] == 1
    number, rule = rqs.matching_rule(quota, "u", project="P001", queue="Q001")
    assert number == 2 and rqs.usage_key(rule, "u", "P001", None, "Q001", "h") == ("", "P001", "", "", "")
    assert rqs.matching_rule(quota, "u", project=None, queue="Q001") is None
    assert '   description  "not more than 30 per project of F001 in Q001"\n' in objects.render("rqs", quota)


def test_project_and_pe_scopes_with_no_request():
    only_none = rqs.parse_rule("projects !* pes !* to slots=1")
    assert rqs.rule_matches(only_none, "u", project=None, pe=None)
    assert not rqs.rule_matches(only_none, "u", project="P1")
    assert not rqs.rule_matches(only_none, "u", pe="mpi")
    any_pe = rqs.parse_rule("pes * to slots=1")
    assert rqs.rule_matches(any_pe, "u", pe="smp") and not rqs.rule_matches(any_pe, "u")
    wild = rqs.parse_rule("pes mpi*,!mpich to slots=8")
    assert rqs.rule_matches(wild, "u", pe="mpi-2") and not rqs.rule_matches(wild, "u", pe="mpich")


def test_user_lists_and_host_groups_in_scopes():
    rule = rqs.parse_rule("users @staff,!bob hosts @gpu* to slots=2")
    usersets = {"staff": {"name": "staff", "entries": ["alice", "bob", "@wheel"]}}
    groups = {"@gpus": ("gpu1", "gpu2")}
    assert rqs.rule_matches(rule, "alice", host="GPU1", usersets=usersets, hostgroups=groups)
    assert not rqs.rule_matches(rule, "bob", host="gpu1", usersets=usersets, hostgroups=groups)
    assert rqs.rule_matches(rule, "dave", host="gpu2", usersets=usersets, hostgroups=groups,
                            user_groups=("wheel",))
    assert not rqs.rule_matches(rule, "carol", host="gpu2", usersets=usersets, hostgroups=groups)
    assert not rqs.rule_matches(rule, "alice", host="cpu1", usersets=usersets, hostgroups=groups)


def test_dynamic_limits():
    quota = objects.parse("rqs", "{\n name dyn\n enabled true\n limit hosts {@linux_hosts} to slots=$num_proc*5\n}\n")
    objects.validate("rqs", quota, {"complex": {"slots", "num_proc"}})
    value = quota["limit"][0]["to"]["slots"]
    assert rqs.is_dynamic(value)
    assert rqs.dynamic_terms(value) == [(5.0, "num_proc")]
    assert rqs.dynamic_terms("2*$num_proc+$m_core-1.5e-1") == [(2.0, "num_proc"), (1.0, "m_core"), (-0.15, None)]
    collective = objects.parse("rqs", "{\n name dyn\n limit hosts @linux to slots=$num_proc*5\n}\n")
    with pytest.raises(ConfigError, match="^dynamic limits are only supported for per host rules$"):
        objects.validate("rqs", collective)
    unknown = objects.parse("rqs", "{\n name dyn\n limit hosts {*} to slots=$nosuch*5\n}\n")
    with pytest.raises(ConfigError, match='^"dynamical_limit" references not existing complex attribute "nosuch"$'):
        objects.validate("rqs", unknown, {"complex": {"slots", "num_proc"}})
    broken = objects.parse("rqs", "{\n name dyn\n limit hosts {*} to slots=$num_proc**5\n}\n")
    with pytest.raises(ConfigError, match="invalid dynamic limit"):
        objects.validate("rqs", broken)


def test_filters_render_in_canonical_order_with_exclusions_last():
    rule = rqs.parse_rule("hosts !node1, node* users {user1, user2} name r1 to h_vmem=2g,slots=4")
    assert rqs.render_rule(rule) == "name r1 users {user1,user2} hosts node*,!node1 to h_vmem=2g,slots=4"


@pytest.mark.parametrize("text,message", [
    ("{\nname a\nlimit users x\n}\n", 'line 3: invalid value "users x" for attribute "limit"'),
    ("{\nname a\nlimit users x users y to slots=1\n}\n", 'filter "users" is given twice'),
    ("{\nname a\nlimit to slots=1,slots=2\n}\n", 'limit "slots" is given twice'),
    ("{\nlimit to slots=1\n}\n", 'line 1: missing attribute "name"'),
    ("{\nname a\n}\n", 'missing attribute "limit"'),
    ("{\nname a\ncolour red\nlimit to slots=1\n}\n", 'line 3: unknown attribute "colour"'),
    ("{\nname a\nenabled perhaps\nlimit to slots=1\n}\n", 'line 3: invalid value "perhaps" for attribute "enabled"'),
    ("{\nname a\nlimit to slots=1\n", 'missing "}"'),
    ("name a\n", 'line 1: expected "{"'),
])
def test_malformed_sets_are_refused(text, message):
    with pytest.raises(ConfigError, match=message.replace("{", r"\{").replace("}", r"\}")):
        objects.parse("rqs", text)


def test_parse_of_several_sets_needs_parse_list():
    with pytest.raises(ConfigError, match="expected one resource quota set, found 3"):
        objects.parse("rqs", GUIDE_SETS)


def test_limits_are_checked_against_the_complex():
    quota = objects.parse("rqs", "{\nname a\nlimit users * to h_vmem=lots\n}\n")
    with pytest.raises(ConfigError, match='invalid value "lots" for limit "h_vmem"'):
        objects.validate("rqs", quota, {"complex": complex_.template()})
    quota = objects.parse("rqs", "{\nname a\nlimit users * to licenses=4\n}\n")
    with pytest.raises(ConfigError, match='^"resource_quota" references not existing complex attribute "licenses"$'):
        objects.validate("rqs", quota, {"complex": complex_.template()})
    objects.validate("rqs", objects.parse("rqs", "{\nname a\nlimit users * to h_vmem=4G\n}\n"),
                     {"complex": complex_.template()})
    twice = objects.parse("rqs", "{\nname a\nlimit name r to slots=1\nlimit name r to slots=2\n}\n")
    with pytest.raises(ConfigError, match='rule name "r" is used twice'):
        objects.validate("rqs", twice)


def test_long_rules_break_like_qconf():
    users = ",".join(f"user{i:02d}" for i in range(20))
    quota = objects.parse("rqs", f"{{\nname long\nlimit users {{{users}}} queues all.q to slots=10\n}}\n")
    text = objects.render("rqs", quota)
    limit_lines = text.splitlines()[4:-1]
    assert len(limit_lines) > 1 and all(len(line) <= 80 for line in limit_lines)
    assert limit_lines[0].endswith(", \\") and limit_lines[1].startswith("   user")
    assert objects.render("rqs", objects.parse("rqs", text)) == text


def test_description_quoting():
    quota = rqs.template("q")
    assert "   description  NONE\n" in objects.render("rqs", quota)
    quota["description"] = "single"
    assert "   description  single\n" in objects.render("rqs", quota)
    quota["description"] = "two words"
    assert '   description  "two words"\n' in objects.render("rqs", quota)

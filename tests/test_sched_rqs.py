"""Resource quota sets in the pass (sge_resource_quota(5)) and qquota's rows.

The worked example is the admin guide's three sets: all users together at most
20 slots; at most 5 slots on the Linux hosts; per Linux host 1 slot per user,
2 for MyUser, and 0 on every other host. The guide's sets carry no ``enabled``
line (its default is FALSE); here they are enabled.
"""

from gridtools.cli.sge import qquota
from gridtools.sched import rqs
from schedkit import reasons, run, snapshot

GUIDE = """\
{
 name maxujobs
 enabled true
 limit users * to slots=20
}
"""
LINUX = "{\n name max_linux\n enabled true\n limit users * hosts @linux to slots=5\n}\n"
PER_HOST = """\
{
 name max_per_host
 enabled true
 limit users MyUser hosts {@linux} to slots=2
 limit users {*} hosts {@linux} to slots=1
 limit users * hosts * to slots=0
}
"""


def pe(name, slots, rule="$pe_slots"):
    return (f"pe_name {name}\nslots {slots}\nuser_lists NONE\nxuser_lists NONE\nstart_proc_args NONE\n"
            f"stop_proc_args NONE\nallocation_rule {rule}\ncontrol_slaves FALSE\n"
            "job_is_first_task TRUE\nurgency_slots min\naccounting_summary FALSE\nqsort_args NONE\n")


def rqs_set(name, *limits, enabled="true"):
    return {f"rqs/{name}": f"{{\n name {name}\n enabled {enabled}\n"
                           + "".join(f" limit {lim}\n" for lim in limits) + "}\n"}


def guide(jobs=(), running=()):
    """host1 and host2 are @linux, host3 is not; 4 slots each. host1 starts a little
    loaded (0.1), so with 0.25 of load adjustment per start the guide's placement follows."""
    return {"hosts": ["host1", "host2", "host3"], "slots": 4,
            "load": {"host1": {"np_load_avg": 0.1}},
            "objects": {"rqs/maxujobs": GUIDE, "rqs/max_linux": LINUX, "rqs/max_per_host": PER_HOST,
                        "hostgroups/@linux": "group_name @linux\nhostlist host1 host2\n"},
            "jobs": list(jobs), "running": list(running)}


GUIDE_JOBS = [{"id": 26, "owner": "MyUser"}, {"id": 27, "owner": "MyUser"}, {"id": 28, "owner": "user1"},
              {"id": 29, "owner": "MyUser"}, {"id": 30, "owner": "MyUser"}, {"id": 31, "owner": "MyUser"},
              {"id": 32, "owner": "user1"}, {"id": 33, "owner": "MyUser"}]


def test_the_guides_three_sets_allow_five_of_eight_jobs():
    """The guide's qstat: 26 and 30 on host2, 27 and 29 on host1 (MyUser), 28 on host2
    (user1). Then max_linux is full (5/5) and host3 allows 0."""
    decisions, started = run(guide(GUIDE_JOBS))
    assert started == ["26.1 all.q@host2=1", "27.1 all.q@host1=1", "28.1 all.q@host2=1",
                       "29.1 all.q@host1=1", "30.1 all.q@host2=1"]
    assert reasons(decisions, 31, "MyUser") == [
        'cannot run because it exceeds limit "/////" in rule "max_per_host/3"',
        'cannot run because it exceeds limit "/////" in rule "max_linux/1"']
    assert reasons(decisions, 32, "user1") == reasons(decisions, 31, "MyUser")


RUNNING = [{"job": 26, "owner": "MyUser", "granted": "all.q@host2=1"},
           {"job": 27, "owner": "MyUser", "granted": "all.q@host1=1"},
           {"job": 28, "owner": "user1", "granted": "all.q@host2=1"},
           {"job": 29, "owner": "MyUser", "granted": "all.q@host1=1"},
           {"job": 30, "owner": "MyUser", "granted": "all.q@host2=1"}]


def _table(rows):
    return sorted((r.rule, qquota.limit_text(r), qquota.filter_text(r)) for r in rows)


def test_qquota_tables_of_the_guide():
    """The guide's qquota tables (rows sorted: the guide lists host1 and host2 in either
    order). For user1 the rule that applies is max_per_host/2 (1 slot per Linux host), so
    its row is slots=1/1; the guide prints max_per_host/1 with 1/2 there. A plain ``users *``
    is left out of the filter column, as the guide shows it."""
    snap = snapshot(guide(running=RUNNING))
    assert _table(rqs.quota_rows(snap, users=["MyUser"])) == [
        ("max_linux/1", "slots=5/5", "hosts @linux"),
        ("max_per_host/1", "slots=2/2", "users MyUser hosts host1"),
        ("max_per_host/1", "slots=2/2", "users MyUser hosts host2"),
        ("maxujobs/1", "slots=5/20", "-")]
    assert _table(rqs.quota_rows(snap, users=["MyUser"], hosts=["host2"])) == [
        ("max_linux/1", "slots=5/5", "hosts @linux"),
        ("max_per_host/1", "slots=2/2", "users MyUser hosts host2"),
        ("maxujobs/1", "slots=5/20", "-")]
    assert _table(rqs.quota_rows(snap, users=["user1"])) == [
        ("max_linux/1", "slots=5/5", "hosts @linux"),
        ("max_per_host/2", "slots=1/1", "users user1 hosts host2"),
        ("maxujobs/1", "slots=5/20", "-")]
    assert _table(rqs.quota_rows(snap, users=["*"])) == [
        ("max_linux/1", "slots=5/5", "hosts @linux"),
        ("max_per_host/1", "slots=2/2", "users MyUser hosts host1"),
        ("max_per_host/1", "slots=2/2", "users MyUser hosts host2"),
        ("max_per_host/2", "slots=1/1", "users user1 hosts host2"),
        ("maxujobs/1", "slots=5/20", "-")]
    rows = rqs.quota_rows(snap, users=["*"])
    assert [r.rule for r in rows][:2] == ["maxujobs/1", "max_linux/1"]      # the sets' order


def test_running_tasks_count_against_the_limits():
    """With the guide's five tasks running, nothing more may start."""
    decisions, started = run(guide([{"id": 40, "owner": "MyUser"}, {"id": 41, "owner": "carol"}], RUNNING))
    assert started == []
    assert 'cannot run because it exceeds limit "/////" in rule "max_linux/1"' in reasons(decisions, 41, "carol")


def test_expanded_users_count_each_user_separately():
    """users {*} to slots=2: alice gets 2, bob gets 2, alice's third waits."""
    sc = {"hosts": ["h1"], "slots": 8, "objects": rqs_set("per_user", "users {*} to slots=2"),
          "jobs": [{"id": 1}, {"id": 2}, {"id": 3}, {"id": 4, "owner": "bob"}, {"id": 5, "owner": "bob"}]}
    decisions, started = run(sc)
    assert [s.split()[0] for s in started] == ["1.1", "2.1", "4.1", "5.1"]
    assert reasons(decisions, 3) == ['cannot run because it exceeds limit "alice/////" in rule "per_user/1"']


def test_excluded_and_listed_users():
    """users !bob to slots=1 counts everybody but bob together; users @staff (alice is in
    staff) to slots=1 in a second set."""
    staff = "name staff\ntype ACL\nfshare 0\noticket 0\nentries alice\n"
    sc = {"hosts": ["h1"], "slots": 8,
          "objects": {**rqs_set("not_bob", "users !bob to slots=1"), **rqs_set("staff", "users @staff to slots=1"),
                      "usersets/staff": staff},
          "jobs": [{"id": 1, "owner": "carol"}, {"id": 2}, {"id": 3, "owner": "bob"}, {"id": 4, "owner": "bob"}]}
    decisions, started = run(sc)
    assert [s.split()[0] for s in started] == ["1.1", "3.1", "4.1"]
    assert reasons(decisions, 2) == ['cannot run because it exceeds limit "/////" in rule "not_bob/1"']


def test_projects_pes_and_queues_filters():
    """projects {*} to slots=1: one job per project, jobs without a project unlimited;
    pes mpi to slots=2 bounds the mpi slots; queues big.q to slots=1."""
    sc = {"hosts": ["h1"], "slots": 8, "objects": {**rqs_set("per_project", "projects {*} to slots=1"),
                                                   "projects/p1": "name p1\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n",
                                                   "projects/p2": "name p2\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n"},
          "jobs": [{"id": 1, "qsub": "-P p1"}, {"id": 2, "qsub": "-P p1"}, {"id": 3, "qsub": "-P p2"},
                   {"id": 4}, {"id": 5}]}
    decisions, started = run(sc)
    assert [s.split()[0] for s in started] == ["1.1", "3.1", "4.1", "5.1"]
    assert reasons(decisions, 2) == ['cannot run because it exceeds limit "/p1////" in rule "per_project/1"']
    sc = {"hosts": ["h1"], "slots": 8, "queue": {"pe_list": "mpi smp"},
          "objects": {**rqs_set("mpi_cap", "pes mpi to slots=2"), "pe/mpi": pe("mpi", 16), "pe/smp": pe("smp", 16)},
          "jobs": [{"id": 1, "qsub": "-pe mpi 2"}, {"id": 2, "qsub": "-pe mpi 1"}, {"id": 3, "qsub": "-pe smp 4"}]}
    decisions, started = run(sc)
    assert sorted(started) == ["1.1 all.q@h1=2", "3.1 all.q@h1=4"]     # 3 first: more urgent
    assert 'cannot run because it exceeds limit "/////" in rule "mpi_cap/1"' in reasons(decisions, 2)
    sc = {"hosts": ["h1"], "slots": 4, "queues": {"big.q": {"seq_no": 0}}, "queue": {"seq_no": 5},
          "sched": {"queue_sort_method": "seqno"}, "objects": rqs_set("big", "queues big.q to slots=1"),
          "jobs": [{"id": 1}, {"id": 2}]}
    assert run(sc)[1] == ["1.1 big.q@h1=1", "2.1 all.q@h1=1"]


def test_dynamic_limits_follow_each_hosts_values():
    """hosts {*} to slots=$num_proc*2: h1 has 1 processor (2 slots), h2 has 2 (4 slots)."""
    sc = {"hosts": ["h1", "h2"], "slots": 8, "load": {"h1": {"num_proc": 1}, "h2": {"num_proc": 2}},
          "objects": rqs_set("per_cpu", "hosts {*} to slots=$num_proc*2"),
          "jobs": [{"id": 1, "qsub": "-t 1-8", "tasks": list(range(1, 9))}]}
    decisions, started = run(sc)
    hosts = [s.split()[1].split("=")[0] for s in started]
    assert (hosts.count("all.q@h1"), hosts.count("all.q@h2")) == (2, 4)
    assert 'cannot run because it exceeds limit "////h1/" in rule "per_cpu/1"' in reasons(decisions, 1)


def test_disabled_sets_are_ignored_and_every_enabled_set_must_fit():
    off = rqs_set("off", "to slots=0", enabled="false")
    sc = {"hosts": ["h1"], "slots": 4, "objects": off, "jobs": [{"id": 1}]}
    assert run(sc)[1] == ["1.1 all.q@h1=1"]
    both = {**rqs_set("a", "users * to slots=3"), **rqs_set("b", "users {*} to slots=1")}
    sc = {"hosts": ["h1"], "slots": 4, "objects": both, "jobs": [{"id": 1}, {"id": 2}, {"id": 3, "owner": "bob"}]}
    decisions, started = run(sc)
    assert [s.split()[0] for s in started] == ["1.1", "3.1"]
    assert reasons(decisions, 2) == ['cannot run because it exceeds limit "alice/////" in rule "b/1"']


def test_the_first_matching_rule_of_a_set_applies():
    """alice matches the first rule (3 slots) and never the second (1 slot)."""
    sc = {"hosts": ["h1"], "slots": 8, "objects": rqs_set("s", "users alice to slots=3", "users * to slots=1"),
          "jobs": [{"id": i} for i in (1, 2, 3, 4)] + [{"id": 5, "owner": "bob"}, {"id": 6, "owner": "bob"}]}
    decisions, started = run(sc)
    assert [s.split()[0] for s in started] == ["1.1", "2.1", "3.1", "5.1"]


def test_consumable_and_fixed_limits():
    """users {*} to mem_c=2G counts a consumable (implicit defaults too); a limit on a
    value nothing consumes (h_vmem=2G) only bounds what a job may ask."""
    sc = {"hosts": ["h1"], "slots": 8, "complex": ["mem_c mc MEMORY <= YES YES 512M 0"],
          "exechost": {"h1": {"complex_values": "mem_c=64G"}},
          "objects": rqs_set("mem", "users {*} to mem_c=2G"),
          "jobs": [{"id": 1, "qsub": "-l mem_c=1G"}, {"id": 2}, {"id": 3}, {"id": 4}]}
    decisions, started = run(sc)
    assert [s.split()[0] for s in started] == ["1.1", "2.1", "3.1"]
    snap = snapshot({**sc, "jobs": [], "running": [{"job": 9, "granted": "all.q@h1=1", "l": "mem_c=1536M"}]})
    assert [qquota.limit_text(r) for r in rqs.quota_rows(snap, users=["alice"])] == ["mem_c=1.500G/2.000G"]
    sc = {"hosts": ["h1"], "objects": rqs_set("vmem", "users * to h_vmem=2G"),
          "jobs": [{"id": 1, "qsub": "-l h_vmem=4G"}, {"id": 2, "qsub": "-l h_vmem=1G"}, {"id": 3}]}
    decisions, started = run(sc)
    assert [s.split()[0] for s in started] == ["2.1", "3.1"]
    assert reasons(decisions, 1) == ['cannot run because it exceeds limit "/////" in rule "vmem/1"']
    assert [(qquota.limit_text(r), qquota.filter_text(r)) for r in rqs.quota_rows(snapshot(sc))] == [
        ("h_vmem=2G", "-")]


def test_parallel_jobs_count_all_their_slots():
    """users {*} to slots=3 and a $round_robin job asking 2-6 slots gets 3."""
    sc = {"hosts": ["h1", "h2"], "slots": 4, "queue": {"pe_list": "mpi"},
          "objects": {**rqs_set("three", "users {*} to slots=3"), "pe/mpi": pe("mpi", 16, "$round_robin")},
          "jobs": [{"id": 1, "qsub": "-pe mpi 2-6"}, {"id": 2}]}
    decisions, started = run(sc)
    assert started == ["1.1 all.q@h1=2,all.q@h2=1"]
    assert reasons(decisions, 2) == ['cannot run because it exceeds limit "alice/////" in rule "three/1"']


def _one_set(*limits, table_extra=()):
    from gridtools.formats.sge import objects
    from gridtools.sched import inputs
    from schedkit import config
    conf = config({"complex": list(table_extra)})
    obj = objects.parse("rqs", "{\n name s\n enabled true\n" + "".join(f" limit {x}\n" for x in limits) + "}\n")
    return rqs.quota_set(obj, inputs.complexes(conf))


def test_rule_filters_on_records():
    """Projects and PEs a job does not have pass only filters naming none (``!*``);
    wildcards and ``!`` names; ``@lists`` of users, ``@groups`` of hosts (any case)."""
    qset = _one_set("name none projects !* pes !* to slots=1", "name any_pe pes * to slots=2",
                    "name mpi pes mpi*,!mpich to slots=3", "users @staff,!bob hosts @gpu* to slots=4")
    def rule(who, host="h1", groups=frozenset()):
        found = rqs.matching(qset, who, "all.q", host, groups)
        return found and found[0].label
    assert rule(rqs.Who("u")) == "s/none"
    assert rule(rqs.Who("u", project="P1", pe="smp")) == "s/any_pe"
    assert rule(rqs.Who("u", project="P1", pe="mpi-2")) == "s/any_pe"
    staff = frozenset({"staff"})
    assert rule(rqs.Who("alice", staff, "P1"), "GPU1", frozenset({"@gpus"})) == "s/4"
    assert rule(rqs.Who("bob", staff, "P1"), "gpu1", frozenset({"@gpus"})) is None
    assert rule(rqs.Who("carol", frozenset(), "P1"), "gpu1", frozenset({"@gpus"})) is None
    assert rule(rqs.Who("alice", staff, "P1"), "cpu1", frozenset({"@cpus"})) is None
    only = _one_set("pes mpi*,!mpich to slots=3")
    assert rqs.matching(only, rqs.Who("u", pe="mpi-2"), "q", "h")[1] == "/////"
    assert rqs.matching(only, rqs.Who("u", pe="mpich"), "q", "h") is None
    keyed = _one_set("users {*} projects {*} pes {*} queues {*} hosts {*} to slots=1")
    assert rqs.matching(keyed, rqs.Who("u", frozenset(), "P", "mpi"), "all.q", "h1")[1] == "u/P/mpi/all.q/h1/"


def test_dynamic_values():
    """$num_proc*5 is 10 on a host with 2 processors; terms sum with weights; a value a
    host does not report counts 0; complex values and global values count too."""
    from gridtools.sched.snapshot import Host, QuotaLimit
    limit = QuotaLimit("slots", None, "2*$num_proc+$m_core-1.5e-1", ((2.0, "num_proc"), (1.0, "m_core"), (-0.15, None)))
    host = Host("h1", load={"num_proc": 4}, values=(("m_core", 2, "2"),))
    assert abs(rqs.dynamic_value(limit, host, ()) - 9.85) < 1e-9
    assert rqs.dynamic_value(QuotaLimit("slots", None, "$gpus*2", ((2.0, "gpus"),)), host, ()) == 0
    assert rqs.dynamic_value(QuotaLimit("slots", None, "$lic", ((1.0, "lic"),)), host, (("lic", 3, "3"),)) == 3
    qset = _one_set("hosts {@linux_hosts} to slots=$num_proc*5")
    assert qset.rules[0].limits[0].terms == ((5.0, "num_proc"),)
    assert _one_set("name per_user users {*} to slots=4").rules[0].label == "s/per_user"


def test_qquota_filters_by_queue_pe_project_and_resource():
    """qquota -q, -pe, -P and -l pick rows: alice runs 2 slots of mpi in project p1 on
    h1 (lic=1 per slot), bob 1 slot in p2 on h2 in queue b.q (lic=1). Per project: p1
    2/6, p2 1/6; mpi 2/8; per queue and user: all.q alice 2/4, b.q bob 1/4; lic 3/5."""
    sc = {"hosts": ["h1", "h2"], "slots": 4, "complex": ["lic lic INT <= YES YES 0 0"],
          "queues": {"b.q": {}},
          "objects": {**rqs_set("per_project", "projects {p1,p2} to slots=6"),
                      **rqs_set("per_pe", "pes {mpi} to slots=8"),
                      **rqs_set("per_queue", "users {*} queues {all.q,b.q} to slots=4"),
                      **rqs_set("licenses", "users * to lic=5"),
                      "pe/mpi": pe("mpi", 8)},
          "running": [{"job": 1, "owner": "alice", "granted": "all.q@h1=2", "pe": "mpi", "project": "p1",
                       "l": "lic=1"},
                      {"job": 2, "owner": "bob", "granted": "b.q@h2=1", "project": "p2", "l": "lic=1"}]}
    snap = snapshot(sc)
    everyone = {"users": ["*"]}
    assert _table(rqs.quota_rows(snap, **everyone)) == [
        ("licenses/1", "lic=3/5", "-"),
        ("per_pe/1", "slots=2/8", "pes mpi"),
        ("per_project/1", "slots=1/6", "projects p2"),
        ("per_project/1", "slots=2/6", "projects p1"),
        ("per_queue/1", "slots=1/4", "users bob queues b.q"),
        ("per_queue/1", "slots=2/4", "users alice queues all.q")]
    assert _table(rqs.quota_rows(snap, queues=["b.q"], **everyone)) == [
        ("licenses/1", "lic=3/5", "-"),
        ("per_pe/1", "slots=2/8", "pes mpi"),
        ("per_project/1", "slots=1/6", "projects p2"),
        ("per_project/1", "slots=2/6", "projects p1"),
        ("per_queue/1", "slots=1/4", "users bob queues b.q")]
    assert [r.rule for r in rqs.quota_rows(snap, pes=["mpi"], projects=["p1"], queues=["all.q"], **everyone)
            if r.rule.startswith("per_")] == ["per_project/1", "per_pe/1", "per_queue/1"]
    assert _table(rqs.quota_rows(snap, projects=["p2"], **everyone)) == [
        ("licenses/1", "lic=3/5", "-"),
        ("per_pe/1", "slots=2/8", "pes mpi"),
        ("per_project/1", "slots=1/6", "projects p2"),
        ("per_queue/1", "slots=1/4", "users bob queues b.q"),
        ("per_queue/1", "slots=2/4", "users alice queues all.q")]
    assert _table(rqs.quota_rows(snap, resources=["lic"], **everyone)) == [("licenses/1", "lic=3/5", "-")]
    assert _table(rqs.quota_rows(snap, users=["bob"], resources=["slots"])) == [
        ("per_pe/1", "slots=2/8", "pes mpi"),
        ("per_project/1", "slots=1/6", "projects p2"),
        ("per_project/1", "slots=2/6", "projects p1"),
        ("per_queue/1", "slots=1/4", "users bob queues b.q")]

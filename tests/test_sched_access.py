"""Access and project lists of execution hosts (host_conf(5)) and deny lists that no longer
exist, in the scheduler pass: scenario in, starts and Grid Engine's reasons out."""

from schedkit import reasons, run

STAFF = "name staff\ntype ACL\nfshare 0\noticket 0\nentries bob\n"
PROJECT = "name {}\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n"


def cell(**more):
    sc = {"hosts": ["h1", "h2"], "slots": 1, "objects": {"usersets/staff": STAFF}}
    sc["objects"].update(more.pop("objects", {}))
    sc.update(more)
    return sc


def test_a_hosts_xuser_lists_keep_their_users_off_it():
    sc = cell(exechost={"h1": {"xuser_lists": "staff"}},
              jobs=[{"id": 1, "owner": "bob"}, {"id": 2, "owner": "bob"}, {"id": 3}])
    decisions, found = run(sc)
    assert found == ["1.1 all.q@h2=1", "3.1 all.q@h1=1"]
    assert 'has no permission for host "h1"' in reasons(decisions, 2, "bob")


def test_a_hosts_user_lists_let_only_their_users_on_it():
    sc = cell(exechost={"h1": {"user_lists": "staff"}, "h2": {"user_lists": "staff"}},
              jobs=[{"id": 1}, {"id": 2, "owner": "bob"}])
    decisions, found = run(sc)
    assert found == ["2.1 all.q@h1=1"]
    assert reasons(decisions, 1) == ['has no permission for host "h1"', 'has no permission for host "h2"']


def test_a_hosts_project_lists():
    projects = {"projects/big": PROJECT.format("big")}
    sc = cell(hosts=["h1"], exechost={"h1": {"projects": "big"}}, objects=projects,
              jobs=[{"id": 1}, {"id": 2, "qsub": "-P big"}])
    decisions, found = run(sc)
    assert found == ["2.1 all.q@h1=1"]
    assert reasons(decisions, 1) == ['(no project) does not have the correct project to run in host "h1"']
    sc = cell(hosts=["h1"], exechost={"h1": {"xprojects": "big"}}, objects=projects,
              jobs=[{"id": 1, "qsub": "-P big"}, {"id": 2}])
    decisions, found = run(sc)
    assert found == ["2.1 all.q@h1=1"]
    assert reasons(decisions, 1) == ['(project big) is not allowed to run in host "h1" based on the '
                                     'excluded project list']


def test_a_deny_list_that_no_longer_exists_denies_everyone():
    """A queue's or host's xuser_lists naming a list that was set aside (it did not parse)
    or removed: it is not known whom it named, so nobody passes (user_lists that name a
    missing list already let nobody in)."""
    sc = {"hosts": ["h1"], "slots": 1, "queue": {"xuser_lists": "gone"}, "jobs": [{"id": 1}]}
    decisions, found = run(sc)
    assert found == []
    assert reasons(decisions, 1) == ['has no permission for queue "all.q@h1"']
    sc = {"hosts": ["h1"], "slots": 1, "exechost": {"h1": {"xuser_lists": "gone"}}, "jobs": [{"id": 1}]}
    decisions, found = run(sc)
    assert found == [] and reasons(decisions, 1) == ['has no permission for host "h1"']

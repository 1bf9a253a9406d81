"""The scheduling info a job gets when a queue's or a host's project or access lists keep
it out, in Grid Engine's words (msg_schedd.h: "has no permission for queue", "(project P)
does not have the correct project to run in queue", "(no project) ...", "(project P) is
not allowed to run in queue ... based on the excluded project list", and the host forms)."""

from schedkit import reasons, run

STAFF = "name staff\ntype ACL\nfshare 0\noticket 0\nentries bob\n"
PROJECT = "name {}\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n"


def cell(**more):
    sc = {"hosts": ["h1"], "slots": 1,
          "objects": {"usersets/staff": STAFF, "projects/big": PROJECT.format("big"),
                      "projects/small": PROJECT.format("small")}}
    sc.update(more)
    return sc


def test_a_queues_excluded_project_list():
    decisions, found = run(cell(queue={"xprojects": "big"},
                                jobs=[{"id": 1, "qsub": "-P big"}, {"id": 2, "qsub": "-P small"}]))
    assert found == ["2.1 all.q@h1=1"]
    assert reasons(decisions, 1) == [
        '(project big) is not allowed to run in queue "all.q@h1" based on the excluded project list']


def test_a_queues_project_list_with_another_project_and_with_none():
    decisions, found = run(cell(queue={"projects": "big"},
                                jobs=[{"id": 1, "qsub": "-P small"}, {"id": 2}, {"id": 3, "qsub": "-P big"}]))
    assert found == ["3.1 all.q@h1=1"]
    assert reasons(decisions, 1) == ['(project small) does not have the correct project to run in queue "all.q@h1"']
    assert reasons(decisions, 2) == ['(no project) does not have the correct project to run in queue "all.q@h1"']


def test_a_queues_user_lists_and_xuser_lists():
    decisions, found = run(cell(queue={"user_lists": "staff"}, jobs=[{"id": 1}, {"id": 2, "owner": "bob"}]))
    assert found == ["2.1 all.q@h1=1"]
    assert reasons(decisions, 1) == ['has no permission for queue "all.q@h1"']
    decisions, found = run(cell(queue={"xuser_lists": "staff"}, jobs=[{"id": 1, "owner": "bob"}, {"id": 2}]))
    assert found == ["2.1 all.q@h1=1"]
    assert reasons(decisions, 1, "bob") == ['has no permission for queue "all.q@h1"']


def test_a_hosts_excluded_project_list():
    decisions, found = run(cell(exechost={"h1": {"xprojects": "big"}},
                                jobs=[{"id": 1, "qsub": "-P big"}, {"id": 2}]))
    assert found == ["2.1 all.q@h1=1"]
    assert reasons(decisions, 1) == [
        '(project big) is not allowed to run in host "h1" based on the excluded project list']

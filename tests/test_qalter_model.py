"""The pure parts of qalter: change sets, the command line, dependency cycles, consumables."""

import pytest

from gridtools.cli.sge import qalter
from gridtools.errors import UsageError
from gridtools.model import alteration

SPEC = {"id": 7, "name": "a", "resources": {"hard": {"h_rt": "60"}, "soft": {"arch": "lx"}},
        "queues": {"hard": ["all.q"], "soft": []}, "context": {"x": "1"}, "export_all": True,
        "submit_env": {"A": "1"}, "priority": 0}


def test_apply_replaces_only_the_parts_given():
    new = alteration.apply(SPEC, {"resources": {"hard": {"h_vmem": "1G"}}, "name": "b"})
    assert new["resources"] == {"hard": {"h_vmem": "1G"}, "soft": {"arch": "lx"}}
    assert new["name"] == "b" and new["queues"] == SPEC["queues"]
    assert SPEC["resources"]["hard"] == {"h_rt": "60"} and SPEC["name"] == "a"


def test_apply_context_operations_in_order():
    ops = [["add", "y", "2"], ["del", "x"], ["add", "z", ""]]
    assert alteration.apply(SPEC, {}, ops)["context"] == {"y": "2", "z": ""}
    assert alteration.apply(SPEC, {}, [["set"], ["add", "k", "v"]])["context"] == {"k": "v"}


def test_environment_of_submission_goes_with_export_all():
    assert "submit_env" not in alteration.apply(SPEC, {"env": {}, "export_all": False})
    assert alteration.apply(SPEC, {"name": "c"})["submit_env"] == {"A": "1"}


@pytest.mark.parametrize("changes, ops, bad", [
    ({"owner": "root"}, [], ["owner"]),
    ({"uid": 0, "name": "x"}, [], ["uid"]),
    ({"priority": "10"}, [], ["priority"]),
    ({"priority": True}, [], ["priority"]),
    ({"pe": ["smp", "2", 2]}, [], ["pe"]),
    ({"resources": {"medium": {}}}, [], ["resources"]),
    ({"tc": None, "rerun": False, "pe": ["smp", 1, 0]}, [], []),
    ({"pe": ["mpi", [[1, 1], [2, 2], [4, 0]]]}, [], []),
    ({"pe": ["mpi", [[1, "2"]]]}, [], ["pe"]),
    ({"pe": ["mpi", []]}, [], ["pe"]),
    ({}, [["add", "a"]], ["context"]),
    ({}, [["set"], ["del", "a"], ["add", "a", "b"]], []),
])
def test_invalid_fields_and_shapes(changes, ops, bad):
    assert alteration.invalid(changes, ops) == bad


def test_dependency_cycle_found_through_other_jobs():
    preds = {2: (3,), 3: (1,), 4: ()}
    assert alteration.dependency_cycle(1, [4], lambda j: preds.get(j, ())) is None
    assert alteration.dependency_cycle(1, [4, 2], lambda j: preds.get(j, ())) == 3


def test_consumable_conflicts_of_running_jobs():
    amounts = {"lic": float}
    old = {"lic": "1", "h_rt": "60"}
    assert alteration.consumable_conflicts(old, {"lic": "1.0", "h_rt": "90"}, amounts) == []
    assert alteration.consumable_conflicts(old, {"h_rt": "90"}, amounts) == [("missing", "lic")]
    assert alteration.consumable_conflicts({}, {"lic": "1"}, amounts) == [("added", "lic")]
    assert alteration.consumable_conflicts(old, {"lic": "2"}, amounts) == [("changed", "lic")]


def test_command_line_separates_options_jobs_and_arguments(tmp_path):
    p = qalter.parse_args(["-l", "h_rt=60", "-soft", "-q", "all.q", "-h", "uS", "12", "13.2-4",
                           "-t", "5", "-ac", "a=1", "-sc", "b", "--", "x", "y"], cwd=str(tmp_path))
    assert p.job_words == ["12", "13.2-4", "-t", "5"]
    assert p.parts == [("resources", "hard"), ("queues", "soft")]
    assert (p.hold_add, p.hold_remove) == ("u", "s")
    assert p.context_ops == [["add", "a", "1"], ["set"], ["add", "b", ""]]
    assert p.args == ["x", "y"]


def test_command_line_fields_and_users(tmp_path):
    p = qalter.parse_args(["-N", "n", "-p", "-5", "-u", "alice,bob", "-cwd", "-w", "v"], cwd=str(tmp_path))
    assert p.fields == ["name", "priority", "cwd"]
    assert p.users == ["alice", "bob"] and p.verify == "v"
    assert p.req["cwd"] == str(tmp_path)


@pytest.mark.parametrize("argv", [["-b", "y", "1"], ["-clear", "1"], ["-now", "y", "1"], ["-jsv", "x", "1"],
                                  ["-h"], ["-h", "x", "1"], ["-sync", "y", "1"], ["-N"], ["-bogus", "1"]])
def test_options_qalter_refuses(argv):
    with pytest.raises(UsageError):
        qalter.parse_args(argv)


def test_task_range_needs_a_job_before_it():
    from gridtools.cli.sge import jobsel
    with pytest.raises(UsageError):
        jobsel.split_items(qalter.parse_args(["-N", "x", "-t", "1-3"]).job_words)


def test_hold_letter_n_removes_every_hold():
    p = qalter.parse_args(["-h", "n", "1"])
    assert p.hold_add == "" and set(p.hold_remove) == set("uos")


def test_a_hold_change_of_a_huge_task_range_costs_what_the_jobs_tasks_do():
    """qalter -h n -t 1-2147483647 of a three-task array: the change is planned from the
    job's tasks, never by making every number of the range (the daemon, held to 1 GiB
    here, ran out of memory and failed again at each restart, the request replayed)."""
    from conftest import run_bare
    proc = run_bare(
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "from gridtools.model.job import Job\n"
        "from gridtools.daemon.alterreq import _hold_plan\n"
        "job = Job({'id': 5, 'owner': 'bob', 'tasks': [1, 3, 1], 'user_hold': True}, hold='u')\n"
        "print(sorted(_hold_plan(job, {'tasks': [[2, 2147483647, 1]]}, '', 'u')))\n")
    assert (proc.returncode, proc.stdout) == (0, "[2, 3]\n"), proc.stderr

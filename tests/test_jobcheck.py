"""The pure checks behind the attack tests: job descriptions, request bodies, safe text,
task ranges. In-process, no daemon."""

import random

import pytest

from gridtools.cli.sge import options, submit
from gridtools.formats import jobcheck, reqcheck, safetext
from gridtools.model.job import Job, Task, TaskState
from gridtools.model.taskset import RangeBuilder, TaskHolds, TaskRanges


def _spec(**fields):
    req = options.fresh_request()
    req.update(binary=True)
    spec = submit.finish_spec(req, 7, "true", "/tmp", [], command="/bin/true")
    spec.update(fields)
    return spec


def test_a_description_qsub_makes_passes_and_loses_only_daemon_fields():
    spec = _spec(owner="root", uid=0, version=3, evil=1)
    clean = jobcheck.check(spec)
    assert set(spec) - set(clean) == {"owner", "uid", "version", "evil"}
    assert clean["id"] == 7 and clean["command"] == "/bin/true"


@pytest.mark.parametrize("fields,words", [
    ({"id": "7"}, 'field "id"'),
    ({"name": "a\nb"}, "Return (\\n) not allowed"),
    ({"name": "a\x1bb"}, "control character (\\x1b)"),
    ({"name": "a/b"}, "Slash ('/') not allowed"),
    ({"account": "x:y"}, "account string"),
    ({"tasks": [1, 10, 0]}, 'field "tasks"'),
    ({"pe": ["smp", 4, 2]}, "maximum is below"),
    ({"pe": ["mpi", [[4, 2], [8, 8]]]}, "maximum is below"),
    ({"pe": ["mpi", [[1, 1]] * 65]}, "1 to 64 [min, max] slot ranges"),
    ({"pe": ["mpi", [1, 2]]}, "slot ranges"),
    ({"resources": {"hard": {"h_rt": "soon"}, "soft": {}}}, 'resource "h_rt"'),
    ({"cwd": "tmp"}, "absolute path"),
    ({"env": {"A=B": ""}}, 'variable name with "="'),
    ({"binary": True, "command": None}, 'field "command" is missing'),
])
def test_bad_fields_are_named(fields, words):
    with pytest.raises(jobcheck.Invalid) as info:
        jobcheck.check(_spec(**fields))
    assert words in str(info.value)
    assert "\n" not in str(info.value) and "\x1b" not in str(info.value)


def test_limits_are_those_of_an_exec_and_their_messages_name_them():
    """As many job arguments, environment variables and -hold_jid jobs as an exec could
    take (131072), values up to 1 MiB; past that, the message says which limit."""
    many = [str(i) for i in range(131072)]
    clean = jobcheck.check(_spec(args=many, env={f"V{i}": "1" for i in range(131072)},
                                 hold_jid=many, submit_env={"BIG": "x" * (1 << 20)}))
    assert len(clean["args"]) == len(clean["env"]) == len(clean["hold_jid"]) == 131072
    assert len(clean["submit_env"]["BIG"]) == 1 << 20
    for fields, message in (
            ({"args": many + ["x"]}, "too many job arguments (more than 131072)"),
            ({"env": {f"V{i}": "" for i in range(131073)}},
             "too many environment variables (more than 131072)"),
            ({"submit_env": {f"V{i}": "" for i in range(131073)}},
             "too many environment variables (more than 131072)"),
            ({"hold_jid": many + ["x"]}, "too many -hold_jid jobs (more than 131072)"),
            ({"masterq": many[:1025]}, 'field "masterq" has more than 1024 items'),
            ({"args": ["x" * ((1 << 20) + 1)]}, "a job argument is longer than 1048576 characters"),
            ({"env": {"A": "x" * ((1 << 20) + 1)}},
             "an environment variable value is longer than 1048576 characters"),
            ({"args": "x"}, 'field "args" must be a list'),
            ({"env": ["A"]}, 'field "env" must be a mapping')):
        with pytest.raises(jobcheck.Invalid) as info:
            jobcheck.check(_spec(**fields))
        assert str(info.value) == message


def test_shell_lists():
    """-S keeps [host or None, path] pairs; a path is absolute or starts with a pseudo
    variable; a job spooled when -S kept one path as text still passes (qalter checks
    the whole description again)."""
    shells = [["node2", "/bin/bash"], [None, "$HOME/bin/zsh"]]
    assert jobcheck.check(_spec(shell=shells))["shell"] == shells
    assert jobcheck.check(_spec(shell="/bin/bash"))["shell"] == "/bin/bash"
    for bad in ([[None, "bash"]], "bash", [["a b", "/bin/sh"]], [[None]]):
        with pytest.raises(jobcheck.Invalid) as info:
            jobcheck.check(_spec(shell=bad))
        assert 'field "shell"' in str(info.value)


def test_pe_slot_lists_pass_sorted():
    spec = _spec(pe=options.pe_request("mpi", "8,1,2-4,16-"))
    assert jobcheck.check(spec)["pe"] == ["mpi", [[1, 1], [2, 4], [8, 8], [16, 0]]]
    assert jobcheck.check(_spec(pe=options.pe_request("smp", "2-4")))["pe"] == ["smp", 2, 4]


def test_array_size_is_checked_before_the_range():
    with pytest.raises(jobcheck.Invalid) as info:
        jobcheck.check(_spec(tasks=[1, 99999999999, 1]), max_tasks=75000)
    assert str(info.value) == "job rejected: You try to submit a job with more than 75000 tasks"
    assert jobcheck.check(_spec(tasks=[1, 10, 3]))["tasks"] == [1, 10, 3]
    assert jobcheck.check(_spec(tasks=[1, 11, 3]))["tasks"] == [1, 10, 3]


def test_request_bodies():
    body = reqcheck.check("delete", {"targets": [{"id": 3, "tasks": [[1, 4, 1]]}], "force": False,
                                     "kind": "delete", "junk": 1})
    assert body == {"targets": [{"id": 3, "tasks": [[1, 4, 1]]}], "force": False, "kind": "delete"}
    for kind, bad in (("delete", {"targets": [{"id": True}]}), ("hold", {"letters": "x"}),
                      ("qconf", {"op": ["add"]}), ("qmod", {"items": [{"word": ""}]}),
                      ("nonsense", {}), ("alter", [])):
        with pytest.raises(jobcheck.Invalid):
            reqcheck.check(kind, bad)


def test_safe_text():
    assert safetext.escape("a\nb\tc\x1b[0m\x9b") == "a\\nb\\tc\\x1b[0m\\x9b"
    assert safetext.for_terminal("a\nb\tc\x07") == "a\nb\tc\\x07"


def test_task_ranges_behave_as_the_numbers_they_hold():
    rnd = random.Random(7)
    for _ in range(500):
        first, step = rnd.randint(1, 9), rnd.randint(1, 3)
        last = first + step * rnd.randint(0, 25)
        numbers = list(range(first, last + 1, step))
        gone = set(rnd.sample(numbers, rnd.randint(0, len(numbers))))
        kept = [n for n in numbers if n not in gone]
        ranges = TaskRanges.of_range(first, last, step, gone)
        assert list(ranges) == kept and len(ranges) == len(kept) and bool(ranges) == bool(kept)
        assert all((n in ranges) == (n in kept) for n in range(last + 3))
        compact, plain = RangeBuilder(), RangeBuilder()
        for run in ranges.runs:
            compact.add_run(*run)
        for n in kept:
            plain.add(n)
        assert compact.out == plain.out


def test_a_million_pending_tasks_are_a_few_runs():
    job = Job({"id": 1, "name": "a", "owner": "u", "submit_time": 0.0, "tasks": [1, 1000000, 1]})
    job.hold = "u"
    job.tasks[500] = Task(500, state=TaskState.FINISHED)
    job.tasks[501] = Task(501, hold="o")
    pending = job.pending_numbers()
    assert pending.runs == ((1, 499, 1), (501, 1000000, 1)) and len(pending) == 999999
    holds = job.pending_holds()
    assert isinstance(holds, TaskHolds) and holds.get(2) == "u" and holds.get(501) == "ou"
    assert job.untouched().runs == ((1, 499, 1), (502, 1000000, 1))


def test_control_char_finds_every_c0_del_and_c1_character_and_nothing_else():
    """Its shortcut for printable texts misses none: every code point alone, and each
    control character inside printable and unprintable (but allowed) text."""
    from gridtools.formats.jobcheck import control_char
    for code in range(0x110000):
        if 0xD800 <= code < 0xE000:
            continue
        ch = chr(code)
        control = code < 32 or code == 127 or 0x80 <= code < 0xA0
        assert control_char(ch) == (ch if control else None), hex(code)
    for bad in ("\x00", "\t", "\x1f", "\x7f", "\x85", "\x9f"):
        for text in (f"a{bad}b", f"\u2028x{bad}", f"{bad}\u00ad"):
            assert control_char(text) == bad
    assert control_char("a\u2028b\u00ad\ue000") is None


@pytest.mark.parametrize("value, accepted", [
    (0, True), (1_700_000_000.5, True), (-0.0, True), (jobcheck.MAX_MOMENT, True),
    (jobcheck.MAX_MOMENT + 1, False), (2 ** 63 - 1, False), (-1, False), (float("inf"), False), (float("nan"), False), (10 ** 400, False), (1e300, False),
    ("1700000000", False), (True, False),
])
def test_a_time_is_a_number_of_seconds_from_0_to_the_year_9999(value, accepted):
    """submit_time, start_at and deadline: refused when negative, infinite, NaN, beyond
    the year 9999 (which the listings could not print) or not a number."""
    if accepted:
        assert jobcheck.moment(value, "submit_time") == value or value != value
    else:
        with pytest.raises(jobcheck.Invalid):
            jobcheck.moment(value, "submit_time")


def test_hold_lists_take_at_most_so_many_patterns():
    """-hold_jid and -hold_jid_ad may name as many ids and names as an exec takes, but at
    most MAX_HOLD_PATTERNS patterns (each is matched with the owner's job names at every
    submission and change)."""
    most = jobcheck.MAX_HOLD_PATTERNS
    names = [f"name{i}" for i in range(1000)]
    patterns = [f"n*{i}" for i in range(most)]
    for field, option in (("hold_jid", "-hold_jid"), ("hold_jid_ad", "-hold_jid_ad")):
        clean = jobcheck.check(_spec(**{field: names + patterns}))
        assert len(clean[field]) == 1000 + most
        with pytest.raises(jobcheck.Invalid) as info:
            jobcheck.check(_spec(**{field: names + patterns + ["x?"]}))
        assert str(info.value) == f"{option} names more than {most} job name patterns"


def test_patterns_name_only_the_owners_jobs_and_match_as_one():
    from gridtools.model import predecessors
    owners = {1: "alice", 2: "bob", 3: "alice", 4: "alice"}
    names = {"build": {1, 2}, "test-a": {3}, "test-b": {4}, "other": {2}}
    resolved = predecessors.resolve(["build", "test-*", "o*", "2"], "alice", 4, {1, 2, 3, 4}, names,
                                    owners.__getitem__)
    assert resolved == [1, 2, 3]     # (an id names anyone's job; names and patterns only alice's)
    assert predecessors.resolve(["[bt]*"], "alice", None, {1, 3, 4}, names, owners.__getitem__) == [1, 3, 4]


def test_resource_request_values_are_at_most_so_long():
    """A -l value may be MAX_REQUEST characters long (a pattern of many alternatives is
    matched with the hosts' values at every pass); one character more is refused."""
    from gridtools.model.resources import pattern_match
    most = jobcheck.MAX_REQUEST
    hosts = "|".join(f"node{i:05d}" for i in range(most // 10))
    value = (hosts + "|" + "x" * most)[:most]
    clean = jobcheck.check(_spec(resources={"hard": {"hostname": value}, "soft": {}}))
    assert clean["resources"]["hard"]["hostname"] == value
    assert pattern_match(value, "node00007") and pattern_match(value, "node01500")
    assert not pattern_match(value, "node99999") and not pattern_match(value, "node0000")
    with pytest.raises(jobcheck.Invalid) as info:
        jobcheck.check(_spec(resources={"hard": {"hostname": value + "y"}, "soft": {}}))
    assert str(info.value) == f"a -l resource request value is longer than {most} characters"

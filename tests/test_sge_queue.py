"""Queue attributes with host overrides, qconf's line breaking, queue specs, -l lists."""

import pytest

from gridtools.errors import ConfigError, InputError
from gridtools.formats.sge import objects
from gridtools.formats.sge.attrfile import format_attr, logical_lines, wrap_line
from gridtools.formats.sge.codecs import PerHost
from gridtools.formats.sge.names import match_queue_spec, parse_resource_list
from gridtools.formats.sge.queue import subordinate_queues


def _queue_text(**lines):
    text = objects.render("queue", objects.template("queue", "all.q"))
    out = []
    for line in text.splitlines(True):
        name = line.split()[0]
        out.append(f"{name} {lines[name]}\n" if name in lines else line)
    return "".join(out)


def test_host_overrides_parse_and_render_groups_before_hosts():
    queue = objects.parse("queue", _queue_text(slots="1, [node2=2],[@big=8] ,[node1=4]"))
    assert queue["slots"] == PerHost(1, {"node2": 2, "@big": 8, "node1": 4})
    assert "slots                 1,[@big=8],[node2=2],[node1=4]\n" in objects.render("queue", queue)


def test_overrides_of_list_and_pair_values():
    queue = objects.parse("queue", _queue_text(
        pe_list="make,[node1=mpi smp]", complex_values="NONE,[node1=h_vmem=4G,licenses=2]",
        qtype="BATCH,[node2=NONE]", prolog="NONE,[@big=root@/opt/prolog.sh -v]"))
    assert queue["pe_list"].for_host("node1") == ["mpi", "smp"]
    assert queue["pe_list"].for_host("node3") == ["make"]
    assert queue["complex_values"].for_host("node1") == {"h_vmem": "4G", "licenses": "2"}
    assert queue["qtype"].for_host("node2") == [] and queue["qtype"].default == ["BATCH"]
    groups = {"@big": {"node7"}}
    assert queue["prolog"].for_host("node7", groups) == "root@/opt/prolog.sh -v"
    text = objects.render("queue", queue)
    assert "pe_list               make,[node1=mpi smp]\n" in text
    assert "complex_values        NONE,[node1=h_vmem=4G,licenses=2]\n" in text
    assert "qtype                 BATCH,[node2=NONE]\n" in text
    assert objects.render("queue", objects.parse("queue", text)) == text


def test_for_host_prefers_host_then_single_group_then_default():
    value = PerHost(1, {"@a": 2, "@b": 3, "node1": 9})
    groups = {"@a": ["node2", "node3"], "@b": ["node3", "node4"]}
    assert value.for_host("node1", groups) == 9
    assert value.for_host("NODE1", groups) == 9
    assert value.for_host("node2", groups) == 2
    assert value.for_host("node4", groups) == 3
    assert value.for_host("node3", groups) == 1      # in two overriding groups: ambiguous
    assert value.for_host("node5", groups) == 1
    assert value.for_host("node2") == 1              # group membership unknown


def test_render_accepts_plain_values_for_overridable_attributes():
    queue = objects.template("queue", "q")
    queue["slots"] = 8
    queue["h_rt"] = 3600
    queue["h_vmem"] = 2 * 1024 ** 3
    text = objects.render("queue", queue)
    assert "slots                 8\n" in text
    assert "h_rt                  01:00:00\n" in text
    assert "h_vmem                2147483648\n" in text
    parsed = objects.parse("queue", text)
    assert parsed["h_rt"].default.seconds == 3600 and parsed["h_vmem"].default.bytes == 2 * 1024 ** 3


@pytest.mark.parametrize("text", ["1,node1=4", "1,[node1=4", "1,[node1]", "1,[=4]", ",[node1=4]",
                                  "1,[node1=4][node2=5]", "1,[node1=4],[node1=5]"])
def test_malformed_overrides_are_refused(text):
    with pytest.raises(ConfigError, match='attribute "slots"'):
        objects.parse("queue", _queue_text(slots=text))


def test_subordinate_lists():
    queue = objects.parse("queue", _queue_text(subordinate_list="low.q=2,idle.q, other.q=1"))
    entries = queue["subordinate_list"].default
    assert subordinate_queues(entries) == [("low.q", 2), ("idle.q", None), ("other.q", 1)]
    assert "subordinate_list      low.q=2, idle.q other.q=1\n" in objects.render("queue", queue)
    queue = objects.parse("queue", _queue_text(subordinate_list="slots=4(low.q:1:sr, idle.q:2:lr)"))
    assert subordinate_queues(queue["subordinate_list"].default) == [("low.q", None), ("idle.q", None)]
    with pytest.raises(ConfigError, match='attribute "subordinate_list"'):
        objects.parse("queue", _queue_text(subordinate_list="slots=4(low.q:x)"))
    queue = objects.template("queue", "low.q")
    queue["subordinate_list"] = ["low.q"]
    with pytest.raises(ConfigError, match="subordinate to itself"):
        objects.validate("queue", queue)


# --- line breaking ---------------------------------------------------------------------

def test_long_lists_break_after_commas_near_column_80():
    pairs = ",".join(f"resource_{i:02d}={i * 1000}" for i in range(12))
    line = format_attr("complex_values", pairs, 21)
    lines = line.split("\n")
    assert len(lines) > 2
    assert all(len(piece) <= 80 for piece in lines)
    assert all(piece.endswith(", \\") for piece in lines[:-1])
    assert all(piece.startswith(" " * 22) and piece[22] != " " for piece in lines[1:])
    assert logical_lines(line) == [(1, f"{'complex_values':<21} {pairs}")]


def test_long_words_break_at_blanks_and_unbreakable_lines_stay():
    words = " ".join(["word"] * 30)
    wrapped = wrap_line(f"{'prolog':<21} {words}")
    assert all(len(piece) <= 80 for piece in wrapped.split("\n"))
    assert wrapped.split("\n")[0].endswith(" \\") and "  \\" not in wrapped
    single = "x" * 120
    assert wrap_line(f"shell {single}") == f"shell {single}"


def test_long_queue_values_round_trip():
    hosts = [f"compute-node-{i:03d}.cluster.example.org" for i in range(8)]
    queue = objects.template("queue", "big.q")
    queue["hostlist"] = hosts
    queue["slots"] = PerHost(1, {h: 16 for h in hosts})
    text = objects.render("queue", queue)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert text.count("\\\n") > 4
    parsed = objects.parse("queue", text)
    assert parsed["hostlist"] == hosts
    assert parsed["slots"].for_host(hosts[5]) == 16
    assert objects.render("queue", parsed) == text


# --- queue specs and resource lists ---------------------------------------------------

GROUPS = {"@allhosts": ("node1", "node2", "gpu1"), "@gpus": ("gpu1",)}


@pytest.mark.parametrize("spec,qname,host,expected", [
    ("all.q", "all.q", "node1", True),
    ("all.q", "low.q", "node1", False),
    ("*.q", "low.q", "node1", True),
    ("all.q@node1", "all.q", "node1", True),
    ("all.q@node1", "all.q", "node2", False),
    ("all.q@NODE1", "all.q", "node1", True),
    ("all.q@*", "all.q", "gpu1", True),
    ("*@node2", "low.q", "node2", True),
    ("*@node2", "low.q", "node1", False),
    ("@node2", "all.q", "node2", True),
    ("all.q@node[12]", "all.q", "node2", True),
    ("all.q@node?", "all.q", "gpu1", False),
    ("all.q@@gpus", "all.q", "gpu1", True),
    ("all.q@@gpus", "all.q", "node1", False),
    ("*@@gp*", "low.q", "gpu1", True),
    ("all.q@@nosuch", "all.q", "node1", False),
    ("all.q|low.q", "low.q", "node1", True),
    ("all.q@", "all.q", "node1", False),
])
def test_match_queue_spec(spec, qname, host, expected):
    assert match_queue_spec(spec, qname, host, GROUPS) is expected


def test_parse_resource_list():
    assert parse_resource_list("h_rt=1:00:00,h_vmem=2G,arch=lx*") == [
        ("h_rt", "1:00:00"), ("h_vmem", "2G"), ("arch", "lx*")]
    assert parse_resource_list(" exclusive , mem_free = 1G") == [("exclusive", "TRUE"), ("mem_free", "1G")]
    for bad in ("h_rt=", "=4", "a=1,,b=2", ""):
        with pytest.raises(InputError):
            parse_resource_list(bad)

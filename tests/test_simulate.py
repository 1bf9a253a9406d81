"""The simulator: a workload through the real pass in virtual time."""

import pytest

from conftest import BIN
from gridtools.sim.engine import Simulation

TREE = ("id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,2\n"
        "id=1\nname=alice\ntype=0\nshares={a}\nchildnodes=NONE\n"
        "id=2\nname=bob\ntype=0\nshares={b}\nchildnodes=NONE\n")


def cell(a=50, b=50, halftime=24, slots=2):
    return {"hosts": ["h1"], "slots": slots, "users": ["alice", "bob"],
            "sched": {"weight_tickets_share": 10000, "halftime": halftime},
            "sharetree": TREE.format(a=a, b=b)}


def test_usage_halves_every_half_life():
    """The seed's series: 1,000 units of usage are 500 after one half-life, then 250,
    125 and 62.5. One task of one second that uses 1,000 CPU seconds ends at t=1."""
    stats = Simulation({"cell": cell(), "report_every": 86400, "until": 4 * 86400 + 1,
                        "submissions": [{"time": 0, "user": "alice", "runtime": 1, "cpu": 1000}]}).run()
    usage = [u.get("alice", 0.0) for _t, _s, u in stats.samples]
    assert usage[1:] == pytest.approx([500, 250, 125, 62.5], rel=1e-3)      # (Grid Engine's decay constant)


def test_a_week_with_a_day_long_half_life_takes_seconds():
    trace = {"cell": cell(slots=4), "report_every": 86400, "until": 7 * 86400,
             "submissions": [{"time": 0, "user": "alice", "count": 48, "runtime": 7200},
                             {"time": 2 * 86400, "user": "bob", "count": 8, "runtime": 3600}]}
    stats = Simulation(trace).run()
    alice = [u.get("alice", 0.0) for _t, _s, u in stats.samples]
    assert alice[2] > 0 and alice[3] == pytest.approx(alice[2] / 2, rel=1e-3)
    assert stats.started == stats.ended == 56
    assert sorted(stats.waits["bob"]) == [0.0] * 4 + [3600.0] * 4   # 4 slots, idle when bob came


def test_shares_converge_to_the_share_tree():
    """Both users keep the cell busy; with 75/25 the first gets about three slots of four."""
    trace = {"cell": cell(75, 25, halftime=0, slots=4), "report_every": 3600, "until": 48 * 3600,
             "submissions": [{"time": 0, "user": "alice", "count": 400, "runtime": 600},
                             {"time": 0, "user": "bob", "count": 400, "runtime": 600}]}
    stats = Simulation(trace).run()
    later = [s for t, s, _u in stats.samples if 4 * 3600 <= t <= 20 * 3600]   # both still wait
    alice = sum(s.get("alice", 0) for s in later)
    bob = sum(s.get("bob", 0) for s in later)
    assert 2.4 <= alice / bob <= 3.6


def test_the_command_prints_the_report(tmp_path):
    import subprocess
    import sys
    trace = tmp_path / "t.yaml"
    trace.write_text("cell: {hosts: [h1], slots: 2}\nreport_every: 60\n"
                     "submissions:\n  - {time: 0, user: alice, count: 4, runtime: 30}\n")
    proc = subprocess.run([sys.executable, f"{BIN}/gridtools", "simulate", str(trace)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "alice slots" in proc.stdout and "pass time mean" in proc.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just a list\n")
    proc = subprocess.run([sys.executable, f"{BIN}/gridtools", "simulate", str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode != 0 and proc.stderr.count("\n") == 1


def test_hosts_may_be_a_count_and_anything_else_is_one_clear_line(tmp_path):
    import subprocess
    import sys
    trace = tmp_path / "t.yaml"
    trace.write_text("cell: {hosts: 2, slots: 1}\nreport_every: 10\nuntil: 20\n"
                     "submissions:\n  - {time: 0, user: alice, count: 4, runtime: 30}\n")
    proc = subprocess.run([sys.executable, f"{BIN}/gridtools", "simulate", "--json", str(trace)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import json
    assert json.loads(proc.stdout)["capacity"] == 2
    trace.write_text("cell: {hosts: x}\nsubmissions: []\n")
    proc = subprocess.run([sys.executable, f"{BIN}/gridtools", "simulate", str(trace)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr == (f"error: trace {trace}: hosts: expected a list of host names or a "
                           "number of hosts, not 'x'\n")

"""Whole daemon ticks: a user whose procs each carry a costly Requirements of their own
sees why the rest wait once the steps a pass gives one owner are spent (qstat -j,
condor_q -better-analyze), and the next pass starts them (sched_conf(5), params
OWNER_MATCH_STEPS)."""

import os
import re

import pytest

from test_daemon_tick import _condor_submit, ask

#: a Requirements that takes some ten thousand evaluation steps, and reads ProcId, so
#: that every proc is evaluated on its own
COSTLY = '!stringListMember("zz", "' + ",".join(f"x{i}" for i in range(2000)) + '") && ProcId >= 0'


def set_params(cell, daemon, params):
    text = cell.run("qconf", "-ssconf", check=True).stdout
    text, n = re.subn(r"^params\s.*$", f"params {params}", text, flags=re.M)
    assert n
    path = os.path.join(cell.root, "sched.new")
    with open(path, "w") as fh:
        fh.write(text)
    ask(cell, daemon, "qconf", "-Msconf", path)


def test_the_procs_put_off_show_why_and_start_in_the_next_pass(ticking, monkeypatch):
    import time
    from gridtools.daemon import loop
    cell, daemon, fake = ticking
    # while the submission is answered the daemon ticks as often as it takes: the pass
    # after a put-off one waits an hour, so that none of those ticks starts the next pass
    monkeypatch.setattr(loop, "PUT_OFF_PAUSE", 3600.0)
    set_params(cell, daemon, "OWNER_MATCH_STEPS=1000")
    assert "OWNER_MATCH_STEPS=1000" in cell.run("qconf", "-ssconf", check=True).stdout
    cluster = _condor_submit(cell, daemon, "costly.sub",
                             f"executable = /bin/true\nrequirements = {COSTLY}\nqueue 2\n")
    daemon.tick()
    assert fake.running() == [(cluster, 1)]
    out = cell.run("qstat", "-j", str(cluster), check=True).stdout
    info = out[out.index("scheduling info:"):]
    user = cell.run("id", "-un", check=True).stdout.strip()
    assert (f'job dropped because matching the jobs of "{user}" took the 1000 ClassAd evaluation steps '
            "a pass gives one owner (OWNER_MATCH_STEPS)") in info, info
    out = cell.run("condor_q", "-better-analyze", f"{cluster}.1", check=True).stdout
    assert (f"Reason for last match failure: matching the jobs of {user} took the 1000 ClassAd evaluation "
            "steps a cycle gives one owner (OWNER_MATCH_STEPS)") in out, out
    daemon.tick()
    assert fake.running() == [(cluster, 1)]               # (the pause is not over)
    daemon.tick(now=time.time() + 3601)
    assert fake.running() == [(cluster, 1), (cluster, 2)]
    assert cluster not in daemon.state.reasons


#: a ConcurrencyLimits that reads the machine (so it is evaluated on each host, in every
#: pass) and takes some ten thousand evaluation steps there
COSTLY_LIMITS = 'ifThenElse(stringListMember("zz", "' + ",".join(f"x{i}" for i in range(2000)) + \
                '"), "none", strcat("lic_", TARGET.Machine))'


@pytest.mark.parametrize("params", ["OWNER_MATCH_STEPS=1000", "NEGOTIATOR=1,OWNER_MATCH_STEPS=1000"])
def test_the_concurrency_limits_that_read_the_machine_spend_their_owners_steps(ticking, monkeypatch, params):
    """The concurrency limits of a job that read the machine are worked out for each host
    before the pass, in either order: their evaluations count against the job's owner,
    whose other such jobs are put off once the steps are spent, with the reason; the
    next pass takes them."""
    import time
    from gridtools.daemon import loop
    cell, daemon, fake = ticking
    monkeypatch.setattr(loop, "PUT_OFF_PAUSE", 3600.0)
    set_params(cell, daemon, params)
    text = f"executable = /bin/true\nconcurrency_limits_expr = {COSTLY_LIMITS}\nhold = true\nqueue 1\n"
    first = _condor_submit(cell, daemon, "first.sub", text)
    second = _condor_submit(cell, daemon, "second.sub", text)
    assert fake.running() == []
    ask(cell, daemon, "condor_release", str(first), str(second))      # (both pending in one pass)
    daemon.tick()
    assert fake.running() == [(first, 1)]
    out = cell.run("qstat", "-j", str(second), check=True).stdout
    info = out[out.index("scheduling info:"):]
    user = cell.run("id", "-un", check=True).stdout.strip()
    assert (f'job dropped because matching the jobs of "{user}" took the 1000 ClassAd evaluation steps '
            "a pass gives one owner (OWNER_MATCH_STEPS)") in info, info
    daemon.tick(now=time.time() + 3601)
    assert fake.running() == [(first, 1), (second, 1)]
    assert second not in daemon.state.reasons


def _long_pattern(tag):
    """A hostname pattern of a few hundred alternatives that matches every host (its last
    one is ``*``), different for each ``tag``: it takes a millisecond or more to compile."""
    return "|".join(f"{tag}node{i:04d}[0-9]?x*" for i in range(400)) + "|*"


def test_compiling_long_request_patterns_spends_their_owners_steps(ticking, monkeypatch):
    """Grid Engine jobs whose -l hostname patterns are long and differ: the time compiling
    them takes is charged to their owner, whose next job is put off once it is spent
    (with the reason qstat -j shows), and starts in the next pass."""
    import time
    from gridtools.daemon import loop
    cell, daemon, fake = ticking
    monkeypatch.setattr(loop, "PUT_OFF_PAUSE", 3600.0)
    set_params(cell, daemon, "OWNER_MATCH_STEPS=1000")
    first, second = (int(cell.run("qsub", "-terse", "-l", f"hostname={_long_pattern(tag)}", "-b", "y", "true",
                                  cwd="/tmp", check=True).stdout) for tag in ("a", "b"))
    daemon.tick()
    assert fake.running() == [(first, 1)]
    out = cell.run("qstat", "-j", str(second), check=True).stdout
    info = out[out.index("scheduling info:"):]
    assert "took the 1000 ClassAd evaluation steps a pass gives one owner (OWNER_MATCH_STEPS)" in info, info
    daemon.tick(now=time.time() + 3601)
    assert fake.running() == [(first, 1), (second, 1)]


def test_compiling_long_queue_lists_spends_their_owners_steps(ticking, monkeypatch):
    """Grid Engine jobs naming hundreds of queue specs (wildcards, each naming the cell's one
    queue instance) that differ: compiling
    them is charged to their owner as long request patterns are, and the owner's next
    such job waits for the next pass."""
    import time
    from gridtools.daemon import loop
    cell, daemon, fake = ticking
    monkeypatch.setattr(loop, "PUT_OFF_PAUSE", 3600.0)
    set_params(cell, daemon, "OWNER_MATCH_STEPS=100")
    jobs = [int(cell.run("qsub", "-terse", "-q", ",".join(f"{head}.q@{'*' * n}" for n in range(1, 301)),
                         "-b", "y", "true", cwd="/tmp", check=True).stdout) for head in ("a*", "al*")]
    daemon.tick()
    assert fake.running() == [(jobs[0], 1)]
    out = cell.run("qstat", "-j", str(jobs[1]), check=True).stdout
    assert "took the 100 ClassAd evaluation steps a pass gives one owner" in out[out.index("scheduling info:"):]
    daemon.tick(now=time.time() + 3601)
    assert fake.running() == [(jobs[0], 1), (jobs[1], 1)]


def test_compiling_short_wildcard_patterns_spends_their_owners_steps_too(ticking, monkeypatch):
    """Short -l patterns with wildcards, different in every job: each takes only some
    microseconds to compile, but many would thrash the kept patterns; they are charged
    as long ones are."""
    import time
    from gridtools.daemon import loop
    cell, daemon, fake = ticking
    monkeypatch.setattr(loop, "PUT_OFF_PAUSE", 3600.0)
    set_params(cell, daemon, "OWNER_MATCH_STEPS=1")
    first, second = (int(cell.run("qsub", "-terse", "-l", f"hostname={tag}zz[0-9]*|*", "-b", "y", "true",
                                  cwd="/tmp", check=True).stdout) for tag in ("sa", "sb"))
    daemon.tick()
    assert fake.running() == [(first, 1)]
    daemon.tick(now=time.time() + 3601)
    assert fake.running() == [(first, 1), (second, 1)]

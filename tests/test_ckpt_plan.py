"""Checkpointing in a task's plan, in-process (checkpoint(5), qsub -c): which ``when``
letters apply, which of them make leaving a host a migration, and the interval of
the periodic checkpoint, with worked numbers."""

import types

import pytest

from gridtools.daemon import dispatch
from gridtools.exec import ckpt

ENV = {"ckpt_name": "ck", "interface": "userdefined", "ckpt_command": "/bin/ck $job_pid",
       "migr_command": "/bin/migr $job_id", "restart_command": "/bin/restart",
       "clean_command": "NONE", "ckpt_dir": "/scratch/ck", "signal": "none", "when": "sx"}


def conf(**env):
    return types.SimpleNamespace(objects={"ckpt": {"ck": {**ENV, **env}}})


def queue(min_cpu_interval="0:5:0"):
    return {"min_cpu_interval": min_cpu_interval}.get


@pytest.mark.parametrize("when, override, letters, migrates", [
    ("sx", None, "sx", True),         # the environment's letters
    ("sx", "n", "n", False),          # -c n: no checkpoint at all
    ("sx", "m", "m", False),          # -c m: periodic only, leaving a host is no migration
    ("m", "r", "r", True),            # -c r: rescheduled jobs migrate
    ("sx", "0:10:0", "sx", True),     # -c INTERVAL keeps the environment's letters
    ("", None, "", False),
    (None, None, "", False),          # qconf -dattr took every letter: no checkpoints
    (None, "x", "x", True),
])
def test_the_when_letters_and_migration(when, override, letters, migrates):
    plan = {"ckpt": ckpt.settings({**ENV, "when": when}, override)}
    assert plan["ckpt"]["when"] == letters
    assert ckpt.migrates(plan) is migrates


def test_commands_none_is_unset_and_the_directory_defaults_to_tmp():
    got = ckpt.settings({**ENV, "ckpt_dir": ""})
    assert (got["ckpt"], got["migr"], got["restart"], got["clean"], got["signal"], got["dir"]) == (
        "/bin/ck $job_pid", "/bin/migr $job_id", "/bin/restart", None, None, "/tmp")


@pytest.mark.parametrize("when, job_c, floor, interval", [
    ("m", None, "0:5:0", 300.0),          # m: every min_cpu_interval
    ("sx", None, "0:5:0", None),          # no m: no periodic checkpoint
    ("sx", "0:10:0", "0:5:0", 600.0),     # -c 10 minutes, longer than the queue's 5
    ("sx", "0:1:0", "0:5:0", 300.0),      # -c 1 minute is raised to the queue's 5
    ("m", "n", "0:5:0", None),            # -c n switches it off
    ("m", None, "INFINITY", None),        # an infinite interval never comes
])
def test_the_periodic_checkpoints_interval(when, job_c, floor, interval):
    spec = {"ckpt": "ck", "ckpt_when": job_c}
    got = dispatch._checkpoint(spec, conf(when=when), queue(floor))
    assert (got or {}).get("interval") == interval
    if got:
        assert got["command"] == "/bin/ck $job_pid"


def test_no_environment_no_checkpoint():
    assert dispatch._checkpoint({"ckpt": "absent"}, conf(), queue()) is None
    assert dispatch._checkpoint({}, conf(), queue()) is None

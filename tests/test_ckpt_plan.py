"""Checkpointing in a task's plan, in-process (checkpoint(5), qsub -c): which ``when``
letters apply, which of them make leaving a host a migration, and the interval of
the periodic checkpoint, with worked numbers."""

import types

import pytest

from gridtools.daemon import dispatch
from gridtools.exec import ckpt

ENV = {"ckpt_name": "ck", "interface": "hibernator", "ckpt_command": "/bin/ck $job_pid",
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


@pytest.mark.parametrize("interface, commands, restart", [
    ("hibernator", True, True), ("CPR", True, True), ("cray-ckpt", True, True),
    ("application-level", True, False),     # restarts by its own script
    ("userdefined", False, False), ("transparent", False, False),   # the signal only
])
def test_which_interfaces_use_the_commands(interface, commands, restart):
    got = ckpt.settings({**ENV, "interface": interface, "clean_command": "/bin/clean"})
    assert (got["ckpt"], got["migr"], got["clean"]) == (
        ("/bin/ck $job_pid", "/bin/migr $job_id", "/bin/clean") if commands else (None, None, None))
    assert got["restart"] == ("/bin/restart" if restart else None)
    periodic = dispatch._checkpoint({"ckpt": "ck", "ckpt_when": "m"}, conf(interface=interface), queue())
    assert periodic["command"] == ("/bin/ck $job_pid" if commands else None)


def test_a_restarted_userdefined_job_runs_its_own_command():
    plan = {"ckpt": ckpt.settings({**ENV, "interface": "userdefined"}), "env": {"RESTARTED": "1"},
            "job_id": 7, "owner": "u",
            "exec": "/bin/job", "argv": ["job"]}
    ckpt.prepare_restart(plan)
    assert (plan["exec"], plan["argv"]) == ("/bin/job", ["job"])
    plan["ckpt"] = ckpt.settings(ENV)
    ckpt.prepare_restart(plan)
    assert plan["exec"] == "/bin/sh" and plan["argv"][-1] == "/bin/restart"


def test_the_commands_see_the_checkpoint_directory_and_signal():
    from gridtools.exec import procedure
    plan = {"ckpt": ckpt.settings({**ENV, "signal": "usr2"}), "job_id": 7, "owner": "u", "env": {}}
    values = procedure.procedure_values(plan, 99)
    assert procedure.expand_text("m $ckpt_dir $ckpt_signal $job_pid", values) == "m /scratch/ck usr2 99"


def test_no_environment_no_checkpoint():
    assert dispatch._checkpoint({"ckpt": "absent"}, conf(), queue()) is None
    assert dispatch._checkpoint({}, conf(), queue()) is None

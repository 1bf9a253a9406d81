"""Checkpointing environments in a running task (checkpoint(5)).

The dispatcher puts the job's checkpointing environment into its plan
(``plan["ckpt"]``: the ``when`` letters, after ``-c``, and the commands).
The shepherd then:

- on the way out of a migration (a host flush, ``qmod -r``, a queue
  suspended under ``x``, ``qconf -ke`` under ``s``) runs ``migr_command``,
  else ``ckpt_command``, before the job is ended and put back to wait; else
  sends ``signal`` and ends the job only if it has not ended by itself
  ``SIGNAL_GRACE`` seconds later;
- when the task was restarted (``RESTARTED=1``) runs ``restart_command``
  instead of the job's command line, if one is set;
- when the job is over (not migrating) runs ``clean_command``.

As in Grid Engine's shepherd, the commands belong to the kernel-level
interfaces (``KERNEL``: hibernator, cpr, cray-ckpt and application-level);
``userdefined`` and ``transparent`` jobs checkpoint themselves when given
``signal``, whatever commands the environment names. ``restart_command``
serves only the interfaces that restore a process image (``RESTORING``): an
application-level job restarts by running its own script again.

Commands run as the job's owner with the job's environment (by ``/bin/sh -c``,
as Grid Engine runs them, in the job's working directory), ``$job_pid``,
``$job_id``, ``$ckpt_dir``, ``$ckpt_signal`` and the other method variables
replaced; ``SGE_CKPT_DIR`` names the environment's ``ckpt_dir``.
"""

import signal

from gridtools.exec import jobproc, procedure

#: what the daemon sends a shepherd to have its HTCondor job sent the checkpoint signal the job
#: asked for (WantCheckpointSignal: condor_checkpoint, PERIODIC_CHECKPOINT), now
CHECKPOINT_NOW = signal.SIGRTMIN + 2
#: ``when`` letters under which leaving a host is a migration that checkpoints first
MIGRATING = frozenset("sxr")
#: seconds a job given the checkpoint signal on its way out has to end by itself
SIGNAL_GRACE = 10.0
#: interfaces whose checkpoints are made by the environment's commands
KERNEL = frozenset({"HIBERNATOR", "CPR", "CRAY-CKPT", "APPLICATION-LEVEL"})
#: interfaces that restart a job by its environment's restart_command
RESTORING = KERNEL - {"APPLICATION-LEVEL"}


def _set(value):
    return value if value and str(value).lower() != "none" else None


def settings(env, when_override=None):
    """plan["ckpt"] of a job using checkpointing environment ``env`` (a dict)."""
    when = str(when_override or env.get("when") or "")
    if when and not set(when) <= set("smxrn"):
        when = str(env.get("when") or "")          # -c gave an interval, not letters
    interface = str(env.get("interface") or "").upper()
    kernel, restoring = interface in KERNEL, interface in RESTORING
    return {"name": env.get("ckpt_name", ""), "when": when, "interface": interface,
            "ckpt": _set(env.get("ckpt_command")) if kernel else None,
            "migr": _set(env.get("migr_command")) if kernel else None,
            "restart": _set(env.get("restart_command")) if restoring else None,
            "clean": _set(env.get("clean_command")) if kernel else None,
            "dir": str(env.get("ckpt_dir") or "/tmp"), "signal": _set(env.get("signal"))}


def letters(envs, spec):
    """The ``when`` letters in force for a job description ``spec`` (its ``-c``
    letters over its environment's), given the environments by name; "" without one."""
    env = envs.get(spec.get("ckpt") or "")
    return settings(env, spec.get("ckpt_when"))["when"] if env is not None else ""


def migrates(plan):
    ckpt = plan.get("ckpt") or {}
    return bool(ckpt) and bool(set(ckpt.get("when") or "") & MIGRATING)


def migrate(plan, pid):
    """Checkpoint the job before it leaves its host. True when that was the
    environment's signal: the job then gets SIGNAL_GRACE seconds to write its
    checkpoint and end before it is killed."""
    ckpt = plan.get("ckpt") or {}
    command = ckpt.get("migr") or ckpt.get("ckpt")
    if command:
        procedure.run_method(plan, command, pid)
    elif ckpt.get("signal"):
        jobproc.signal_job(pid, signal.SIGCONT)
        jobproc.signal_job(pid, jobproc.signal_named(ckpt["signal"], signal.SIGUSR1))
        return True
    return False


def prepare_restart(plan):
    """A restarted task runs the environment's restart_command, when it has one (only
    an interface in RESTORING has: ``settings``)."""
    ckpt = plan.get("ckpt") or {}
    if ckpt.get("restart") and plan["env"].get("RESTARTED") == "1":
        command = procedure.expand_text(ckpt["restart"], procedure.procedure_values(plan, 0))
        plan["exec"], plan["argv"] = "/bin/sh", ["sh", "-c", command]


def clean(plan, result):
    """After the job's end (not when it migrates): the environment's clean_command."""
    ckpt = plan.get("ckpt") or {}
    if ckpt.get("clean") and not result.get("requeue"):
        procedure.run_method(plan, ckpt["clean"], 0)

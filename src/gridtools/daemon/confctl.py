"""Daemon control through qconf: -km, -ks, -at, -ke/-kej, -tsm and -cq.

``-km`` stops this daemon (it answers first, then signals itself), ``-ks``
stops scheduling until ``-at scheduler`` or a restart, ``-ke``/``-kej`` stop
execution daemons (an execution daemon for host H holds
``spool/execd/H/execd.lock`` and writes its pid to ``execd.pid``; it is sent
SIGTERM only while the lock proves it alive), ``-kej`` and ``-cq`` also
delete the jobs running on the named hosts or queues the way qdel does,
``-tsm`` makes the next pass write the scheduler monitoring files. ``-ke``
migrates the jobs on the host whose checkpointing ``when`` holds ``s``.
"""

import os
import signal
import time

from gridtools import cell
from gridtools.daemon import apply, view
from gridtools.daemon.state import running_tasks
from gridtools.errors import GridError
from gridtools.spool.files import is_locked, read_text


def kill(ctx):
    target = ctx.body.get("target")
    if target == "m":
        ctx.info(f"{ctx.who} kills qmaster")
        ctx.state.log(f"I|{ctx.who} stops the daemon")
        os.kill(os.getpid(), signal.SIGTERM)
    elif target == "s":
        if not ctx.state.scheduling:
            return ctx.fail("scheduler thread is not running")
        ctx.state.scheduling = False
        ctx.info(f"{ctx.who} kills scheduler")
    elif target in ("e", "ej"):
        _kill_execds(ctx, ctx.body.get("hosts") or [], jobs=(target == "ej"))
    else:
        raise GridError(f"error: unknown daemon {target!r}")


def _kill_execds(ctx, hosts, jobs):
    known = view.exec_hosts(ctx.state.config)
    if hosts == ["all"]:
        hosts = known
        if not hosts:
            return ctx.fail("there are no execution hosts to kill")
    for host in hosts:
        if host not in known:
            ctx.fail(f'"{host}" is not an execution host')
            continue
        if jobs:
            _delete_running(ctx, lambda granted, h=host: any(g[1] == h for g in granted), force=False)
        pid = _execd_pid(host)
        if pid and not jobs:
            _migrate_checkpointed(ctx, host)
        if pid:
            os.kill(pid, signal.SIGTERM)
            _await_exit(host)
            ctx.state.execd_stopped = True       # the host is Down (state u) before the next pass
            ctx.state.need_schedule = True
            ctx.info(f"{ctx.who} kills execd@{host}")
        else:
            ctx.info(f"no execd known on host {host}")


def _migrate_checkpointed(ctx, host):
    """checkpoint(5) ``when s``: the jobs on a host whose execution daemon is shut down
    are checkpointed (migr_command), ended and put back to wait for another host."""
    from gridtools.daemon import suspension
    from gridtools.exec import ckpt
    envs = ctx.state.config.objects["ckpt"]
    for job, task in list(running_tasks(ctx.state)):
        if any(g[1] == host for g in task.granted) and "s" in ckpt.letters(envs, job.spec):
            suspension.requeue(ctx.state, ctx.dispatcher, job, task)
            ctx.state.log(f"I|job {job.id}.{task.number} migrates: execd@{host} shuts down")


def _await_exit(host, limit=3.0):
    """Give an execution daemon sent SIGTERM a moment to let go of its lock, so that the
    next pass finds its host Down (its queue instances in state u take no jobs) rather
    than putting tasks into an inbox nobody reads any more."""
    lock = os.path.join(cell.spool("execd", host), "execd.lock")
    end = time.monotonic() + limit
    while is_locked(lock) and time.monotonic() < end:
        time.sleep(0.02)


def _execd_pid(host):
    """The pid of the execution daemon serving ``host`` while its lock proves it alive."""
    folder = cell.spool("execd", host)
    if "/" in host or not is_locked(os.path.join(folder, "execd.lock")):
        return 0
    try:
        pid = int((read_text(os.path.join(folder, "execd.pid")) or "").strip())
    except ValueError:
        return 0
    return pid if pid > 1 and pid != os.getpid() else 0


def _delete_running(ctx, selected, force):
    """Delete every running task whose granted queue instances ``selected`` accepts."""
    count = 0
    for job, task in list(running_tasks(ctx.state)):
        if selected([tuple(g) for g in task.granted]):
            apply.delete_task(ctx.state, ctx.dispatcher, job, task.number, ctx.now, force)
            ctx.state.touch(job)
            count += 1
    if count:
        ctx.state.need_schedule = True
    return count


def start_thread(ctx):
    name = ctx.body.get("name")
    if name != "scheduler":
        return ctx.fail(f'thread with name "{name}" is not supported')
    if ctx.state.scheduling:
        return ctx.info("scheduler thread is already running")
    ctx.state.scheduling = True
    ctx.state.need_schedule = True
    ctx.info("scheduler has been started")


def trigger_monitoring(ctx):
    if not ctx.state.scheduling:
        return ctx.fail("no scheduler registered at qmaster")
    ctx.state.monitor_next = True
    ctx.state.need_schedule = True
    ctx.info(f"{ctx.who} triggers scheduler monitoring")


def clear_usage(ctx):
    """-clearusage: forget the decayed and long-term usage of every user and project."""
    ctx.state.usage.clear(ctx.now)
    if ctx.state.condor is not None:          # one usage for the cell: the accountant's too
        ctx.state.condor.priorities.clear(ctx.now)
    ctx.state.need_schedule = True
    ctx.info(f"{ctx.who} cleared sharetree usage")


def clean_queues(ctx):
    """-cq: delete the jobs running in the named queues, queue domains or instances."""
    from gridtools.formats.sge.names import match_queue_spec
    conf = ctx.state.config
    groups = view.hostgroups(conf)
    known = set(view.exec_hosts(conf))
    for spec in ctx.body.get("queues") or []:
        instances = [(q, h) for q, queue in sorted(conf.objects["queue"].items())
                     for h in view.queue_hosts(queue, groups, known)
                     if match_queue_spec(spec, q, h, groups)]
        if not instances:
            ctx.fail(f'No cluster queue or queue instance matches the phrase "{spec}"')
            continue
        wanted = set(instances)
        _delete_running(ctx, lambda granted: any((g[0], g[1]) in wanted for g in granted), force=True)
        for qname, host in instances:
            ctx.info(f'{ctx.who} cleaned queue "{qname}@{host}"')

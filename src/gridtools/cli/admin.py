"""The ``gridtools`` administration command: init, daemon, execd, host, classad, dagman.

Also serves ``llctl`` (LoadLeveler's spelling of host drain/flush/suspend/resume).
"""

import sys

import click


class Failure(click.ClickException):
    """A refusal of the gridtools command: one line, ``error: ...``, as the other commands
    say theirs (click's own would begin with ``Error:``)."""

    def show(self, file=None):
        click.echo(f"error: {self.format_message()}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli():
    """gridtools cell administration."""


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                               "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def classad(args):
    """Evaluate ClassAd expressions and match ads (see gridtools-classad(1))."""
    from gridtools.cli.classad_cmd import main as classad_main
    sys.exit(classad_main(list(args), prog="gridtools classad"))


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                               "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def dagman(args):
    """Run one DAG (condor_submit_dag's manager job; see condor_submit_dag(1))."""
    from gridtools.cli.condor.dagman import main as dagman_main
    sys.exit(dagman_main(list(args)))


@cli.command()
@click.option("--slots", type=click.IntRange(min=1), default=None,
              help="Slots of all.q on each host (default: the number of CPUs).")
@click.option("--host", "hosts", multiple=True, metavar="NAME",
              help="An execution host (repeatable; default: this machine).")
def init(slots, hosts):
    """Create the cell (GRIDTOOLS_ROOT, or ~/.gridtools) or complete a partial one."""
    import os
    import pwd
    from gridtools import cell
    from gridtools.spool import cellsetup
    hosts = list(hosts) or [cell.hostname()]
    manager = pwd.getpwuid(os.getuid()).pw_name
    from gridtools.exec import gpus
    found = gpus.count()
    _run(lambda: cellsetup.initialise(cell.root(), hosts, slots or os.cpu_count() or 1, manager, found,
                                      personal=cell.is_personal()))
    click.echo(f"cell {cell.root()} ready: hosts {', '.join(hosts)}")


def _run(func):
    from gridtools.errors import GridError
    try:
        return func()
    except GridError as exc:
        raise Failure(str(exc).removeprefix("error: ")) from None


@cli.group()
def daemon():
    """Start, stop or ask after the cell's dispatcher daemon."""


@daemon.command("start")
def daemon_start():
    """Start the daemon in the background."""
    from gridtools.cli import cellinit
    from gridtools.errors import GridError
    from gridtools.spool import daemonctl as control
    _run(cellinit.ensure_cell)
    if control.running():
        try:        # (a lock that seemed held may have been another command's look at it)
            click.echo(f"daemon already running (pid {control.ready_pid(control.LOOK_WAIT)})")
            return
        except GridError:
            pass    # no daemon came up: start one (it finds out whether another holds the lock)
    import os
    from gridtools import cell
    if not os.access(cell.spool(), os.W_OK):
        if os.statvfs(cell.spool()).f_flag & os.ST_RDONLY:
            raise Failure(f"cannot start the daemon: {cell.spool()} is on a read-only file system")
        raise Failure(f"only the owner of the cell may start its daemon ({cell.spool()} is not writable)")
    started, number = _run(control.launch)
    click.echo(f"daemon {'started' if started else 'already running'} (pid {number})")


@daemon.command("stop")
def daemon_stop():
    """Stop the daemon; running jobs continue under their shepherds."""
    from gridtools.spool import daemonctl as control
    if not control.running() and not control.coming_back(control.STOP_WAIT):
        try:
            ended = control.stop_master()
        except PermissionError:
            raise Failure("only the user who started the daemon (or root) may stop it") from None
        click.echo("daemon not running" + ("; its master, which was to start it again, stopped" if ended else ""))
        return
    try:
        stopped = control.stop()
    except PermissionError:
        raise Failure("only the user who started the daemon (or root) may stop it") from None
    if not stopped:
        raise Failure("the daemon did not stop")
    click.echo("daemon stopped")


@daemon.command("status")
def daemon_status():
    """Print pid, uptime and the number of running and pending jobs (exit 1: not running)."""
    from gridtools.spool import daemonctl as control
    from gridtools.spool import status
    from gridtools.spool.listing import ACTIVE
    if not control.running():
        click.echo("daemon not running")
        sys.exit(1)
    snap = status.read() or {}
    running = sum(1 for r in snap.get("rows", []) if r["state"] in ACTIVE)
    pending = sum(1 for r in snap.get("rows", []) if "q" in r["state"])
    import time
    uptime = int(time.time() - snap.get("started", time.time()))
    h, rest = divmod(uptime, 3600)
    click.echo(f"daemon running: pid {control.pid()}, uptime {h}:{rest // 60:02d}:{rest % 60:02d}, "
               f"{running} running, {pending} pending")


@cli.command()
@click.option("--host", required=True, metavar="NAME", help="The execution host to serve.")
def execd(host):
    """Run an execution daemon for host NAME in the foreground (jobs dispatched to
    NAME are started by it, from the shared spool)."""
    from gridtools.cli import cellinit
    from gridtools.daemon.execd import serve_host
    _run(cellinit.ensure_cell)
    sys.exit(serve_host(host))


@daemon.command("run")
def daemon_run():
    """Run the daemon in the foreground (until SIGTERM or Ctrl-C)."""
    from gridtools.cli import cellinit
    from gridtools.daemon.__main__ import main as daemon_main
    _run(cellinit.ensure_cell)
    sys.exit(daemon_main())          # the same process as a started daemon's: exec server first


# ---------------------------------------------------------------- simulation

@cli.command()
@click.argument("trace", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the measurements as JSON.")
def simulate(trace, as_json):
    """Replay the workload of TRACE (YAML or JSON) through the scheduler in virtual time
    and print per-user shares over time, waits, utilization and pass times."""
    import json

    import yaml

    from gridtools.errors import GridError
    from gridtools.sim import report
    from gridtools.sim.engine import Simulation
    try:
        with open(trace, encoding="utf-8") as fh:
            data = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except OSError as exc:
        raise Failure(f"cannot read trace {trace}: {exc}") from None
    except yaml.YAMLError as exc:
        raise Failure(f"cannot read trace {trace}: {_yaml_problem(exc)}") from None
    if not isinstance(data, dict):
        raise Failure(f"trace {trace}: expected a mapping with cell and submissions")
    try:
        stats = Simulation(data).run()
    except (GridError, KeyError, TypeError, ValueError) as exc:
        raise Failure(f"trace {trace}: {exc}") from None
    if as_json:
        click.echo(json.dumps({"samples": stats.samples, "waits": stats.waits, "busy": stats.busy,
                               "capacity": stats.capacity, "passes": stats.passes,
                               "end_time": stats.end_time}))
    else:
        click.echo(report.text(stats), nl=False)


def _yaml_problem(exc):
    """A YAML parser's error in one line: what it was reading, what it found wrong, and
    where (line and column, counted from 1), instead of its text over several lines."""
    problem = getattr(exc, "problem", None)
    if not problem:
        return " ".join(str(exc).split())
    context = getattr(exc, "context", None)
    text = f"{context}: {problem}" if context else problem
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        text += f" (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(text.split())


# ---------------------------------------------------------------- host states

@cli.group()
def host():
    """Drain, flush, suspend or resume execution hosts (see gridtools-host(8))."""


def _host_command(op, summary):
    @host.command(op, help=summary)
    @click.option("--all", "all_hosts", is_flag=True, help="Every execution host of the cell.")
    @click.argument("hosts", nargs=-1)
    def command(all_hosts, hosts):
        from gridtools.cli import hostctl
        from gridtools.errors import GridError, UsageError
        try:
            code = hostctl.send(op, list(hosts), all_hosts)
        except UsageError as exc:
            raise click.UsageError(str(exc)) from None
        except GridError as exc:
            raise Failure(str(exc).removeprefix("error: ")) from None     # (Failure says "error: ")
        sys.exit(code)
    return command


for _op, _summary in (
        ("drain", "Let running jobs finish; accept no new jobs (Draining, then Drained)."),
        ("flush", "Put running jobs back into the queue; accept no new jobs (Flush)."),
        ("suspend", "Stop all jobs where they stand; accept no new jobs (Suspend)."),
        ("resume", "Return to normal; continue the jobs suspend stopped.")):
    _host_command(_op, _summary)


def main(argv, prog="gridtools"):
    """Entry point used by the launchers."""
    try:
        if prog == "llctl":
            from gridtools.cli import hostctl
            return hostctl.llctl(argv)
        cli.main(args=list(argv), prog_name=prog, standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        return 1
    return 0

"""condor_off, condor_on and condor_restart: an administrator turns the daemons of
machines off and on, or restarts them.

    condor_off [-graceful | -fast | -peaceful | -force-graceful] [daemon] [targets]
    condor_on [daemon] [targets]
    condor_restart [-graceful | -fast | -peaceful] [targets]

One gridtools daemon is every HTCondor daemon of a cell, its master included;
what a machine's own daemons are is its startd. So condor_off with no daemon
or with -startd turns the startd of each host named off: it takes no new job
(of either dialect) and its running jobs are put back to wait (-graceful, the
default, and -fast) or finish (-peaceful): the host states of
``daemon.hostreq`` (flush, drain). condor_on (no daemon or -startd) turns it
on again (resume). condor_restart (no daemon, -master) has the cell's daemon
start again; its jobs go on under their shepherds. The daemons the cell's one
daemon stands for (-master for condor_off and condor_on, -schedd, -collector,
-negotiator, -kbdd) cannot be turned off or on apart: refused with a line
that says so. Targets: host names (and -name, -addr), -all; none means this
machine's host. They need ADMINISTRATOR access at the MASTER (by default the
cell's managers).
"""


from gridtools.cli.condor import admintool
from gridtools.errors import UsageError

USAGE = ("Usage: {prog} [general-options] [targets] [daemon]\n\n" + admintool.GENERAL + "{how}\n"
         + admintool.targets_usage() + """
where [daemon] can be one of:
    -daemon <name>\tspecify the target daemon by name.
    Or use one of the following options to select one of the standard daemons
    -master{master}
    -startd
    -schedd
    -collector
    -negotiator
    -kbdd

{what}
""")
HOW = """\
    -graceful\t\tThe default. If jobs are running, wait for up to the configured 
\t\t\tgrace period for them to finish, then exit
    -fast\t\tquickly shutdown daemons, immediately evicting any running jobs
    -peaceful\t\twait indefinitely for jobs to finish before shutdown
    -force-graceful\tupgrade a peaceful shutdown to a graceful shutdown
"""
WHAT = {"condor_on": "  {prog} turns on the condor daemons specified in the config file.\n",
        "condor_off": "  {prog} turns off the specified daemon.\n"
                      "  If no daemon is given, everything except the master is shut down.\n",
        "condor_restart": "  {prog} causes specified daemon to restart itself.\n"
                          "  If sent to the master, all daemons on that host will restart.\n"}
#: option -> the letters HTCondor's tools ask for at least
OPTIONS = {"help": 1, "version": 1, "pool": 1, "graceful": 1, "fast": 2, "peaceful": 2,
           "force-graceful": 2, "all": 2, "name": 2, "addr": 2, "daemon": 2, "master": 1, "startd": 2,
           "schedd": 2, "collector": 3, "negotiator": 2, "kbdd": 1}
DAEMONS = ("master", "startd", "schedd", "collector", "negotiator", "kbdd")


def _usage(prog):
    what = "condor_on" if prog.endswith("_on") else "condor_restart" if prog.endswith("restart") else "condor_off"
    return USAGE.format(prog=prog, how="" if what == "condor_on" else HOW,
                        master="" if what != "condor_restart" else "\t\t(the default)",
                        what=WHAT[what].format(prog=prog))


def run(argv, prog):
    op = "on" if prog.endswith("_on") else "restart" if prog.endswith("restart") else "off"
    names, seen = admintool.parse(argv, OPTIONS, _usage(prog), valued=("pool", "name", "addr", "daemon"))
    how, every, daemon = "graceful", False, None
    for option, value in seen:
        if option == "daemon":
            daemon = value.lower()
        elif option in ("graceful", "fast", "peaceful", "force-graceful") and op != "on":
            how = "graceful" if option == "force-graceful" else option
        elif option == "all":
            every = True
        elif option in DAEMONS:
            daemon = option
        else:
            raise UsageError(f"ERROR: unknown option -{option}")
    body = {"dialect": "condor", "op": op, "how": how, "daemon": daemon, "all": every, "names": names}
    return admintool.ask("daemon_ctl", body)[0]


def main(argv, prog="condor_off"):
    return admintool.main(run, argv, prog, _usage(prog))

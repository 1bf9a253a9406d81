"""Command dispatch for the launchers in bin/.

Maps a command name to the module that implements it and imports only that
module, so each command pays at start-up for exactly what it uses.
"""

import sys

# command name -> module under gridtools.cli; each module has main(argv) -> int
COMMANDS = {
    "gridtools": "admin",
    "qsub": "sge.qsub",
    "qstat": "sge.qstat",
    "qdel": "sge.qdel",
    "qhold": "sge.qhold",
    "qrls": "sge.qhold",
    "qhost": "sge.qhost",
    "qacct": "sge.qacct",
    "qrsh": "sge.qrsh",
    "qconf": "sge.qconf",
    "qmod": "sge.qmod",
    "qalter": "sge.qalter",
    "llctl": "hostctl",
    "condor_config_val": "condor.config_val",
    "sge_share_mon": "sge.share_mon",
    "qquota": "sge.qquota",
    "qrsub": "sge.qrsub",
    "qrstat": "sge.qrstat",
    "qrdel": "sge.qrdel",
}


def run(name, argv=None):
    """Run command ``name`` with ``argv`` (default sys.argv[1:]); return its exit code."""
    if argv is None:
        argv = sys.argv[1:]
    module = COMMANDS.get(name)
    if module is None:
        sys.stderr.write(f"gridtools: unknown command {name!r}\n")
        return 1
    mod = __import__("gridtools.cli." + module, fromlist=["main"])
    try:
        return mod.main(argv, prog=name) or 0
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 141


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], sys.argv[2:]))

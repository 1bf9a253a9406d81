"""condor_reschedule: have the schedd start a negotiation cycle now.

    condor_reschedule [-help] [-version] [-pool HOST] [-all | HOST | -name NAME] ...

The cell's daemon runs a scheduling pass at once (a negotiation cycle when
the negotiator decides), instead of at its next interval: scripts call it
after submitting. It needs WRITE access at the SCHEDD, as HTCondor's schedd
checks it.
"""

from gridtools.cli.condor import admintool

USAGE = """\
Usage: {prog} [general-options] [targets]

where [general-options] can be zero or more of:
    -help\t\tgives this usage information
    -version\t\tprints the version
    -pool <hostname>\tuse the given central manager to find daemons

where [targets] can be zero or more of:
    -all\t\tall hosts in your pool (overrides other targets)
    hostname\t\tgiven host
    <ip.address:port>\tgiven "sinful string"
  (for compatibility with other Condor tools, you can also use:)
    -name name\tgiven host
    -addr <addr:port>\tgiven "sinful string"
  (if no targets are specified, the local host is used)

  {prog} causes the condor_schedd to update the central manager
  and initiate a new negotiation cycle.

"""
OPTIONS = {"help": 1, "version": 1, "pool": 1, "all": 2, "name": 2, "addr": 2}


def run(argv, prog):
    names, seen = admintool.parse(argv, OPTIONS, USAGE.format(prog=prog))
    every = any(option == "all" for option, _value in seen)
    return admintool.ask("reschedule", {"dialect": "condor", "all": every, "names": names})[0]


def main(argv, prog="condor_reschedule"):
    return admintool.main(run, argv, prog, USAGE.format(prog=prog))

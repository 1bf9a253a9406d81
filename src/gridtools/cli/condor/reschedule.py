"""condor_reschedule: have the schedd start a negotiation cycle now.

    condor_reschedule [-help] [-version] [-pool HOST] [-all | HOST | -name NAME] ...

The cell's daemon runs a scheduling pass at once (a negotiation cycle when
the negotiator decides), instead of at its next interval: scripts call it
after submitting. It needs WRITE access at the SCHEDD, as HTCondor's schedd
checks it.
"""

from gridtools.cli.condor import admintool

USAGE = ("Usage: {prog} [general-options] [targets]\n\n" + admintool.GENERAL + "\n"
         + admintool.targets_usage() + """
  {prog} causes the condor_schedd to update the central manager
  and initiate a new negotiation cycle.

""")
OPTIONS = {"help": 1, "version": 1, "pool": 1, "all": 2, "name": 2, "addr": 2}


def run(argv, prog):
    names, seen = admintool.parse(argv, OPTIONS, USAGE.format(prog=prog))
    every = any(option == "all" for option, _value in seen)
    return admintool.ask("reschedule", {"dialect": "condor", "all": every, "names": names})[0]


def main(argv, prog="condor_reschedule"):
    return admintool.main(run, argv, prog, USAGE.format(prog=prog))

"""condor_vacate: the startd of each machine named vacates the jobs running in its
slots.

    condor_vacate [-help] [-version] [-graceful | -fast] [-pool HOST]
                  [-all | -constraint EXPR | HOST | SLOT@HOST | -name NAME | -addr ADDR] ...

Each job is asked to leave (its soft kill signal; with -fast killed at once)
and waits to run again, as the startd's policy vacates a job (an eviction
event, 004, in its log). A host names every slot of it, ``slotN@host`` that
slot (a partitionable slot's dynamic slots with it), -all every host of the
cell, -constraint the hosts of the slot ads it is true for; no target names
this machine's host. It needs ADMINISTRATOR access at the STARTD (by
default the cell's managers; ALLOW_ADMINISTRATOR in condor_config(5)).
Options are read as HTCondor's tools read them: a prefix of at least the
letters HTCondor asks for (-g, -fa, -al, -n, -ad, -con).
"""

from gridtools.cli.condor import admintool

USAGE = ("Usage: {prog} [general-options] [targets]\n\n" + admintool.GENERAL.replace("{", "{{").replace("}", "}}")
         + "    -graceful\t\tgracefully vacate the jobs (the default)\n"
         "    -fast\t\tquickly vacate the jobs (no checkpointing)\n\n" + admintool.targets_usage(True) + """
  {prog} causes the condor_startd to vacate the running
  job(s) on specific machines.  If you specify a slot
  (for example, "slot1@hostname"), only that slot will be
  vacated.  If you specify just a hostname, all jobs running under
  any slots at that host will be vacated.  By default,
  the jobs will be checkpointed (if possible), though if you
  specify the -fast option, they will be immediately killed.

""")

#: option -> (its shortest prefix's length, what it does)
OPTIONS = {"help": 1, "version": 1, "graceful": 1, "fast": 2, "pool": 1, "all": 2, "name": 2,
           "addr": 2, "constraint": 3}


def run(argv, prog):
    names, seen = admintool.parse(argv, OPTIONS, USAGE.format(prog=prog),
                                  valued=("pool", "name", "addr", "constraint"))
    fast = False
    for option, _value in seen:
        if option in ("graceful", "fast"):
            fast = option == "fast"
    word = "Vacate-All-Claims-Fast" if fast else "Vacate-All-Claims"
    return admintool.to_startds("vacate", names, seen, word, fast=fast)


def main(argv, prog="condor_vacate"):
    return admintool.main(run, argv, prog, USAGE.format(prog=prog))

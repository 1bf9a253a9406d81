"""condor_checkpoint: the startd of each machine named asks the jobs running in its
slots to checkpoint, and lets them go on.

    condor_checkpoint [-help] [-version] [-pool HOST]
                      [-all | -constraint EXPR | HOST | SLOT@HOST | -name NAME | -addr ADDR] ...

A job asks for it with ``+WantCheckpointSignal = true``: it then gets its
checkpoint signal (``CheckpointSig``, else its soft kill signal) and is
expected to write its checkpoint and exit as ``SuccessCheckpointExitCode``
says (``checkpoint_exit_code``), to be started again at once where it ran;
any other exit holds it (see condor_checkpoint(1)). Other jobs are left
alone, as are slots in any state but Claimed/Busy. Targets are named as
condor_vacate's (``vacate``); the command needs DAEMON access at the STARTD
(by default the cell's managers; ALLOW_DAEMON in condor_config(5)).
"""

from gridtools.cli.condor import admintool

USAGE = ("Usage: {prog} [general-options] [targets]\n\n" + admintool.GENERAL.replace("{", "{{").replace("}", "}}")
         + admintool.targets_usage(True) + """
  {prog}
  causes the condor_startd to perform a periodic checkpoint on running jobs on specific machines.
  The jobs continue to run once they are done checkpointing.

""")

#: option -> (its shortest prefix's length, what it does)
OPTIONS = {"help": 1, "version": 1, "pool": 1, "all": 2, "name": 2, "addr": 2, "constraint": 3}


def run(argv, prog):
    names, seen = admintool.parse(argv, OPTIONS, USAGE.format(prog=prog),
                                  valued=("pool", "name", "addr", "constraint"))
    return admintool.to_startds("checkpoint", names, seen, "Checkpoint-All-Jobs")


def main(argv, prog="condor_checkpoint"):
    return admintool.main(run, argv, prog, USAGE.format(prog=prog))

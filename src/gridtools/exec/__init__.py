"""The execution layer: what runs on an execution host.

- ``launch``    forking a shepherd for a task (from the exec server or an execd)
- ``shepherd``  one task from start to result: prolog, PE start, the job, PE stop,
                epilog, limits, signals, usage; its lock file says who runs what
- ``tasklock``  that lock file as the daemon reads it, and launches taken back
- ``jobproc``   the job process: identity, limits, streams, signals, procedures,
                and killing the processes a killed shepherd left behind
- ``client``    the qrsh client of an interactive job: who it is, whether it is gone
- ``plan``      building the plan a shepherd carries out (command line, environment)
- ``tmpdir``    the task's TMPDIR: fresh, private, made without following links
- ``ckpt``      checkpointing environments in a running task: migration,
                restart and clean commands (checkpoint(5))
- ``transfer``  HTCondor file transfer: input files into the scratch folder, output back
- ``poolplugins`` the pool's file transfer plugins (FILETRANSFER_PLUGINS): what they move
- ``load``      this host's load values
- ``loadsensor`` Grid Engine's load sensors: site programs reporting more load values
- ``piped``     a program run beside the jobs and read through a pipe that never blocks
- ``gpus``      how many GPUs this machine has (for a new cell's gpu consumable)
"""

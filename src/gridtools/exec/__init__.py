"""Running tasks: everything between a decision to start a task and its result.

- ``plan``      the execution plan of one task (command line, environment, output
                files, limits), built from the job and the queue
- ``launch``    forking a shepherd for a plan, detached from the daemon
- ``shepherd``  one task's life: TMPDIR, prolog, PE start, the job, limits and
                signals, PE stop, epilog; writes the task's result
- ``jobproc``   the job process itself: starting it as its owner, signals,
                queue methods, procedures, usage
- ``ckpt``      checkpointing environments in a running task: migration,
                restart and clean commands (checkpoint(5))
- ``load``      this machine's load values (psutil)
- ``gpus``      how many GPUs this machine has (for a new cell's gpu consumable)
"""

"""Running jobs: what a shepherd needs, and the shepherd itself.

- ``plan``      the execution plan of a task (command line, environment, files)
- ``launch``    forking a shepherd for a plan
- ``shepherd``  runs one task from its plan and writes its result
- ``jobproc``   the job process: identity, limits, signals, usage
- ``tmpdir``    the task's TMPDIR: fresh, private, made without following links
- ``load``      this machine's load values
"""

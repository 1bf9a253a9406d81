"""The dispatcher daemon: thin glue around the pure scheduler.

- ``loop``      the daemon: ``tick()`` runs one pass of named phases (intake,
                reap, schedule, apply, publish); ``run()`` repeats it on wake-ups
- ``control``   start, stop, status and auto-start of the daemon
- ``state``     the in-memory working copy of the spool
- ``intake``    applying queued client requests
- ``view``      building the scheduler's snapshot from state and configuration
- ``dispatch``  carrying out decisions: shepherds, signals, accounting
- ``reap``      collecting results of ended tasks, purging old jobs
- ``publish``   the status snapshot for queries
- ``auth``      managers, operators, owners
- ``execd``     the exec server that forks shepherds, and per-host execution daemons
- ``confreq``   qconf requests: rights, then ``confstore`` (validated writes under etc/),
                ``confobj``/``confattr`` (whole objects and attribute edits),
                ``confrefs`` (references between objects), ``confctl`` (daemon control)
- ``monitor``   the scheduler monitoring file written after ``qconf -tsm``
- ``faults``    what the daemon set aside or cannot write now, published for queries
- ``crash``     crash points (``GRIDTOOLS_CRASH_AT``) for testing what a crash leaves
"""

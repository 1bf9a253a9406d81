"""The dispatcher daemon: thin glue around the pure scheduler.

- ``loop``      the daemon: ``tick()`` runs one pass of named phases (intake,
                reap, schedule, apply, publish); ``run()`` repeats it on wake-ups
- ``control``   start, stop, status and auto-start of the daemon
- ``state``     the in-memory working copy of the spool
- ``intake``    applying queued client requests
- ``admitjob``  Grid Engine's admission rules re-checked for each job taken in
- ``arreq``     advance reservations: qrsub and qrdel requests, their store,
                their jobs, their end
- ``petask``    tasks started inside a parallel job (qrsh -inherit), their accounting
- ``devices``   GPU device indices held by running tasks
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
"""

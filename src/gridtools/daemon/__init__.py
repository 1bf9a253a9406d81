"""The dispatcher daemon: thin glue around the pure scheduler.

- ``__main__``  the daemon's process (``python -m gridtools.daemon``): its exec
                server forked while it is lean, then the loop
- ``master``    what ``gridtools daemon start`` starts: runs the daemon as its child
                and starts it again when it dies, as HTCondor's condor_master
- ``loop``      the daemon: ``tick()`` runs one pass of named phases (intake,
                reap, schedule, apply, publish); ``run()`` repeats it on wake-ups;
                ``open()``/``tick()``/``close()`` run passes in the calling process
- ``state``     the in-memory working copy of the spool
- ``handlers``  the table of request kinds and the functions that apply them
- ``intake``    taking in queued client requests, in order; submits
- ``jobreq``    delete and hold requests (qdel, qhold, qrls), whole jobs changed as one set
- ``journal``   bulk changes made durable by one record of spool/journal, replayed
                after a crash
- ``apply``     the one door through which every change to a job passes
- ``admitjob``  Grid Engine's admission rules re-checked for each job taken in
- ``arreq``     advance reservations: qrsub and qrdel requests, their store,
                their jobs, their end
- ``petask``    tasks started inside a parallel job (qrsh -inherit), their accounting
- ``devices``   GPU device indices held by running tasks
- ``view``      building the scheduler's snapshot from state and configuration
- ``dispatch``  carrying out starts: plans, task folders; the execution layer
                (``LocalExecution``: shepherds of this machine) and its signals
- ``reap``      collecting results of ended tasks, purging old jobs
- ``publish``   the status snapshot for queries (rows from ``spool.rows``)
- ``usage``     the decayed usage of users and projects the share tree weighs
- ``qcontrol``  queue and host states (``sched.queue_state``) carried out on tasks
- ``suspension`` signals that stop and continue tasks, sent again when missed
- ``auth``      managers, operators, owners
- ``execd``     the exec server that forks shepherds, and per-host execution daemons
- ``confreq``   qconf requests: rights, then ``confstore`` (validated writes under etc/),
                ``confobj``/``confattr`` (whole objects and attribute edits),
                ``confrefs`` (references between objects), ``confctl`` (daemon control)
- ``alterreq``, ``qmodreq``, ``hostreq``  qalter, qmod and host requests
- ``monitor``   the scheduler monitoring files (qconf -tsm, params MONITOR=1)
- ``faults``    what the daemon set aside or cannot write now, published for queries
- ``crash``     crash points (``GRIDTOOLS_CRASH_AT``) for testing what a crash leaves
- ``condorjob`` HTCondor jobs in the daemon: user log events, exit and periodic policy
                carried out, LeaveJobInQueue, the plan of a proc, condor_qedit;
                ``condorpolicy`` the job's own expressions as pure decisions,
                ``condorreq`` the requests of condor_rm/hold/release/qedit/prio,
                ``userlogs`` appending to a user log as its owner,
                ``otherremove`` the jobs a removed job's OtherJobRemoveRequirements
                takes with it,
                ``history`` the job history and job epoch history files condor_history reads
- ``condor``    the HTCondor side at the loop's phases: which pass decides (Grid
                Engine's order with START, or the negotiator's), slots, priorities
- ``condorconf`` condor_config for the cell and per execution host, read again on change
- ``hostfacts`` what a host's slot ads say of it: CPUs, memory, load, KeyboardIdle
- ``probes``    the load sensors and startd cron jobs the dispatcher runs for its
                machine's hosts (``hostreport`` runs an execution daemon's);
                ``startdcron`` HTCondor's startd cron jobs and their ads
- ``machines``  every slot's startd state; the policy carried out on its job
- ``slotads``   one pass's slot ads and job ads: for the negotiator, START, condor_status
- ``userprio``  the accountant (user priorities) kept in the spool
- ``condorsec``   security levels of the HTCondor commands' requests
- ``condoradmin`` condor_userprio's edits and condor_reconfig
- ``confset``   condor_config_val -set, -unset, -rset, -runset, and the configuration
                in use as it is published for condor_config_val's daemon targets

Commands never import this package (``gridtools daemon`` and ``gridtools
execd`` excepted, which run it): they read the published status and the
spool, and start or stop the daemon with ``spool.daemonctl``.
"""

"""The HTCondor dialect's commands, one module per command (or pair of commands).

- ``submit``      condor_submit: a description's clusters queued as gridtools jobs
- ``q``           condor_q: options and views; ``qviews`` its tables, ``analyze`` its
                  -analyze/-better-analyze (slot ads of the cell's hosts), ``qlisting``
                  its batch view and totals from the status's job listing
- ``queue``       the queue as HTCondor sees it: procs from the published status,
                  selections, and the ads built when asked for (shared by the commands)
- ``formatting``  -af, -format, -json and -long printing of ads (condor_q, condor_history)
- ``act``         condor_rm, condor_hold, condor_release
- ``edit``        condor_qedit, condor_prio
- ``history``     condor_history
- ``wait``        condor_wait
- ``config_val``  condor_config_val
- ``status``      condor_status; ``machineviews`` its tables and summaries,
                  ``compactviews`` its -compact forms, ``submitters`` the submitter
                  and schedd ads made from the job queue and their tables; ``statusviews``
                  its print-mask views (-startd, -any, -gpus) and the StartD ads
- ``printmask``   HTCondor's print masks (print-format text) and their tables;
                  ``printas`` their PRINTAS functions; ``printformat`` the
                  -print-format option of condor_status and condor_q
- ``userprio``    condor_userprio; ``userprio_table`` its table
- ``reconfig``    condor_reconfig
- ``submit_dag``  condor_submit_dag; ``dagman`` (``gridtools dagman``), ``dagrun``
                  and ``dagwatch``: the DAG's manager, its loop and how it learns
                  that node jobs ended; ``daglock`` the lock file that keeps a
                  second manager off a running DAG; ``dagscripts`` the nodes'
                  PRE and POST scripts; ``dagrecover`` the manager's own
                  events in the nodes log and recovery; ``dagfiles`` the job state log, node
                  status file and dot file it writes
- ``jobsubmit``   a submit description to a submit request (the path DAG nodes take)
- ``adformat``    -long, -af, -format, -json and -constraint for ad listings
"""

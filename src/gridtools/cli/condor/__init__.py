"""The HTCondor dialect's commands, one module per command (or pair of commands).

- ``submit``      condor_submit: a description's clusters queued as gridtools jobs
- ``q``           condor_q: options and views; ``qviews`` its tables, ``analyze`` its
                  -analyze/-better-analyze (slot ads of the cell's hosts)
- ``queue``       the queue as HTCondor sees it: procs from the published status,
                  selections, and the ads built when asked for (shared by the commands)
- ``formatting``  -af, -format, -json and -long printing of ads (condor_q, condor_history)
- ``act``         condor_rm, condor_hold, condor_release
- ``edit``        condor_qedit, condor_prio
- ``history``     condor_history
- ``wait``        condor_wait
- ``config_val``  condor_config_val

They never import the Grid Engine dialect (cli.sge); what both read lives in
cli.status, cli.ask and the packages below cli.
"""

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
- ``reconfig``    condor_reconfig; ``onoff`` condor_off, condor_on and condor_restart;
                  ``vacate`` condor_vacate; ``admintool`` what these share;
                  ``fetchlog`` condor_fetchlog; ``reschedule`` condor_reschedule; ``preen`` condor_preen;
                  ``version`` condor_version
- ``submit_dag``  condor_submit_dag; ``dagman`` (``gridtools dagman``), ``dagrun``
                  and ``dagwatch``: the DAG's manager, its loop and how it learns
                  that node jobs ended; ``daglock`` the lock file that keeps a
                  second manager off a running DAG; ``dagscripts`` the nodes'
                  PRE and POST scripts; ``dagrecover`` the manager's own
                  events in the nodes log and recovery; ``dagfiles`` the job state log, node
                  status file and dot file it writes
- ``jobsubmit``   a submit description to a submit request (the path DAG nodes take)
- ``ssh_to_job``  condor_ssh_to_job (and condor_submit -interactive's session);
                  ``sessionstreams`` the streams root relays for a session as another user
- ``adformat``    -long, -af, -format, -json and -constraint for ad listings

Here: ``table_width`` and ``cut``, how condor_q and condor_status fit their tables to
the display (kept in the package, which both load anyway, so that neither loads the
other's tables for them).
"""


def table_width(wide):
    """The width a tool's tables are cut to, one less than the columns (None: not cut),
    from its -wide option (``wide``: None without it, True for -wide, N for -wide:N):
    -wide:N's N; without -wide, the terminal's when the output is one (as condor_q and
    condor_status fit their tables)."""
    if wide is True:
        return None
    if wide is not None and wide > 0:
        return wide
    import sys
    if wide is None and not sys.stdout.isatty():
        return None
    import os
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns or 80
    except OSError:
        return 80


def cut(table, width):
    """The lines of ``table`` cut to ``width`` less one characters, as HTCondor fits its
    tables to a terminal or to -wide:N (None: whole)."""
    if width is None:
        return table
    keep = max(0, width - 1)
    return "".join(line[:keep] + "\n" for line in table.split("\n")[:-1]) if table else table


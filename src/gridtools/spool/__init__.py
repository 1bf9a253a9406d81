"""The only package that touches a cell's files.

- ``files``     atomic writes, flock locks, liveness checks by lock
- ``ids``       job and advance-reservation ids: claimed by clients, confirmed by the daemon
- ``requests``  the request queue clients write and the daemon applies in order
- ``replies``   the daemon's answers, and how a client knows they are the daemon's
- ``jobs``      the job store: one directory per job (description, script, state, task results)
- ``ars``       the advance reservation store: one file per reservation
- ``status``    the compact status snapshot the daemon publishes for queries, in sections
- ``daemonconf`` the HTCondor configuration the daemon runs with, as it publishes it, and
                the persistent settings of condor_config_val -set (PERSISTENT_CONFIG_DIR)
- ``rows``      the job rows and facts of that snapshot (the read model queries share)
- ``listing``   its compact job listing: runs of jobs that show alike, in qstat's order,
                and their rendered qstat lines (what plain qstat, condor_q and qdel read)
- ``daemonctl`` starting, stopping and asking after the daemon of a cell
- ``usage``     the decayed usage record (``spool/usage.json``)
- ``condorstate`` the HTCondor side's records: user priorities, slot states
- ``wake``      waking the daemon (a FIFO) and detecting whether it runs
- ``config``    reading and writing the cell's configuration objects under etc/
- ``acct``      appending accounting records (all or nothing)
- ``journal``   the journal of bulk job changes (``spool/journal``), flushed before answers
- ``quarantine`` setting aside job folders and files the daemon cannot read
- ``cellsetup`` creating a cell, and the modes of the spool's security model
- ``rotation``  the time-rotated history files (HTCondor's names), and finding them

Layout of ``$GRIDTOOLS_ROOT/spool`` is documented in gridtools_spool(5).
"""

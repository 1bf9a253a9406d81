"""The only package that touches a cell's files.

- ``files``     atomic writes, flock locks, liveness checks by lock
- ``ids``       job and advance-reservation id sequences (allocated by clients)
- ``requests``  the request queue clients write and the daemon applies in order
- ``jobs``      the job store: one directory per job (description, script, state, task results)
- ``ars``       the advance reservation store: one file per reservation
- ``status``    the compact status snapshot the daemon publishes for queries
- ``wake``      waking the daemon (a FIFO) and detecting whether it runs
- ``config``    reading and writing the cell's configuration objects under etc/
- ``acct``      appending accounting records

Layout of ``$GRIDTOOLS_ROOT/spool`` is documented in gridtools_spool(5).
"""

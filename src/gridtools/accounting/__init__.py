"""Accounting: what finished jobs used, computed from accounting records.

Pure code over the records of ``gridtools.formats.accounting`` (one dict per
finished job task); reading the file is left to the caller.

- ``records`` the accounting record of an ended job task, which the
              dispatcher appends to the cell's accounting file
- ``qacct``   which records a qacct invocation selects (owner, queue, host,
              times, tasks, resource requests ...) and their summed usage,
              in total or grouped by owner, queue, host, project and so on
- ``report``  the text of qacct's job entries and summary tables, laid out
              as Grid Engine 8.1.9 lays them out
- ``usage``   usage decayed with a half-life per user, project and user
              within a project, fed by job samples (the share tree reads
              it), and its plain-data form for the daemon to persist
- ``userprio`` HTCondor's user priorities: real priority following the
              slots in use with PRIORITY_HALFLIFE, priority factors,
              accumulated usage, condor_userprio's edits and rows
"""

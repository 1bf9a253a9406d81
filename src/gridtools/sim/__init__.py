"""The simulator: a workload replayed through the real scheduler pass in virtual time.

- ``cellconf``  a cell's configuration from a compact description (hosts,
                slots, queue and scheduler attributes, users, projects, the
                share tree, any object in qconf text) on top of the shipped
                defaults, parsed by the real parsers
- ``engine``    the virtual clock: submissions, starts and ends of tasks,
                each pass by ``sched.cycle.cycle``, state changes through
                ``model.transitions``, usage in an ``accounting.usage.Ledger``
- ``report``    what a run shows: per-user shares over time, waits,
                utilization and the passes' times

No processes run and no clock is read: a week with day-long half-lives
passes in seconds, and a pass over 100,000 jobs can be timed on hosts that
do not exist (``gridtools simulate TRACE``).
"""

"""The scheduler: pure functions from a snapshot of the cell to decisions.

Nothing here reads files or clocks; ``now`` is part of the snapshot. The
daemon, ``qsub -w``/``qalter -w``, qrsub's admission and the simulator all
call the same code.

Records and inputs
- ``snapshot``    the typed, dialect-neutral records: jobs and their requests,
                  running tasks, queue instances, hosts, PEs, quota sets,
                  advance reservations, the scheduler configuration; and the
                  decisions (Start, Suspend, Reserve, Kill, Reject, ...)
- ``inputs``      configuration objects and job descriptions -> those records
                  (values parsed, load scaled by ``load_scaling``, implicit
                  consumable defaults worked out)
- ``reasons``     why a job did not start: structured reasons, capped per kind
                  (each dialect renders them: ``formats.sge.reasons``)

The pass (``cycle.cycle``) and its stages
- ``cycle``       the pass: the cell's bookkeeping (``Pass``), the filter
                  stage, and the loop over the ordered jobs
- ``order``       the order of pending jobs (``priority``, ``urgency``, tickets
                  from ``policy``)
- ``category``    what jobs with one request share: the queue instances that
                  could ever serve it, and why the others cannot
- ``place``       a job's next task onto queue instances: alarms, the queue
                  sort, serial placement, the pools of room (the cell's or an
                  advance reservation's)
- ``queues``      queue instance suitability, queue sort keys, the load formula
- ``resources``   complexes: fixed values, unknown and FORCED resources,
                  consumables counted down at global, host and queue level
- ``pe``          parallel jobs: PE names, slot ranges, allocation rules
- ``rqs``         resource quota sets: which rule applies, counters per key,
                  dynamic limits, qquota's rows
- ``ar``          advance reservations in the pass: what they hold, who may use
                  them, kills at their end
- ``reserve``     looking ahead: the planner that reserves for ``-R y`` jobs and
                  keeps backfilled jobs out of reserved resources
- ``pe_plan``     the earliest time a PE's allocation rule fits (reservations)
- ``timeline``    future use of resources as step functions (profiles)
- ``evalbudget``  what one owner's matching may take of a pass, in ClassAd
                  evaluation steps; the jobs put off go first in the next pass

Beside the pass
- ``admit``       the slots of a new advance reservation, or why there are none
- ``schedule``    the records of the scheduler monitoring file for a pass
- ``queue_state`` queue instance states that change by themselves (calendars,
                  subordination, suspend thresholds), and what they do to tasks
- ``calendar``    evaluating calendars
- ``priority``    Grid Engine's normalized job priority
- ``urgency``     the urgency of a job's needs, waiting time and deadline
- ``policy``      the ticket policies (share tree, functional, override)

HTCondor's matchmaking
- ``negotiator``  one negotiation cycle: its inputs, configuration and outcome
- ``negotiation`` the working state of a cycle: the pie spin, submitters' turns
- ``autocluster`` significant attributes, job autoclusters and slot classes
- ``groups``      accounting groups: quotas, surplus, the order groups negotiate in
- ``startd``      a slot's state and activity machine (START, SUSPEND, PREEMPT, ...)
- ``analysis``    condor_q -analyze / -better-analyze: why a job does not match
- ``matchpass``   the pass in the negotiator's order (sched_conf params NEGOTIATOR=1):
                  the cycle's filter, the negotiator's matches, Grid Engine's
                  placement on the matched host, preemptions
- ``local``       jobs that run without a slot (scheduler and local universes)
"""

"""Grid Engine's ticket policies, as pure functions of small typed inputs.

- ``config``      the scheduler configuration values the policies read
                  (PolicyConfig, one default each), policy_hierarchy parsing
- ``inputs``      jobs, users/projects/departments and the share tree as the
                  policies see them (frozen records)
- ``refs``        the working record of each task in a ticket calculation,
                  and the job counts per user, project and department
- ``sharetree``   the share tree policy: node usage, targets, running and
                  pending share tree tickets
- ``sharereport`` the share tree node by node, as sge_share_mon prints it
- ``functional``  the functional policy (user, project, department, job shares)
- ``override``    the override policy (oticket of members and jobs)
- ``greedy``      ranking pending tasks one by one, best first, as the
                  functional and shared override policies do
- ``tickets``     all three policies in policy_hierarchy order: ``compute``
- ``renice``      nice values of running jobs from their tickets

Urgency is ``gridtools.sched.urgency``; the final priority and the order of
pending jobs ``gridtools.sched.priority``; decayed usage
``gridtools.accounting.usage``.
"""

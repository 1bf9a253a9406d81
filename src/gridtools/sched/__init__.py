"""The scheduler: pure functions from typed inputs to decisions; no files, no clock.

Grid Engine's pass:
  snapshot     the typed records a pass sees (jobs, queues, hosts) and its decisions
  inputs       configuration objects and job descriptions -> those records
  cycle        one pass: order -> filter -> place, with job categories
  order        the order pending jobs are considered in (priority, urgency, tickets)
  priority, urgency   Grid Engine's job priority and urgency
  policy/      the ticket policies (share tree, functional, override)
  queues       which queue instances may take a job, in which order
  queue_state  queue and host states that change by themselves
  calendar     calendar_conf(5) evaluated at a moment
  resources    resource requests against what the cluster offers
  pe           parallel jobs and the PE allocation rules
  reasons      why a job did not start, structured

HTCondor's matchmaking:
  negotiator   one negotiation cycle: its inputs, configuration and outcome
  negotiation  the working state of a cycle: the pie spin, submitters' turns
  autocluster  significant attributes, job autoclusters and slot classes
  groups       accounting groups: quotas, surplus, the order groups negotiate in
  startd       a slot's state and activity machine (START, SUSPEND, PREEMPT, ...)
  analysis     condor_q -analyze / -better-analyze: why a job does not match
"""

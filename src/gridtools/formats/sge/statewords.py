"""The words Grid Engine's scheduler messages use for the states of queue instances and
hosts (``dropped because it is ...``), by the names of ``sched.snapshot.QState`` and
``HostState`` members. Apart from ``states``, which holds the letters: qstat -j words
its messages with these and needs nothing of the scheduler.
"""

#: how "dropped because it is ..." names a state that keeps an instance from taking jobs
WORDS = {"DISABLED": "disabled", "CAL_DISABLED": "disabled", "SUSPENDED": "suspended",
         "SUBORDINATED": "suspended", "CAL_SUSPENDED": "suspended",
         "UNKNOWN": "temporarily not available", "ERROR": "in error state",
         "AMBIGUOUS": "in configuration ambiguous state", "ORPHANED": "orphaned",
         "LOAD_ALARM": "overloaded", "SUSPEND_ALARM": "overloaded"}

#: how "dropped because host ... is ..." names a host state (HostState member names)
HOST_WORDS = {"DRAIN": "draining", "FLUSH": "flushed", "SUSPEND": "suspended", "DOWN": "down"}

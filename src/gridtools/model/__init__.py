"""Plain data of jobs, with the rules of how they change; standard library only.

- ``job``          Job and Task, task states and hold letters
- ``taskset``      task numbers as ranges (TaskRanges), pending holds (TaskHolds)
- ``transitions``  the one door through which every task state change passes
- ``alteration``   which fields of a job description qalter may change, and how
"""

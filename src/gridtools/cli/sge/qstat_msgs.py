"""Scheduling messages as ``qstat -j`` groups them.

The scheduler gives each waiting job the lines that explain why it did not
start. Grid Engine splits such lines in two kinds: messages about a queue
instance as a whole ("dropped because it is full", "All queues dropped ..."),
which it keeps once in a global list, and messages about one job, which it
keeps with the job's number and can summarize over many jobs with a generic
text ("Jobs dropped because of hold state"). Each kind has Grid Engine's
message number; ``classify`` finds both for a line.
"""

# (pattern contained in the line, message number, generic text); first match wins
_JOB_MESSAGES = (
    ("hold state", 33, "Jobs dropped because of hold state"),
    ("job dependencies", 35, "Job dropped because of job dependencies"),
    ("error state", 32, "Jobs dropped because of error state"),
    ("execution time not reached", 31, "Jobs can not run because execution time not reached"),
    ("start time is in the future", 31, "Jobs can not run because execution time not reached"),
    ("maxujobs", 34, "Job dropped because of user limitations"),
    ("task concurrency", 45, "Jobs dropped because of the task concurrency limit"),
    ("does not exist", 43, "Jobs can not run because no parallel environment matches"),
    ("only offers", 24, "Jobs can not run because the parallel environment offers too few slots"),
    ("user list", 1, "Jobs can not run because of missing permission for queue instances"),
    ("excluded project list", 4, "Jobs can not run because their project is excluded from queue instances"),
    ("project list", 2, "Jobs can not run because their project is not allowed in queue instances"),
    ("hard queue list", 6, "Jobs can not run because queue instances are not in their hard queue list"),
    ("not in pe list", 8, "Jobs can not run because queue instances are not in the queue list of their PE"),
    ("checkpointing environment", 10, "Jobs can not run because queue instances are not in the ckpt list"),
    ("not of type", 12, "Jobs can not run because queue instances are not of the requested type"),
    ("cannot run at host", 0, "Jobs can not run because of host restrictions"),
    ("cannot run at global host", 20, "Jobs can not run because of global resource restrictions"),
    ("offers only", 17, "Jobs can not run because queue instances do not offer the requested resources"),
)

# queue-level lines: (pattern, message number)
_GLOBAL_MESSAGES = (
    ("All queues dropped because of overload or full", 28),
    ("dropped because it is full", 37),
    ("dropped because it is overloaded", 27),
    ("is in suspend alarm", 26),
    ("dropped because it is suspended", 38),
    ("dropped because it is disabled", 39),
    ("dropped because host", 40),
    ("dropped because it is", 40),
)

#: job lines shown with Grid Engine's wording where the scheduler words them differently
CANONICAL = {
    "job is in error state": "Job is in error state",
    "job dropped because its start time is in the future (-a)": "execution time not reached",
}

#: generic text for job lines no pattern knows
OTHER = (17, "Jobs can not run because of other reasons")


def canonical(line):
    return CANONICAL.get(line, line)


def global_number(line):
    """Message number of a queue-level line, or None when the line is about one job."""
    for pattern, number in _GLOBAL_MESSAGES:
        if pattern in line and (line.startswith("queue instance") or number == 28):
            return number
    return None


def job_message(line):
    """(number, generic text) of a job line."""
    for pattern, number, generic in _JOB_MESSAGES:
        if pattern in line:
            return number, generic
    return OTHER


ERROR_LINE = "Job is in error state"


def split(snap):
    """Global lines (first seen first) and {job id: [job lines]} of a snapshot's reasons.

    A job with a task in error state gets Grid Engine's "Job is in error
    state" also when the scheduler did not look at it.
    """
    global_lines, per_job = [], {}
    live = {r["id"] for r in snap["rows"] if r["state"] != "z"}
    for job_id in sorted(snap.get("reasons") or {}):
        if job_id not in live:
            continue
        for line in snap["reasons"][job_id]:
            if global_number(line) is not None:
                if line not in global_lines:
                    global_lines.append(line)
            else:
                per_job.setdefault(job_id, []).append(canonical(line))
    for row in snap["rows"]:
        if row["state"] == "Eqw" and ERROR_LINE not in per_job.get(row["id"], ()):
            per_job.setdefault(row["id"], []).insert(0, ERROR_LINE)
    return global_lines, per_job


def grouped(per_job):
    """[(number, generic text, [job ids])] sorted by message number, as ``qstat -j`` lists them."""
    groups = {}
    for job_id, lines in per_job.items():
        for line in lines:
            number, generic = job_message(line)
            entry = groups.setdefault(number, (generic, []))
            if job_id not in entry[1]:
                entry[1].append(job_id)
    return [(n, groups[n][0], sorted(groups[n][1])) for n in sorted(groups)]

"""Scheduling messages as ``qstat -j`` groups them.

The daemon publishes each waiting job's reasons as structured data; here
they become Grid Engine's sentences (``formats.sge.reasons``). Grid Engine
splits them in two kinds: messages about a queue instance as a whole
("dropped because it is full", "All queues dropped ..."), kept once in a
global list, and messages about one job, kept with the job's number and
summarized over many jobs with a generic text ("Jobs dropped because of
hold state"). Each line is a ``Msg``: the text, with its message number and
generic text attached.
"""

from gridtools.formats.sge import reasons as sge_reasons


class Msg(str):
    """A rendered reason: a str, plus Grid Engine's message number and generic text."""

    number = 17
    generic = sge_reasons.OTHER[1]

    @classmethod
    def of(cls, text, number, generic=""):
        msg = cls(text)
        msg.number = number
        msg.generic = generic
        return msg


ERROR_LINE = "Job is in error state"


def _error_msg():
    return Msg.of(ERROR_LINE, 32, "Jobs dropped because of error state")


def render(plain, owner):
    """A published reason as a Msg; global (queue-level) or not."""
    text = sge_reasons.render(plain, owner)
    if sge_reasons.is_queue_level(plain):
        return Msg.of(text, sge_reasons.queue_number(plain)), True
    number, generic = sge_reasons.job_generic(plain)
    return Msg.of(text, number, generic), False


def split(snap, only=None):
    """Global lines (first seen first) and {job id: [job lines]} of a snapshot's reasons
    (the job lines of the jobs in ``only`` alone, when given; the global lines come from
    every job's reasons all the same).

    A job with a task in error state gets Grid Engine's "Job is in error
    state" also when the scheduler did not look at it.
    """
    global_lines, per_job, seen, looked = [], {}, set(), set()
    live = {r["id"] for r in snap["rows"] if r["state"] != "z"}
    jobs = snap.get("jobs") or {}
    for job_id in sorted(snap.get("reasons") or {}):
        if job_id not in live:
            continue
        owner = (jobs.get(job_id) or {}).get("owner", "")
        mine = only is None or job_id in only
        for plain in snap["reasons"][job_id]:
            if not mine:
                key = repr(plain)                   # a queue-level line is the same for every job
                if key in looked or not sge_reasons.is_queue_level(plain):
                    continue
                looked.add(key)
            msg, is_global = render(plain, owner)
            if is_global:
                if msg not in seen:
                    seen.add(msg)
                    global_lines.append(msg)
            else:
                per_job.setdefault(job_id, []).append(msg)
    for row in snap["rows"]:
        if row["state"] == "Eqw" and ERROR_LINE not in per_job.get(row["id"], ()):
            per_job.setdefault(row["id"], []).insert(0, _error_msg())
    return global_lines, per_job


def job_message(line):
    """(number, generic text) of a job line."""
    return getattr(line, "number", sge_reasons.OTHER[0]), getattr(line, "generic", sge_reasons.OTHER[1])


def global_number(line):
    """Message number of a queue-level line."""
    return getattr(line, "number", 40)


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

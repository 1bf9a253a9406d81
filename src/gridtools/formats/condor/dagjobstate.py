"""The job state log of a DAG (JOBSTATE_LOG): its lines, as HTCondor's DAGMan writes them.

One line per event, fields separated by one space, each beginning with the
time in seconds since the epoch::

    1292620511 INTERNAL *** DAGMAN_STARTED 4972.0 ***
    1292620525 NodeA SUBMIT 4973.0 local - 1
    1292620526 NodeA JOB_SUCCESS 0 local - 1
    1292620535 INTERNAL *** DAGMAN_FINISHED 0 ***

A node line names the node, the event (a user log event's name, or one of
the manager's own: PRE_SCRIPT_STARTED, JOB_SUCCESS, ...), the job id
(``-`` before there is one; the job's exit status in JOB_SUCCESS and
JOB_FAILURE), the node's job tag (``-`` without one), ``-`` and the node's
sequence number: a number given to each run of a node, counting up across
the DAG (a retry takes a new one). Pegasus and other workflow tools read
this file, so its form is kept exactly. Everything here is pure.
"""

#: the "node" of the manager's own lines
INTERNAL = "INTERNAL"
#: the job id and job tag of a line without one
NONE = "-"
#: the submit file command that names the command holding a node's job tag
TAG_NAME = "+job_tag_name"
#: the command holding the job tag when TAG_NAME names none (Pegasus's)
PEGASUS_SITE = "+pegasus_site"


def internal_line(when, what):
    """A line of the manager's own: DAGMAN_STARTED 12.0, DAGMAN_FINISHED 0, RECOVERY_STARTED ..."""
    return f"{int(when)} {INTERNAL} *** {what} ***"


def node_line(when, node, event, job_id, tag, sequence):
    """A node's line: time, node, event, job id, job tag, ``-``, sequence number."""
    return f"{int(when)} {node} {event} {job_id or NONE} {tag or NONE} - {sequence}"


def parse_line(line):
    """(time, node, sequence number) of a line (0 for an INTERNAL line's), or None for a
    line that is not one of the log's."""
    words = line.split(" ")
    try:
        when = int(words[0])
    except ValueError:
        return None
    if len(words) < 2 or not words[1]:
        return None
    sequence = 0
    if len(words) >= 7 and words[1] != INTERNAL:
        try:
            sequence = int(words[6])
        except ValueError:
            return None
    return when, words[1], sequence


def _unquote(text):
    if text.startswith('"'):
        text = text[1:]
    if text.endswith('"'):
        text = text[:-1]
    return text


def _value(submit_text, command):
    """The value the last ``command = value`` line of a submit file gives (commands in any
    case), '' without one or when it holds a macro."""
    found = ""
    for line in submit_text.splitlines():
        name, equals, value = line.partition("=")
        if equals and name.strip().lower() == command.lower():
            found = value.strip()
    return "" if "$" in found else found


def job_tag(submit_text):
    """A node's job tag, from its submit file: the value of the command that
    ``+job_tag_name`` names (quotes dropped), else of ``+pegasus_site``; ``-`` without one."""
    name = _unquote(_value(submit_text, TAG_NAME)) or PEGASUS_SITE
    return _unquote(_value(submit_text, name)) or NONE


class Recovery:
    """What a manager that recovers a DAG takes from the job state log its predecessor
    wrote: the time of the last node line, the lines of that second (a line already
    written is not written again, nor any line older than that), each node's last
    sequence number and the highest."""

    def __init__(self, text=""):
        self.last, self.lines, self.sequences, self.highest = 0, set(), {}, 0
        for line in text.splitlines():
            parsed = parse_line(line)
            if parsed is None:
                continue
            when, node, sequence = parsed
            self.highest = max(self.highest, sequence)
            if node == INTERNAL:
                continue
            self.sequences[node] = sequence
            if when > self.last:
                self.last, self.lines = when, set()
            if when == self.last:
                self.lines.add(line)

    def written(self, line):
        """Whether the predecessor wrote this node line already (or one after it)."""
        when = int(line.split(" ", 1)[0])
        return when < self.last or (when == self.last and line in self.lines)

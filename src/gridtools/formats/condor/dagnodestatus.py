"""The node status file of a DAG (NODE_STATUS_FILE), as HTCondor's DAGMan writes it.

A set of ClassAds in the new syntax: a ``DagStatus`` ad for the whole DAG,
a ``NodeStatus`` ad per node (in DAG file order), and a ``StatusEnd`` ad
with the time the file was written and of the next update. Statuses carry
DAGMan's numbers, with their names in a comment::

    [
      Type = "NodeStatus";
      Node = "A";
      NodeStatus = 5; /* "STATUS_DONE" */
      StatusDetails = "";
      RetryCount = 0;
      JobProcsQueued = 0;
      JobProcsHeld = 0;
    ]

The node counts are ``dagprogress``'s. Everything here is pure.
"""

import enum
import time
from dataclasses import dataclass, field

from gridtools.classad.values import quote_string
from gridtools.formats.condor.dagprogress import node_sets


class NodeStatus(enum.IntEnum):
    """A node's status, as DAGMan numbers it (also the DAG's own DagStatus)."""

    STATUS_NOT_READY = 0      # a parent has not finished (or a FINAL node waits)
    STATUS_READY = 1          # its parents are done; it has not started
    STATUS_PRERUN = 2         # its PRE script runs
    STATUS_SUBMITTED = 3      # its jobs are in the queue
    STATUS_POSTRUN = 4        # its POST script runs
    STATUS_DONE = 5
    STATUS_ERROR = 6
    STATUS_FUTILE = 7         # an ancestor failed: it never runs


#: the state set of ``node_sets`` -> the node status
_STATUS_OF = {"Done": NodeStatus.STATUS_DONE, "Failed": NodeStatus.STATUS_ERROR,
              "Prerun": NodeStatus.STATUS_PRERUN, "Queued": NodeStatus.STATUS_SUBMITTED,
              "Postrun": NodeStatus.STATUS_POSTRUN, "Ready": NodeStatus.STATUS_READY,
              "Unready": NodeStatus.STATUS_NOT_READY, "Futile": NodeStatus.STATUS_FUTILE}
#: a running node's status -> the failed node's details once the DAG has ended without it
_WAS = {NodeStatus.STATUS_SUBMITTED: "Was STATUS_SUBMITTED", NodeStatus.STATUS_PRERUN: "Was STATUS_PRERUN",
        NodeStatus.STATUS_POSTRUN: "Was STATUS_POSTRUN"}


@dataclass
class Details:
    """What the node status file says besides the progress counts."""

    dag_files: list                          # the DAG files, as given to condor_submit_dag
    outcome: str = ""                        # "" while running, else success, failed, aborted, held, removed
    final_pending: bool = False              # the FINAL node has still to run (removed, aborted)
    finished: bool = False                   # the manager is leaving: no next update
    retries: dict = field(default_factory=dict)    # node -> retries so far
    procs: dict = field(default_factory=dict)      # node -> (queued procs, held procs, running procs)
    errors: dict = field(default_factory=dict)     # node -> why it failed


def dag_status(d):
    """(DagStatus, its note, whether running nodes count as failed): the DAG's status
    as DAGMan gives it in the file."""
    if d.outcome == "success":
        return NodeStatus.STATUS_DONE, "success", True
    if d.outcome in ("failed", "aborted") and d.finished:
        return NodeStatus.STATUS_ERROR, d.outcome, True
    if d.outcome in ("removed", "aborted"):
        if d.final_pending:
            return NodeStatus.STATUS_SUBMITTED, d.outcome, False
        return NodeStatus.STATUS_ERROR, d.outcome, True
    return NodeStatus.STATUS_SUBMITTED, d.outcome if d.outcome == "held" else "", False


def plain_statuses(dag, p):
    """{node: NodeStatus} of every node, from the progress sets alone."""
    states = {}
    for key, names in node_sets(dag, p).items():
        for name in names:
            states[name] = _STATUS_OF[key]
    return states


def node_statuses(dag, p, d, mark_error=False):
    """{node: (NodeStatus, details, procs queued, procs held)} in DAG file order."""
    states = plain_statuses(dag, p)
    out = {}
    for name, node in dag.nodes.items():
        status = states[name]
        queued, held, running = d.procs.get(name, (0, 0, 0))
        note = ""
        if status in _WAS and mark_error:
            status, note, queued, held = NodeStatus.STATUS_ERROR, _WAS[status], 0, 0
        elif status is NodeStatus.STATUS_SUBMITTED:
            note = "not_idle" if running else "idle"
        elif status is NodeStatus.STATUS_ERROR:
            note = d.errors.get(name, "")
        elif status is NodeStatus.STATUS_FUTILE:
            note = "Had an ancestor node fail"
        elif status is NodeStatus.STATUS_DONE and node.done:
            note = "User defined as DONE"
        out[name] = (status, note, queued, held)
    return out


def _stamp(when):
    return f"{int(when)}; /* {quote_string(time.ctime(when) if when else 'none')} */"


def render_node_status(dag, p, d, now, min_update):
    """The node status file's text at ``now``; the next update ``min_update`` seconds
    later (none once the manager is leaving or the DAG was removed)."""
    status, note, mark_error = dag_status(d)
    nodes = node_statuses(dag, p, d, mark_error)
    counts = {key: len(names) for key, names in node_sets(dag, p).items()}
    held, idle = p.jobs_held, p.jobs_idle + p.jobs_held
    if mark_error:
        counts["Failed"] += counts["Prerun"] + counts["Queued"] + counts["Postrun"]
        counts["Prerun"] = counts["Queued"] = counts["Postrun"] = held = idle = 0
    files = ",\n".join(f"    {quote_string(name)}" for name in d.dag_files)
    lines = ["[", '  Type = "DagStatus";', "  DagFiles = {", files, "  };",
             f"  Timestamp = {_stamp(now)}",
             f"  DagStatus = {int(status)}; /* {quote_string(f'{status.name} ({note})')} */",
             f"  NodesTotal = {len(dag.nodes)};"]
    for key, name in (("Done", "Done"), ("Prerun", "Pre"), ("Queued", "Queued"), ("Postrun", "Post"),
                      ("Ready", "Ready"), ("Unready", "Unready"), ("Futile", "Futile"),
                      ("Failed", "Failed")):
        lines.append(f"  Nodes{name} = {counts[key]};")
    lines += [f"  JobProcsHeld = {held};", f"  JobProcsIdle = {idle}; /* includes held */", "]"]
    for name, (state, details, queued, held_procs) in nodes.items():
        lines += ["[", '  Type = "NodeStatus";', f"  Node = {quote_string(name)};",
                  f"  NodeStatus = {int(state)}; /* {quote_string(state.name)} */",
                  f"  StatusDetails = {quote_string(details)};",
                  f"  RetryCount = {d.retries.get(name, 0)};",
                  f"  JobProcsQueued = {queued};", f"  JobProcsHeld = {held_procs};", "]"]
    last = d.finished or d.outcome == "removed"
    lines += ["[", '  Type = "StatusEnd";', f"  EndTime = {_stamp(now)}",
              f"  NextUpdate = {_stamp(0 if last else now + min_update)}", "]"]
    return "".join(line + "\n" for line in lines)

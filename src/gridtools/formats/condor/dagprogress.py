"""A running DAG's progress as the attributes HTCondor's DAGMan publishes in its own job ad.

``progress_attrs`` is pure: the DAG runner gives it what it knows (which
nodes are done, failed, running a PRE or POST script, have jobs in the
queue, and how those jobs stand) and sends the result to its job ad.
"""

from dataclasses import dataclass, field

from gridtools.formats.condor.dag import NodeKind
from gridtools.formats.condor.dagstate import ready_nodes, unreachable

#: DAG_Status values, as HTCondor's DAGMan numbers them
STATUS_OK = 0
STATUS_NODE_FAILED = 2
STATUS_ABORT = 3
STATUS_RM = 4
STATUS_HALTED = 6


@dataclass
class Progress:
    """What a DAG runner knows of its nodes and jobs at one moment."""

    done: set = field(default_factory=set)
    failed: set = field(default_factory=set)
    queued: set = field(default_factory=set)          # nodes with jobs in the queue
    prerun: set = field(default_factory=set)          # nodes running their PRE script
    postrun: set = field(default_factory=set)         # nodes running their POST script
    status: int = STATUS_OK
    in_recovery: bool = False
    jobs_submitted: int = 0
    jobs_completed: int = 0
    jobs_idle: int = 0
    jobs_held: int = 0
    jobs_running: int = 0


def node_sets(dag, p):
    """{"Done", "Failed", "Prerun", "Queued", "Postrun", "Ready", "Unready", "Futile"}:
    the names of the nodes in each state; every node is in exactly one. Ready nodes
    could start now (their parents are done) but wait (-maxjobs, a MAXJOBS category, a
    retry, a halt); futile ones can never run (an ancestor failed); unready ones wait
    for their parents."""
    busy = p.queued | p.prerun | p.postrun
    done = p.done | {n for n, node in dag.nodes.items() if node.done}
    futile = unreachable(dag, p.failed) - done - p.failed - busy
    parents = {}
    for parent, child in dag.edges:
        parents.setdefault(child, set()).add(parent)
    settled = done | p.failed | busy
    ready = {n for n, node in dag.nodes.items() if node.kind is not NodeKind.FINAL
             and n not in settled and parents.get(n, set()) <= done}
    ready |= {n for n in ready_nodes(dag, done, p.failed, busy) if dag.nodes[n].kind is NodeKind.FINAL}
    sets = {"Done": done, "Failed": set(p.failed), "Prerun": set(p.prerun),
            "Queued": p.queued - p.prerun - p.postrun, "Postrun": set(p.postrun), "Ready": ready,
            "Futile": futile}
    sets["Unready"] = set(dag.nodes) - done - p.failed - busy - ready - futile
    return sets


def node_counts(dag, p):
    """{"Total", "Done", "Failed", "Prerun", "Queued", "Postrun", "Ready", "Unready",
    "Futile"} node counts (``node_sets``)."""
    counts = {"Total": len(dag.nodes)}
    counts.update({key: len(names) for key, names in node_sets(dag, p).items()})
    return counts


def progress_attrs(dag, p):
    """{attribute: ClassAd expression text} of the DAG manager's job ad: DAG_Status,
    DAG_InRecovery, DAG_Nodes* and DAG_Jobs*, as HTCondor's DAGMan publishes them."""
    attrs = {f"DAG_Nodes{key}": str(value) for key, value in node_counts(dag, p).items()}
    attrs.update({"DAG_Status": str(p.status), "DAG_InRecovery": str(int(p.in_recovery)),
                  "DAG_JobsSubmitted": str(p.jobs_submitted), "DAG_JobsIdle": str(p.jobs_idle),
                  "DAG_JobsHeld": str(p.jobs_held), "DAG_JobsRunning": str(p.jobs_running),
                  "DAG_JobsCompleted": str(p.jobs_completed)})
    return attrs

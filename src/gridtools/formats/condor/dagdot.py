"""A DAG drawn in dot syntax (the DOT statement), as HTCondor's DAGMan draws it.

::

    digraph DAG {
        label="DAGMan Job status at Fri May  9 17:22:18 2014";

        "A" [shape=ellipse label="A (Done)" style=bold];
        "B" [shape=ellipse label="B (R)" peripheries=2];
        "C" [shape=box label="C (E)"];

        "A" -> "B";
        "A" -> "C";
    }

Each node's shape and label tell its status: (I) waiting, (Pre) and (Post)
its scripts run (dotted), (R) its jobs are queued (a double outline),
(Done) (bold), (E) failed (a box). The text of an INCLUDE header file goes
after the label, between two comment lines. Everything here is pure.
"""

import time

from gridtools.formats.condor.dagnodestatus import NodeStatus

#: a node's status -> (shape, label suffix, other attributes)
_LOOKS = {NodeStatus.STATUS_PRERUN: ("ellipse", "Pre", " style=dotted"),
          NodeStatus.STATUS_SUBMITTED: ("ellipse", "R", " peripheries=2"),
          NodeStatus.STATUS_POSTRUN: ("ellipse", "Post", " style=dotted"),
          NodeStatus.STATUS_DONE: ("ellipse", "Done", " style=bold"),
          NodeStatus.STATUS_ERROR: ("box", "E", "")}
#: how every other node looks (not ready, ready, futile)
_WAITING = ("ellipse", "I", "")


def render_dot(dag, statuses, now, include=None):
    """The dot text of ``dag`` at ``now``: ``statuses`` is {node: NodeStatus}, ``include``
    (name, text) of the INCLUDE header file, or None."""
    lines = ["digraph DAG {", f'    label="DAGMan Job status at {time.ctime(now)}";', ""]
    if include is not None:
        name, text = include
        lines.append(f"// Beginning of commands included from {name}.")
        text = text if not text or text.endswith("\n") else text + "\n"
        head = "".join(line + "\n" for line in lines) + text
        lines = [f"// End of commands included from {name}.", ""]
    else:
        head = ""
    for name in dag.nodes:
        shape, label, more = _LOOKS.get(statuses.get(name), _WAITING)
        lines.append(f'    "{name}" [shape={shape} label="{name} ({label})"{more}];')
    lines.append("")
    order = {name: number for number, name in enumerate(dag.nodes)}
    for parent, child in sorted(dag.edges, key=lambda edge: (order[edge[0]], order[edge[1]])):
        lines.append(f'    "{parent}" -> "{child}";')
    lines.append("}")
    return head + "".join(line + "\n" for line in lines)

"""The share tree as its monitor shows it: one row per node.

Rows come in tree order, parents first. A ``default`` leaf is shown with
one child per user it stands for (every known user, and every owner of a
running job, who maps to it), each with the default leaf's shares; the
default row then sums its children. Targets, job counts and tickets are
those of the running jobs, as the last ticket calculation left them:

- level: the node's shares among its siblings' shares
- total: its share of the whole tree (the product of the levels above)
- long_target: its long-term share among the nodes with running jobs
- short_target: the share the scheduler aims at now (after usage and
  compensation)
- actual: its part of the tree's combined usage
"""

from dataclasses import dataclass

from gridtools.accounting.usage import ZERO, Usage
from gridtools.sched.policy.inputs import DEFAULT_USER
from gridtools.sched.policy.sharetree import search


@dataclass(frozen=True, slots=True)
class NodeReport:
    """One share tree node as sge_share_mon prints it."""
    path: str                    # "/", "/projA", "/projA/alice", "/default/bob"
    user: str = ""               # the user the node stands for
    project: str = ""            # the project of the node or above it
    shares: int = 0
    job_count: int = 0           # running tasks at or below the node
    level: float = 0.0
    total: float = 0.0
    long_target: float = 0.0
    short_target: float = 0.0
    actual: float = 0.0
    usage: float = 0.0           # combined (weighted) decayed usage
    decayed: Usage = ZERO        # the user's or project's own decayed usage
    long_term: Usage = ZERO      # and the part that never decays
    tickets: float = 0.0         # share tree tickets of the running tasks below


class _Row:
    """A report node being built."""
    __slots__ = ("name", "shares", "user", "project", "node", "children", "usage", "own",
                 "long_term", "count", "oltt", "ostt", "tickets")

    def __init__(self, name, shares, user, project, node):
        self.name, self.shares, self.user, self.project = name, shares, user, project
        self.node = node
        self.children = []
        self.usage = 0.0
        self.own = self.long_term = ZERO
        self.count, self.oltt, self.ostt, self.tickets = 0, 0.0, 0.0, 0.0


def report(work, members, running, weights):
    """NodeReports of the working tree ``work`` in the state of the running jobs."""
    tickets = {}
    for ref in running:
        if ref.node is not None:
            tickets[id(ref.node)] = tickets.get(id(ref.node), 0.0) + ref.stckt
    names = sorted(set(members.users) | {ref.user.name for ref in running if ref.user})
    root = _build(work, work.root, None, members, names, tickets)
    _fill(root, members, weights)
    rows = []
    _emit(root, None, 1.0, root.shares, root.usage, rows)
    return tuple(rows)


def _build(work, node, project, members, names, tickets):
    if project is None and node.project:
        project = node.name
    user = node.name if _is_user_leaf(node, members) else ""
    row = _Row(node.name, node.shares, user, project or "", node)
    row.count, row.oltt, row.ostt = node.count, node.oltt, node.ostt
    row.tickets = tickets.get(id(node), 0.0)
    for child in node.children:
        if child.origin is None:
            row.children.append(_build(work, child, project, members, names, tickets))
    if node.name == DEFAULT_USER and not node.children:
        row.children = [_twin_row(work, node, name, project, tickets) for name in names
                        if _maps_to(work, node, name, project)]
    return row


def _is_user_leaf(node, members):
    return (not node.children and not node.project and node.name != DEFAULT_USER
            and members.user(node.name) is not None)


def _maps_to(work, default, user, project):
    found = search(work.root, user, project, work.root)
    return found is default or (found is not None and found.origin is default)


def _twin_row(work, default, user, project, tickets):
    twin = next((c for c in default.parent.children if c.origin is default and c.name == user),
                None) if default.parent else None
    row = _Row(user, default.shares, user, project or "", twin)
    if twin is not None:
        row.count, row.oltt, row.ostt = twin.count, twin.oltt, twin.ostt
        row.tickets = tickets.get(id(twin), 0.0)
    return row


def _fill(row, members, weights):
    """Own and combined usage of a row and its children; sums a default row's children."""
    for child in row.children:
        _fill(child, members, weights)
    if row.user:
        user = members.user(row.user)
        entry = user.in_project(row.project) if row.project else None
        row.own, row.long_term = (entry.usage, entry.long_term) if entry else (user.usage,
                                                                                user.long_term)
    elif row.node is not None and row.node.project:
        member = members.project(row.name)
        row.own, row.long_term = (member.usage, member.long_term) if member else (ZERO, ZERO)
    if row.node is not None and row.node.project and row.node.children:
        row.usage = row.own.combined(weights)
    elif row.children:
        row.usage = sum(child.usage for child in row.children)
    else:
        row.usage = row.own.combined(weights)
    if row.name == DEFAULT_USER and row.children:
        _sum_children(row)


def _sum_children(row):
    row.count = sum(c.count for c in row.children)
    row.oltt = sum(c.oltt for c in row.children)
    row.ostt = sum(c.ostt for c in row.children)
    row.tickets = sum(c.tickets for c in row.children)


def _emit(row, parent_path, parent_total, sibling_shares, tree_usage, rows):
    path = "/" if parent_path is None else f"{parent_path.rstrip('/')}/{row.name}"
    level = row.shares / sibling_shares if sibling_shares > 0 else 0.0
    total = parent_total * level
    rows.append(NodeReport(path, row.user, row.project, row.shares, row.count, level, total,
                           row.oltt, row.ostt, row.usage / tree_usage if tree_usage else 0.0,
                           row.usage, row.own, row.long_term, row.tickets))
    child_shares = sum(child.shares for child in row.children)
    for child in row.children:
        _emit(child, path, total, child_shares, tree_usage, rows)

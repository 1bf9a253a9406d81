"""The share tree policy: tickets by long-term shares and decayed usage.

A job maps to one leaf: with a project, the project's node, or (when that
node has children) the user's leaf below it or the project's ``default``
leaf; without a project, the user's leaf outside all project subtrees or
the ``default`` leaf there. A user who maps to a ``default`` leaf gets a
virtual sibling leaf of his own with the default leaf's shares, so every
such user has the same long-term entitlement. Jobs of owners that are not
known users (and of unknown projects) map nowhere and get no share tree
tickets.

A node is active while jobs map to it or below it. Among the active
children of a node:

    ltt  = shares / sum of active siblings' shares       (long-term target)
    oltt = parent's oltt * ltt                           (its share of the tree)
    shr  = shares**2 / max(usage, MIN_USAGE * oltt)
    stt  = shr / sum of active siblings' shr             (short-term target)
    ostt = parent's ostt * stt

and when ``compensation_factor`` (cf) is not 0, a child whose ostt exceeds
cf * oltt has its shr divided by ostt / (cf * oltt) and the siblings' stt
and ostt are computed again: cf limits how far a node that used little may
race ahead of its long-term target.

Running jobs get ``ostt * weight_tickets_share`` of their leaf, split evenly
among the leaf's running jobs (or by job shares, -js, when any has some,
each job's tickets then rounded down to a whole number), computed over the
running jobs alone. Pending jobs are handed out in
order: at each leaf by job shares (or, when the policy is dependent, by the
tickets of the policies above it in the hierarchy) and first come, first
served; the n-th pending job of a node gets

    stt / (running + finished + n)

of the pool, where ``running`` counts the running jobs (each running task
one, whatever its slots) at and below the node and ``finished`` the decayed
count of the jobs that ended there (the users' and projects'
``finished_jobs``): a user's second job gets half of the first one's
tickets, the third a third. Going up the tree the lists of the children
that have pending jobs are merged by those tickets and the node's stt is
handed out the same way, except at the root: when a single child of the
root has pending jobs, that child is taken as the root (again and again
down the tree), so the levels above the first node with pending jobs in
more than one child (or with pending jobs of its own) count for nothing.
"""

from gridtools.accounting.usage import ZERO
from gridtools.sched.policy.inputs import DEFAULT_USER

#: floor of a node's usage in the shr formula, times its long-term share
MIN_USAGE = 1.0


class TreeNode:
    """A share tree node with the working values of one calculation."""
    __slots__ = ("name", "shares", "project", "children", "parent", "origin", "usage",
                 "finished", "count", "running", "ltt", "oltt", "stt", "ostt", "shr", "entries")

    def __init__(self, name, shares, project, parent=None, origin=None):
        self.name, self.shares, self.project = name, shares, project
        self.parent = parent
        self.origin = origin         # for a user's twin of a default leaf: that leaf
        self.children = []
        self.usage = 0.0
        self.finished = 0.0          # decayed count of the jobs that ended at or below it
        self.entries = []
        self.reset()

    def reset(self):
        self.count = 0               # tasks (running and pending) at or below it
        self.running = 0             # running tasks at or below it
        self.ltt = self.oltt = self.stt = self.ostt = self.shr = 0.0

    def walk(self):
        """This node and all below it, parents before children."""
        yield self
        for child in self.children:
            yield from child.walk()


def copy_tree(spec, parent=None):
    node = TreeNode(spec.name, max(0, int(spec.shares)), spec.project, parent)
    node.children = [copy_tree(child, node) for child in spec.children]
    return node


class ShareTree:
    """A working copy of the share tree for one ticket calculation."""

    def __init__(self, spec, members, weights):
        self.root = copy_tree(spec)
        self.members = members
        self.weights = weights
        self._found = {}

    def node_for(self, user, project):
        """The leaf a job of ``user`` under ``project`` (Members or None) maps to."""
        key = (user.name if user else None, project.name if project else None)
        if key not in self._found:
            self._found[key] = self._locate(*key)
        return self._found[key]

    def _locate(self, user, project):
        node = search(self.root, user, project, self.root)
        if node is None or user is None or node.name != DEFAULT_USER or node.parent is None:
            return node
        twin = TreeNode(user, node.shares, False, node.parent, origin=node)
        node.parent.children.append(twin)
        return twin

    def compute_usage(self):
        """Combined usage of every node, as weighted by usage_weight_list."""
        node_usage(self.root, None, self.members, self.weights)

    def activate(self, refs, compensation_factor):
        """Count ``refs`` at their nodes and compute the targets of the active nodes."""
        for node in self.root.walk():
            node.reset()
        for ref in refs:
            if ref.node is not None:
                ref.node.count += 1
                if not ref.queued:
                    ref.node.running += 1
        _sum_counts(self.root)
        self.root.ltt = self.root.oltt = self.root.stt = self.root.ostt = 1.0
        compute_targets(self.root, compensation_factor)


def search(node, user, project, top):
    """Grid Engine's look-up of the node of a user / project pair."""
    if user is None and project is None:
        return None
    if node.project and node is not top and node.name != project:
        return None
    if project is not None:
        if node.name == project:
            return node if not node.children else search(node, user, None, node)
        return _first(node.children, user, project, top)
    if node.name == user:
        return node
    found = _first(node.children, user, None, top)
    if found is None and node is top and user != DEFAULT_USER:
        found = search(node, DEFAULT_USER, None, node)
    return found


def _first(children, user, project, top):
    for child in children:
        found = search(child, user, project, top)
        if found is not None:
            return found
    return None


def node_usage(node, project, members, weights):
    """Combined usage of ``node`` (set on it and returned); ``project``: enclosing one.

    Sets the node's count of finished jobs too: a leaf's is its user's (in
    the enclosing project) or its project's, a project node's the
    project's own, another node's the sum of its children's.
    """
    if not node.children:
        held = leaf_holder(node, project, members)
        node.usage = held.usage.combined(weights) if held else 0.0
        node.finished = held.finished_jobs if held else 0.0
        return node.usage
    own = None
    if project is None and node.project:
        project = node.name
        member = members.project(node.name)
        own = member.usage.combined(weights) if member else 0.0
        node.finished = member.finished_jobs if member else 0.0
    below = sum(node_usage(child, project, members, weights) for child in node.children)
    if own is None:
        node.finished = sum(child.finished for child in node.children)
    node.usage = below if own is None else own
    return node.usage


def leaf_usage(node, project, members):
    """The Usage a leaf stands for: a user's (in the enclosing project) or a project's."""
    held = leaf_holder(node, project, members)
    return held.usage if held else ZERO


def leaf_holder(node, project, members):
    """What holds a leaf's usage: a user's Member (or his ProjectUsage in the enclosing
    project) or a project's Member; None when the leaf names none."""
    if node.project and project is None:
        return members.project(node.name)
    user = members.users.get(node.name)
    if user is None:
        return None
    return user.in_project(project) if project else user


def _sum_counts(node):
    if node.children:
        node.count = node.running = 0
        for child in node.children:
            _sum_counts(child)
            node.count += child.count
            node.running += child.running
    return node.count


def compute_targets(node, compensation_factor):
    """ltt, oltt, stt and ostt of the active nodes below ``node``."""
    active = [child for child in node.children if child.count > 0]
    if not active:
        return
    _long_term(node, active)
    _short_term(node, active)
    if compensation_factor != 0:
        _compensate(node, active, compensation_factor)
    for child in active:
        compute_targets(child, compensation_factor)


def _long_term(node, active):
    sum_shares = sum(child.shares for child in active)
    for child in active:
        child.ltt = child.shares / sum_shares if sum_shares > 0 else 0.0
        child.oltt = node.oltt * child.ltt
        child.shr = _shr(child, 1.0)


def _shr(child, damping):
    if child.oltt <= 0:
        return 0.0
    return child.shares * child.shares / (max(child.usage, MIN_USAGE * child.oltt) * damping)


def _short_term(node, active):
    total = sum(child.shr for child in active)
    for child in active:
        child.stt = child.shr / total if total > 0 else 0.0
        child.ostt = node.ostt * child.stt


def _compensate(node, active, factor):
    limited = False
    for child in active:
        if child.oltt > 0 and child.ostt > factor * child.oltt:
            child.shr = _shr(child, child.ostt / (factor * child.oltt))
            limited = True
    if limited:
        _short_term(node, active)


def running_tickets(tree, running, pool, compensation_factor):
    """Share tree tickets of running tasks, over the running tasks alone."""
    tree.activate(running, compensation_factor)
    at_node = {}
    for ref in running:
        if ref.node is not None:
            at_node.setdefault(id(ref.node), []).append(ref)
    for refs in at_node.values():
        node = refs[0].node
        node_pool = node.ostt * pool
        job_shares = sum(ref.job.jobshare for ref in refs)
        for ref in refs:         # (by job shares: a whole number, as Grid Engine truncates it)
            ref.stckt = (float(int(node_pool * ref.job.jobshare / job_shares)) if job_shares
                         else node_pool / len(refs))


def pending_tickets(tree, refs, pool, compensation_factor, dependent):
    """Share tree tickets of the pending tasks among ``refs`` (running and pending)."""
    tree.activate(refs, compensation_factor)
    for ref in refs:
        if ref.node is not None and ref.queued:
            ref.sort = (ref.tickets + 0.01 * ref.job.jobshare) if dependent else ref.job.jobshare
            ref.node.entries.append(ref)
    for ref in _collect(tree.root, tree.root, pool, dependent):
        ref.stckt = ref.shr * pool
        if dependent:
            ref.tickets += ref.stckt
    for node in tree.root.walk():
        node.entries = []


def _order(ref):
    return (-ref.sort, ref.key)


def _waiting(node):
    """Pending tasks at or below ``node``."""
    return node.count - node.running


def _collect(root, node, pool, dependent):
    """The pending tasks at and below ``node``, ordered, each with its share of node's stt.

    A task's ``sort`` is what orders it among its node's tasks: job shares
    or the tickets of the policies above at its leaf, then the tickets the
    level below gave it. At ``root``, when one child alone has pending tasks
    (and the root has none of its own), that child becomes the root.
    """
    if node is root and not node.entries:
        waiting = [child for child in node.children if _waiting(child) > 0]
        if len(waiting) == 1:
            return _collect(waiting[0], waiting[0], pool, dependent)
    entries = list(node.entries)
    for child in node.children:
        if _waiting(child) > 0:
            entries.extend(_collect(root, child, pool, dependent))
    if node is not root or node.entries:
        entries.sort(key=_order)
        jobs = node.running + node.finished
        for ref in entries:
            jobs += 1
            ref.shr = node.stt / jobs
            ref.sort = (ref.tickets if dependent else 0.0) + ref.shr * pool
    return entries

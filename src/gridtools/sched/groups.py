"""Accounting groups with quotas: how the negotiator shares the pool among groups.

``GROUP_NAMES`` lists the groups; a dot makes a subgroup (``physics.cms``
belongs to ``physics``). A group's quota is ``GROUP_QUOTA_<g>`` slots
(static), or ``GROUP_QUOTA_DYNAMIC_<g>``, a fraction of what its parent
has (dynamic). Submitters whose accounting name is ``g.user`` belong to
group ``g``; everybody else belongs to the root group ``<none>``, whose
quota is what the configured groups leave of the pool.

Each negotiation cycle (``allocate``):

1. quotas: static quotas first (scaled down if they add up to more than
   the parent has), then dynamic ones share the rest by their fractions;
   a group keeps what its subgroups do not get;
2. allocation: each group is allocated what its submitters ask for (idle
   plus running, weighted) up to its quota; what groups leave unused is
   *surplus*, shared among the groups that accept it
   (``GROUP_ACCEPT_SURPLUS``, ``GROUP_ACCEPT_SURPLUS_<g>``) and still want
   more, in proportion to their quotas, then equally; the root group always
   accepts surplus;
3. order: groups negotiate by ``GROUP_SORT_EXPR``, by default the most
   starved first (usage divided by quota) and the root group last; with
   autoregroup the root group is last whatever its sort key.

With ``GROUP_AUTOREGROUP`` (or ``GROUP_AUTOREGROUP_<g>``) a group's
submitters negotiate a second time with the root group, for whatever the
pool has left, even when their group is over its quota.
"""

import math
from dataclasses import dataclass, field

from gridtools.classad import ClassAd, parse
from gridtools.errors import ConfigError
from gridtools.formats import condor_config as cfg

ROOT = "<none>"
#: how groups are ordered for negotiation (GROUP_SORT_EXPR): smaller first
DEFAULT_SORT_EXPR = ('ifThenElse(AccountingGroup =?= "<none>", 3.4e+38, '
                     'ifThenElse(GroupQuota > 0, GroupResourcesInUse / GroupQuota, 3.3e+38))')
#: allocation rounds in one cycle (GROUP_QUOTA_MAX_ALLOCATION_ROUNDS)
MAX_ROUNDS = 3
_INT_MAX = float(2**31 - 1)
_EPSILON = 1e-9


@dataclass(frozen=True, slots=True)
class GroupSpec:
    """One configured group."""
    name: str
    quota: float = 0.0            # slots (static) or a fraction of the parent's (dynamic)
    static: bool = False
    accept_surplus: bool = False
    autoregroup: bool = False


@dataclass(frozen=True, slots=True)
class GroupsConfig:
    """The group quota knobs of condor_config(5)."""
    groups: tuple = ()                    # GroupSpec, parents before children
    sort_expr: str = DEFAULT_SORT_EXPR
    max_rounds: int = MAX_ROUNDS
    strict: bool = True                   # NEGOTIATOR_STRICT_ENFORCE_QUOTA

    @classmethod
    def from_config(cls, config):
        """From an object with ``get(name)`` giving expanded text or None. The knobs are
        read as HTCondor's negotiator reads them (``param_double``, ``param_integer``,
        ``param_boolean``): a number or a ClassAd expression whose value is one, ``true``,
        ``false`` or a boolean expression. A value that is none of these, or out of its
        range, raises ConfigError in HTCondor's words (its negotiator stops on it)."""
        names = sorted({n for n in (config.get("GROUP_NAMES") or "").replace(",", " ").split()
                        if n != ROOT}, key=str.lower)
        surplus = cfg.boolean(config, "GROUP_ACCEPT_SURPLUS", False)
        regroup = cfg.boolean(config, "GROUP_AUTOREGROUP", False)
        specs = []
        for name in names:
            static = param_double(config, f"GROUP_QUOTA_{name}", -1.0, 0.0, _INT_MAX)
            dynamic = param_double(config, f"GROUP_QUOTA_DYNAMIC_{name}", -1.0, 0.0, 1.0) \
                if static < 0 else -1.0
            quota, is_static = (static, True) if static >= 0 else (max(dynamic, 0.0), False)
            specs.append(GroupSpec(name, quota, is_static,
                                   cfg.boolean(config, f"GROUP_ACCEPT_SURPLUS_{name}", surplus),
                                   cfg.boolean(config, f"GROUP_AUTOREGROUP_{name}", regroup)))
        rounds = cfg.integer(config, "GROUP_QUOTA_MAX_ALLOCATION_ROUNDS", MAX_ROUNDS, minimum=1)
        return cls(tuple(specs), (config.get("GROUP_SORT_EXPR") or "").strip() or DEFAULT_SORT_EXPR,
                   rounds, cfg.boolean(config, "NEGOTIATOR_STRICT_ENFORCE_QUOTA", True))

    @classmethod
    def as_negotiator_reads(cls, config):
        """``from_config``, or no groups when the knobs cannot be read (the negotiator
        then runs with its defaults: see ``daemon.condor``)."""
        try:
            return cls.from_config(config)
        except ConfigError:
            return cls()

    @property
    def enabled(self):
        return bool(self.groups)


@dataclass(eq=False)
class Group:
    """A group during one cycle: its configuration and the numbers worked out for it."""
    name: str
    spec: GroupSpec
    parent: "Group | None" = None
    children: list = field(default_factory=list)
    quota: float = 0.0                    # its share of the pool, after its subgroups'
    subtree_quota: float = 0.0            # what it and its subgroups have together
    requested: float = 0.0                # what its own submitters still want
    subtree_requested: float = 0.0
    allocated: float = 0.0                # what it may use this cycle
    usage: float = 0.0                    # weighted slots its submitters hold now
    submitters: list = field(default_factory=list)
    asked: float = 0.0                    # what its submitters asked for as the cycle began
    sort_key: float = 0.0                 # its GROUP_SORT_EXPR value when last ordered

    @property
    def accept_surplus(self):
        return self.spec.accept_surplus or self.parent is None

    def walk(self):
        """This group and its subgroups, breadth first."""
        queue = [self]
        while queue:
            group = queue.pop(0)
            yield group
            queue.extend(group.children)


def build(config):
    """The root group with the configured groups under it (a group whose parent is
    not configured is left out, as HTCondor does)."""
    root = Group(ROOT, GroupSpec(ROOT, accept_surplus=True, autoregroup=any(
        s.autoregroup for s in config.groups)))
    by_name = {ROOT.lower(): root}
    for spec in config.groups:
        parent_name, _, _ = spec.name.rpartition(".")
        parent = by_name.get(parent_name.lower()) if parent_name else root
        if parent is None or spec.name.lower() in by_name:
            continue
        group = Group(spec.name, spec, parent)
        parent.children.append(group)
        by_name[spec.name.lower()] = group
    return root


def surplus_policy(spec):
    """HTCondor's SurplusPolicy word of a group: regroup (GROUP_AUTOREGROUP), byquota
    (GROUP_ACCEPT_SURPLUS) or no."""
    return "regroup" if spec.autoregroup else "byquota" if spec.accept_surplus else "no"


def report(group):
    """What the accountant publishes of a group after a cycle (condor_userprio -long):
    its configured quota (slots, or the fraction of a dynamic quota), its effective and
    subtree quotas in slots, its surplus policy, its GROUP_SORT_EXPR value as the groups
    were last ordered (GroupSortKey) and what its submitters asked for as the cycle
    began (Requested: their idle jobs' CPUs and the slots they held)."""
    return {"ConfigQuota": float(group.spec.quota), "EffectiveQuota": float(group.quota),
            "SubtreeQuota": float(group.subtree_quota), "SurplusPolicy": surplus_policy(group.spec),
            "GroupSortKey": float(group.sort_key), "Requested": float(group.asked)}


def group_of(root, name):
    """The group of an accounting name: ``g.user`` (optionally ``@domain``) belongs to
    the deepest configured group on the path ``g``; others to the root."""
    base = name.split("@", 1)[0]
    if "." not in base:
        return root
    group = root
    for part in base.rsplit(".", 1)[0].split("."):
        child = next((c for c in group.children if c.name.rsplit(".", 1)[-1].lower() == part.lower()), None)
        if child is None:
            break
        group = child
    return group


# ---------------------------------------------------------------- quotas

def assign_quotas(group, quota):
    """Give ``group`` the subtree quota ``quota`` and share it among its subgroups."""
    if quota <= 0:
        return
    group.subtree_quota = quota
    static = sum(c.spec.quota for c in group.children if c.spec.static)
    dynamic = sum(c.spec.quota for c in group.children if not c.spec.static)
    static_given = min(static, quota)
    dynamic_given = max(0.0, quota - static_given)
    given = 0.0
    for child in group.children:
        if child.spec.static:
            share = child.spec.quota * (static_given / static) if static > 0 else 0.0
        else:
            share = child.spec.quota * (dynamic_given / max(dynamic, 1.0))
        assign_quotas(child, share)
        given += share
    group.quota = max(0.0, quota - given)


# ---------------------------------------------------------------- allocation

def fairshare(group):
    """Allocate each group what it asks for up to its quota, then share the surplus;
    returns what nobody in the subtree wanted."""
    group.allocated = min(group.requested, group.quota)
    group.requested -= group.allocated
    group.subtree_requested = group.requested
    surplus = group.quota - group.allocated
    for child in group.children:
        surplus += fairshare(child)
        if child.accept_surplus:
            group.subtree_requested += child.subtree_requested
    return _share_surplus(group, surplus) if group.children else surplus


def _share_surplus(group, surplus):
    """Share ``surplus`` between ``group`` and its subgroups that accept it (the group
    itself on equal footing with them): by quota, then equally; returns the rest."""
    if surplus <= _EPSILON or group.subtree_requested <= _EPSILON:
        return surplus
    wants = [c.subtree_requested if c.accept_surplus else 0.0 for c in group.children]
    wants.append(max(group.requested, 0.0))
    weights = [c.subtree_quota for c in group.children] + [group.quota]
    given = [0.0] * len(wants)
    if surplus >= sum(wants):
        given, surplus = list(wants), surplus - sum(wants)
    else:
        surplus = _proportional(given, wants, weights, surplus)
        surplus = _proportional(given, wants, [1.0] * len(wants), surplus)
    for child, amount in zip(group.children, given):
        if amount > _EPSILON:
            _share_surplus(child, amount) if child.children else _take(child, amount)
    _take(group, given[-1])
    group.subtree_requested -= sum(given)
    return surplus


def _take(group, amount):
    group.allocated += amount
    group.requested -= amount
    group.subtree_requested -= amount if not group.children else 0.0


def _proportional(given, wants, weights, surplus):
    """Hand out ``surplus`` by weight among members that still want some; returns the rest."""
    for _ in range(len(wants) + 1):
        open_ = [i for i, w in enumerate(wants) if w - given[i] > _EPSILON and weights[i] > 0]
        total = sum(weights[i] for i in open_)
        if surplus <= _EPSILON or total <= 0:
            break
        handed = 0.0
        for i in open_:
            amount = min(surplus * weights[i] / total, wants[i] - given[i])
            given[i] += amount
            handed += amount
        surplus -= handed
    return max(surplus, 0.0)


def whole_slots(root):
    """Round every allocation down to whole slots and hand the fractions out again,
    one slot at a time, to groups that still want more (tree order)."""
    spare = 0.0
    for group in root.walk():
        fraction = group.allocated - math.floor(group.allocated + _EPSILON)
        if fraction > _EPSILON:
            group.allocated -= fraction
            group.requested += fraction
            spare += fraction
    spare = math.floor(spare + _EPSILON)
    while spare >= 1:
        takers = [g for g in root.walk() if g.requested >= 1 - _EPSILON and (g.accept_surplus or
                                                                            g.allocated < g.quota)]
        if not takers:
            break
        for group in takers:
            if spare < 1:
                break
            group.allocated += 1
            group.requested -= 1
            spare -= 1


def sort_key(group, expr, usage_of):
    """The group's GROUP_SORT_EXPR value (smaller negotiates first)."""
    ad = ClassAd({"AccountingGroup": group.name, "GroupQuota": group.quota,
                  "GroupResourcesAllocated": group.allocated,
                  "GroupResourcesInUse": usage_of(group)})
    value = parse(expr).eval(ad)
    return float(value) if type(value) in (int, float) else 3.4e38


def strict_limit(group, slots, usage_of):
    """``slots`` capped by what the group's ancestors that take no surplus have left."""
    new = slots - group.usage
    node = group
    while node is not None:
        if not node.accept_surplus:
            cap = node.spec.quota if node.spec.static else node.subtree_quota
            available = max(cap - _subtree_usage(node, usage_of), 0.0)
            new = min(new, available)
        node = node.parent
    return new + group.usage


def _subtree_usage(group, usage_of):
    return usage_of(group) + sum(_subtree_usage(c, usage_of) for c in group.children)


def param_double(config, name, default, lowest, highest):
    """Knob ``name`` as HTCondor's param_double reads it: ``default`` when undefined or
    empty; else a number, or a ClassAd expression whose value is a number. Raises
    ConfigError in HTCondor's words when it is neither, or outside [lowest, highest]."""
    text = config.get(name)
    if text is None or not str(text).strip():
        return default
    text = str(text).strip()
    wanted = (f"Please set it to a numeric expression in the range {lowest:g} to {highest:g} "
              f"(default {default:g}).")
    try:
        value = float(text)
    except ValueError:
        from gridtools.classad.parser import ClassAdSyntaxError
        try:
            value = parse(text).eval()
        except ClassAdSyntaxError:
            raise ConfigError(f"Invalid expression for {name} ({text}) in condor configuration.  "
                              + wanted) from None
        if type(value) not in (bool, int, float) or value != value:
            raise ConfigError(f"Invalid result (not a number) for {name} ({text}) in condor "
                              "configuration.  " + wanted)
        value = float(value)
    if value < lowest:
        raise ConfigError(f"{name} in the condor configuration is too low ({text}).  " + wanted)
    if value > highest:
        raise ConfigError(f"{name} in the condor configuration is too high ({text}).  " + wanted)
    return value


# ---------------------------------------------------------------- negotiation

def negotiate_all(cycle):
    """Negotiate group by group (``cycle``: a ``sched.negotiation.Cycle``).

    Each round allocates the pool among the groups and lets each group with
    an allocation negotiate for it, most starved first; when a group could
    not use all it was allocated, the next round gives the rest to others."""
    root, config = cycle.root, cycle.config.groups
    for sub in cycle.submitters:
        cycle.group_of(sub.name).submitters.append(sub)
    _requests(cycle, root)
    assign_quotas(root, cycle.total_weight)

    def usage_of(group):
        return cycle.group_usage.get(group.name, 0.0)
    for _ in range(config.max_rounds):
        allocated = _allocate(cycle, root, usage_of)
        for group in _in_order(root, config.sort_expr, usage_of):
            _negotiate_one(cycle, root, group, usage_of)
        used = 0.0
        for group in root.walk():
            group.usage = usage_of(group)
            used += min(group.usage, group.allocated)
            group.requested = group.usage if group.usage < group.allocated else \
                group.requested + group.allocated
        if used >= allocated - _EPSILON or not cycle.slots_left():
            break


def _requests(cycle, root):
    """What each group's submitters ask for: their idle jobs' cpus and what they hold."""
    for group in root.walk():
        group.requested = 0.0
        for sub in group.submitters:
            idle = sum(max(cycle.ac_of[j.id].request[0], 1.0) for j in cycle.idle_jobs(sub))
            group.requested += idle + cycle.usage.get(sub.name, 0.0)
        group.asked = group.requested


def _allocate(cycle, root, usage_of):
    for group in root.walk():
        group.allocated = group.subtree_requested = 0.0
        group.usage = usage_of(group)
    fairshare(root)
    whole_slots(root)
    if root.spec.autoregroup:
        root.quota = root.allocated = cycle.total_weight
    return sum(g.allocated for g in root.walk())


def _in_order(root, expr, usage_of):
    """The groups in negotiation order: by GROUP_SORT_EXPR, smaller first (ties in tree
    order); with autoregroup the root group always last, whatever its sort key."""
    groups = list(root.walk())
    for group in groups:
        group.sort_key = sort_key(group, expr, usage_of)
    last = root.spec.autoregroup
    keys = {id(g): (last and g is root, g.sort_key, n) for n, g in enumerate(groups)}
    return sorted(groups, key=lambda g: keys[id(g)])


def _negotiate_one(cycle, root, group, usage_of):
    consider = cycle.config.consider_preemption
    if group.allocated <= 0 or (group.usage >= group.allocated and not consider):
        return
    subs = list(group.submitters)
    regroup = root.spec.autoregroup and group is root
    if regroup:
        subs += [s for g in root.walk() if g is not root and g.spec.autoregroup for s in g.submitters]
    if not subs:
        return
    slots = math.floor(max(group.allocated, group.quota) + _EPSILON)
    if cycle.config.groups.strict and not regroup:
        slots = strict_limit(group, slots, usage_of)
    cycle.negotiating = (group.name, bool(root.spec.autoregroup and group is root))
    try:
        cycle.negotiate_group(subs, slots, None if regroup else group)
    finally:
        cycle.negotiating = (ROOT, False)

"""Resource quota sets in the pass (sge_resource_quota(5)): which rule applies, what it
counts, whether a job fits, and qquota's rows.

A job must fit every enabled set; within a set the first rule whose filters
(users, projects, pes, queues, hosts) let the job and the queue instance
pass applies. A rule counts per *key*: the names of its expanded (``{}``)
filters, the others left empty, written as Grid Engine writes them
(``alice/////``: user, project, PE, queue and host, each followed by a
slash). Each limit of the rule bounds the sum over the tasks of that key:
``slots`` counts a task's slots, a consumable its amount (per slot, or once
on the master for a JOB consumable; implicit defaults included). A dynamic
limit (``$num_proc*5``) is worked out per host from its load values and
capacities. A limit on a value that is not consumed only demands that a job
requesting it asks within the limit. Tasks in an advance reservation are
not counted (the reservation holds their resources).

``quota_sets(conf, table)`` makes the snapshot's ``QuotaSet`` records from
the parsed configuration; ``QuotaBook`` is one pass's bookkeeping;
``quota_rows`` gives what qquota shows.
"""

import fnmatch
from dataclasses import dataclass

from gridtools.formats.sge.codecs import ValueProblem
from gridtools.formats.sge.rqs import FILTERS, dynamic_terms, is_dynamic
from gridtools.model.resources import PER_JOB, Consumable, satisfies
from gridtools.sched.inputs import value_or_none
from gridtools.sched.reasons import Reason, Why
from gridtools.sched.resources import per_grant
from gridtools.sched.snapshot import QuotaFilter, QuotaLimit, QuotaRule, QuotaSet

USERS, PROJECTS, PES, QUEUES, HOSTS = range(5)


# ---------------------------------------------------------------- records

def quota_sets(conf, table):
    """The QuotaSet records of the configuration, in its order (disabled ones included)."""
    return tuple(quota_set(obj, table) for obj in (conf.objects.get("rqs") or {}).values())


def quota_set(obj, table):
    name = obj["name"]
    rules = tuple(_rule(name, number, rule, table) for number, rule in enumerate(obj["limit"], 1))
    return QuotaSet(name, rules, bool(obj.get("enabled")))


def _rule(set_name, number, rule, table):
    label = f"{set_name}/{rule['name'] if rule.get('name') is not None else number}"
    filters = tuple(_filter(rule.get(kind)) for kind in FILTERS)
    limits = tuple(found for found in (_limit(name, text, table) for name, text in rule["to"].items())
                   if found is not None)
    return QuotaRule(label, filters, limits)


def _filter(scope):
    if scope is None:
        return None
    return QuotaFilter(tuple(scope.include), tuple(scope.exclude), scope.expand)


def _limit(name, text, table):
    """The QuotaLimit of ``name=text``; None for a complex the cell does not define."""
    cx = table.get(str(name))
    if cx is None:
        return None
    text = str(text)
    if is_dynamic(text):
        try:
            return QuotaLimit(cx.name, None, text, tuple(dynamic_terms(text)))
        except ValueProblem:
            return QuotaLimit(cx.name, None, text, ())
    return QuotaLimit(cx.name, value_or_none(cx, text), text)


# ---------------------------------------------------------------- matching

@dataclass(frozen=True, slots=True)
class Who:
    """What rules look at of a job: its owner, the access lists the owner is in, project, PE."""
    user: str
    userlists: frozenset = frozenset()
    project: str = ""
    pe: str = ""


def _names_match(kind, names, value, userlists, hostgroups):
    for name in names:
        if name == "*":
            return True
        if kind == USERS and name.startswith("@"):
            if any(fnmatch.fnmatchcase(u, name[1:]) for u in userlists):
                return True
        elif kind == HOSTS and name.startswith("@"):
            if any(fnmatch.fnmatchcase(g, name) for g in hostgroups):
                return True
        elif kind == HOSTS:
            if fnmatch.fnmatchcase(value.lower(), name.lower()):
                return True
        elif fnmatch.fnmatchcase(value, name):
            return True
    return False


def passes(flt, kind, value, userlists=frozenset(), hostgroups=frozenset()):
    """True when ``value`` passes a filter; a job without a project or PE (``value`` "")
    only passes filters that include no names."""
    if flt is None:
        return True
    if not value:
        return not flt.include
    if flt.exclude and _names_match(kind, flt.exclude, value, userlists, hostgroups):
        return False
    return not flt.include or _names_match(kind, flt.include, value, userlists, hostgroups)


def key_of(rule, values):
    """The counter key of a rule for (user, project, pe, queue, host) ``values``."""
    return "".join(((v or "") if f is not None and f.expand else "") + "/"
                   for f, v in zip(rule.filters, values))


def matching(qset, who, queue, host, hostgroups=frozenset()):
    """(rule, key) of the first rule of a set that applies to a job on ``queue@host``, or None."""
    values = (who.user, who.project, who.pe, queue, host)
    for rule in qset.rules:
        if all(passes(f, kind, values[kind], who.userlists, hostgroups)
               for kind, f in enumerate(rule.filters)):
            return rule, key_of(rule, values)
    return None


# ---------------------------------------------------------------- limits and debits

def dynamic_value(limit, host, global_values):
    """A dynamic limit's value on a host (an attribute nobody reports counts as 0)."""
    total = 0.0
    for weight, attribute in limit.terms:
        if attribute is None:
            total += weight
            continue
        value = _host_value(attribute, host, global_values)
        total += weight * (float(value) if isinstance(value, (int, float)) else 0.0)
    return total


def _host_value(name, host, global_values):
    if host is not None:
        if name in host.load:
            return host.load[name]
        for n, v, _t in host.values:
            if n == name:
                return v
    for n, v, _t in global_values:
        if n == name:
            return v
    return None


def debit(cx, limit_name, asks, slots, master):
    """What ``slots`` slots of a job with ``asks`` count against a limit of complex ``cx``."""
    if limit_name == "slots":
        return float(slots)
    for ask in asks:
        if ask.name == limit_name and isinstance(ask.value, (int, float)):
            return float(per_grant(cx, ask.value, slots, master))
    return 0.0


def counted(cx):
    """True for a limit that counts usage (``slots`` and consumables)."""
    return cx.name == "slots" or cx.consumable is not Consumable.NO


class QuotaBook:
    """The quota usage of one pass: what running tasks count, what starts add."""

    def __init__(self, snap, holders=()):
        self.snap = snap
        self.table = snap.complexes
        self.sets = tuple(s for s in snap.quotas if s.enabled)
        self.used = {}               # (rule label, limit name, key) -> amount
        self._rules = {}             # (who, queue, host) -> ((rule, key), ...)
        self._caps = {}              # (rule label, limit name, host) -> limit
        self._groups = {qi.host: qi.hostgroups for qi in snap.queues}
        for who, asks, granted in holders:
            self.take(who, asks, granted)

    def __bool__(self):
        return bool(self.sets)

    def groups_of(self, host):
        return self._groups.get(host, frozenset())

    def rules(self, who, queue, host):
        """(rule, key) of every enabled set that has a rule for ``who`` on ``queue@host``."""
        cache_key = (who, queue, host)
        found = self._rules.get(cache_key)
        if found is None:
            groups = self.groups_of(host)
            found = tuple(m for m in (matching(s, who, queue, host, groups) for s in self.sets)
                          if m is not None)
            self._rules[cache_key] = found
        return found

    def cap(self, rule, limit, host):
        """A limit's value for a task on ``host``."""
        if not limit.terms and limit.value is not None:
            return limit.value
        cache_key = (rule.label, limit.name, host)
        found = self._caps.get(cache_key)
        if found is None:
            found = self._caps[cache_key] = dynamic_value(limit, self.snap.hosts.get(host),
                                                          self.snap.global_values)
        return found

    def demands(self, who, asks, queue, host, slots, master=True):
        """((counter, amount, limit) ...) and the first static limit the asks break, for
        ``slots`` slots on ``queue@host``; a counter is (rule label, limit name, key)."""
        found, broken = [], None
        for rule, key in self.rules(who, queue, host):
            for limit in rule.limits:
                cx = self.table[limit.name]
                if not counted(cx):
                    if broken is None and not _static_ok(cx, limit, asks):
                        broken = Reason(Why.QUOTA, (key, rule.label))
                    continue
                amount = debit(cx, limit.name, asks, slots, master)
                if amount:
                    found.append(((rule.label, limit.name, key), amount, self.cap(rule, limit, host)))
        return found, broken

    def short(self, who, asks, queue, host, slots, master=True):
        """The quota reason ``slots`` more slots on ``queue@host`` break, or None."""
        found, broken = self.demands(who, asks, queue, host, slots, master)
        if broken is not None:
            return broken
        for counter, amount, cap in found:
            if self.used.get(counter, 0.0) + amount > cap + 1e-9:
                return Reason(Why.QUOTA, (counter[2], counter[0]))
        return None

    def room(self, who, asks, queue, host):
        """How many slots the quotas leave a job on ``queue@host`` (None: no bound)."""
        found, broken = self.demands(who, asks, queue, host, 1)
        if broken is not None:
            return 0
        once = {ask.name for ask in asks if isinstance(ask.value, PER_JOB)}   # (held once: no bound)
        best = None
        for counter, amount, cap in found:
            if amount > 0 and self.table[counter[1]].consumable is not Consumable.JOB \
                    and counter[1] not in once:
                fit = int((cap - self.used.get(counter, 0.0) + 1e-9) // amount)
                best = fit if best is None else min(best, fit)
        return best

    def take(self, who, asks, granted):
        """Count a task's grant ((queue, host, slots), ...)."""
        for i, (queue, host, slots) in enumerate(granted):
            for counter, amount, _cap in self.demands(who, asks, queue, host, slots, i == 0)[0]:
                self.used[counter] = self.used.get(counter, 0.0) + amount

    def grant_short(self, who, asks, granted):
        """The quota reason a whole grant breaks (slots of one key summed), or None."""
        extra = {}
        for i, (queue, host, slots) in enumerate(granted):
            found, broken = self.demands(who, asks, queue, host, slots, i == 0)
            if broken is not None:
                return broken
            for counter, amount, cap in found:
                extra[counter] = extra.get(counter, 0.0) + amount
                if self.used.get(counter, 0.0) + extra[counter] > cap + 1e-9:
                    return Reason(Why.QUOTA, (counter[2], counter[0]))
        return None


def _static_ok(cx, limit, asks):
    for ask in asks:
        if ask.name == limit.name:
            return limit.value is None or satisfies(cx, ask.value, limit.value)
    return True


def who_of_job(job, pe=""):
    req = job.request
    return Who(job.owner, req.userlists, req.project, pe)


def who_of_running(run):
    return Who(run.owner, run.userlists, run.project, run.pe)


# ---------------------------------------------------------------- qquota

@dataclass(frozen=True, slots=True)
class QuotaRow:
    """One line of qquota: a rule, a limit with its use, and the effective filter."""
    rule: str                    # "set/rule"
    resource: str                # complex name
    used: object                 # amount in use (None for a limit that counts nothing)
    limit: object                # the limit (a number, or the configured text)
    filters: tuple               # ((filter word, name counted or QuotaFilter as written), ...)
    kind: str = "INT"            # the complex's type (how qquota prints amounts)
    dynamic: bool = False        # the limit is worked out per host ($num_proc*2)


def holders(snap):
    """(Who, asks, granted) of the running tasks that quotas count."""
    from gridtools.sched import ar as ar_mod
    from gridtools.sched.snapshot import Ask
    return [(who_of_running(run), tuple(Ask(n, a, "") for n, a in run.amounts), run.granted)
            for run in snap.running if not ar_mod.inside(snap, run)]


def _row_filters(rule, parts):
    """The effective filter of a row: an expanded filter shows the name counted
    (``parts``), any other filter (and every filter of a row that counts nothing) the
    QuotaFilter as written, but a plain ``*``, which the admin guide's qquota tables
    leave out ("-" for ``users *``)."""
    return tuple((FILTERS[kind], parts[kind] if flt.expand and parts[kind] else flt)
                 for kind, flt in enumerate(rule.filters)
                 if flt is not None and (flt.expand or flt.include != ("*",) or flt.exclude))


def _selected(rule, wanted, userlists, groups):
    """True when the rule can apply to the names asked for (``*``: any)."""
    for kind, value in enumerate(wanted):
        flt = rule.filters[kind]
        if value == "*" or flt is None:
            continue
        lists = userlists.get(value, frozenset()) if kind == USERS else frozenset()
        if not passes(flt, kind, value, lists, groups.get(value, frozenset()) if kind == HOSTS else frozenset()):
            return False
    return True


def _key_selected(parts, wanted):
    for kind, (part, value) in enumerate(zip(parts, wanted)):
        if part and value != "*":
            if not fnmatch.fnmatchcase(part.lower() if kind == HOSTS else part,
                                       value.lower() if kind == HOSTS else value):
                return False
    return True


def quota_rows(snap, users=("*",), projects=("*",), pes=("*",), queues=("*",), hosts=("*",),
               resources=None, userlists=None):
    """qquota's rows for a snapshot: for every enabled rule that applies to the names
    asked for (each list's names tried in turn; qquota passes the calling user when
    ``-u`` is not given), one row per counter in use of each counting limit, one row
    per limit that counts nothing. ``resources``: complex names or shortcuts to show
    (None: all); ``userlists``: user -> access lists (for ``users @list`` filters)."""
    book = QuotaBook(snap, holders(snap))
    groups = {qi.host: qi.hostgroups for qi in snap.queues}
    rows, seen = [], set()
    for qset in book.sets:
        for rule in qset.rules:
            for wanted in _combinations(users, projects, pes, queues, hosts):
                if _selected(rule, wanted, userlists or {}, groups):
                    _rule_rows(book, rule, wanted, resources, rows, seen)
    return rows


def _combinations(*lists):
    import itertools
    return itertools.product(*(tuple(items) or ("*",) for items in lists))


def _rule_rows(book, rule, wanted, resources, rows, seen):
    for limit in rule.limits:
        cx = book.table[limit.name]
        if resources is not None and cx.name not in resources and cx.shortcut not in resources:
            continue
        if not counted(cx):
            _add_row(rows, seen, QuotaRow(rule.label, cx.name, None, limit.text, _row_filters(rule, [""] * 5),
                                          cx.type.value))
            continue
        for (label, name, key), used in sorted(book.used.items()):
            if label != rule.label or name != limit.name or used <= 0:
                continue
            parts = key.split("/")[:5]
            if _key_selected(parts, wanted):
                cap = book.cap(rule, limit, parts[HOSTS])
                _add_row(rows, seen, QuotaRow(rule.label, cx.name, used, cap, _row_filters(rule, parts),
                                              cx.type.value, bool(limit.terms) or limit.value is None))


def _add_row(rows, seen, row):
    if row not in seen:
        seen.add(row)
        rows.append(row)

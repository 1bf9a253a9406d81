"""Who refers to a configuration object: deleting a referenced object is refused.

``refusal(kind, name, jobs)`` returns Grid Engine's "denied: ... still
referenced" line when a job that has not finished requests ``name`` (a
parallel environment or a checkpointing environment) or some stored object
names it (a parallel environment in a queue's pe_list, a user list in a
project's acl, a host group in a queue's hostlist or in another group, a
queue in a subordinate_list, a project node of the share tree, ...), and None
when the object may go.
``complex_refusal(attribute)`` does the same for a complex attribute that a
``qconf -mc`` would remove.
"""

from gridtools.daemon import confstore
from gridtools.formats.sge.codecs import PerHost

#: kind -> [(kind of the referring objects, attributes that may name it)]; the first
#: one found is named in the refusal (in Grid Engine's words: ``_referenced``)
REFERENCES = {
    "pe": [("queue", ("pe_list",))],
    "ckpt": [("queue", ("ckpt_list",))],
    "calendar": [("queue", ("calendar",))],
    "userset": [("queue", ("user_lists", "xuser_lists")), ("pe", ("user_lists", "xuser_lists")),
                ("project", ("acl", "xacl")), ("exechost", ("user_lists", "xuser_lists")),
                ("conf", ("user_lists", "xuser_lists"))],
    "project": [("queue", ("projects", "xprojects")), ("exechost", ("projects", "xprojects")),
                ("user", ("default_project",)),
                ("conf", ("projects", "xprojects", "auto_user_default_project"))],
}
#: how Grid Engine names a referring attribute in "still referenced in ATTR of KIND"
ATTR_WORDS = {"user_lists": "user list", "xuser_lists": "xuser list", "acl": "user list",
              "xacl": "xuser list"}
#: how Grid Engine names the kind of a referring object there
OWNER_WORDS = {"queue": "queue", "pe": "parallel environment", "project": "project",
               "exechost": "exechost", "conf": "configuration"}
#: objects whose refusal names only the queue: "<What> "x" is still referenced in queue "q"."
QUEUE_ONLY = {"pe": 'Parallel environment "{}" is still referenced in queue "{}".',
              "ckpt": 'Ckpt "{}" is still referenced in queue "{}".',
              "calendar": 'Calendar "{}" is still referenced in queue "{}"'}
#: the refusal when a job that has not finished requests the object
JOB_REFERENCES = {"pe": 'Parallel environment "{}" is still referenced in job {}.',
                  "ckpt": 'Checkpointing object "{}" is still referenced in job {}.'}
#: kind -> (resource quota filter that may name it, how the name is written there)
RQS_REFERENCES = {"userset": ("users", "@{}"), "project": ("projects", "{}"), "pe": ("pes", "{}"),
                  "exechost": ("hosts", "{}")}
COMPLEX_REFERENCES = [("queue", ("complex_values", "load_thresholds", "suspend_thresholds")),
                      ("exechost", ("complex_values", "load_scaling"))]


def values_of(obj, attr):
    """Every value an attribute takes (per-host overrides included)."""
    value = obj.get(attr)
    if isinstance(value, PerHost):
        return value.values()
    return [value]


def names_in(value):
    """The names a value holds: list items, dict keys or the value itself."""
    if value is None:
        return []
    if isinstance(value, dict):
        return list(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _first_user(table, name):
    """``(attribute, owner kind, owner name)`` of the first object naming ``name``."""
    for owner_kind, attrs in table:
        for owner, obj in sorted(confstore.load_all(owner_kind).items()):
            for attr in attrs:
                if any(name in names_in(value) for value in values_of(obj, attr)):
                    return attr, owner_kind, owner
    return None


def refusal(kind, name, jobs=()):
    """The line refusing to delete ``kind`` ``name``, or None when nothing refers to it.
    ``jobs``: the jobs that have not finished (a PE or checkpointing environment one of
    them requests stays)."""
    special = {"hostgroup": _hostgroup_refusal, "queue": _queue_refusal,
               "exechost": _exechost_refusal}.get(kind)
    if special is not None:
        return special(name)
    if kind in JOB_REFERENCES:
        job_id = requesting_job(kind, name, jobs)
        if job_id is not None:
            return "denied: " + JOB_REFERENCES[kind].format(name, job_id)
    if kind in ("project", "user") and _in_sharetree(name):
        return f'denied: may not remove {kind} "{name}" still referenced in share tree'
    found = _first_user(REFERENCES.get(kind, ()), name)
    if found is not None:
        return _referenced(kind, name, *found)
    if kind in RQS_REFERENCES:
        filter_kind, written = RQS_REFERENCES[kind]
        return _rqs_refusal(filter_kind, written.format(name), confstore.LABELS[kind])
    return None


def _referenced(kind, name, attr, owner_kind, owner):
    """Grid Engine's words for ``name`` being named by ``attr`` of ``owner``."""
    if kind in QUEUE_ONLY:
        return "denied: " + QUEUE_ONLY[kind].format(name, owner)
    if kind == "project" and owner_kind == "user":
        return f'project "{name}" is still referenced by user "{owner}"'
    what = ATTR_WORDS.get(attr, attr)
    return f'denied: {kind} "{name}" is still referenced in {what} of {OWNER_WORDS[owner_kind]} "{owner}"'


def requesting_job(kind, name, jobs):
    """The lowest id of the ``jobs`` requesting PE (a wildcard request matching it counts)
    or checkpointing environment ``name``, or None."""
    from gridtools.formats.sge.names import wildcard_match
    for job in sorted(jobs, key=lambda j: j.id):
        if kind == "pe":
            pe = job.spec.get("pe")
            if pe and wildcard_match(str(pe[0]), name):
                return job.id
        elif job.spec.get("ckpt") == name:
            return job.id
    return None


def _in_sharetree(name):
    from gridtools.formats.sge import sharetree
    tree = confstore.load("sharetree")
    return tree is not None and any(node["name"] == name for node in sharetree.walk(tree)
                                    if node is not tree)


def _hostgroup_refusal(name):
    queues = []
    for qname, queue in sorted(confstore.load_all("queue").items()):
        keys = set(queue.get("hostlist") or [])
        for attr, value in queue.items():
            if isinstance(value, PerHost):
                keys.update(value.overrides)
        if name in keys:
            queues.append(qname)
    if queues:
        return f'denied: following cluster queues still reference "{name}": {" ".join(queues)}'
    groups = [g for g, obj in sorted(confstore.load_all("hostgroup").items())
              if name in (obj.get("hostlist") or []) and g != name]
    if groups:
        return f'denied: following hostgroups still reference "{name}": {" ".join(groups)}'
    return _rqs_refusal("hosts", name, "host group")


def _group_members(groups, name, seen=()):
    """The hosts of host group ``name``, its subgroups resolved."""
    hosts = set()
    for entry in groups.get(name, {}).get("hostlist") or []:
        if entry.startswith("@"):
            if entry not in seen:
                hosts |= _group_members(groups, entry, (*seen, name))
        else:
            hosts.add(entry)
    return hosts


def _exechost_refusal(name):
    """Grid Engine refuses to delete an execution host that still has a queue instance
    (a cluster queue's hostlist names it, directly or through a host group), then one that
    a host group holds, then one a resource quota set names."""
    groups = confstore.load_all("hostgroup")
    for qname, queue in sorted(confstore.load_all("queue").items()):
        for entry in queue.get("hostlist") or []:
            if entry == name or (entry.startswith("@") and name in _group_members(groups, entry)):
                return f'Host object "{name}" is still referenced in cluster queue "{qname}".'
    for group in sorted(groups):
        if name in _group_members(groups, group):
            return f'Host object "{name}" is still referenced in host group "{group}".'
    return _rqs_refusal("hosts", name, confstore.LABELS["exechost"])


def _queue_refusal(name):
    from gridtools.formats.sge.queue import subordinate_queues
    for qname, queue in sorted(confstore.load_all("queue").items()):
        if qname == name:
            continue
        for value in values_of(queue, "subordinate_list"):
            if name in [q for q, _ in subordinate_queues(value or [])]:
                return f'Cluster queue "{name}" is referenced in cluster queue "{qname}" as a subordinate. ' \
                       "Deletion denied"
    return _rqs_refusal("queues", name, "cluster queue")


def _rqs_refusal(filter_kind, name, what):
    for set_name, rqs in sorted(confstore.load_all("rqs").items()):
        for rule in rqs["limit"]:
            scope = rule.get(filter_kind)
            if scope is not None and name in (*scope.include, *scope.exclude):
                return f'denied: {what} "{name.lstrip("@") if what == "userset" else name}" is still ' \
                       f'referenced in resource quota set "{set_name}"'
    return None


def complex_refusal(attribute, sched=None):
    """The line refusing to remove complex attribute ``attribute``, or None. ``sched``:
    the scheduler configuration (its load_formula and job_load_adjustments)."""
    if sched and _sched_names(sched, attribute):
        return f'denied: Complex attribute "{attribute}" is still referenced in scheduler configuration.'
    found = _first_user(COMPLEX_REFERENCES, attribute)
    if found is not None:
        _attr, owner_kind, owner = found
        where = "queue" if owner_kind == "queue" else "host"
        return f'denied: Complex attribute "{attribute}" is still referenced in {where} "{owner}".'
    for set_name, rqs in sorted(confstore.load_all("rqs").items()):
        if any(attribute in rule["to"] for rule in rqs["limit"]):
            return (f'denied: Complex attribute "{attribute}" is still referenced in resource quota set '
                    f'"{set_name}".')
    return None


def _sched_names(sched, attribute):
    import re
    formula = str(sched.get("load_formula") or "")
    if attribute in re.findall(r"[A-Za-z_][\w.]*", formula):
        return True
    return attribute in names_in(sched.get("job_load_adjustments"))

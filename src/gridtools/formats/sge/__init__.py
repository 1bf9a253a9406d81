"""Grid Engine's configuration objects as text: parse, render, template, validate.

Every object of the configuration tree reads from and writes to the exact
text ``qconf -s…`` prints (Son of Grid Engine 8.1.9), so a stored object, a
file given to ``qconf -M…`` and what ``qconf -s…`` shows are the same text.
Nothing here touches files (the grammars ``calendar.lark`` and ``rqs.lark``
are read from the package on first use) and lark is imported only then.

Registry (``objects``), for every kind::

    parse(kind, text) -> obj          ConfigError naming attribute and line
    render(kind, obj) -> str          byte-exact qconf text, trailing newline
    template(kind, name=None) -> obj  what qconf -a… opens in the editor
    validate(kind, obj, known=None)   value syntax; with known = {kind: names}
                                      also references (PE, calendar, user
                                      list, host group, project, ...)
    name_of(kind, obj) -> str|None
    attributes(kind) / parse_attribute(kind, attribute, text) /
    render_attribute(kind, attribute, value)     one attribute at a time
                                      (qconf -mattr, -aattr, -dattr, ...)

    render(kind, parse(kind, render(kind, obj))) == render(kind, obj)

Kinds and object shapes (dicts keyed by Grid Engine field names, in qconf
order; NONE is None for single values, [] for lists, {} for name=value lists):

``queue``      queue_conf(5). ``qname``, ``hostlist`` (list); every other
               attribute is a ``PerHost`` (``.default``, ``.overrides``,
               ``.for_host(host, hostgroup_members)``) around: int
               (seq_no, nsuspend, priority, slots), dict name->text
               (load_thresholds, suspend_thresholds, complex_values),
               ``TimeSpec`` / ``MemorySpec`` (intervals, limits), bool
               (rerun), list (qtype, pe_list, ckpt_list, owner_list,
               user_lists, xuser_lists, projects, xprojects,
               subordinate_list), str or None (prolog, methods, calendar).
``exechost``   host_conf(5). hostname, load_scaling/usage_scaling (name ->
               float), complex_values/load_values (name -> text),
               processors (int), user/project lists, report_variables.
``hostgroup``  hostgroup(5). group_name, hostlist (hosts and @groups).
``conf``       sge_conf(5). conf_name ("global" or a host) + parameters.
``sched``      sched_conf(5). every field of ``qconf -ssconf``.
``complex``    complex(5). {name: {name, shortcut, type, relop,
               requestable, consumable, default, urgency}}.
``pe``, ``ckpt``, ``calendar``, ``userset``, ``user``, ``project``
               sge_pe(5), checkpoint(5), calendar_conf(5), access_list(5),
               user(5), project(5).
``rqs``        sge_resource_quota(5). {name, description, enabled, limit:
               [rule]}, rule = {name, users, projects, pes, queues, hosts
               (``Scope`` or None), to: {resource: value text}}.
``sharetree``  share_tree(5). the root node {id, name, type, shares,
               childnodes: [nodes]}.
``managers`` ``operators`` ``adminhosts`` ``submithosts``: lists of names.

Modules: ``codecs`` (value types), ``attrfile`` (the "name value" layout
and qconf's line breaking), one module per family (``queue``, ``host``,
``hostgroup``, ``conf``, ``sched``, ``complex``, ``pe``, ``ckpt``,
``calendar``, ``userset``, ``userproj``, ``rqs``, ``sharetree``,
``lists``), ``names`` (host and object names, wildcards,
``match_queue_spec``, ``parse_resource_list``), ``objects`` (the
registry) and ``defaults`` (``shipped_files``, ``default_cell_objects``).
Beside the objects: ``admission`` (the rules a new job must pass: projects,
enforce_user, deadline users, job counts, with Grid Engine's words) and
``arwords`` (what Grid Engine says about advance reservations).

Helpers beyond the registry:

    match_queue_spec(spec, qname, host, hostgroups) -> bool
    parse_resource_list("h_rt=1:00:00,h_vmem=2G") -> [(name, value)]
    calendar.entries(calendar) -> (year entries, week entries)
    rqs.dynamic_terms (the pass evaluates quota sets in gridtools.sched.rqs)
    hostgroup.resolve_hostgroups(groups) -> {@group: hosts}
    sharetree.find_node / render_tree / render_nodes
    complex.lookup(complex, name_or_shortcut), complex.value_ok(type, text)
    conf.parse_params("a=1 b=2") -> dict
    default_cell_objects(hosts, slots, manager) -> {path under etc/: text}

The names above are importable from this package; modules load on first use.
"""

#: public name -> module that defines it
_EXPORTS = {
    "parse": "objects", "render": "objects", "template": "objects", "validate": "objects",
    "name_of": "objects", "KINDS": "objects", "attributes": "objects",
    "parse_attribute": "objects", "render_attribute": "objects",
    "PerHost": "codecs", "TimeSpec": "codecs", "MemorySpec": "codecs",
    "FieldError": "attrfile",
    "match_queue_spec": "names", "parse_resource_list": "names", "RESERVED_HOSTNAMES": "names",
    "entries": "calendar", "CalState": "calendar",
    "Scope": "rqs",
    "resolve_hostgroups": "hostgroup",
    "default_cell_objects": "defaults", "shipped_files": "defaults",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(f"{__name__}.{module_name}"), name)

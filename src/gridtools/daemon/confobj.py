"""Adding, modifying and deleting whole configuration objects (qconf -a/-A/-m/-M/-d).

Every object is parsed and validated with the format layer, its references
to other stored objects are checked (a queue naming a missing PE, a project
naming a missing user list ...), and it is stored only when all of that
passed; deleting an object that another one still names is refused. Also
here: the one-name lists (managers, operators, admin and submit hosts),
user entries of access lists (-au/-du) and share tree nodes (-astnode ...).
"""

from gridtools.daemon import arreq, confrefs, confstore
from gridtools.daemon.confstore import LABELS
from gridtools.errors import ConfigError, GridError
from gridtools.formats.sge import objects
from gridtools.formats.sge.attrfile import problem_line

#: execution host attributes a host reports; never stored
REPORTED = ("load_values", "processors")


def _parse(kind, text):
    try:
        return objects.parse(kind, text or "")
    except ConfigError as exc:
        raise GridError(f"error: {exc}") from None


def _validate(kind, obj):
    try:
        objects.validate(kind, obj, confstore.known())
    except ConfigError as exc:
        raise GridError(problem_line(exc)) from None


def missing(kind, name, deleting=False):
    what = (deleting and confstore.DELETE_LABELS.get(kind)) or LABELS[kind]
    return f'denied: {what} "{name}" does not exist'


def _name(ctx, kind, obj):
    if kind == "conf":
        name = ctx.body.get("name") or obj.get("conf_name")
        obj["conf_name"] = name
    else:
        name = objects.name_of(kind, obj)
    if not name:
        raise GridError("error: Object name missing in request")
    return name


def _check(kind, name, obj, adding):
    """Kind-specific checks and clean-ups before an object is stored."""
    if kind == "exechost":
        for field in REPORTED:
            obj.pop(field, None)
    if adding and kind in ("user", "project"):
        other = "project" if kind == "user" else "user"
        if name == "default":
            raise GridError(f'denied: not allowed add a {kind} with name "default"')
        if confstore.exists(other, name):
            raise GridError(f"denied: shared namespace between project and user: there is already a "
                            f'{other} which is named "{name}"')
    _validate(kind, obj)
    if kind == "userset":
        _userset_refusal(obj, not adding)
    if kind == "hostgroup":
        hostgroup_refusal(name, obj)
    if kind == "conf" and obj.get("jsv_url"):
        jsv_url_refusal(str(obj["jsv_url"]))


def jsv_url_refusal(url):
    """Raise GridError for a server JSV url that could not verify a job: another type than
    script, no program that runs, a user that does not exist (what a submission would
    be refused for later)."""
    from gridtools.cli.sge.jsv import Refused, program
    from gridtools.daemon.serverjsv import account
    try:
        found = program(url.strip(), server=True)
        if found is not None:
            account(found[0])
    except Refused as exc:
        raise GridError(f"denied: jsv_url: {exc}") from None


def hostgroup_refusal(name, obj):
    """Raise GridError when group ``name`` as ``obj`` adds a host that does not resolve,
    or would contain itself through the stored groups (whichever way it is changed)."""
    resolvable(name, obj)
    from gridtools.formats.sge.hostgroup import resolve_hostgroups
    groups = confstore.load_all("hostgroup")
    groups[name] = obj
    try:
        resolve_hostgroups(groups)
    except ConfigError as exc:
        raise GridError(f"error: {exc}") from None


def resolvable(name, obj):
    """Refuse host names a group adds that are no host of the cell and do not resolve
    (Grid Engine resolves the hosts added to a group)."""
    old = confstore.load("hostgroup", name) or {}
    added = [h for h in obj.get("hostlist") or [] if not h.startswith("@")
             and h not in (old.get("hostlist") or [])]
    if not added:
        return
    known = set(confstore.names("exechost"))
    for kind in ("adminhosts", "submithosts"):
        known.update(confstore.load(kind) or [])
    import socket
    for host in added:
        if host in known:
            continue
        try:
            socket.getaddrinfo(host, None)
        except (OSError, UnicodeError):
            raise GridError(f'unable to resolve host "{host}"') from None


def _userset_refusal(obj, modifying):
    from gridtools.formats.sge import userset
    why = userset.refusal(obj, modifying)
    if why:
        raise GridError(why)


# ---------------------------------------------------------------- add / modify / delete

def add(ctx):
    kind, text = ctx.body.get("object"), ctx.body.get("text")
    if kind == "rqs":
        return _store_rqs(ctx, text, adding=True)
    if kind == "sharetree":
        return _store_sharetree(ctx, text)
    if kind not in confstore.LABELS or kind in ("sched", "complex") + confstore.LIST_KINDS:
        raise GridError(f"error: cannot add objects of kind {kind!r}")
    obj = _parse(kind, text)
    name = _name(ctx, kind, obj)
    if kind == "exechost":                  # host names are one name in any letter case
        name = next((n for n in confstore.names(kind) if n.lower() == name.lower()), name)
    if confstore.exists(kind, name):
        return ctx.fail(f"configuration {name} already exists" if kind == "conf"
                        else f'{LABELS[kind]} "{name}" already exists')
    _check(kind, name, obj, adding=True)
    confstore.write(ctx.state, kind, name, obj)
    ctx.added(kind, name)


def modify(ctx):
    kind, text = ctx.body.get("object"), ctx.body.get("text")
    if kind == "rqs":
        return _store_rqs(ctx, text, adding=False)
    if kind == "sharetree":
        return _store_sharetree(ctx, text)
    if kind == "sched":
        return _modify_sched(ctx, text)
    if kind == "complex":
        return _modify_complex(ctx, text)
    if kind not in confstore.LABELS or kind in confstore.LIST_KINDS:
        raise GridError(f"error: cannot modify objects of kind {kind!r}")
    obj = _parse(kind, text)
    name = _name(ctx, kind, obj)
    expect = ctx.body.get("expect")
    if expect is not None and expect != name:
        return ctx.fail(f'denied: the name of {LABELS[kind]} "{expect}" cannot be changed')
    if not confstore.exists(kind, name):
        return ctx.fail(f"configuration {name} does not exist" if kind == "conf" else missing(kind, name))
    _check(kind, name, obj, adding=False)
    why = arreq.calendar_conflict(ctx.state, kind, name, obj) or \
        arreq.capacity_conflict(ctx.state, kind, name, obj)
    if why:
        return ctx.fail(why)
    confstore.write(ctx.state, kind, name, obj)
    ctx.modified(kind, name)


def delete(ctx):
    kind = ctx.body.get("object")
    if kind == "sharetree":
        if not confstore.exists("sharetree"):
            return ctx.fail("sharetree does not exist")
        confstore.remove(ctx.state, "sharetree")
        return ctx.info(f"{ctx.who} removed sharetree list")
    if kind not in confstore.LABELS or kind in ("sched", "complex") + confstore.LIST_KINDS:
        raise GridError(f"error: cannot delete objects of kind {kind!r}")
    for name in _expand(kind, ctx.body.get("names") or []):
        reason = _undeletable(ctx, kind, name)
        if reason:
            ctx.fail(reason)
            continue
        confstore.remove(ctx.state, kind, name)
        ctx.removed(kind, name)


def _expand(kind, names):
    """Queue names with wildcards (-dq wc_queue_list) replaced by the queues they match."""
    if kind != "queue":
        return names
    from gridtools.formats.sge.names import is_pattern, wildcard_match
    result = []
    for name in names:
        matches = [q for q in confstore.names("queue") if wildcard_match(name, q)] if is_pattern(name) else []
        result.extend(matches or [name])
    return result


def _undeletable(ctx, kind, name):
    """Why ``name`` cannot be deleted, or None."""
    if kind == "exechost" and name == "global":
        return 'denied: pseudo host "global" may not be deleted'
    if kind == "conf" and name == "global":
        return "denied: the global configuration may not be deleted"
    try:
        found = confstore.exists(kind, name)
    except ConfigError:
        found = False
    if not found:
        return f"configuration {name} does not exist" if kind == "conf" else missing(kind, name, True)
    if kind == "queue" and (_has_running(ctx.state, kind, name)
                            or name in arreq.reserved_queues(ctx.state)):
        # (a queue instance that reservations hold counts as one with running jobs)
        return "There are still running jobs in the queue. Deletion denied."
    refusal = confrefs.refusal(kind, name, _unfinished(ctx.state) if kind in confrefs.JOB_REFERENCES else ())
    if kind == "exechost":
        # a queue instance whose hostlist no longer names the host stays (orphaned) while
        # jobs run in it, and refers to the host as a configured one does
        held = _held_queues(ctx.state, name)
        configured = _referring_queue(refusal, name)
        if held and (configured is None or held[0] < configured):
            return f'Host object "{name}" is still referenced in cluster queue "{held[0]}".'
    return refusal


def _held_queues(state, host):
    """The cluster queues (sorted) in whose instance on ``host`` tasks run or advance
    reservations hold slots."""
    from gridtools.daemon.state import running_tasks
    return sorted({queue for _job, task in running_tasks(state) for queue, h, _slots in task.granted
                   if h == host} | set(arreq.reserved_queues(state, host)))


def _referring_queue(refusal, host):
    """The cluster queue an execution host's refusal names, or None."""
    head = f'Host object "{host}" is still referenced in cluster queue "'
    if refusal and refusal.startswith(head):
        return refusal[len(head):].rstrip('".')
    return None


def _unfinished(state):
    return [state.jobs[i] for i in state.live_ids() if i in state.jobs]


def _has_running(state, kind, name):
    from gridtools.daemon.state import running_tasks
    for _job, task in running_tasks(state):
        for queue, host, _slots in task.granted:
            if (queue if kind == "queue" else host) == name:
                return True
    return False


# ---------------------------------------------------------------- single objects

def _modify_sched(ctx, text):
    obj = _parse("sched", text)
    _validate("sched", obj)
    confstore.write(ctx.state, "sched", None, obj)
    ctx.info("changed scheduler configuration")     # qconf's own line, on stderr


def _modify_complex(ctx, text):
    new = _parse("complex", text)
    _validate("complex", new)
    old = confstore.load("complex") or {}
    for name in sorted(set(old) - set(new)):
        reason = confrefs.complex_refusal(name, confstore.load("sched"))
        if reason:
            return ctx.fail(reason)
    confstore.write(ctx.state, "complex", None, new)
    for name in sorted(set(old) | set(new)):
        if name not in new:
            ctx.removed("complex", name)
        elif name not in old:
            ctx.added("complex", name)
        elif old[name] != new[name]:
            ctx.modified("complex", name)


def _tree_counts(tree):
    from gridtools.formats.sge.sharetree import walk
    nodes = list(walk(tree))
    return len(nodes), sum(1 for n in nodes if not n["childnodes"])


def _validate_tree(tree):
    """Grid Engine's checks of a share tree against the users and projects (a refusal
    in its words: an unknown name, a user as an inner node, a name twice ...)."""
    try:
        objects.validate("sharetree", tree, confstore.known())
    except ConfigError as exc:
        raise GridError(problem_line(exc)) from None


def _log_tree(ctx, tree, verb):
    nodes, leafs = _tree_counts(tree)
    ctx.state.log(f"I|{ctx.who} has {verb} sharetree with {nodes} nodes and {leafs} leafs")


def _store_sharetree(ctx, text):
    tree = _parse("sharetree", text)
    _validate_tree(tree)
    existed = confstore.exists("sharetree")
    confstore.write(ctx.state, "sharetree", None, tree)
    _log_tree(ctx, tree, "modified" if existed else "added")
    ctx.info("changed sharetree")


# ---------------------------------------------------------------- resource quota sets

def _parse_sets(text):
    from gridtools.formats.sge import rqs
    try:
        sets = rqs.parse_list(text or "")
    except ConfigError as exc:
        raise GridError(f"error: {exc}") from None
    if not sets:
        raise GridError("error: no resource quota set given")
    return sets


def _store_rqs(ctx, text, adding):
    sets = _parse_sets(text)
    wanted = ctx.body.get("names") or []
    given = [rqs_set["name"] for rqs_set in sets]
    twice = next((name for name in given if given.count(name) > 1), None)
    if twice is not None:
        return ctx.fail(f'denied: resource quota set "{twice}" is given more than once')
    for rqs_set in sets:
        if wanted and rqs_set["name"] not in wanted:
            return ctx.fail(f'denied: resource quota set "{rqs_set["name"]}" was not named on the command line')
        if adding and confstore.exists("rqs", rqs_set["name"]):
            return ctx.fail(f'resource quota set "{rqs_set["name"]}" already exists')
        _validate("rqs", rqs_set)
        confstore.storable("rqs", rqs_set["name"], rqs_set)
    for rqs_set in sets:
        existed = confstore.exists("rqs", rqs_set["name"])
        confstore.write(ctx.state, "rqs", rqs_set["name"], rqs_set)
        (ctx.modified if existed else ctx.added)("rqs", rqs_set["name"])
    if ctx.body.get("replace_all"):
        keep = {s["name"] for s in sets}
        for name in confstore.names("rqs"):
            if name not in keep:
                confstore.remove(ctx.state, "rqs", name)
                ctx.removed("rqs", name)


# ---------------------------------------------------------------- name lists

def _same(kind, a, b):
    return a.lower() == b.lower() if kind in ("adminhosts", "submithosts") else a == b


def names_add(ctx):
    kind = ctx.body.get("object")
    if kind not in confstore.LIST_KINDS:
        raise GridError(f"error: {kind!r} is not a name list")
    names = confstore.load(kind) or []
    changed = False
    for name in ctx.body.get("names") or []:
        if any(_same(kind, name, n) for n in names):
            ctx.fail(f'{LABELS[kind]} "{name}" already exists')
            continue
        try:
            objects.validate(kind, names + [name])
        except ConfigError as exc:
            ctx.fail(f"denied: {exc}")
            continue
        names.append(name)
        changed = True
        ctx.added(kind, name)
    if changed:
        confstore.write(ctx.state, kind, None, names)


def names_delete(ctx):
    kind = ctx.body.get("object")
    if kind not in confstore.LIST_KINDS:
        raise GridError(f"error: {kind!r} is not a name list")
    names = confstore.load(kind) or []
    changed = False
    for name in ctx.body.get("names") or []:
        if kind == "managers" and name == "root":
            ctx.fail('denied: "root" is always a manager and cannot be removed')
            continue
        match = [n for n in names if _same(kind, name, n)]
        if not match:
            ctx.fail(missing(kind, name, True))
            continue
        names.remove(match[0])
        changed = True
        ctx.removed(kind, match[0])
    if changed:
        confstore.write(ctx.state, kind, None, names)


# ---------------------------------------------------------------- access list entries

def acl_add(ctx):
    """-au: add users to access lists; a list that does not exist is created."""
    for list_name in ctx.body.get("lists") or []:
        obj = confstore.load("userset", list_name)
        if obj is None:
            obj = objects.template("userset", list_name)
        entries, added = obj["entries"], []
        for user in ctx.body.get("users") or []:
            if user in entries:
                ctx.fail(f'"{user}" is already in access list "{list_name}"')
                continue
            entries.append(user)
            added.append(user)
        _validate("userset", obj)
        _userset_refusal(obj, confstore.exists("userset", list_name))
        confstore.write(ctx.state, "userset", list_name, obj)
        for user in added:
            ctx.info(f'added "{user}" to access list "{list_name}"')


def acl_delete(ctx):
    """-du: remove users from access lists."""
    for list_name in ctx.body.get("lists") or []:
        obj = confstore.load("userset", list_name)
        if obj is None:
            ctx.fail(f'denied: access list "{list_name}" does not exist')
            continue
        for user in ctx.body.get("users") or []:
            if user not in obj["entries"]:
                ctx.fail(f'user "{user}" is not in access list "{list_name}"')
                continue
            obj["entries"].remove(user)
            ctx.info(f'deleted user "{user}" from access list "{list_name}"')
        confstore.write(ctx.state, "userset", list_name, obj)


# ---------------------------------------------------------------- share tree nodes

def stnode(ctx):
    """-astnode / -mstnode / -dstnode: change nodes of the stored share tree (-astnode
    without one starts a tree at a node "Root" of 1 share, as qconf does).

    As Grid Engine's qconf, -astnode / -mstnode say ``setting`` and the node's
    path with its new shares for each node they set (-astnode sets a node
    that exists, and adds one whose parent exists), and ``Unable to locate
    <path> in sharetree`` for each they cannot; -dstnode says ``removing``
    and the node's path for each node it removes, and for each it cannot the
    reason (not found, the root, a node with children). When none is set or
    removed, ``no modifications to sharetree`` and the request fails.
    """
    tree = confstore.load("sharetree")
    existed = tree is not None
    mode = ctx.body.get("mode")
    if tree is None and mode == "add":
        tree = {"id": 0, "name": "Root", "type": 0, "shares": 1, "childnodes": []}
    if tree is None:
        return ctx.fail("No sharetree")
    modified = 0
    if mode == "delete":
        for path, _shares in ctx.body.get("items") or []:
            try:
                removed = _delete_node(tree, str(path))
            except GridError as exc:
                ctx.info(str(exc))
                continue
            modified += 1
            ctx.info("removing ")
            ctx.info(removed)
        if not modified:
            return ctx.fail("no modifications to sharetree")
    elif mode in ("add", "modify"):
        for path, shares in ctx.body.get("items") or []:
            found = _set_node(tree, str(path), int(shares), mode == "add")
            if found is None:
                ctx.info(f"Unable to locate {path} in sharetree")
                continue
            modified += 1
            ctx.info("setting ")
            ctx.info(f"{found}={int(shares)}")
        if not modified:
            return ctx.fail("no modifications to sharetree")
    else:
        raise GridError(f"error: unknown share tree node operation {mode!r}")
    _validate_tree(tree)
    confstore.write(ctx.state, "sharetree", None, tree)
    _log_tree(ctx, tree, "modified" if existed else "added")
    ctx.info("modified sharetree")


def _locate(tree, path):
    from gridtools.formats.sge.sharetree import find_node
    found = find_node(tree, path)
    if found is None:
        raise GridError(f"Unable to locate {path} in sharetree")
    return found


def _set_node(tree, path, shares, add):
    """Set the shares of the node at ``path`` (``add``: adding it when only its parent
    exists); the node's path from the root as qconf prints it, None when there is no
    such node (or parent)."""
    from gridtools.formats.sge.sharetree import find_node
    found = find_node(tree, path)
    if found is None and add:
        cut = max(path.rfind("/"), path.rfind("."))
        parent_path, name = (path[:cut] or "/", path[cut + 1:]) if cut >= 0 else ("/", path)
        parent = find_node(tree, parent_path)
        if parent is None or not name:
            return None
        if any(c["name"] == name for c in parent[0]["childnodes"]):
            raise GridError(f"Could not add node {path} to sharetree due to non-unique path")
        node_type = 1 if confstore.exists("project", name) else 0
        parent[0]["childnodes"].append({"id": 0, "name": name, "type": node_type, "shares": shares,
                                        "childnodes": []})
        found = find_node(tree, path)
    if found is None:
        return None
    node, ancestors = found
    node["shares"] = shares
    return "".join("/" + a["name"] for a in ancestors[1:] + ([node] if node is not tree else []))


def _delete_node(tree, path):
    """Remove the leaf at ``path``; its path from the root as qconf prints it.
    GridError (with qconf's text) when there is no such node, or it is the
    root or has children."""
    node, ancestors = _locate(tree, path)
    if node is tree:
        raise GridError("can't delete root node")
    if node["childnodes"]:
        raise GridError("can't delete nodes with children")
    ancestors[-1]["childnodes"].remove(node)
    return "".join("/" + a["name"] for a in ancestors[1:] + [node])

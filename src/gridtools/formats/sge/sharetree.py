"""The share tree (share_tree(5)), as ``qconf -sstree`` shows it.

The text lists the nodes one attribute per line (``id=``, ``name=``,
``type=``, ``shares=``, ``childnodes=``); ``childnodes`` names child ids.
The object is the root node, a dict::

    {"id": int, "name": str, "type": 0 (user) | 1 (project), "shares": int,
     "childnodes": [child node dicts]}

``render`` numbers the nodes depth first from 0 and writes them in that
order, as Grid Engine does. Node paths (``/projA/alice``) address nodes:
``/`` steps to a child, ``.`` searches the whole subtree, a path without a
leading ``/`` starts anywhere. ``render_tree`` gives ``qconf -sst`` and
``render_nodes`` gives ``qconf -sstnode`` / ``-rsstnode``.
"""

from gridtools.formats.sge.attrfile import FieldError, Refusal, logical_lines, wrap_line
from gridtools.formats.sge.names import check_object_name

#: node types
USER_NODE, PROJECT_NODE = 0, 1
NODE_TYPES = frozenset({USER_NODE, PROJECT_NODE})
#: attributes of a node record, in order
NODE_FIELDS = ("id", "name", "type", "shares", "childnodes")
#: spool bookkeeping attribute some share tree files carry; dropped when read
VERSION_FIELD = "version"
#: indentation per level of qconf -sst
TREE_INDENT = "   "


def _int(value, name, number):
    if not value.isdigit():
        raise FieldError(f'invalid value "{value}" for attribute "{name}": expected a non-negative integer',
                         name, number)
    return int(value)


def _records(text):
    """``{id: (record dict, line)}`` in file order."""
    records, current = {}, None
    for number, line in logical_lines(text):
        name, eq, value = line.strip().partition("=")
        if not eq or name not in NODE_FIELDS + (VERSION_FIELD,):
            raise FieldError(f'expected attribute=value with one of {", ".join(NODE_FIELDS)}', name, number)
        if name == "id":
            current = {"id": _int(value, "id", number)}
            if current["id"] in records:
                raise FieldError(f"node id {current['id']} is used twice", "id", number)
            records[current["id"]] = (current, number)
        elif current is None:
            raise FieldError('a node must start with "id="', name, number)
        elif name != VERSION_FIELD:
            current[name] = value if name == "name" else (
                value if name == "childnodes" else _int(value, name, number))
    return records


def _children_ids(record, number):
    text = record.get("childnodes", "NONE")
    if text.upper() == "NONE":
        return []
    return [_int(part.strip(), "childnodes", number) for part in text.split(",") if part.strip()]


def _build(records, node_id, seen):
    record, number = records[node_id]
    seen.add(node_id)
    for field in ("name", "type", "shares"):
        if field not in record:
            raise FieldError(f'missing attribute "{field}" of node {node_id}', field, number)
    node = {"id": node_id, "name": record["name"], "type": record["type"], "shares": record["shares"],
            "childnodes": []}
    for child in _children_ids(record, number):
        if child not in records:
            # (Grid Engine's words; its qconf then exits 0, having stored nothing)
            raise Refusal(f"found reference to node {child} but no specification", "childnodes")
        if child in seen:
            raise FieldError(f"node {child} appears twice in the tree", "childnodes", number)
        node["childnodes"].append(_build(records, child, seen))
    return node


def parse(text):
    """The root node of a ``qconf -sstree`` text."""
    records = _records(text)
    if not records:
        raise FieldError("the share tree has no nodes")
    root_id = 0 if 0 in records else next(iter(records))
    seen = set()
    root = _build(records, root_id, seen)
    stray = [i for i in records if i not in seen]
    if stray:
        raise FieldError(f"node {stray[0]} is not reachable from the root", "childnodes", records[stray[0]][1])
    return root


def walk(root):
    """Every node, depth first, root first."""
    yield root
    for child in root["childnodes"]:
        yield from walk(child)


def render(root):
    """``qconf -sstree`` text; nodes numbered depth first."""
    ids = {id(node): number for number, node in enumerate(walk(root))}
    lines = []
    for node in walk(root):
        children = ",".join(str(ids[id(c)]) for c in node["childnodes"]) or "NONE"
        lines += [f"id={ids[id(node)]}", f"name={node['name']}", f"type={node['type']}",
                  f"shares={node['shares']}", f"childnodes={children}"]
    return "".join(wrap_line(line) + "\n" for line in lines)


def template(name="template"):
    """A share tree of one node."""
    return {"id": 0, "name": name, "type": USER_NODE, "shares": 0, "childnodes": []}


def validate(obj, known=None):
    """Raise ConfigError for bad nodes or twin sibling names; with ``known`` (the
    existing names of each kind, ``{"user": ..., "project": ...}``) also for the names
    Grid Engine refuses (``check_references``)."""
    for node in walk(obj):
        name = node.get("name")
        check_object_name(name, "share tree node", "name")
        if node.get("type") not in NODE_TYPES:
            raise FieldError(f'invalid type "{node.get("type")}" of node "{name}": expected 0 or 1', "type")
        shares = node.get("shares")
        if isinstance(shares, bool) or not isinstance(shares, int) or shares < 0:
            raise FieldError(f'invalid shares "{shares}" of node "{name}"', "shares")
        seen = set()
        for child in node.get("childnodes", []):
            if child.get("name") in seen:
                raise Refusal(f'denied: found node "{child.get("name")}" twice under node "{name}"',
                              "childnodes")
            seen.add(child.get("name"))
    if known and "project" in known:
        check_references(obj, known.get("user") or (), known["project"])


#: the user name a leaf of a project subtree may carry for every user without a leaf
DEFAULT_USER = "default"


def check_references(root, users, projects):
    """Grid Engine's rules for the names in a share tree, checked before it is stored.

    A node naming a project starts that project's subtree; a project appears once
    in the tree and never inside another project's subtree. A user is a leaf, never
    an inner node. A leaf outside project subtrees names a user, a project or
    ``default``, each once there; a leaf inside a project subtree names a user or
    ``default``, each once in that subtree. Inner nodes naming neither a user nor a
    project group their children. Raises a Refusal in Grid Engine's words; sets
    ``type`` of nodes naming a project to 1 (and of leaves naming none to 0).
    """
    _check_node(root, set(users), set(projects), None, set())


def _check_node(node, users, projects, project, found):
    name, children = node["name"], node["childnodes"]
    if children:
        if name in projects:
            node["type"] = PROJECT_NODE
            if project is not None:
                raise Refusal(f'found project "{name}" in project "{project}" sub-tree of share tree', "name")
            if name in found:
                raise Refusal(f'found project "{name}" twice in share tree', "name")
            found.add(name)
            project, found = name, set()
        elif name in users:
            raise Refusal(f'found user "{name}" in share tree as a non-leaf node', "name")
        elif node["type"] == PROJECT_NODE:
            raise Refusal(f'denied: share tree contains reference to unknown project "{name}"', "name")
        for child in children:
            _check_node(child, users, projects, project, found)
        return
    is_user = name in users or name == DEFAULT_USER
    if project is not None:
        if name in projects:
            raise Refusal(f'found project "{name}" in project "{project}" sub-tree of share tree', "name")
        if not is_user:
            raise Refusal(f'denied: share tree contains reference to unknown user "{name}"', "name")
        if name in found:
            raise Refusal(f'found user "{name}" twice in project "{project}" sub-tree of share tree', "name")
    else:
        if not is_user and name not in projects:
            raise Refusal(f'denied: share tree contains reference to unknown user/project "{name}"', "name")
        if name in found:
            raise Refusal(f'found {"user" if is_user else "project"} "{name}" twice in share tree', "name")
    node["type"] = USER_NODE if is_user else PROJECT_NODE
    found.add(name)


def find_node(root, path):
    """``(node, [ancestors from the root])`` for a node path, or None."""
    if path in ("/", "") or path.lower() == "root":
        return root, []
    parts, delim, name = [], ".", ""
    for char in path:
        if char in "/.":
            if name:
                parts.append((delim, name))
            delim, name = char, ""
        else:
            name += char
    if name:
        parts.append((delim, name))
    return _search(root, parts, [])


def _search(node, parts, ancestors):
    if not parts:
        return node, ancestors
    delim, name = parts[0]
    for child in node["childnodes"]:
        if child["name"] == name or name == "*":
            found = _search(child, parts[1:], ancestors + [node])
            if found is not None:
                return found
        if delim == ".":
            found = _search(child, parts, ancestors + [node])
            if found is not None:
                return found
    return None


def render_tree(root):
    """``qconf -sst`` text: ``name=shares`` indented by depth."""
    lines = []

    def show(node, depth):
        lines.append(f"{TREE_INDENT * depth}{node['name']}={node['shares']}")
        for child in node["childnodes"]:
            show(child, depth + 1)

    show(root, 0)
    return "\n".join(lines) + "\n"


def render_nodes(root, path, recursive=False):
    """``qconf -sstnode path`` (``recursive``: ``-rsstnode``) text.

    Raises ConfigError when no node matches the path.
    """
    found = find_node(root, path)
    if found is None:
        raise FieldError(f"Unable to locate {path} in sharetree", "name")
    node, ancestors = found
    if node is root:
        lines = [f"/={root['shares']}"]
        prefix = ""
    else:
        prefix = "".join("/" + a["name"] for a in ancestors[1:]) + "/" + node["name"]
        lines = [f"{prefix}={node['shares']}"]
    if recursive:
        for child in node["childnodes"]:
            lines.append(render_nodes(root, f"{prefix}/{child['name']}", True).rstrip("\n"))
    return "\n".join(lines) + "\n"

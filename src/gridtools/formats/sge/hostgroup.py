"""Host groups (hostgroup(5)), as ``qconf -shgrp`` shows them.

A group's ``hostlist`` holds host names and other ``@groups`` (nested
groups). ``resolve_hostgroups`` expands every group into its hosts and
refuses cycles; ``render_tree`` and ``render_resolved`` give the
``qconf -shgrp_tree`` and ``qconf -shgrp_resolved`` texts.
"""

from gridtools.formats.sge.attrfile import Field, FieldError, Schema
from gridtools.formats.sge.codecs import NameList, Text
from gridtools.formats.sge.names import check_host_name, check_object_name, require_known

SCHEMA = Schema([
    Field("group_name", Text(), "@template"),
    Field("hostlist", NameList(), []),
], 0)

#: indentation per level of qconf -shgrp_tree
TREE_INDENT = "   "


def parse(text):
    """A host group dict from ``qconf -shgrp`` text."""
    return SCHEMA.parse(text)


def render(obj):
    """``qconf -shgrp`` text of a host group dict."""
    return SCHEMA.render(obj)


def template(name="@template"):
    """The host group ``qconf -ahgrp`` opens in the editor."""
    return SCHEMA.template(group_name=name)


def validate(obj, known=None):
    """Raise ConfigError for a bad group name, reserved hosts or unknown subgroups."""
    SCHEMA.check(obj)
    name = obj["group_name"]
    if not name.startswith("@") or len(name) < 2:
        raise FieldError(f'invalid host group name "{name}": it must start with "@"', "group_name")
    check_object_name(name[1:], "host group", "group_name")
    for member in obj["hostlist"]:
        if member == name:
            raise FieldError(f'host group "{name}" cannot contain itself', "hostlist")
        if member.startswith("@"):
            require_known([member], known, "hostgroup", "hostlist", "host group")
        else:
            check_host_name(member, "hostlist")


def _members(groups, name):
    entry = groups[name]
    return entry["hostlist"] if isinstance(entry, dict) else list(entry)


def _expand(groups, name, path, out):
    if name in path:
        raise FieldError(f'host group "{name}" contains itself through {" -> ".join(path + [name])}',
                         "hostlist")
    if name not in groups:
        raise FieldError(f'host group "{name}" does not exist', "hostlist")
    for member in _members(groups, name):
        if member.startswith("@"):
            _expand(groups, member, path + [name], out)
        elif member.lower() not in {h.lower() for h in out}:
            out.append(member)


def resolve_hostgroups(groups):
    """``{@group: (host, ...)}`` with nested groups expanded, in listed order.

    ``groups`` maps names to host group dicts (or to member lists). Raises
    ConfigError for cycles and for references to undefined groups.
    """
    resolved = {}
    for name in groups:
        hosts = []
        _expand(groups, name, [], hosts)
        resolved[name] = tuple(hosts)
    return resolved


def render_tree(name, groups):
    """``qconf -shgrp_tree`` text: the group and its members, nested by indent."""
    lines = []

    def walk(group, depth, path):
        if group in path:
            raise FieldError(f'host group "{group}" contains itself', "hostlist")
        lines.append(TREE_INDENT * depth + group)
        for member in _members(groups, group):
            if member.startswith("@") and member in groups:
                walk(member, depth + 1, path + [group])
            else:
                lines.append(TREE_INDENT * (depth + 1) + member)

    walk(name, 0, [])
    return "\n".join(lines) + "\n"


def render_resolved(name, groups):
    """``qconf -shgrp_resolved`` text: every host of the group on one line."""
    hosts = []
    _expand(groups, name, [], hosts)
    return " ".join(hosts) + "\n"

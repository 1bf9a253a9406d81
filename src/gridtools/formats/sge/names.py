"""Names, wildcards and small value lists shared by the Grid Engine formats.

- ``RESERVED_HOSTNAMES``: words that cannot name a host.
- ``check_object_name`` / ``check_host_name``: the name rules of sge_types.
- ``wildcard_match``: fnmatch-style patterns (``*``, ``?``, ``[...]``) with
  ``|`` alternatives, as Grid Engine's wildcard expressions use them.
- ``match_queue_spec``: does a queue expression (``all.q``, ``all.q@node*``,
  ``*@node1``, ``q@@group``) name a given queue instance?
- ``parse_resource_list``: ``-l`` style ``name=value,...`` lists.

``fnmatch`` (and with it ``re``) is imported only when a pattern is matched.
"""

from gridtools.errors import InputError
from gridtools.formats.sge.attrfile import FieldError

#: host names Grid Engine reserves for its own use
RESERVED_HOSTNAMES = frozenset({"global", "template", "all", "default", "unknown", "none"})

#: characters an object name (queue, PE, user list, ...) may not contain
FORBIDDEN_NAME_CHARS = frozenset("\n\t\r /:@\\*?,=[]{}\"'")

#: characters that make a name a wildcard pattern
PATTERN_CHARS = frozenset("*?[]|")


def is_pattern(text):
    """True when ``text`` contains wildcard characters."""
    return any(c in PATTERN_CHARS for c in text)


def check_object_name(name, what, field=None):
    """Raise ConfigError unless ``name`` may name a ``what`` (queue, PE, ...)."""
    if not isinstance(name, str) or not name:
        raise FieldError(f"missing {what} name", field)
    bad = sorted({c for c in name if c in FORBIDDEN_NAME_CHARS})
    if bad:
        raise FieldError(f'invalid {what} name "{name}": it must not contain {" ".join(repr(c) for c in bad)}',
                         field)
    if name.lower() == "none":
        raise FieldError(f'invalid {what} name "{name}": NONE is reserved', field)


def check_host_name(name, field=None, allow_global=False):
    """Raise ConfigError for a reserved or malformed host name."""
    if not isinstance(name, str) or not name or len(name.split()) != 1 or name.startswith("@"):
        raise FieldError(f'invalid host name "{name}"', field)
    lowered = name.lower()
    if lowered in RESERVED_HOSTNAMES and not (allow_global and lowered == "global"):
        raise FieldError(f'host name "{name}" is reserved and cannot be used', field)


def wildcard_match(pattern, text, fold_case=False):
    """fnmatch-style match; ``a|b`` matches either alternative."""
    import fnmatch
    if fold_case:
        pattern, text = pattern.lower(), text.lower()
    return any(fnmatch.fnmatchcase(text, alt) for alt in pattern.split("|"))


def reservations_named(item, table):
    """The ids (ascending) of the advance reservations of ``table`` (id -> reservation)
    that ``item`` of an ar_list names: its id when it is a number, else those whose
    name it matches, as a name or a pattern."""
    if item.isdigit():
        return [int(item)] if int(item) in table else []
    return [i for i, ar in sorted(table.items()) if ar.get("name") and wildcard_match(item, str(ar["name"]))]


def _host_part_matches(hpart, host, hostgroups):
    if hpart.startswith("@"):
        for group, members in (hostgroups or {}).items():
            if wildcard_match(hpart, group) and any(h.lower() == host.lower() for h in members):
                return True
        return False
    return wildcard_match(hpart, host, fold_case=True)


def match_queue_spec(spec, qname, host, hostgroups=None):
    """True when queue expression ``spec`` names the instance ``qname@host``.

    ``spec`` is ``cqueue``, ``cqueue@host``, ``cqueue@@hostgroup`` or
    ``@host``; every part may hold wildcards (``*``, ``?``, ``[...]``, ``|``).
    ``hostgroups`` maps ``@group`` names to their resolved host names.
    Host names compare without regard to letter case.
    """
    qpart, at, hpart = spec.strip().partition("@")
    if not wildcard_match(qpart or "*", qname):
        return False
    if not at:
        return True
    if not hpart:
        return False
    return _host_part_matches(hpart, host, hostgroups)


def parse_resource_list(text):
    """``[(name, value), ...]`` from ``h_rt=1:00:00,h_vmem=2G,arch=lx*``.

    A name without ``=value`` stands for a boolean request (value ``TRUE``).
    Raises InputError for empty names or values.
    """
    result = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise InputError(f'invalid resource request "{text}"')
        name, eq, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not name or len(name.split()) != 1 or (eq and not value):
            raise InputError(f'invalid resource request "{item}"')
        result.append((name, value if eq else "TRUE"))
    return result


def require_known(names, known, kind, field, what, words=None):
    """Raise FieldError naming ``field`` if a name is missing from ``known[kind]``; with
    ``words`` (Grid Engine's sentence, ``{}`` for the name) a Refusal in those words.

    Checks nothing when ``known`` holds no entry for ``kind``; names with
    wildcards are not checked.
    """
    if not known or kind not in known:
        return
    existing = known[kind]
    for name in names:
        if not is_pattern(name) and name not in existing:
            if words:
                from gridtools.formats.sge.attrfile import Refusal
                raise Refusal(words.format(name), field)
            raise FieldError(f'attribute "{field}" refers to {what} "{name}" which does not exist', field)

"""Resource quota sets (sge_resource_quota(5)), as ``qconf -srqs`` shows them.

A set is ``{"name", "description" (None: NONE), "enabled" (bool), "limit"}``
where ``limit`` is the ordered list of rules. A rule is a dict::

    {"name": str|None,
     "users": Scope|None, "projects": Scope|None, "pes": Scope|None,
     "queues": Scope|None, "hosts": Scope|None,
     "to": {resource: value text}}

A ``Scope`` lists included and excluded (``!``) names and whether it is
expanded (``{...}``: the limit applies to each matching name separately).
Limit values are text; a value containing ``$`` is a dynamic limit
(``dynamic_terms`` reads it), worked out per host by the scheduler.

What a rule means to the scheduler (which rule applies, what it counts,
dynamic limits, qquota's rows) lives in ``gridtools.sched.rqs``, on the
records made from these sets. ``rule_matches`` / ``matching_rule`` /
``usage_key`` remain here only for the daemon's monitoring file until it
takes its records from ``sched.schedule``. The rule grammar lives in
``rqs.lark``; lark is imported on first use.
"""

from gridtools.formats.sge.attrfile import FieldError, Refusal, logical_lines, split_attr, wrap_line
from gridtools.formats.sge.codecs import Boolean, ValueProblem, is_none_word
from gridtools.formats.sge.names import check_object_name, wildcard_match

#: filter keywords, in the order qconf writes them
FILTERS = ("users", "projects", "pes", "queues", "hosts")
#: name column width inside a set
WIDTH = 12
#: indentation of the attribute lines inside braces
INDENT = "   "


class Scope:
    """The names a rule filter matches: ``include`` (empty: any), ``exclude``, ``expand``."""

    __slots__ = ("include", "exclude", "expand")

    def __init__(self, include=(), exclude=(), expand=False):
        self.include, self.exclude, self.expand = tuple(include), tuple(exclude), bool(expand)

    def text(self):
        """The scope as written: positive names, then ``!`` names, braced if expanded."""
        body = ",".join([*self.include, *("!" + n for n in self.exclude)])
        return "{" + body + "}" if self.expand else body

    def __eq__(self, other):
        if not isinstance(other, Scope):
            return NotImplemented
        return (self.include, self.exclude, self.expand) == (other.include, other.exclude, other.expand)

    def __repr__(self):
        return f"Scope({self.text()!r})"


#: the lark parser, built on first use
_PARSER = []
#: parsed rules by text; cleared when it grows past CACHE_SIZE
_RULES = {}
CACHE_SIZE = 512


def _parser():
    if not _PARSER:
        import lark
        _PARSER.append(lark.Lark.open("rqs.lark", rel_to=__file__, parser="lalr", start="rule"))
    return _PARSER[0]


def _scope(node):
    include, exclude = [], []
    for item in node.children:
        negated, name = item.children
        (exclude if negated else include).append(str(name))
    return Scope(include, exclude, node.data == "expanded")


def _build_rule(tree):
    rule = {"name": None, **{kind: None for kind in FILTERS}, "to": {}}
    for node in tree.children:
        if node.data == "rule_name":
            if rule["name"] is not None:
                raise ValueProblem("the rule name is given twice")
            rule["name"] = str(node.children[0])
        elif node.data == "filter":
            kind = str(node.children[0])
            if rule[kind] is not None:
                raise ValueProblem(f'filter "{kind}" is given twice')
            rule[kind] = _scope(node.children[1])
        else:
            name, value = (str(t) for t in node.children)
            if name in rule["to"]:
                raise ValueProblem(f'limit "{name}" is given twice')
            rule["to"][name] = value
    return rule


def _parse_rule_cached(text):
    if text not in _RULES:
        if len(_RULES) >= CACHE_SIZE:
            _RULES.clear()
        _RULES[text] = _parse_rule(text)
    return _RULES[text]


def _parse_rule(text):
    import lark
    try:
        return _build_rule(_parser().parse(text))
    except lark.exceptions.UnexpectedInput as err:
        raise ValueProblem(f"syntax error at column {err.column} (expected "
                           "[name N] [users|projects|pes|queues|hosts list]... to res=value,...)") from None


def parse_rule(text):
    """A rule dict from the text after ``limit``; raises ValueProblem."""
    rule = _parse_rule_cached(" ".join(text.split()))
    return {k: (dict(v) if k == "to" else v) for k, v in rule.items()}


def render_rule(rule):
    """The text of a rule as qconf writes it after ``limit``."""
    parts = [] if rule.get("name") is None else ["name " + rule["name"]]
    for kind in FILTERS:
        scope = rule.get(kind)
        if scope is not None:
            parts.append(f"{kind} {scope.text()}")
    parts.append("to " + ",".join(f"{k}={v}" for k, v in rule["to"].items()))
    return " ".join(parts)


def _description(text):
    if is_none_word(text):
        return None
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    return text


def _render_description(value):
    if value is None:
        return "NONE"
    return f'"{value}"' if not value or any(c.isspace() for c in value) else value


def _set_attribute(found, name, value, number):
    if name == "limit":
        try:
            found["limit"].append(parse_rule(value))
        except ValueProblem as err:
            raise FieldError(f'invalid value "{value}" for attribute "limit": {err}', "limit", number) from None
    elif name in found:
        raise FieldError(f'attribute "{name}" is given twice', name, number)
    elif name == "name":
        found["name"] = value
    elif name == "description":
        found["description"] = _description(value)
    elif name == "enabled":
        try:
            found["enabled"] = Boolean().parse(value)
        except ValueProblem as err:
            raise FieldError(f'invalid value "{value}" for attribute "enabled": {err}', name, number) from None
    else:
        raise FieldError(f'unknown attribute "{name}"', name, number)


def _parse_set(lines, start):
    found = {"limit": []}
    for number, line in lines:
        name, value = split_attr(line)
        if not value:
            raise FieldError(f'missing value for attribute "{name}"', name, number)
        _set_attribute(found, name, value, number)
    if "name" not in found:
        raise FieldError('missing attribute "name"', "name", start)
    if not found["limit"]:
        raise FieldError('missing attribute "limit"', "limit", start)
    return {"name": found["name"], "description": found.get("description"),
            "enabled": found.get("enabled", False), "limit": found["limit"]}


def parse_list(text):
    """Every resource quota set of a ``qconf -srqs`` text, in order."""
    sets, current, start = [], None, 0
    for number, line in logical_lines(text):
        stripped = line.strip()
        if stripped == "{" and current is None:
            current, start = [], number
        elif stripped == "}" and current is not None:
            sets.append(_parse_set(current, start))
            current = None
        elif current is None or stripped in ("{", "}"):
            raise FieldError(f'expected "{{" or "}}", found "{stripped}"', None, number)
        else:
            current.append((number, stripped))
    if current is not None:
        raise FieldError('missing "}" at the end of a resource quota set', None, start)
    return sets


def parse(text):
    """One resource quota set from ``qconf -srqs <name>`` text."""
    sets = parse_list(text)
    if len(sets) != 1:
        raise FieldError(f"expected one resource quota set, found {len(sets)}")
    return sets[0]


def _line(name, value):
    return wrap_line(f"{INDENT}{name:<{WIDTH}} {value}") + "\n"


def render(obj):
    """``qconf -srqs`` text of one set."""
    text = "{\n" + _line("name", obj["name"]) + _line("description", _render_description(obj["description"]))
    text += _line("enabled", "TRUE" if obj["enabled"] else "FALSE")
    return text + "".join(_line("limit", render_rule(rule)) for rule in obj["limit"]) + "}\n"


def render_list(sets):
    """``qconf -srqs`` text of several sets."""
    return "".join(render(s) for s in sets)


def template(name="template"):
    """The set ``qconf -arqs`` opens in the editor."""
    return {"name": name, "description": None, "enabled": False,
            "limit": [{"name": None, **{k: None for k in FILTERS}, "to": {"slots": "0"}}]}


def is_dynamic(value):
    """True for a dynamic limit (one that references ``$attribute``)."""
    return "$" in value


def _split_terms(expr):
    """``[(sign, term text)]`` of a sum; a sign after a number's exponent stays."""
    terms, sign, buf = [], 1.0, ""
    for char in expr:
        if char in "+-" and buf and not (buf[-1] in "eE" and _is_number(buf[:-1])):
            terms.append((sign, buf))
            sign, buf = (1.0 if char == "+" else -1.0), ""
        elif char in "+-" and not buf and not terms and sign == 1.0:
            sign = 1.0 if char == "+" else -1.0
        else:
            buf += char
    if not buf:
        raise ValueProblem(f'invalid dynamic limit "{expr}"')
    terms.append((sign, buf))
    return terms


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def dynamic_terms(expr):
    """``[(weight, attribute or None)]`` of ``{w|$attr[*w]}[{+|-}...]``."""
    result = []
    for sign, term in _split_terms("".join(expr.split())):
        attribute, weight = None, sign
        for factor in term.split("*"):
            if factor.startswith("$") and len(factor) > 1 and attribute is None:
                attribute = factor[1:]
            elif _is_number(factor):
                weight *= float(factor)
            else:
                raise ValueProblem(f'invalid dynamic limit "{expr}"')
        result.append((weight, attribute))
    return result


def _check_scope(kind, scope):
    if scope is None:
        return
    if not isinstance(scope, Scope):
        raise FieldError(f'filter "{kind}" must be a Scope', "limit")
    for name in (*scope.include, *scope.exclude):
        if not isinstance(name, str) or len(name.split()) != 1 or any(c in name for c in ",{}!="):
            raise FieldError(f'invalid name "{name}" in filter "{kind}"', "limit")


def _check_limit(rule, resource, value, known):
    if len(str(resource).split()) != 1 or not isinstance(value, str) or len(value.split()) != 1:
        raise FieldError(f'invalid limit "{resource}={value}"', "limit")
    entries = (known or {}).get("complex")
    if entries is not None and resource not in entries:
        raise Refusal(f'"resource_quota" references not existing complex attribute "{resource}"', "limit")
    if is_dynamic(value):
        if rule.get("hosts") is None or not rule["hosts"].expand:
            raise Refusal("dynamic limits are only supported for per host rules", "limit")
        try:
            attributes = [a for _, a in dynamic_terms(value) if a is not None]
        except ValueProblem as err:
            raise FieldError(str(err), "limit") from None
        for attribute in attributes:
            if entries is not None and attribute not in entries:
                raise Refusal(f'"dynamical_limit" references not existing complex attribute "{attribute}"',
                              "limit")
    elif isinstance(entries, dict):
        from gridtools.formats.sge.complex import value_ok
        if not value_ok(entries[resource]["type"], value):
            raise FieldError(f'invalid value "{value}" for limit "{resource}"', "limit")


def _check_rule(rule, seen, known):
    if rule.get("name") is not None:
        check_object_name(rule["name"], "rule", "limit")
        if rule["name"] in seen:
            raise FieldError(f'rule name "{rule["name"]}" is used twice', "limit")
        seen.add(rule["name"])
    for kind in FILTERS:
        _check_scope(kind, rule.get(kind))
    if not rule.get("to"):
        raise FieldError("every rule needs at least one limit after \"to\"", "limit")
    for resource, value in rule["to"].items():
        _check_limit(rule, resource, value, known)


def validate(obj, known=None):
    """Raise ConfigError for a malformed set, unknown attributes or misplaced dynamic limits.

    ``known["complex"]`` may be a set of attribute names or the complex dict
    (then static limit values are checked against the attribute types).
    """
    check_object_name(obj.get("name"), "resource quota set", "name")
    if not isinstance(obj.get("enabled"), bool):
        raise FieldError('invalid value for attribute "enabled": expected TRUE or FALSE', "enabled")
    description = obj.get("description")
    if description is not None and (not isinstance(description, str) or "\n" in description
                                    or description.endswith("\\")):
        raise FieldError('invalid value for attribute "description"', "description")
    if not obj.get("limit"):
        raise FieldError('missing attribute "limit"', "limit")
    seen = set()
    for rule in obj["limit"]:
        _check_rule(rule, seen, known)


def _userset_has(pattern, user, usersets, user_groups):
    for name, entries in (usersets or {}).items():
        if wildcard_match(pattern, name):
            entries = entries["entries"] if isinstance(entries, dict) else entries
            if user in entries or any("@" + g in entries for g in user_groups):
                return True
    return False


def _matches_any(kind, names, value, usersets, hostgroups, user_groups):
    for name in names:
        if kind == "users" and name.startswith("@"):
            found = _userset_has(name[1:], value, usersets, user_groups)
        elif kind == "hosts" and name.startswith("@"):
            found = any(wildcard_match(name, group) and value.lower() in {h.lower() for h in members}
                        for group, members in (hostgroups or {}).items())
        else:
            found = wildcard_match(name, value, fold_case=(kind == "hosts"))
        if found:
            return True
    return False


def scope_matches(kind, scope, value, usersets=None, hostgroups=None, user_groups=()):
    """True when ``value`` passes a rule filter of ``kind``.

    ``value`` None means: for projects and pes, the job requests none (only
    a filter without included names, e.g. ``!*``, lets it pass); for queues
    and hosts, not decided yet (every filter passes). ``usersets`` maps access
    list names to their entries (``@name`` in a users filter), ``hostgroups``
    maps ``@group`` to resolved host names.
    """
    if scope is None:
        return True
    if value is None:
        return kind in ("queues", "hosts") or not scope.include
    if scope.exclude and _matches_any(kind, scope.exclude, value, usersets, hostgroups, user_groups):
        return False
    return not scope.include or _matches_any(kind, scope.include, value, usersets, hostgroups, user_groups)


def rule_matches(rule, user, project=None, pe=None, queue=None, host=None,
                 usersets=None, hostgroups=None, user_groups=()):
    """True when every filter of ``rule`` lets the request pass."""
    request = {"users": user, "projects": project, "pes": pe, "queues": queue, "hosts": host}
    return all(scope_matches(kind, rule.get(kind), request[kind], usersets, hostgroups, user_groups)
               for kind in FILTERS)


def matching_rule(rqs, user, project=None, pe=None, queue=None, host=None,
                  usersets=None, hostgroups=None, user_groups=()):
    """``(number, rule)`` of the first rule of ``rqs`` that applies (numbers
    count from 1), or None. A set applies whether or not it is enabled; the
    caller skips disabled sets."""
    for number, rule in enumerate(rqs["limit"], 1):
        if rule_matches(rule, user, project, pe, queue, host, usersets, hostgroups, user_groups):
            return number, rule
    return None


def usage_key(rule, user, project=None, pe=None, queue=None, host=None):
    """The counter a request is debited to: one part per filter, the request's
    name where the filter is expanded, "" where the rule counts collectively."""
    request = (user, project, pe, queue, host)
    return tuple((value or "") if rule.get(kind) is not None and rule[kind].expand else ""
                 for kind, value in zip(FILTERS, request))

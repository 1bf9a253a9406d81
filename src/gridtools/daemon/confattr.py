"""qconf -aattr/-dattr/-mattr/-rattr (and their -A/-D/-M/-R file forms), -purge.

One request changes attributes of several object instances at once.
``mode`` is add, delete, modify or replace:

- list attributes (pe_list, hostlist, user_lists ...): add appends names
  not yet present, delete removes present ones, modify appends the names
  not yet present and leaves the others as they are (it never removes a
  name), replace sets the whole list;
- name=value lists (complex_values, load_thresholds ...): add inserts new
  names, delete removes names, modify sets the given names (a changed one
  moves to the end, a missing one is appended), replace sets the whole list;
- as Grid Engine's master answers: a name to delete that is not there and
  a name -mattr inserts are told with a notice and the rest is done; a name
  to add that is there already leaves the attribute as it was (the
  object's other attributes are still changed; for a queue's hostlist and
  a host's complex_values the whole object is left as it was) with a
  notice. Notices and the "modified" line are answers that went well:
  qconf prints them on standard output and exits 0;
- -mattr with an empty list (NONE, or a single [host=NONE]) is refused
  before anything is changed: "Try using -rattr instead".
- single values: modify and replace set them; add and delete are refused.
  A checkpointing environment's ``when`` is a set of letters, as Grid Engine's
  master treats it: modify and add add letters, delete takes them away,
  replace sets them.

For queues the instance may be ``queue`` (the default value), ``queue@host``
or ``queue@@hostgroup`` (the value for that host or group; when missing it is
created empty, so that a list holds only the names given; -dattr then changes
nothing, as Grid Engine's master removes only from a value of the host's own);
the value itself may name hosts and groups,
``default,[host=value],[@group=value]`` or only ``[host=value]`` (as Grid
Engine's installer adds a host's slots), each entry applied as if given for
``queue@host``. For resource quota sets it is ``set`` (description,
enabled, limit rules) or ``set/rule`` (rule number or name: limit, filters,
name). Each changed object is validated and stored as a whole.
"""

from gridtools.daemon import arreq, confstore
from gridtools.errors import ConfigError, GridError
from gridtools.formats.sge import objects
from gridtools.formats.sge.codecs import NameList, PerHost, PerHostCodec, ValueProblem, split_per_host, split_words

#: the obj_nm words of qconf -> object kind
OBJECTS = {"queue": "queue", "exechost": "exechost", "hostgroup": "hostgroup", "pe": "pe",
           "ckpt": "ckpt", "resource_quota": "rqs", "rqs": "rqs"}
#: attributes that name the object and cannot be changed this way
NAME_FIELDS = {"queue": "qname", "exechost": "hostname", "hostgroup": "group_name", "pe": "pe_name",
               "ckpt": "ckpt_name"}
#: attributes a host reports itself
REPORTED = ("load_values", "processors")
#: rule filters of a resource quota set
RQS_FILTERS = ("users", "projects", "pes", "queues", "hosts")


class AttrProblem(GridError):
    """A change that cannot be applied to one object."""


class NoChange(Exception):
    """An object left as it was, with an answer that is not a failure."""


#: (kind, attribute) whose "already exists" leaves the whole object unchanged (Grid
#: Engine's master refuses the change of the queue's host list and of a host's
#: consumables then; for the other lists it only skips the attribute)
WHOLE = {("queue", "hostlist"), ("exechost", "complex_values")}
#: -mattr's refusal of an empty list (Grid Engine's qconf, before it asks the master)
CANT_MODIFY_NONE = '"NONE" is not a valid list attribute value for -mattr.  Try using -rattr instead.'


def _exists(item, attr, owner):
    return f'No modification because "{item}" already exists in "{attr}" of "{owner}"'


def _missing(item, attr, owner):
    # the master's notice ends with a line break of its own, which qconf prints as well
    return f'"{item}" does not exist in "{attr}" of "{owner}"\n'


def _schema(kind):
    import importlib
    module = {"queue": "queue", "exechost": "host", "hostgroup": "hostgroup", "pe": "pe",
              "ckpt": "ckpt"}[kind]
    return importlib.import_module(f"gridtools.formats.sge.{module}").SCHEMA


def _codec(kind, attr):
    """The codec reading one value of ``attr`` (per-host wrappers removed)."""
    if attr == NAME_FIELDS.get(kind) or (kind == "exechost" and attr in REPORTED):
        raise AttrProblem(f'denied: attribute "{attr}" cannot be changed this way')
    field = _schema(kind).by_name.get(attr)
    if field is None:
        raise AttrProblem(f'"{attr}" is not a {"queue" if kind == "queue" else kind} attribute')
    codec = field.codec
    return codec.inner if isinstance(codec, PerHostCodec) else codec


def _read(codec, attr, text):
    try:
        return codec.parse(str(text).strip())
    except ValueProblem as exc:
        raise AttrProblem(f'error: invalid value "{text}" for attribute "{attr}": {exc}') from None


def merge(mode, current, text, codec, attr, owner, notes=None, whole=False):
    """The new value of ``attr`` after applying ``text`` with ``mode``; the notices
    of the change are appended to ``notes``. A name to add that is already there
    leaves ``current`` as it is (NoChange when ``whole``)."""
    notes = [] if notes is None else notes
    if isinstance(current, dict) and mode == "delete":
        keys = [w.partition("=")[0] for w in split_words(str(text))]
        result = dict(current)
        for key in keys:
            if key not in result:
                notes.append(_missing(key, attr, owner))
            else:
                del result[key]
        return result
    new = _read(codec, attr, text)
    if mode == "replace" or not isinstance(new, (list, dict)):
        if mode in ("add", "delete"):
            raise AttrProblem(f'denied: attribute "{attr}" is not a list attribute, use -mattr or -rattr')
        return new
    if mode == "add":
        there = next((item for item in new if item in (current or ())), None)
        if there is not None:
            # the first name that is there stops the change of the whole attribute
            if whole:
                raise NoChange(_exists(there, attr, owner))
            notes.append(_exists(there, attr, owner))
            return current
    if isinstance(new, dict):
        return _merge_dict(mode, dict(current or {}), new, attr, owner, notes)
    if mode == "modify" and not isinstance(codec, NameList):
        return new          # (qtype and subordinate_list are no name lists: -mattr sets them)
    return _merge_list(mode, list(current or []), new, attr, owner, notes)


def _added_notes(current, new, attr, owner, notes):
    """-mattr's notices for the names of ``new`` that ``current`` lacks."""
    if not new:
        return
    if not current:
        notes.append(f'"{attr}" of "{owner}" is empty - Adding new element(s).\n')
    else:
        notes.extend(f'Unable to find "{key}" in "{attr}" of "{owner}" - Adding new element.\n'
                     for key in new if key not in current)


def _merge_dict(mode, current, new, attr, owner, notes):
    if mode == "modify":
        _added_notes(current, new, attr, owner, notes)
        # as Grid Engine's master exchanges an element: a changed value goes to the end
        for key, value in new.items():
            if key in current and current[key] != value:
                del current[key]
    current.update(new)
    return current


def _merge_list(mode, current, new, attr, owner, notes):
    if mode == "modify":
        # -mattr of a list changes the given elements only: the names there stay as they
        # are, the others are appended (Grid Engine's SGE_GDI_CHANGE of a sublist)
        _added_notes(current, new, attr, owner, notes)
        for item in new:
            if item not in current:
                current.append(item)
        return current
    for item in new:
        if mode == "add":
            current.append(item)
        elif item not in current:
            notes.append(_missing(item, attr, owner))
        else:
            current.remove(item)
    return current


def _split_target(kind, target):
    """``(object name, host or @group key or None, rule or None)``."""
    if kind == "queue":
        name, at, key = target.partition("@")
        if at and not key:
            raise AttrProblem(f'invalid queue instance "{target}"')
        return name, key or None, None
    if kind == "rqs":
        name, slash, rule = target.partition("/")
        return name, None, rule if slash else None
    return target, None, None


def _apply_one(kind, obj, attr, text, mode, key, owner, notes):
    codec = _codec(kind, attr)
    value = obj.get(attr)
    if isinstance(value, PerHost) and "[" in str(text):
        _apply_entries(value, obj, attr, codec, str(text).strip(), mode, key, owner, notes)
        return
    if isinstance(value, PerHost):
        _apply_entry(value, key, mode, text, codec, attr, owner, notes)
        return
    if key:
        raise AttrProblem(f'denied: attribute "{attr}" has no per-host values')
    if kind == "ckpt" and attr == "when":
        obj[attr] = _merge_when(mode, value, str(text).strip())
        return
    obj[attr] = merge(mode, value, text, codec, attr, owner, notes, (kind, attr) in WHOLE)


def _merge_when(mode, current, text):
    """A checkpointing environment's ``when`` after -mattr/-aattr (the letters added to the
    ones it has, as Grid Engine's master adds them), -dattr (taken away: with none left
    it is None, which Grid Engine's master stores too) or -rattr (set); what is not
    valid is left for validation to refuse."""
    from gridtools.formats.sge.ckpt import normal_when
    if mode == "replace" or not set(text) <= set("xsmrn"):
        return normal_when(text)
    have = set(current or "")
    letters = have | set(text) if mode in ("modify", "add") else have - set(text)
    return normal_when("".join(sorted(letters))) if letters else None


def _apply_entry(value, key, mode, text, codec, attr, owner, notes):
    """Apply ``text`` to the default (``key`` None) or to the value of one host or @group.
    A host or group without a value of its own gets one that starts empty for -mattr
    and -aattr, as Grid Engine's master creates it (a list then holds only the names
    given). -dattr leaves such a host or group as it is, without a notice, as Grid
    Engine's master does (it creates no value to remove from); the text is still
    read, so that what is refused elsewhere is refused here too."""
    shape = value.overrides.get(key, value.default) if key else value.default
    if key and mode == "delete" and key not in value.overrides:
        merge(mode, shape, text, codec, attr, owner, [])
        return
    current = value.overrides.get(key) if key and mode != "delete" else shape
    if key and mode == "add" and not isinstance(shape, (list, dict)):
        mode = "modify"         # -aattr "[host=value]": the host gets a value of its own
    merged = merge(mode, current, text, codec, attr, owner, notes)
    if key:
        value.overrides[key] = merged
    else:
        value.default = merged


def _apply_entries(value, obj, attr, codec, text, mode, key, owner, notes):
    """A value with host entries, ``default,[host=value],[@group=value]`` or only
    ``[host=value]``: -rattr sets the whole value; the other modes apply its default
    (when given) to the default, and each entry as if given for queue@host."""
    if key:
        raise AttrProblem(f'error: invalid value "{text}" for attribute "{attr}": '
                          "a queue instance takes no [host=value]")
    try:
        if mode == "replace":
            obj[attr] = PerHostCodec(codec).parse(text)
            return
        default_text, entries = split_per_host(text)
    except ValueProblem as exc:
        raise AttrProblem(f'error: invalid value "{text}" for attribute "{attr}": {exc}') from None
    if default_text is not None:
        _apply_entry(value, None, mode, default_text, codec, attr, owner, notes)
    for host, entry in entries:
        _check_host_key(host)
        _apply_entry(value, host, mode, entry, codec, attr, owner, notes)


def apply(ctx):
    """The -aattr/-dattr/-mattr/-rattr request."""
    ctx.ok_on_stdout = True
    kind = OBJECTS.get(ctx.body.get("object"))
    mode = ctx.body.get("mode")
    if kind is None or mode not in ("add", "delete", "modify", "replace"):
        raise GridError("error: invalid attribute request")
    attrs = ctx.body.get("attrs") or []
    if mode == "modify" and attrs and _empty_list(kind, str(attrs[0][0]), str(attrs[0][1])):
        return ctx.fail(CANT_MODIFY_NONE)
    for target in ctx.body.get("targets") or []:
        try:
            _apply_target(ctx, kind, mode, str(target))
        except NoChange as exc:
            ctx.info(str(exc))
        except (AttrProblem, ConfigError) as exc:
            ctx.fail(str(exc))


def _empty_list(kind, attr, text):
    """True when ``text`` sets the list attribute ``attr`` to an empty list: NONE, or
    for a queue a single ``[host=NONE]`` (Grid Engine's qconf looks at the first
    attribute of -mattr and -Mattr only)."""
    if kind == "rqs":
        return False
    try:
        codec = _codec(kind, attr)
    except AttrProblem:
        return False            # told when the change is made
    if attr == "qtype":
        return False            # a set of flags in Grid Engine, not a list
    text = text.strip()
    if kind == "queue" and "[" in text:
        try:
            default_text, entries = split_per_host(text)
        except ValueProblem:
            return False
        if default_text is not None or len(entries) != 1:
            return False
        text = entries[0][1]
    try:
        value = codec.parse(text)
    except ValueProblem:
        return False
    return isinstance(value, (list, dict)) and not value


def _load(kind, name):
    obj = confstore.load(kind, name)
    if obj is None:
        if kind == "queue":
            raise AttrProblem(f'No cluster queue or queue instance matches the phrase "{name}"')
        raise AttrProblem(f'denied: {confstore.LABELS[kind]} "{name}" does not exist')
    return obj


def _check_host_key(key):
    """A queue instance names an execution host (a @group is checked with the object)."""
    if key and not key.startswith("@"):
        hosts = {h.lower() for h in confstore.names("exechost")}
        if key.lower() not in hosts:
            raise AttrProblem(f'"{key}" is not an execution host')


def _apply_target(ctx, kind, mode, target):
    name, key, rule = _split_target(kind, target)
    obj = _load(kind, name)
    _check_host_key(key)
    notes = []
    for attr, text in ctx.body.get("attrs") or []:
        if kind == "rqs":
            _apply_rqs(obj, str(attr), str(text), mode, rule, target, notes)
        else:
            # the master names the cluster queue in its notices, not the instance
            _apply_one(kind, obj, str(attr), str(text), mode, key,
                       name if kind == "queue" else target, notes)
    _store(ctx, kind, name, obj, notes)


def _store(ctx, kind, name, obj, notes=()):
    try:
        objects.validate(kind, obj, confstore.known())
    except ConfigError as exc:
        from gridtools.formats.sge.attrfile import problem_line
        raise AttrProblem(problem_line(exc)) from None
    if kind == "hostgroup":
        from gridtools.daemon.confobj import hostgroup_refusal
        hostgroup_refusal(name, obj)
    why = arreq.calendar_conflict(ctx.state, kind, name, obj) or \
        arreq.capacity_conflict(ctx.state, kind, name, obj)
    if why:
        raise AttrProblem(why)
    confstore.write(ctx.state, kind, name, obj)
    for line in notes:
        ctx.info(line)
    ctx.modified(kind, name)


def purge(ctx):
    """-purge queue attr_list queue@host|queue@@group: drop per-host values."""
    ctx.ok_on_stdout = True
    target = str(ctx.body.get("target") or "")
    name, key, _ = _split_target("queue", target)
    if not key:
        return ctx.fail(f'denied: "{target}" is not a queue instance or queue domain')
    obj = _load("queue", name)
    attrs = [str(a) for a in ctx.body.get("attrs") or []]
    if attrs == ["*"]:
        attrs = [a for a, v in obj.items() if isinstance(v, PerHost)]
    for attr in attrs:
        value = obj.get(attr)
        if not isinstance(value, PerHost):
            return ctx.fail(f'"{attr}" is not a queue attribute with per-host values')
        value.overrides.pop(key, None)
    _store(ctx, "queue", name, obj)


# ---------------------------------------------------------------- resource quota sets

def _rule(obj, rule_id, target):
    rules = obj["limit"]
    if rule_id.isdigit() and 1 <= int(rule_id) <= len(rules):
        return rules[int(rule_id) - 1]
    for rule in rules:
        if rule.get("name") == rule_id:
            return rule
    raise AttrProblem(f'denied: rule "{rule_id}" does not exist in resource quota set "{target.partition("/")[0]}"')


def _parse_rule(text):
    from gridtools.formats.sge import rqs
    try:
        return rqs.parse_rule(text)
    except ValueProblem as exc:
        raise AttrProblem(f'error: invalid rule "{text}": {exc}') from None


def _apply_rqs(obj, attr, text, mode, rule_id, target, notes):
    if rule_id is None:
        return _apply_rqs_set(obj, attr, text, mode)
    rule = _rule(obj, rule_id, target)
    if attr == "limit":
        from gridtools.formats.sge.codecs import KeyValues
        rule["to"] = merge(mode, rule["to"], text, KeyValues(), attr, target, notes)
    elif attr == "name":
        rule["name"] = None if text.upper() == "NONE" else text
    elif attr in RQS_FILTERS:
        rule[attr] = _merge_scope(mode, rule.get(attr), _parse_rule(f"{attr} {text} to slots=0")[attr])
    else:
        raise AttrProblem(f'"{attr}" is not a resource quota rule attribute')


def _merge_scope(mode, current, new):
    from gridtools.formats.sge.rqs import Scope
    if mode in ("modify", "replace") or current is None:
        if mode == "delete":
            raise AttrProblem("denied: the rule has no such filter")
        return new
    include, exclude = list(current.include), list(current.exclude)
    for names, more in ((include, new.include), (exclude, new.exclude)):
        for name in more:
            if mode == "add" and name not in names:
                names.append(name)
            elif mode == "delete" and name in names:
                names.remove(name)
    if not include and not exclude:
        return None
    return Scope(include, exclude, current.expand)


def _apply_rqs_set(obj, attr, text, mode):
    if attr == "enabled":
        from gridtools.formats.sge.codecs import Boolean
        obj["enabled"] = _read(Boolean(), attr, text)
    elif attr == "description":
        obj["description"] = None if text.upper() == "NONE" else text.strip('"')
    elif attr == "limit":
        rule = _parse_rule(text)
        if mode == "add":
            obj["limit"].append(rule)
        elif mode in ("modify", "replace"):
            obj["limit"] = [rule]
        else:
            raise AttrProblem('denied: name the rule to delete from as "set/rule"')
    else:
        raise AttrProblem(f'"{attr}" is not a resource quota set attribute')

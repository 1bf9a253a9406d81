"""Cluster queues (queue_conf(5)), as ``qconf -sq`` shows them.

Every attribute except ``qname`` and ``hostlist`` may differ per host or
host group: ``slots 1,[node1=4],[@big=8]``. Those attributes are read into
``PerHost`` values (also when no override is written); ``render`` accepts
plain values too. List attributes are lists (NONE: empty list), threshold
and ``complex_values`` lists are dicts of name -> value text, times and
memory sizes are ``TimeSpec`` / ``MemorySpec`` strings.
"""

from gridtools.formats.sge.attrfile import Field, FieldError, Schema
from gridtools.formats.sge.codecs import (
    Boolean, Choice, Codec, Integer, KeyValues, Memory, MemorySpec, NameList, OptText,
    PerHost, PerHostCodec, Text, Time, TimeSpec, ValueProblem, is_none_word, split_words)
from gridtools.formats.sge.names import (
    check_host_name, check_object_name, require_known)

#: queue types a queue may offer, in the order qconf writes them
QUEUE_TYPES = ("BATCH", "INTERACTIVE")
#: how a job script is started (shell_start_mode)
SHELL_START_MODES = ("posix_compliant", "script_from_stdin", "unix_behavior")
#: state a queue instance comes up in (initial_state)
INITIAL_STATES = ("default", "enabled", "disabled")
#: subordinate actions of slot-wise suspension: suspend shortest / longest running
SUBORDINATE_ACTIONS = ("sr", "lr")
#: name column width of qconf -sq
WIDTH = 21


class QueueTypes(Codec):
    """``BATCH INTERACTIVE`` (any case, commas or blanks); NONE is empty."""

    expected = "BATCH, INTERACTIVE, both or NONE"

    def parse(self, text):
        words = split_words(text)
        if len(words) == 1 and is_none_word(words[0]):
            return []
        wanted = {w.upper() for w in words}
        if not words or not wanted <= set(QUEUE_TYPES):
            raise ValueProblem(f"expected {self.expected}")
        return [t for t in QUEUE_TYPES if t in wanted]

    def render(self, value):
        if isinstance(value, str):
            raise TypeError(value)
        return " ".join(t for t in QUEUE_TYPES if t in value) if value else "NONE"


def _check_slotwise(text):
    """Raise ValueProblem unless text is ``slots=N(queue:seq[:action], ...)``."""
    head, _, tail = text.partition("(")
    if not head.startswith("slots=") or not head[6:].isdigit() or not tail.endswith(")"):
        raise ValueProblem("expected slots=N(queue:seq[:sr|lr], ...)")
    for item in tail[:-1].split(","):
        parts = item.strip().split(":")
        if len(parts) not in (2, 3) or not parts[0] or not parts[1].isdigit() or (
                len(parts) == 3 and parts[2] not in SUBORDINATE_ACTIONS):
            raise ValueProblem("expected slots=N(queue:seq[:sr|lr], ...)")


class Subordinates(Codec):
    """subordinate_list: ``queue[=threshold]`` entries, or one slot-wise
    ``slots=N(queue:seq[:action], ...)`` entry; NONE is the empty list."""

    expected = "queue[=n] entries, slots=N(queue:seq[:action],...) or NONE"

    def parse(self, text):
        text = text.strip()
        if is_none_word(text):
            return []
        if text.startswith("slots="):
            _check_slotwise(text)
            return [text]
        entries = split_words(text)
        for entry in entries:
            name, eq, threshold = entry.partition("=")
            if not name or (eq and not (threshold.isdigit() and int(threshold) > 0)):
                raise ValueProblem(f"expected {self.expected}")
        return entries

    def render(self, value):
        if isinstance(value, str):
            raise TypeError(value)
        if not value:
            return "NONE"
        text = ""
        for i, entry in enumerate(value):
            text += (" " if i else "") + entry
            if "=" in entry and not entry.startswith("slots=") and i < len(value) - 1:
                text += ","
        return text


def subordinate_queues(entries):
    """``[(queue, threshold or None)]`` named by a subordinate_list value."""
    result = []
    for entry in entries:
        if entry.startswith("slots="):
            inner = entry.partition("(")[2].rstrip(")")
            result.extend((item.strip().split(":")[0], None) for item in inner.split(","))
        else:
            name, _, threshold = entry.partition("=")
            result.append((name, int(threshold) if threshold else None))
    return result


def _host(name, codec, default):
    return Field(name, PerHostCodec(codec), default)


_TIME_LIMITS = ("s_rt", "h_rt", "s_cpu", "h_cpu")
_MEMORY_LIMITS = ("s_fsize", "h_fsize", "s_data", "h_data", "s_stack", "h_stack",
                  "s_core", "h_core", "s_rss", "h_rss", "s_vmem", "h_vmem")

SCHEMA = Schema([
    Field("qname", Text(), "template"),
    Field("hostlist", NameList(), []),
    _host("seq_no", Integer(), 0),
    _host("load_thresholds", KeyValues(), {"np_load_avg": "1.75"}),
    _host("suspend_thresholds", KeyValues(), {}),
    _host("nsuspend", Integer(), 1),
    _host("suspend_interval", Time(), TimeSpec("00:05:00")),
    _host("priority", Integer(-20, 20), 0),
    _host("min_cpu_interval", Time(), TimeSpec("00:05:00")),
    _host("processors", Text(), "UNDEFINED"),
    _host("qtype", QueueTypes(), ["BATCH", "INTERACTIVE"]),
    _host("ckpt_list", NameList(), []),
    _host("pe_list", NameList(), ["make", "smp", "mpi"]),
    _host("rerun", Boolean(), False),
    _host("slots", Integer(0, 9999999), 1),
    _host("tmpdir", Text(), "/tmp"),
    _host("shell", Text(), "/bin/sh"),
    _host("prolog", OptText(spaces=True), None),
    _host("epilog", OptText(spaces=True), None),
    _host("shell_start_mode", Choice(SHELL_START_MODES), "posix_compliant"),
    _host("starter_method", OptText(spaces=True), None),
    _host("suspend_method", OptText(spaces=True), None),
    _host("resume_method", OptText(spaces=True), None),
    _host("terminate_method", OptText(spaces=True), None),
    _host("notify", Time(), TimeSpec("00:00:60")),
    _host("owner_list", NameList(), []),
    _host("user_lists", NameList(), []),
    _host("xuser_lists", NameList(), []),
    _host("subordinate_list", Subordinates(), []),
    _host("complex_values", KeyValues(), {}),
    _host("projects", NameList(), []),
    _host("xprojects", NameList(), []),
    _host("calendar", OptText(), None),
    _host("initial_state", Choice(INITIAL_STATES), "default"),
    *(_host(name, Time(), TimeSpec("INFINITY")) for name in _TIME_LIMITS),
    *(_host(name, Memory(), MemorySpec("INFINITY")) for name in _MEMORY_LIMITS),
], WIDTH)

#: attributes that may carry per-host overrides
HOST_ATTRIBUTES = tuple(f.name for f in SCHEMA.fields[2:])


def parse(text):
    """A queue dict from ``qconf -sq`` text."""
    return SCHEMA.parse(text)


def render(obj):
    """``qconf -sq`` text of a queue dict."""
    return SCHEMA.render(obj)


def template(name="template"):
    """The queue ``qconf -aq`` opens in the editor."""
    obj = SCHEMA.template(qname=name)
    for attr in HOST_ATTRIBUTES:
        obj[attr] = PerHost(obj[attr])
    return obj


def values_of(obj, attr):
    """Every value an attribute takes: the default and each override."""
    value = obj.get(attr)
    return value.values() if isinstance(value, PerHost) else [value]


def _check_hosts(obj, known):
    for entry in obj["hostlist"]:
        if entry.startswith("@"):
            require_known([entry], known, "hostgroup", "hostlist", "host group")
        else:
            check_host_name(entry, "hostlist")
            require_known([entry], known, "exechost", "hostlist", "execution host")
    for attr in HOST_ATTRIBUTES:
        value = obj[attr]
        for key in (value.overrides if isinstance(value, PerHost) else ()):
            if key.startswith("@"):
                require_known([key], known, "hostgroup", attr, "host group")
            else:
                check_host_name(key, attr)


#: list attribute -> (kind in ``known``, Grid Engine's words for a name that does not exist)
_REFERENCES = {
    "pe_list": ("pe", 'Parallel environment "{}" does not exist'),
    "ckpt_list": ("ckpt", 'Ckpt "{}" does not exist'),
    "user_lists": ("userset", 'Userset "{}" does not exist'),
    "xuser_lists": ("userset", 'Userset "{}" does not exist'),
    "projects": ("project", 'Project "{}" does not exist'),
    "xprojects": ("project", 'Project "{}" does not exist'),
    "load_thresholds": ("complex", 'Complex attribute "{}" does not exist'),
    "suspend_thresholds": ("complex", 'Complex attribute "{}" does not exist'),
    "complex_values": ("complex", 'Complex attribute "{}" does not exist'),
}


def _check_references(obj, known):
    from gridtools.formats.sge.complex import check_values
    for attr, (kind, words) in _REFERENCES.items():
        for value in values_of(obj, attr):
            require_known(list(value), known, kind, attr, kind, words)
            if kind == "complex" and known:
                check_values(value, known.get("complex"), attr, consumables=attr == "complex_values")
    for value in values_of(obj, "calendar"):
        if value is not None:
            require_known([value], known, "calendar", "calendar", "calendar", 'Calendar "{}" does not exist')
    for value in values_of(obj, "subordinate_list"):
        names = [name for name, _ in subordinate_queues(value)]
        if obj["qname"] in names:
            raise FieldError(f'queue "{obj["qname"]}" cannot be subordinate to itself',
                             "subordinate_list")
        require_known(names, known, "queue", "subordinate_list", "queue",
                      'Subordinated cluster queue "{}" referenced in "' + obj["qname"].replace("{", "{{")
                      .replace("}", "}}") + '" does not exist')


def _check_paths(obj):
    """A shell must be an absolute path; processors UNDEFINED or a range list (0-3,5)."""
    for shell in values_of(obj, "shell"):
        if not str(shell).startswith("/"):
            raise FieldError('denied: the path given for "shell" must start with a "/"', "shell")
    for text in values_of(obj, "processors"):
        if str(text).upper() == "UNDEFINED":
            continue
        for item in str(text).split(","):
            first, _, last = item.partition("-")
            if not (first.isascii() and first.isdigit() and (not last or (last.isascii() and last.isdigit()))):
                raise FieldError(f'invalid value "{text}" for attribute "processors": expected UNDEFINED '
                                 "or a list of numbers and ranges", "processors")


def validate(obj, known=None):
    """Raise ConfigError if the queue is malformed or names missing objects."""
    SCHEMA.check(obj)
    check_object_name(obj["qname"], "queue", "qname")
    _check_paths(obj)
    _check_hosts(obj, known)
    _check_references(obj, known)

"""The body of every request kind, checked before the daemon's handler reads it.

A request file is a mapping written by any user (see gridtools_spool(5)).
``check(kind, body)`` returns a clean copy of the body holding only the keys
the kind knows, each of the right type, or raises ``jobcheck.Invalid`` with
one line. The job description of a submit is checked apart, by
``jobcheck.check``, which needs the configuration's limits; the change set
of an alter is checked whole once it has been applied to the job.
"""

from gridtools.formats import jobcheck as jc
from gridtools.formats.jobcheck import Invalid

#: most targets, items or ranges one request may name
MAX_TARGETS = 100_000


_TASK_RANGES = jc.optional(jc.list_of(jc.task_range, 1024))


def task_ranges(value, field):
    """A task range list of qdel, qhold, qalter and qmod (``-t``): None means all tasks."""
    return None if value is None else _TASK_RANGES(value, field)


def target(value, field):
    """``{"id": job id, "tasks": ranges or None}``, and ``"cluster": true`` when the
    command named the whole cluster (condor_qedit: its procs not made yet too)."""
    if not isinstance(value, dict):
        raise Invalid(f'field "{field}" must hold {{id, tasks}} mappings')
    number, tasks = value.get("id"), value.get("tasks")
    if type(number) is not int or not 0 < number <= jc.MAX_JOB_ID:     # (the message says why)
        number = jc.job_id(number, f"{field}.id")
    found = {"id": number, "tasks": None if tasks is None else task_ranges(tasks, f"{field}.tasks")}
    if value.get("cluster") is True:
        found["cluster"] = True
    return found


def hold_letters(value, field):
    if not isinstance(value, str) or set(value) - set("uos"):
        raise Invalid(f'field "{field}" must hold the letters u, o, s')
    return value


def qmod_item(value, field):
    """``{"word": job id, name, pattern or queue expression, "tasks": ranges or None}``."""
    if not isinstance(value, dict):
        raise Invalid(f'field "{field}" must hold {{word, tasks}} mappings')
    return {"word": jc.name_or_pattern(value.get("word"), f"{field}.word"),
            "tasks": task_ranges(value.get("tasks"), f"{field}.tasks")}


def context_op(value, field):
    """``["set"]``, ``["add", name, value]`` or ``["del", name]``."""
    shape = {"set": 1, "add": 3, "del": 2}.get(value[0]) if isinstance(value, list) and value \
        and isinstance(value[0], str) else None
    if shape != len(value):
        raise Invalid(f'field "{field}" must hold context operations')
    return [jc.line(item, field) for item in value]


def attr_item(value, field):
    """An attribute name, or ``[attribute, value text]`` (qconf -?attr, -purge)."""
    if isinstance(value, list) and len(value) == 2:
        return [jc.word(value[0], field), jc.text(value[1], field)]
    return jc.word(value, field)


def share_item(value, field):
    """``[node path, shares or None]`` (qconf -?stnode)."""
    if not isinstance(value, list) or len(value) != 2:
        raise Invalid(f'field "{field}" must hold [path, shares] pairs')
    return [jc.word(value[0], field), jc.optional(jc.integer(0, 2 ** 31 - 1))(value[1], field)]


def any_mapping(value, field):
    if not isinstance(value, dict):
        raise Invalid(f'field "{field}" must be a mapping')
    return value


def _as_given(value, _field):
    """A field the request's handler checks itself, whole."""
    return value


#: most ranges with a step other than 1 all the targets of one request may name together
#: (each costs up to the job's tasks to apply: ``model.taskset.select``)
MAX_STEPPED = 10_000


def _targets():
    each = jc.list_of(target, MAX_TARGETS)

    def checked(value, field):
        found = each(value, field)
        stepped = sum(1 for t in found for r in (t.get("tasks") or ()) if r[2] != 1)
        if stepped > MAX_STEPPED:
            raise Invalid(f'field "{field}" names {stepped} task ranges with a step: at most {MAX_STEPPED}')
        return found
    return checked


#: keys every request may carry
COMMON = {"kind": jc.word, "reply": jc.boolean, "host": jc.optional(jc.line),
          "has_script": jc.boolean,
          "dialect": jc.one_of("sge", "condor")}     # an HTCondor command's request (security levels)

#: kind -> {key: checker}; keys not listed are dropped
BODIES = {
    "submit": {"job": any_mapping},
    # users: every job of these users (``*``: of all) after the targets (qdel -u, qhold -u)
    "delete": {"targets": _targets(), "force": jc.boolean, "users": jc.list_of(jc.word)},
    "hold": {"targets": _targets(), "letters": hold_letters, "on": jc.boolean, "users": jc.list_of(jc.word)},
    "alter": {"targets": _targets(), "changes": jc.mapping(jc.word, lambda v, f: v),
              "context_ops": jc.list_of(context_op), "hold_add": hold_letters,
              "hold_remove": hold_letters},
    "qmod": {"op": jc.word, "scope": jc.one_of("job", "queue", "any"),
             "items": jc.list_of(qmod_item, MAX_TARGETS), "force": jc.boolean},
    "qconf": {"op": jc.word, "object": jc.optional(jc.word), "name": jc.optional(jc.line),
              "expect": jc.optional(jc.line), "text": jc.optional(jc.text),
              "names": jc.list_of(jc.line), "replace_all": jc.boolean,
              "lists": jc.list_of(jc.word), "users": jc.list_of(jc.word),
              "mode": jc.optional(jc.word), "items": jc.list_of(share_item),
              "targets": jc.list_of(jc.word), "attrs": jc.list_of(attr_item),
              "target": jc.optional(jc.word), "hosts": jc.list_of(jc.word),
              "queues": jc.list_of(jc.word), "ordered": jc.boolean},
    "host": {"op": jc.word, "hosts": jc.list_of(jc.word)},
    # qrsub: each field is checked by the daemon as it builds the reservation (daemon.arreq)
    "ar_submit": dict.fromkeys(("id", "name", "account", "resources", "queues", "masterq", "pe",
                                "ckpt", "now", "users", "mail_options", "mail_list", "hard_error",
                                "verify", "start", "end", "duration"), _as_given),
    "ar_delete": {"targets": jc.list_of(jc.line), "users": jc.optional(jc.list_of(jc.word)),
                  "force": jc.boolean},
    # qrsh -inherit: checked against the job's granted hosts by the daemon (daemon.petask)
    "pe_task": {"job_id": jc.integer(1, 9_999_999), "task": jc.integer(1, 1 << 31),
                "host": jc.word, "command": _as_given, "cwd": jc.optional(jc.line),
                "streams": _as_given,
                "client": jc.optional(jc.client),
                "env": jc.optional(jc.mapping(jc.env_name, jc.env_value)), "noshell": jc.boolean},
    "condor_rm": {"targets": _targets(), "force": jc.boolean, "reason": jc.optional(jc.line)},
    "condor_hold": {"targets": _targets(), "on": jc.boolean, "reason": jc.optional(jc.line),
                    "subcode": jc.optional(jc.integer(-2 ** 31, 2 ** 31 - 1))},
    "condor_vacate_job": {"targets": _targets(), "fast": jc.boolean},
    "condor_qedit": {"targets": _targets(), "attrs": jc.mapping(jc.attr_name, jc.line, 64)},
    "userprio": {"op": jc.one_of("setfactor", "setprio", "resetusage", "resetall", "delete",
                                 "setaccum", "setbegin", "setlast", "setfloor", "setceiling"),
                 "name": jc.optional(jc.word), "value": jc.optional(jc.line)},
    "reconfig": {},
    "daemon_ctl": {"op": jc.one_of("off", "on", "restart"), "how": jc.one_of("graceful", "fast", "peaceful"),
                   "daemon": jc.optional(jc.word), "all": jc.boolean, "names": jc.list_of(jc.word, 1000)},
    "reschedule": {"all": jc.boolean, "names": jc.list_of(jc.word, 1000)},
    "preen": {"remove": jc.boolean, "verbose": jc.boolean},
    "vacate": {"fast": jc.boolean, "all": jc.boolean, "names": jc.list_of(jc.word, 1000),
               "constraint": jc.optional(jc.line)},
    "checkpoint": {"all": jc.boolean, "names": jc.list_of(jc.word, 1000), "constraint": jc.optional(jc.line)},
    # condor_config_val -set, -unset, -rset, -runset (the name and text checked by daemon.confset)
    "config_set": {"mode": jc.one_of("persist", "runtime"),
                   "subsystem": jc.one_of("MASTER", "SCHEDD", "STARTD", "COLLECTOR", "NEGOTIATOR"),
                   "name": jc.word, "text": jc.optional(jc.line)},
}


def check(kind, body):
    """A clean copy of the body of a ``kind`` request, or Invalid naming the first problem."""
    fields = BODIES.get(kind)
    if fields is None:
        raise Invalid(f'unknown request kind "{jc.shown(kind)}"')
    if not isinstance(body, dict):
        raise Invalid("the request is not a mapping")
    clean = {}
    for key, value in body.items():
        checker = fields.get(key) or COMMON.get(key) if isinstance(key, str) else None
        if checker is not None:
            clean[key] = checker(value, key)
    return clean

"""Changing a job description after submission: which fields may change, and how.

A change set is a plain dict ``field -> new value``. ``resources`` and
``queues`` carry only the parts (``hard``, ``soft``) that are replaced;
every other field is replaced whole. The job context changes by
operations instead (``["set"]`` empties it, ``["add", name, value]``,
``["del", name]``), applied in order. ``apply`` returns a new description
and leaves the old one alone; rights and messages belong to the caller.
"""

import copy

_NONE = type(None)
_NUM = (int, float)

#: field -> accepted value types; fields not listed here never change after submission
FIELDS = {
    "name": (str,), "account": (str,), "start_at": _NUM + (_NONE,), "deadline": _NUM + (_NONE,),
    "cwd": (str, _NONE), "aliases": (list,), "stdout": (list,), "stderr": (list,), "stdin": (list,),
    "join": (bool,), "reserve": (bool,), "rerun": (bool, _NONE), "notify": (bool,),
    "mail_options": (str,), "mail_list": (list,), "resources": (dict,), "queues": (dict,),
    "masterq": (list,), "pe": (list, _NONE), "project": (str, _NONE), "ar": (int, _NONE),
    "priority": (int,), "jobshare": (int,), "override_tickets": (int,), "tc": (int, _NONE),
    "hold_jid": (list,), "hold_jid_ad": (list,), "shell": (list, _NONE), "env": (dict,),
    "export_all": (bool,), "submit_env": (dict,), "args": (list,), "ckpt": (str, _NONE),
    "ckpt_when": (str, _NONE), "binding": (str, _NONE),
}

#: fields made of a hard and a soft part, each replaced on its own
PARTS = ("resources", "queues")


def invalid(changes, context_ops=()):
    """Fields of ``changes`` that may not be changed or carry a value of the wrong shape."""
    bad = []
    for field, value in changes.items():
        kinds = FIELDS.get(field)
        if kinds is None or isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            bad.append(field)
        elif field in PARTS and not _parts_ok(value):
            bad.append(field)
        elif field == "pe" and value is not None and not _pe_ok(value):
            bad.append(field)
    if any(not _context_op_ok(op) for op in context_ops):
        bad.append("context")
    return bad


def _parts_ok(value):
    return bool(value) and all(k in ("hard", "soft") for k in value) and all(
        isinstance(v, (dict, list)) for v in value.values())


def _pe_ok(value):
    """[name, min, max], or [name, [[min, max], ...]] of a slot list (``-pe mpi 1,2,4``)."""
    if len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], list):
        return bool(value[1]) and all(isinstance(r, list) and len(r) == 2 and all(map(_count, r))
                                      for r in value[1])
    return len(value) == 3 and isinstance(value[0], str) and all(map(_count, value[1:]))


def _count(n):
    return isinstance(n, int) and not isinstance(n, bool)


def _context_op_ok(op):
    if not isinstance(op, list) or not op:
        return False
    shape = {"set": 1, "add": 3, "del": 2}.get(op[0])
    return shape == len(op) and all(isinstance(x, str) for x in op)


def apply(spec, changes, context_ops=()):
    """A copy of ``spec`` with ``changes`` and the context operations applied."""
    new = copy.deepcopy(dict(spec))
    for field, value in changes.items():
        if field in PARTS:
            merged = dict(new.get(field) or {})
            merged.update(copy.deepcopy(value))
            new[field] = merged
        else:
            new[field] = copy.deepcopy(value)
    if not new.get("export_all"):
        new.pop("submit_env", None)
    if context_ops:
        new["context"] = apply_context(new.get("context") or {}, context_ops)
    return new


def apply_context(context, ops):
    """The job context after ``ops``, in order."""
    result = dict(context)
    for op in ops:
        if op[0] == "set":
            result = {}
        elif op[0] == "add":
            result[op[1]] = op[2]
        elif op[0] == "del":
            result.pop(op[1], None)
    return result


def consumable_conflicts(old, new, consumables):
    """Why a running job may not move from hard requests ``old`` to ``new``.

    ``consumables`` maps each consumable name to a function turning a request
    text into an amount. Returns (kind, name) pairs: ``missing`` (requested
    before, not now), ``added`` (requested now, not before), ``changed``.
    """
    found = []
    for name in old:
        if name in consumables and name not in new:
            found.append(("missing", name))
    for name, value in new.items():
        amount = consumables.get(name)
        if amount is None:
            continue
        if name not in old:
            found.append(("added", name))
        elif amount(value) != amount(old[name]):
            found.append(("changed", name))
    return found


def dependency_cycle(job_id, predecessors, lookup):
    """The job whose predecessors lead back to ``job_id``, or None.

    ``lookup(id)`` gives the predecessor ids of a job (empty when unknown).
    """
    seen = set()
    stack = [(p, job_id) for p in predecessors]
    while stack:
        current, via = stack.pop()
        if current == job_id:
            return via
        if current in seen:
            continue
        seen.add(current)
        stack.extend((p, current) for p in lookup(current))
    return None

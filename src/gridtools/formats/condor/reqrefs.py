"""The attributes a job's own requirements refer to, as condor_submit works them out to
decide which of its default clauses to add.

HTCondor takes the references of the user's expression in an ad that holds only
``RequestMemory``, ``VM_CkptMac`` and ``Requirements`` (GetExprReferences): a name that
ad does not hold, unscoped or after ``MY.``, is the machine's, and so is one after
``TARGET.`` or ``OTHER.``; those three are the job's; ``self``, ``my``, ``root``,
``toplevel`` and ``CurrentTime`` refer to nothing outside. A name in a string is no
reference, and a selection from what is undefined (``foo.Arch``) refers only to its
whole dotted name. A selection from a value that is no ad (``MY.RequestMemory.x``)
makes HTCondor give up: it then sees no reference and adds every clause.

``from_names`` reads the references ``draft.read_text`` collected; ``from_tree`` walks a
parsed expression (the parser has been loaded for it). Both give (the machine's names,
the job's names), in lower case.
"""

#: the job attributes the ad of the references holds (all literals)
JOB_HELD = frozenset(("requestmemory", "vm_ckptmac", "requirements"))
#: the names that are the ad itself, or the time: no reference outside
OWN = frozenset(("toplevel", "root", "self", "my", "currenttime"))
#: the names that are the ad itself, as the base of a selection
_THE_AD = frozenset(("toplevel", "root", "self", "my"))


def from_names(names):
    """(machine's names, job's names) of ``read_text``'s (scope, name) pairs."""
    machine, job = set(), set()
    for scope, name in names:
        if scope == "target":
            machine.add(name.lower())
        else:
            _own_ad(name.lower(), machine, job)
    return machine, job


def _own_ad(key, machine, job):
    """A name looked up in the ad of the references (unscoped, or after ``MY.``)."""
    if key in JOB_HELD:
        job.add(key)
    elif key not in OWN:
        machine.add(key)


class _GiveUp(Exception):
    """HTCondor could not get the references."""


def from_tree(expr):
    """(machine's names, job's names) of a parsed expression (both empty when HTCondor
    gives up on it)."""
    machine, job = set(), set()
    try:
        _walk(expr, machine, job, {})
    except (_GiveUp, RecursionError):
        return set(), set()
    return machine, job


def _walk(node, machine, job, local):
    """Collect the references of ``node``; ``local`` holds the attributes (lower case) of
    the nested ads it sits in."""
    from gridtools.classad import compound, nodes
    kind = node.__class__
    if kind is nodes.Literal:
        return
    if kind is nodes.Attr:
        if node.key in local:
            _walk(local.pop(node.key), machine, job, local)     # (once: a loop refers to nothing more)
        else:
            _own_ad(node.key, machine, job)
    elif kind is nodes.Scoped:
        if node.scope.lower() == "target":
            machine.add(node.key)
        else:
            _own_ad(node.key, machine, job)
    elif kind is compound.Select:
        _select(node, machine, job, local)
    elif kind is compound.AdExpr:
        inner = dict(local)
        inner.update((name.lower(), value) for name, value in node.pairs)
        for _name, value in node.pairs:
            _walk(value, machine, job, dict(inner))
    else:
        for child in node.children():
            _walk(child, machine, job, local)


def _select(node, machine, job, local):
    """``base.name``: the name looked up in the ad the base is, the whole dotted name when
    the base is undefined (``OTHER.`` and ``TARGET.`` taken off its front)."""
    base = _value(node.base, local)
    key = node.name.lower()
    if base == "ad":
        _own_ad(key, machine, job)
    elif base == "undefined":
        text = f"{node.base.unparse()}.{node.name}".lower()
        for front in ("target.", "other."):
            if text.startswith(front):
                text = text[len(front):]
                break
        machine.add(text)
    elif base.__class__ is dict:
        if key in base:
            _walk(base.pop(key), machine, job, base)
        else:
            _own_ad(key, machine, job)
    else:
        raise _GiveUp()


def _value(node, local):
    """What ``node`` evaluates to in the ad of the references, as far as a selection
    from it cares: "ad" (that ad), a dict (a nested ad's attributes), "undefined", or
    "value" (anything else)."""
    from gridtools.classad import compound, nodes
    from gridtools.classad.values import UNDEFINED
    kind = node.__class__
    if kind is nodes.Paren:
        return _value(node.inner, local)
    if kind is nodes.Literal:
        return "undefined" if node.value is UNDEFINED else "value"
    if kind is compound.AdExpr:
        return {name.lower(): value for name, value in node.pairs}
    if kind is nodes.Scoped and node.scope.lower() == "target":
        return "undefined"
    if kind is nodes.Attr or kind is nodes.Scoped:
        if kind is nodes.Attr and node.key in local:
            return _value(local[node.key], {})
        if node.key in _THE_AD:
            return "ad"
        return "value" if node.key in JOB_HELD or node.key in OWN else "undefined"
    if kind is compound.Select:
        base = _value(node.base, local)
        key = node.name.lower()
        if base == "ad":
            return _value(nodes.Attr(node.name), {})
        if base.__class__ is dict:
            return _value(base[key], base) if key in base else _value(nodes.Attr(node.name), {})
        return base if base == "undefined" else "value"
    return "undefined"

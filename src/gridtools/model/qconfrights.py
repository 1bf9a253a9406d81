"""Who may make which qconf change: one rule for the daemon, which decides, and for
qconf, which asks before it opens an editor or reads a file.

Managers may make every change. Operators may, as in Grid Engine, change usersets
(-au, -du, -Au, -Mu, -mu, -dul and their attributes) and clean queues (-cq); the rest
is a manager's: an operator who could set a procedure (a PE's start_proc_args, say)
could have it run as root. Plain users may change nothing.
"""

#: operations that add, modify or delete one object of a kind (or its attributes)
OBJECT_OPS = frozenset({"add", "modify", "delete", "attr", "purge"})
#: what an operator may do besides changing usersets
OPERATOR_OPS = frozenset({"acl_add", "acl_delete", "clean"})


def needs_manager(body):
    """True unless the request is one an operator may make too (``OPERATOR_OPS``, or one
    that adds, changes or deletes usersets)."""
    op, kind = body.get("op"), body.get("object")
    if op in OPERATOR_OPS:
        return False
    return not (op in OBJECT_OPS and kind == "userset")

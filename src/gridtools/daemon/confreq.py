"""qconf requests: every change of the configuration tree goes through here.

A client sends one request of kind ``qconf`` with ``op`` (what to do) and
its arguments; this handler checks the requester's rights (the request
file's owner is the identity), runs the operation and answers with Grid
Engine's messages, which qconf prints on stderr as Grid Engine does (the
attribute options print the answers that went well on stdout).

Rights: managers may do everything; operators may change usersets and
clean queues; plain users nothing (``model.qconfrights``). The operations
live in ``confobj`` (whole objects, lists, access list entries, share tree
nodes), ``confattr`` (-aattr and friends) and ``confctl`` (daemon control,
-tsm, -cq).
"""

import re

from gridtools.daemon import auth, confattr, confctl, confobj
from gridtools.daemon.state import user_name
from gridtools.model.qconfrights import needs_manager
from gridtools.errors import GridError

#: op -> function(ctx)
OPERATIONS = {
    "add": confobj.add, "modify": confobj.modify, "delete": confobj.delete,
    "names_add": confobj.names_add, "names_delete": confobj.names_delete,
    "acl_add": confobj.acl_add, "acl_delete": confobj.acl_delete,
    "stnode": confobj.stnode, "attr": confattr.apply, "purge": confattr.purge,
    "kill": confctl.kill, "start": confctl.start_thread, "tsm": confctl.trigger_monitoring,
    "clean": confctl.clean_queues, "clearusage": confctl.clear_usage,
}
#: a host name as it may appear in an answer
HOST_RE = re.compile(r"^[A-Za-z0-9._-]{1,255}$")


class Ctx:
    """One request being answered: who asks, what, and the lines of the answer."""

    def __init__(self, state, dispatcher, req, now):
        self.state, self.dispatcher, self.req, self.now = state, dispatcher, req, now
        self.body = req.body
        self.user = user_name(req.uid)
        host = str(req.body.get("host") or "")
        self.who = f"{self.user}@{host if HOST_RE.match(host) else 'unknown'}"
        self.lines = []
        self.failed = False
        #: the attribute options print the answers that went well on stdout (Grid
        #: Engine's qconf does so for -aattr and its kin), all others print on stderr
        self.ok_on_stdout = False

    def info(self, line):
        self.lines.append((line, True))

    def fail(self, line):
        self.lines.append((line, False))
        self.failed = True

    def added(self, kind, name):
        self.info(f'{self.who} added "{name}" to {label(kind)} list')

    def modified(self, kind, name):
        self.info(f'{self.who} modified "{name}" in {label(kind)} list')

    def removed(self, kind, name):
        from gridtools.daemon.confstore import DELETE_LABELS
        self.info(f'{self.who} removed "{name}" from {DELETE_LABELS.get(kind) or label(kind)} list')

    def answer(self):
        if self.ok_on_stdout and self.body.get("ordered"):
            # each answer with its stream, in the order given: the client prints them
            # so, as Grid Engine's qconf does when its stdout and stderr are one
            import json
            ordered = [[1 if ok else 2, line + "\n"] for line, ok in self.lines]
            return 1 if self.failed else 0, json.dumps({"ordered": ordered}), ""
        out = [line + "\n" for line, ok in self.lines if ok and self.ok_on_stdout]
        err = [line + "\n" for line, ok in self.lines if not (ok and self.ok_on_stdout)]
        return 1 if self.failed else 0, "".join(out), "".join(err)


def label(kind):
    from gridtools.daemon.confstore import LABELS
    return LABELS.get(kind, kind)


def permitted(state, user, body):
    if auth.is_manager(state, user):
        return True
    return auth.is_operator(state, user) and not needs_manager(body)


def qconf_request(state, dispatcher, req, now):
    ctx = Ctx(state, dispatcher, req, now)
    func = OPERATIONS.get(req.body.get("op"))
    if func is None:
        return 1, "", f"error: unknown qconf operation {req.body.get('op')!r}\n"
    if not permitted(state, ctx.user, req.body):
        state.log(f"W|{ctx.user} may not change the configuration ({req.body.get('op')})")
        return 1, "", f'denied: "{ctx.user}" must be manager for this operation\n'
    try:
        func(ctx)
    except GridError as exc:
        ctx.fail(str(exc))
    if not ctx.failed:
        state.log(f"I|{ctx.who} qconf {req.body.get('op')} {req.body.get('object') or ''}".rstrip())
    return ctx.answer()

"""Host requests: drain, flush, suspend and resume execution hosts (``gridtools host``, ``llctl``).

The states follow LoadLeveler's startd: *drain* lets the running jobs
finish and accepts no new ones (Draining, then Drained); *flush* ends the
running jobs and puts them back into the pending state to run elsewhere or
later, and accepts none (Flush); *suspend* stops every job on the host
where it stands and accepts none (Suspend); *resume* returns the host to
normal and continues the jobs that suspend stopped (jobs suspended for
other reasons stay suspended). Only managers and operators may ask.
"""

from gridtools.daemon import auth, qcontrol, suspension, view
from gridtools.daemon.state import user_name

#: op -> (state stored for the host, participle of the answer)
HOST_OPS = {"drain": ("drain", "drained"), "flush": ("flush", "flushed"),
            "suspend": ("suspend", "suspended"), "resume": ("", "resumed")}


def host_request(state, dispatcher, req, now):
    op = str(req.body.get("op", ""))
    user = user_name(req.uid)
    if op not in HOST_OPS:
        return 1, "", f'error: unknown host operation "{op}"\n'
    if not auth.is_operator(state, user):
        return 1, "", f'denied: "{user}" must be operator to {op} execution hosts\n'
    known = set(view.exec_hosts(state.config))
    out, err = [], []
    for host in req.body.get("hosts") or []:
        if host not in known:
            err.append(f'"{host}" is not an execution host')
            continue
        _apply(state, dispatcher, host, op)
        out.append(f'{user} {HOST_OPS[op][1]} host "{host}"')
        state.log(f"I|{user} {HOST_OPS[op][1]} host {host}")
    state.need_schedule = True
    state.need_publish = True
    return (1 if err else 0), "".join(f"{line}\n" for line in out), "".join(f"{line}\n" for line in err)


def apply_op(state, dispatcher, host, op):
    """Put ``host`` into the state of ``op`` (drain, flush, suspend, resume) and carry
    out what it means for its jobs (condor_off and condor_on use it too)."""
    _apply(state, dispatcher, host, op)


def _apply(state, dispatcher, host, op):
    stored = HOST_OPS[op][0]
    if state.host_states.get(host, "") != stored:
        if stored:
            state.host_states[host] = stored
        else:
            state.host_states.pop(host, None)
        state.qstates_dirty = True
    if op == "flush":
        for job, task in state.running_tasks():
            if any(h == host for _q, h, _s in task.granted):
                suspension.requeue(state, dispatcher, job, task)
    qcontrol.persist(state)

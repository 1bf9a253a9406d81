"""HTCondor's security levels applied to the requests of the HTCondor commands.

Every request an HTCondor command writes is checked against the cell's
ALLOW_* and DENY_* lists (``gridtools.seclevels``) with its file's owner
as the caller, before its handler sees it: condor_userprio's edits need
ADMINISTRATOR at the NEGOTIATOR, condor_reconfig ADMINISTRATOR at the
MASTER, condor_vacate ADMINISTRATOR at the STARTD, condor_checkpoint DAEMON
at the STARTD (as HTCondor 24's startd asks of it), condor_off, condor_on and
condor_restart ADMINISTRATOR at the MASTER (condor_preen too), condor_rm, condor_hold, condor_release,
condor_vacate_job, condor_qedit and condor_prio
WRITE at the SCHEDD (condor_reschedule too), and a request of the shared kinds (submit, delete, hold, alter,
qmod) that says ``dialect: condor`` needs WRITE at the SCHEDD. Grid Engine's
commands keep Grid Engine's rules (managers, operators, owners). A refusal
is logged with HTCondor's reason and answered with the line an HTCondor
tool prints.
"""

from gridtools import cell, seclevels
from gridtools.daemon import condorconf
from gridtools.daemon.state import user_name
from gridtools.seclevels import Level

#: request kinds only HTCondor commands send -> (level, daemon)
LEVELS = {"userprio": (Level.ADMINISTRATOR, "NEGOTIATOR"), "reconfig": (Level.ADMINISTRATOR, "MASTER"),
          "vacate": (Level.ADMINISTRATOR, "STARTD"), "checkpoint": (Level.DAEMON, "STARTD"),
          "daemon_ctl": (Level.ADMINISTRATOR, "MASTER"),
          "condor_rm": (Level.WRITE, "SCHEDD"), "condor_hold": (Level.WRITE, "SCHEDD"),
          "condor_vacate_job": (Level.WRITE, "SCHEDD"),
          "condor_qedit": (Level.WRITE, "SCHEDD"), "reschedule": (Level.WRITE, "SCHEDD"),
          "preen": (Level.ADMINISTRATOR, "MASTER")}
#: shared request kinds sent by an HTCondor command -> (level, daemon)
CONDOR_KINDS = {kind: (Level.WRITE, "SCHEDD") for kind in ("submit", "delete", "hold", "alter", "qmod")}
#: the value of a request's "dialect" key that marks an HTCondor command's request
CONDOR = "condor"


def level_of(req):
    """(Level, subsystem) a request needs, or None when Grid Engine's rules apply: an
    HTCondor command's request (its mark), and a new job that is an HTCondor one (its
    ads) whatever the request says of itself, as the request file is the client's word."""
    if req.kind in LEVELS:
        return LEVELS[req.kind]
    if not isinstance(req.body, dict):
        return None
    if req.body.get("dialect") == CONDOR:
        return CONDOR_KINDS.get(req.kind)
    if req.kind == "submit" and isinstance(req.body.get("job"), dict) and req.body["job"].get("condor_ad"):
        return CONDOR_KINDS["submit"]
    return None


def check(state, req):
    """None when the request may go on, else the answer (code, out, err) refusing it."""
    needed = level_of(req)
    if needed is None or state.condor is None:
        return None
    level, subsystem = needed
    conf = state.condor.conf
    if conf.unread is not None:
        # its ALLOW and DENY lists are not known: refused when the file could hold some
        # for the level (as the tools see it: cli.condor.access), else the defaults stand
        from gridtools.cli.condor import access
        if not access.open_to_all(level.value):
            state.log(f"W|PERMISSION DENIED to {user_name(req.uid)} for request {req.kind}: "
                      f"condor_config cannot be read: {conf.unread}")
            return 1, "", (f"Configuration Error while reading config source {condorconf.config_path()}\n"
                           f"{conf.unread}\n")
    get = conf.main.get if conf.main is not None else (lambda name: None)
    who = seclevels.identity(user_name(req.uid), get, cell.hostname())
    verdict = seclevels.verify(get, level, who, subsystem, seclevels.manager_defaults(state.config.managers))
    if verdict.allowed:
        return None
    state.log(f"W|PERMISSION DENIED to {who.name} from host {who.hosts[0]} for request {req.kind} "
              f"({subsystem}), access level {level.value}: reason: {verdict.reason}")
    return 1, "", seclevels.denied_line(who) + "\n"

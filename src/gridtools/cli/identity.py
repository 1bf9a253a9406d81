"""Who submits: the identity and the SGE_O_* facts every job description carries,
whichever dialect's command wrote it (qsub, condor_submit, DAG nodes)."""

import posix

from gridtools import cell, ospaths


def _account(uid):
    """(name, home, shell) of ``uid`` in the password database (looked up once per process:
    ``ospaths.passwd_entry``)."""
    entry = ospaths.passwd_entry(uid)
    if entry is None:
        return str(uid), ospaths.home(), "/bin/sh"
    return entry.pw_name, entry.pw_dir, entry.pw_shell


#: the submit environment's variables a job gets as SGE_O_<name>
_PASSED = ("HOME", "LOGNAME", "PATH", "SHELL", "TZ", "MAIL")


def submitter(cwd):
    """Owner, uid, gid, submit host and the SGE_O_* values of the calling user."""
    uid = posix.getuid()
    owner = _account(uid)[0]
    host = cell.hostname()
    # the submit environment's own values, as Grid Engine copies them: a variable that
    # is not set is not passed on
    values = ((name, ospaths.getenv(name)) for name in _PASSED)
    sge_o = {name: value for name, value in values if value is not None}
    # SGE_O_HOST: $HOST when set (csh and tcsh set it), as Grid Engine's job_initialize_env
    sge_o.update(WORKDIR=cwd, HOST=ospaths.getenv("HOST", host))
    return {"owner": owner, "uid": uid, "gid": posix.getgid(), "sge_o": sge_o, "submit_host": host}

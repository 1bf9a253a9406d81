"""Who submits: the identity and the SGE_O_* facts every job description carries,
whichever dialect's command wrote it (qsub, condor_submit, DAG nodes)."""

import posix
import pwd

from gridtools import cell, ospaths


#: uid -> (name, home, shell) of the password database, as looked up once per process
_ACCOUNTS = {}


def _account(uid):
    found = _ACCOUNTS.get(uid)
    if found is None:
        try:
            entry = pwd.getpwuid(uid)
            found = (entry.pw_name, entry.pw_dir, entry.pw_shell)
        except KeyError:
            found = (str(uid), ospaths.home(), "/bin/sh")
        _ACCOUNTS[uid] = found
    return found


def submitter(cwd):
    """Owner, uid, gid, submit host and the SGE_O_* values of the calling user."""
    uid = posix.getuid()
    owner, home, shell = _account(uid)
    host = cell.hostname()
    env = ospaths.getenv
    sge_o = {"HOME": env("HOME", home), "LOGNAME": env("LOGNAME", owner),
             "PATH": env("PATH", ""), "SHELL": env("SHELL", shell),
             "WORKDIR": cwd, "HOST": host, "MAIL": env("MAIL", f"/var/mail/{owner}")}
    return {"owner": owner, "uid": uid, "gid": posix.getgid(), "sge_o": sge_o, "submit_host": host}

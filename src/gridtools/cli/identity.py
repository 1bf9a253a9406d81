"""Who submits: the identity and the SGE_O_* facts every job description carries,
whichever dialect's command wrote it (qsub, condor_submit, DAG nodes)."""

import posix
import pwd

from gridtools import cell, ospaths


def submitter(cwd):
    """Owner, uid, gid, submit host and the SGE_O_* values of the calling user."""
    uid = posix.getuid()
    try:
        entry = pwd.getpwuid(uid)
        owner, home, shell = entry.pw_name, entry.pw_dir, entry.pw_shell
    except KeyError:
        owner, home, shell = str(uid), ospaths.home(), "/bin/sh"
    host = cell.hostname()
    env = ospaths.getenv
    sge_o = {"HOME": env("HOME", home), "LOGNAME": env("LOGNAME", owner),
             "PATH": env("PATH", ""), "SHELL": env("SHELL", shell),
             "WORKDIR": cwd, "HOST": host, "MAIL": env("MAIL", f"/var/mail/{owner}")}
    return {"owner": owner, "uid": uid, "gid": posix.getgid(), "sge_o": sge_o, "submit_host": host}

"""Who submits: the identity and the SGE_O_* facts every job description carries,
whichever dialect's command wrote it (qsub, condor_submit, DAG nodes)."""

import os
import pwd

from gridtools import cell


def submitter(cwd):
    """Owner, uid, gid, submit host and the SGE_O_* values of the calling user."""
    uid = os.getuid()
    try:
        entry = pwd.getpwuid(uid)
        owner, home, shell = entry.pw_name, entry.pw_dir, entry.pw_shell
    except KeyError:
        owner, home, shell = str(uid), os.path.expanduser("~"), "/bin/sh"
    env = os.environ
    host = cell.hostname()
    sge_o = {"HOME": env.get("HOME", home), "LOGNAME": env.get("LOGNAME", owner),
             "PATH": env.get("PATH", ""), "SHELL": env.get("SHELL", shell),
             "WORKDIR": cwd, "HOST": host, "MAIL": env.get("MAIL", f"/var/mail/{owner}")}
    return {"owner": owner, "uid": uid, "gid": os.getgid(), "sge_o": sge_o, "submit_host": host}

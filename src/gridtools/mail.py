"""Mail to an administrator with the cell's mailer (sge_conf's ``mailer``, by default
``/usr/bin/mail``), called as ``mailer -s subject address`` with the body on its
standard input, as Grid Engine calls it."""

import subprocess


def send(address, subject, body):
    """Mail ``body`` to ``address``: None when the mailer took it, else what went wrong
    (the mailer could not be run, or it exited with a status other than 0)."""
    from gridtools.cli.sge.submit import global_value
    mailer = global_value("mailer", "/usr/bin/mail")
    try:
        done = subprocess.run([mailer, "-s", subject, address], input=body.encode(), check=False,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError as exc:
        return f"{mailer}: {exc.strerror}"
    return f"{mailer} exited with {done.returncode}" if done.returncode else None

"""HTCondor's own submit code (the ``htcondor`` package, version 1 bindings)
as a test oracle, and the fixture directory the submit cases run in.

Run as a script to regenerate the committed expected ads::

    GRIDTOOLS_HTCONDOR_PYTHON=/path/to/python python tests/condor_oracle.py

The interpreter named by GRIDTOOLS_HTCONDOR_PYTHON (default: this one) must
import an ``htcondor`` whose ``Submit.jobs()`` works (HTCondor 23 or 24).
"""

import glob
import os
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "data", "condor_submit")
CLUSTER = 7
QDATE = 1700000000
# The environment the oracle runs in and gridtools is handed (getenv cases).
ENVIRON = {"PATH": "/usr/bin:/bin", "HOME": "/home/gtuser", "LANG": "C.UTF-8",
           "GT_A": "1", "GT_B": "two words", "CONDOR_CONFIG": "/dev/null"}
EXECUTABLE_BYTES = 3000  # run.sh's size: 3 KiB in ImageSize


def make_fixture(root):
    """The files the cases refer to."""
    with open(os.path.join(root, "run.sh"), "w") as handle:
        handle.write("#!/bin/sh\n" + "#" * (EXECUTABLE_BYTES - 11) + "\n")
    os.chmod(os.path.join(root, "run.sh"), 0o755)
    with open(os.path.join(root, "list.txt"), "w") as handle:
        handle.write("l1 x\nl2, y z\nl3\n")
    os.makedirs(os.path.join(root, "g", "sub1.dat"))
    os.makedirs(os.path.join(root, "sub"))
    for name in ("g/a.dat", "g/b.dat", "g/c.txt", "in.txt"):
        open(os.path.join(root, name), "w").close()


_RUN = r"""
import sys, warnings
warnings.simplefilter("ignore")
import htcondor
text = sys.stdin.read()
try:
    ads = list(htcondor.Submit(text).jobs(clusterid=%d, qdate=%d))
except Exception as exc:
    print("ERROR", str(exc).strip().replace("\n", " "))
    sys.exit(0)
for ad in ads:
    print(ad.printOld())
""" % (CLUSTER, QDATE)


def oracle_python():
    return os.environ.get("GRIDTOOLS_HTCONDOR_PYTHON", sys.executable)


def available():
    """Whether the oracle can make job ads here."""
    try:
        proc = subprocess.run([oracle_python(), "-c", _RUN], input="executable=/bin/sh\nqueue\n",
                              capture_output=True, text=True, env=ENVIRON, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and "ClusterId = %d" % CLUSTER in proc.stdout


def oracle_text(submit_text, root):
    """The oracle's ads for ``submit_text`` run in ``root``, long form,
    with ``root`` as @CWD@ and the host name as @HOST@."""
    proc = subprocess.run([oracle_python(), "-c", _RUN], input=submit_text, cwd=root,
                          capture_output=True, text=True, env=ENVIRON, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    return placeholders(proc.stdout, root)


def placeholders(text, root):
    text = text.replace(root, "@CWD@")
    return text.replace(f'"{socket.gethostname()}"', '"@HOST@"')


def cases():
    return sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(CASES, "*.sub")))


def regenerate():
    with tempfile.TemporaryDirectory() as root:
        root = os.path.realpath(root)
        make_fixture(root)
        for name in cases():
            with open(os.path.join(CASES, name + ".sub")) as handle:
                text = oracle_text(handle.read(), root)
            with open(os.path.join(CASES, name + ".ads"), "w") as handle:
                handle.write(text)


if __name__ == "__main__":
    regenerate()

"""qsub -S [[host]:]path,...: the path given for the execution host, else the one
given without a host, else the queue's shell; qstat -j shows the whole list."""

import os

import pytest

from conftest import wait_for
from qtools import jid_of, set_attr

SCRIPT = 'echo "SHELL=$SHELL bash=${BASH_VERSION:+yes}"\n'


@pytest.fixture
def shells():
    if not os.path.exists("/bin/dash") or not os.path.exists("/bin/bash"):
        pytest.skip("needs /bin/dash and /bin/bash")


def _script(workdir):
    path = os.path.join(workdir, "which.sh")
    with open(path, "w") as fh:
        fh.write(SCRIPT)
    return path


def _shell_list(cell, jid, wanted):
    """qstat -j's shell_list line once it shows ``wanted`` (the last one seen otherwise)."""
    seen = []

    def shown():
        seen[:] = [ln for ln in cell.run("qstat", "-j", str(jid)).stdout.splitlines()
                   if ln.startswith("shell_list:")]
        return seen == [f"shell_list:                 {wanted}"]
    wait_for(shown, timeout=10)
    return seen


def _run_on(cell, workdir, host, shell_list, *more):
    """The output of which.sh run on ``host`` with ``-S shell_list``."""
    out = os.path.join(workdir, f"out.{host}.{len(os.listdir(workdir))}")
    jid = jid_of(cell.qsub("-cwd", "-o", out, "-j", "y", "-l", f"h={host}", "-S", shell_list, *more,
                           _script(workdir), cwd=workdir))
    assert cell.wait_finished(jid), f"job {jid} did not end"
    with open(out) as fh:
        return fh.read()


def test_shell_for_the_execution_host(cell_two_hosts, workdir, shells):
    cell = cell_two_hosts
    set_attr(cell, "all.q", "shell_start_mode", "posix_compliant")
    set_attr(cell, "all.q", "shell", "/bin/sh")
    both = "node2:/bin/bash,/bin/dash"
    assert _run_on(cell, workdir, "node2", both) == "SHELL=/bin/bash bash=yes\n"
    assert _run_on(cell, workdir, "testhost", both) == "SHELL=/bin/dash bash=\n"
    # the host-less path may come first; the host's own path still wins on that host
    assert _run_on(cell, workdir, "testhost", "/bin/dash,testhost:/bin/bash") == "SHELL=/bin/bash bash=yes\n"
    # no path for the host and none without one: the queue's shell
    assert _run_on(cell, workdir, "testhost", "node2:/bin/bash") == "SHELL=/bin/sh bash=\n"


def test_shell_list_in_script_and_qalter(cell_two_hosts, workdir, shells):
    cell = cell_two_hosts
    script = os.path.join(workdir, "directive.sh")
    with open(script, "w") as fh:
        fh.write("#$ -S node2:/bin/dash,/bin/bash\n" + SCRIPT)
    out = os.path.join(workdir, "directive.out")
    jid = jid_of(cell.qsub("-cwd", "-h", "-o", out, "-j", "y", "-l", "h=testhost", script, cwd=workdir))
    assert _shell_list(cell, jid, "node2:/bin/dash,NONE:/bin/bash") == \
        ["shell_list:                 node2:/bin/dash,NONE:/bin/bash"]
    proc = cell.run("qalter", "-S", "testhost:/bin/dash,/bin/bash", str(jid), cwd=workdir)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert _shell_list(cell, jid, "testhost:/bin/dash,NONE:/bin/bash") == \
        ["shell_list:                 testhost:/bin/dash,NONE:/bin/bash"]
    xml = cell.run("qstat", "-j", str(jid), "-xml").stdout
    assert "<PN_path>/bin/dash</PN_path>" in xml and "<PN_host>testhost</PN_host>" in xml
    cell.run("qrls", str(jid), check=True)
    assert cell.wait_finished(jid)
    with open(out) as fh:
        assert fh.read() == "SHELL=/bin/dash bash=\n"


@pytest.mark.parametrize("shell_list", ["/bin/bash,/bin/dash", "node2:/bin/bash,NODE2:/bin/dash"])
def test_two_paths_for_one_host_refused(cell_two_hosts, workdir, shell_list):
    cell = cell_two_hosts
    proc = cell.qsub("-S", shell_list, _script(workdir), cwd=workdir)
    assert proc.returncode != 0
    assert proc.stderr == "Unable to run job: ERROR! two files are specified for the same host\nExiting.\n"
    held = jid_of(cell.qsub("-h", _script(workdir), cwd=workdir))
    proc = cell.run("qalter", "-S", shell_list, str(held), cwd=workdir)
    assert proc.returncode != 0
    assert proc.stderr.strip() == "ERROR! two files are specified for the same host"

"""bin/settings.sh, sourced from a checkout by sh (dash), bash and zsh users."""

import os
import shutil
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBE = '. {path}; printf "%s\\n%s\\n" "$(command -v qsub)" "$MANPATH"'


def source(shell, path, cwd):
    proc = subprocess.run([shell, "-c", PROBE.format(path=path)], cwd=cwd, capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"})
    return proc.returncode, proc.stdout.splitlines(), proc.stderr


@pytest.mark.parametrize("shell", ["sh", "bash", "dash", "zsh"])
def test_from_the_checkouts_top_folder(shell):
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    code, out, err = source(shell, "bin/settings.sh", REPO)
    assert (code, err) == (0, "")
    assert out == [os.path.join(REPO, "bin", "qsub"), os.path.join(REPO, "man") + ":"]


def test_bash_finds_the_checkout_from_anywhere(tmp_path):
    code, out, err = source("bash", os.path.join(REPO, "bin", "settings.sh"), str(tmp_path))
    assert (code, err) == (0, "")
    assert out[0] == os.path.join(REPO, "bin", "qsub")


def test_a_posix_shell_elsewhere_is_told_where_to_source_it(tmp_path):
    code, out, err = source("sh", os.path.join(REPO, "bin", "settings.sh"), str(tmp_path))
    assert err == "settings.sh: source it from the checkout's top folder: . bin/settings.sh\n"
    assert out == ["", ""]

"""A job's stream files as Grid Engine's shepherd finds and opens them, and the
variables that name them (SGE 8.1.9, builtin_starter.cc build_path and its opens;
reference qstat-j-Eqw.txt):

- an -o/-e path gets the default file name inside it only when it is an existing
  directory (``dir/`` then gives ``dir//NAME.oJOBID``); any other path is opened as
  written, so ``-o missing/`` fails the start with "Is a directory" (Eqw);
- the start failures' words in qstat -j's "error reason": ``can't open output file
  "PATH": ERROR``, ``can't open PATH as dummy input file``, ``can't stat() "PATH" as
  stdout_path: ERROR KRB5CCNAME=none uid=U gid=G GROUPS``, and for an -i naming a
  directory ``"PATH" is a directory not a file``;
- with -j y, SGE_STDERR_PATH names the stdout file;
- -V and -v pass the caller's environment as it was given: no LC_CTYPE=C.UTF-8 the
  command's interpreter set for itself under the C locale (PEP 538).
"""

import os
import pwd
import subprocess

import pytest

from conftest import wait_for
from qtools import end_state, jid_of


def _error_reason(cell, jid):
    lines = [line for line in cell.run("qstat", "-j", str(jid)).stdout.splitlines()
             if line.startswith("error reason")]
    assert lines, cell.run("qstat", "-j", str(jid)).stdout
    return lines[0]


def _own_folder(workdir, name, user):
    path = os.path.join(workdir, name)
    os.mkdir(path)
    entry = pwd.getpwnam(user)
    os.chown(path, entry.pw_uid, entry.pw_gid)
    return path


def _root_folder(workdir, name, mode):
    path = os.path.join(workdir, name)
    os.mkdir(path)
    os.chmod(path, mode)
    return path


def _env_lines(path):
    wait_for(lambda: os.path.exists(path) and "SGE_STDOUT_PATH=" in open(path).read())
    return dict(line.partition("=")[::2] for line in open(path).read().splitlines() if "=" in line)


def test_output_path_with_a_slash_naming_no_directory_fails_the_start(cell, users, workdir):
    alice = users[0]
    missing = os.path.join(workdir, "envout") + "/"
    jid = jid_of(cell.qsub("-terse", "-N", "eqw_nodir", "-o", missing, "-e", missing, "-b", "y", "true",
                         user=alice, cwd=workdir))
    assert end_state(cell, jid) == "error"
    assert _error_reason(cell, jid).endswith(f"]: error: can't open output file \"{missing}\": Is a directory")
    assert not os.path.exists(os.path.join(workdir, "envout"))


def test_output_path_with_a_slash_naming_a_directory_gets_the_default_name(cell, users, workdir):
    alice = users[0]
    folder = _own_folder(workdir, "out", alice)
    jid = jid_of(cell.qsub("-terse", "-N", "named", "-o", folder + "/", "-b", "y", "env",
                         user=alice, cwd=workdir))
    cell.wait_finished(jid)
    env = _env_lines(os.path.join(folder, f"named.o{jid}"))
    assert env["SGE_STDOUT_PATH"] == f"{folder}//named.o{jid}"
    assert env["SGE_STDERR_PATH"] == os.path.join(pwd.getpwnam(alice).pw_dir, f"named.e{jid}")


def test_unwritable_output_file_is_said_with_the_path_in_quotes(cell, users, workdir):
    alice = users[0]
    closed = _root_folder(workdir, "rootonly", 0o755)
    jid = jid_of(cell.qsub("-terse", "-N", "noperm", "-o", closed + "/", "-j", "y", "-b", "y", "true",
                         user=alice, cwd=workdir))
    assert end_state(cell, jid) == "error"
    assert _error_reason(cell, jid).endswith(
        f"]: error: can't open output file \"{closed}//noperm.o{jid}\": Permission denied")


def test_missing_stdin_file_is_a_dummy_input_file(cell, users, workdir):
    alice = users[0]
    missing = os.path.join(workdir, "nope.txt")
    jid = jid_of(cell.qsub("-terse", "-i", missing, "-o", "/dev/null", "-j", "y", "-b", "y", "cat",
                         user=alice, cwd=workdir))
    assert end_state(cell, jid) == "error"
    assert _error_reason(cell, jid).endswith(f"]: error: can't open {missing} as dummy input file")


def test_a_path_that_cannot_be_looked_at_is_a_stat_failure(cell, users, workdir):
    alice = users[0]
    entry = pwd.getpwnam(alice)
    closed = _root_folder(workdir, "closed", 0o700)
    path = os.path.join(closed, "sub", "x.out")
    jid = jid_of(cell.qsub("-terse", "-o", path, "-j", "y", "-b", "y", "true", user=alice, cwd=workdir))
    assert end_state(cell, jid) == "error"
    groups = "".join(f"{g} " for g in os.getgrouplist(alice, entry.pw_gid))
    assert _error_reason(cell, jid).endswith(
        f"can't stat() \"{path}\" as stdout_path: Permission denied KRB5CCNAME=none "
        f"uid={entry.pw_uid} gid={entry.pw_gid} {groups}")
    assert not os.path.exists(os.path.join(closed, "sub"))
    # the KRB5CCNAME named is the job's own, never the daemon's
    jid = jid_of(cell.qsub("-terse", "-v", "KRB5CCNAME=FILE:/tmp/krb5cc_mine", "-o", path, "-j", "y",
                           "-b", "y", "true", user=alice, cwd=workdir))
    assert end_state(cell, jid) == "error"
    assert "Permission denied KRB5CCNAME=FILE:/tmp/krb5cc_mine uid=" in _error_reason(cell, jid)


def test_stdin_naming_a_directory_fails_the_start(cell, users, workdir):
    alice = users[0]
    folder = _own_folder(workdir, "t3", alice)
    jid = jid_of(cell.qsub("-terse", "-N", "indir", "-i", folder, "-o", folder + "/", "-j", "y", "-b", "y", "cat",
                         user=alice, cwd=workdir))
    assert end_state(cell, jid) == "error"
    assert _error_reason(cell, jid).endswith(f"\"{folder}\" is a directory not a file")
    # the output file was opened by nobody: the job never ran
    assert not os.path.exists(os.path.join(folder, f"indir.o{jid}"))


@pytest.mark.parametrize("join", [True, False])
def test_sge_stderr_path_under_join(cell, users, workdir, join):
    alice = users[0]
    folder = _own_folder(workdir, "t2", alice)
    extra = ["-j", "y"] if join else ["-e", folder + "/"]
    jid = jid_of(cell.qsub("-terse", "-cwd", "-N", "vtest", "-o", folder + "/", *extra, "-b", "y", "env",
                         user=alice, cwd=workdir))
    cell.wait_finished(jid)
    env = _env_lines(os.path.join(folder, f"vtest.o{jid}"))
    assert env["SGE_STDOUT_PATH"] == f"{folder}//vtest.o{jid}"
    assert env["SGE_STDERR_PATH"] == (env["SGE_STDOUT_PATH"] if join else f"{folder}//vtest.e{jid}")


def _bare_env(cell, **extra):
    """The cell's environment without any locale variable (the C locale), plus ``extra``."""
    env = {k: v for k, v in cell.env.items() if k not in ("LANG", "LANGUAGE") and not k.startswith("LC_")}
    env.update(extra)
    return env


def _qsub_env(cell, workdir, env, *options):
    out = os.path.join(workdir, "locale.out")
    if os.path.exists(out):
        os.unlink(out)
    proc = subprocess.run(["qsub", "-terse", "-sync", "y", *options, "-o", out, "-j", "y", "-b", "y", "env"],
                          env=env, cwd=workdir, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [line for line in open(out).read().splitlines() if line.startswith(("LC_CTYPE=", "LANG="))]


def test_export_all_passes_no_coerced_locale(cell, workdir):
    assert _qsub_env(cell, workdir, _bare_env(cell), "-V") == []


def test_export_all_keeps_the_callers_own_c_locale(cell, workdir):
    assert _qsub_env(cell, workdir, _bare_env(cell, LC_CTYPE="C"), "-V") == ["LC_CTYPE=C"]


def test_v_names_an_unset_lc_ctype(cell, workdir):
    lines = _qsub_env(cell, workdir, _bare_env(cell), "-v", "LC_CTYPE,LANG")
    assert sorted(lines) == ["LANG=", "LC_CTYPE="]

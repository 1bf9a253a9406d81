"""Every command and file format has a manual page, and every page renders cleanly."""

import glob
import os
import shutil
import subprocess

import pytest

from gridtools.cli.entry import COMMANDS

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = sorted(glob.glob(os.path.join(REPO, "man", "man*", "*.[0-9]")))


def page_names():
    return {os.path.basename(p).rsplit(".", 1)[0] for p in PAGES}


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"llctl"}))
def test_every_command_has_a_page(command):
    assert command in page_names(), f"no man page for {command}"


@pytest.mark.parametrize("name", ["accounting", "gridtools_spool", "queue_conf", "sge_conf",
                                  "sched_conf", "complex", "sge_pe", "checkpoint", "calendar_conf",
                                  "access_list", "user", "project", "hostgroup", "host_conf",
                                  "sge_resource_quota", "share_tree", "classad", "condor_config",
                                  "sge_request", "sge_aliases", "sge_priority"])
def test_every_file_format_has_a_page(name):
    assert name in page_names()


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
@pytest.mark.parametrize("path", PAGES, ids=[os.path.basename(p) for p in PAGES])
def test_page_renders_without_warnings(path):
    proc = subprocess.run(["man", "--warnings", "-l", path], capture_output=True, text=True,
                          env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0"))
    assert proc.returncode == 0
    assert proc.stderr == ""
    assert len(proc.stdout.splitlines()) > 10


@pytest.mark.parametrize("path", PAGES, ids=[os.path.basename(p) for p in PAGES])
def test_page_holds_no_control_characters(path):
    """A control character (a form feed where ``\\f`` was meant) renders as nothing or as
    a stray letter, and man does not warn of it."""
    with open(path, "rb") as fh:
        data = fh.read()
    assert [c for c in set(data) if c < 32 and c not in (9, 10)] == []


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
@pytest.mark.parametrize("path", PAGES, ids=[os.path.basename(p) for p in PAGES])
def test_groff_finds_nothing_to_warn_of(path):
    proc = subprocess.run(["groff", "-man", "-ww", "-z", path], capture_output=True, text=True)
    assert (proc.returncode, proc.stderr) == (0, "")

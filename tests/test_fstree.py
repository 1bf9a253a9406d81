"""Folder trees a job's owner made, of any depth, removed and measured by the daemon
and the shepherd (gridtools.fstree): no recursion limit, no link followed, no more
open folders than the walk's bound."""

import os

from gridtools import fstree
from gridtools.exec import tmpdir

DEPTH = 1500            # (deeper than Python's recursion limit)


def _chain(top, depth, leaf=b"x" * 10):
    """Folders a/a/.../a ``depth`` deep under ``top``, a file ``f`` at every level;
    made from descriptor to descriptor (the path would outgrow PATH_MAX)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        with open(os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as fh:
            fh.write(leaf)
        os.mkdir("a", dir_fd=fd)
        inner = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


def _open_fds():
    return len(os.listdir("/proc/self/fd"))


def test_a_chain_deeper_than_the_recursion_limit_is_removed(tmp_path):
    (tmp_path / "tree").mkdir()
    _chain(tmp_path / "tree", DEPTH)
    before = _open_fds()
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert fstree.remove_at(fd, "tree") is True
    finally:
        os.close(fd)
    assert os.listdir(tmp_path) == []                   # (nothing moved aside is left)
    assert _open_fds() == before


def test_removal_follows_no_link(tmp_path):
    (tmp_path / "outside" / "sub").mkdir(parents=True)
    (tmp_path / "outside" / "sub" / "precious").write_text("keep\n")
    (tmp_path / "tree" / "a").mkdir(parents=True)
    os.symlink(tmp_path / "outside", tmp_path / "tree" / "a" / "link")
    os.symlink(tmp_path / "outside" / "sub" / "precious", tmp_path / "tree" / "file-link")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert fstree.remove_at(fd, "tree") is True
    finally:
        os.close(fd)
    assert sorted(os.listdir(tmp_path)) == ["outside"]
    assert (tmp_path / "outside" / "sub" / "precious").read_text() == "keep\n"


def test_a_wide_tree_is_removed(tmp_path):
    for i in range(300):
        (tmp_path / "tree" / str(i) / "x").mkdir(parents=True)
        (tmp_path / "tree" / str(i) / "x" / "f").write_text("y")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert fstree.remove_at(fd, "tree") is True
    finally:
        os.close(fd)
    assert os.listdir(tmp_path) == []


def test_usage_of_a_deep_chain_counts_to_the_walks_depth(tmp_path):
    (tmp_path / "tree").mkdir()
    _chain(tmp_path / "tree", DEPTH)
    before = _open_fds()
    size, entries = fstree.usage(str(tmp_path / "tree"), 10 ** 6)
    assert _open_fds() == before
    levels = fstree.MOST_DEPTH                          # (each level: a file and a folder)
    assert (size, entries) == (10 * levels, 2 * levels)
    assert tmpdir.folder_usage(str(tmp_path / "tree")) == ((10 * levels + 1023) // 1024, 2 * levels)
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert fstree.remove_at(fd, "tree")             # (pytest's clean-up would recurse)
    finally:
        os.close(fd)


def test_usage_counts_a_wide_tree_and_no_link(tmp_path):
    for i in range(200):
        (tmp_path / "tree" / str(i)).mkdir(parents=True)
        (tmp_path / "tree" / str(i) / "f").write_bytes(b"z" * 100)
    (tmp_path / "big").write_bytes(b"q" * 5000)
    os.symlink(tmp_path / "big", tmp_path / "tree" / "link")
    os.symlink(tmp_path, tmp_path / "tree" / "up")
    assert fstree.usage(str(tmp_path / "tree"), 10 ** 6) == (200 * 100, 200 * 2 + 2)
    assert fstree.usage(str(tmp_path / "tree"), 50)[1] < 200 * 2


def test_a_link_or_a_missing_folder_measures_nothing(tmp_path):
    os.symlink("/usr", tmp_path / "link")
    assert fstree.usage(str(tmp_path / "link"), 10 ** 6) == (0, 0)
    assert fstree.usage(str(tmp_path / "missing"), 10 ** 6) == (0, 0)

"""Waking the daemon through its FIFO: a daemon that is gone, or goes away between the
open and the write, is reported (the client then starts one), never raised."""

import os

from gridtools.spool import wake


def test_no_fifo_and_no_reader_mean_no_daemon(tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    assert wake.poke() is False                          # no FIFO
    os.mkfifo(wake.fifo_path())
    assert wake.poke() is False                          # nobody reads it


def test_a_reader_that_leaves_between_the_open_and_the_write_means_no_daemon(tmp_path, monkeypatch):
    """The daemon dies after poke opened the FIFO and before it wrote: the write finds
    the pipe broken."""
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    os.mkfifo(wake.fifo_path())
    reader = os.open(wake.fifo_path(), os.O_RDONLY | os.O_NONBLOCK)
    real_open = wake.posix.open

    def open_then_lose_the_reader(path, flags, *mode):
        fd = real_open(path, flags, *mode)
        os.close(reader)                                  # the daemon is gone now
        return fd
    monkeypatch.setattr(wake.posix, "open", open_then_lose_the_reader)
    assert wake.poke() is False


def test_a_listening_daemon_is_woken(tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDTOOLS_ROOT", str(tmp_path))
    (tmp_path / "spool").mkdir()
    os.mkfifo(wake.fifo_path())
    reader = os.open(wake.fifo_path(), os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert wake.poke() is True
        assert os.read(reader, 16) == b"!"
    finally:
        os.close(reader)

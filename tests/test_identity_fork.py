"""A process forked while another of its threads holds the identity lock
(``exec.jobproc.IDENTITY``: the daemon's server JSV thread starting or killing a
JSV) waits for it to be let go, and starts with a lock of its own, free: a child
that inherited it held by a thread it does not have would stop for ever at its
first ``owner_rights`` (an exec server forked anew, and every shepherd it forks)."""

import os
import threading


def _fork_and_report(check):
    """Fork; the child runs ``check()`` and exits 0 when it returns True, else 1. The
    child's exit status."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = 0 if check() else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_a_child_forked_while_a_thread_holds_the_lock_gets_it_free():
    from gridtools.cli.sge import jsv
    from gridtools.exec import jobproc
    shared = jsv.CREDENTIALS
    jsv.CREDENTIALS = jobproc.IDENTITY           # (as the daemon shares it: serverjsv._preload)
    held, let_go, released = threading.Event(), threading.Event(), []

    def holder():
        with jobproc.IDENTITY:
            held.set()
            let_go.wait(30)
            released.append(True)               # (before the lock is let go)
    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(30)
        timer = threading.Timer(0.2, let_go.set)  # the fork below waits for the holder until then
        timer.start()

        def child_check():
            fresh = jobproc.IDENTITY
            return (released == [True]            # the fork waited for the lock to be let go
                    and fresh.acquire(timeout=5)  # and the child's lock is free
                    and jsv.CREDENTIALS is fresh)  # and shared again with the JSV's starts
        assert _fork_and_report(child_check) == 0
        timer.join()
    finally:
        let_go.set()
        thread.join()
        jsv.CREDENTIALS = shared
    # the parent keeps its own lock, free again
    assert jobproc.IDENTITY.acquire(timeout=5)
    jobproc.IDENTITY.release()


def test_a_child_forked_while_the_forking_thread_holds_the_lock_gets_it_free():
    from gridtools.exec import jobproc
    with jobproc.IDENTITY:
        assert _fork_and_report(lambda: jobproc.IDENTITY.acquire(blocking=False)) == 0
    assert jobproc.IDENTITY.acquire(blocking=False)
    jobproc.IDENTITY.release()

"""A reserved queue instance whose host leaves the queue (qstat(1), qrsub(1), queue_conf(5)).

As Grid Engine's qmaster, a queue instance that an advance reservation holds
slots in is not dropped when its host leaves the queue's hostlist (named
there, or through a host group): it stays, orphaned (state ``o``), and
``qstat -f`` shows it so, with its slots and the ones the reservation holds.
It takes no new job. Orphaning is no error of the reservation: it keeps its
state (``r`` in its window), with no message. Once the host is back the
instance is an ordinary one again; once the reservation is deleted nothing
holds it any more and it goes.
"""

from conftest import wait_for
from qtools import jid_of, queue_line, queue_letters, reasons, state_of
from test_qconf_ar_guard import ar_of

from gridtools.sched import queue_state

B = "all.q@node2"


def ar_long(cell, ar):
    """The lines of ``qrstat -ar ar`` as (field, value) pairs."""
    text = cell.run("qrstat", "-ar", str(ar), check=True).stdout
    return [tuple((line.split(None, 1) + [""])[:2]) for line in text.splitlines() if not line.startswith("-")]


def ar_state(cell, ar):
    return dict(ar_long(cell, ar))["state"]


def columns(instance_line):
    """(name, qtype, resv/used/tot, states) of a qstat -f queue line."""
    fields = instance_line.split()
    return fields[0], fields[1], fields[2], fields[5] if len(fields) > 5 else ""


def reserve_on_b(cell):
    """A reservation of one of node2's two slots, starting now."""
    cell.run("qconf", "-mattr", "queue", "slots", "2", B, check=True)
    ar = ar_of(cell.run("qrsub", "-d", "1:0:0", "-q", B))
    wait_for(lambda: queue_line(cell, B) is not None and columns(queue_line(cell, B)) == (B, "BIP", "1/0/2", ""))
    assert ar_state(cell, ar) == "r"
    return ar


def assert_orphaned(cell, ar, workdir):
    """node2's instance is shown orphaned, the reservation is not in error, and a job
    that testhost cannot take waits rather than go to node2."""
    wait_for(lambda: queue_line(cell, B) is not None and queue_letters(cell, B) == "o")
    assert columns(queue_line(cell, B)) == (B, "BIP", "1/0/2", "o")
    assert columns(queue_line(cell, "all.q@testhost")) == ("all.q@testhost", "BIP", "0/0/1", "")
    assert cell.run("qselect", "-qs", "o", check=True).stdout == f"{B}\n"
    cell.run("qmod", "-d", "all.q@testhost", check=True)
    jid = jid_of(cell.qsub("-b", "y", "true", cwd=workdir))
    wait_for(lambda: reasons(cell, jid))            # (a pass of the scheduler saw it)
    assert state_of(cell, jid) == "qw"
    assert columns(queue_line(cell, B)) == (B, "BIP", "1/0/2", "o")
    fields = ar_long(cell, ar)
    assert dict(fields)["state"] == "r"
    assert "message" not in dict(fields)
    assert ("granted_slots_list", f"{B}=1") in fields
    return jid


def test_a_reserved_instance_taken_out_of_the_hostlist_stays_until_the_reservation_goes(
        cell_two_hosts, workdir):
    cell = cell_two_hosts
    ar = reserve_on_b(cell)
    cell.run("qconf", "-rattr", "queue", "hostlist", "testhost", "all.q", check=True)
    jid = assert_orphaned(cell, ar, workdir)
    # the reservation deleted: nothing holds the instance any more, and it goes
    cell.run("qrdel", str(ar), check=True)
    wait_for(lambda: queue_line(cell, B) is None)
    assert columns(queue_line(cell, "all.q@testhost")) == ("all.q@testhost", "BIP", "0/0/1", "d")
    assert cell.run("qselect", "-qs", "o").stdout == ""
    assert state_of(cell, jid) == "qw"
    cell.run("qmod", "-e", "all.q@testhost", check=True)
    cell.wait_finished(jid)


def test_a_reserved_instance_out_of_the_host_group_comes_back_with_its_host(cell_two_hosts, workdir):
    cell = cell_two_hosts
    ar = reserve_on_b(cell)
    cell.run("qconf", "-dattr", "hostgroup", "hostlist", "node2", "@allhosts", check=True)
    jid = assert_orphaned(cell, ar, workdir)
    # back in the host group: an ordinary instance again, still reserved; the job that
    # waited takes its free slot
    cell.run("qconf", "-aattr", "hostgroup", "hostlist", "node2", "@allhosts", check=True)
    cell.wait_finished(jid)
    wait_for(lambda: columns(queue_line(cell, B)) == (B, "BIP", "1/0/2", ""))
    assert ar_state(cell, ar) == "r"
    cell.run("qrdel", str(ar), check=True)
    wait_for(lambda: columns(queue_line(cell, B)) == (B, "BIP", "0/0/2", ""))


def test_the_orphaned_state_of_reserved_and_of_busy_instances():
    """sched.queue_state: an instance out of the configuration is orphaned while a task
    runs in it or a reservation holds it, and not otherwise."""
    inst = queue_state.Instance(name="all.q@a", queue="all.q", host="a", slots=1)
    task = queue_state.Task(1, 1, (("all.q", "b", 1),), 0.0)
    found = queue_state.derive(queue_state.View(instances=(inst,), tasks=(task,),
                                                reserved=frozenset({"all.q@c", "all.q@a"})), 0.0).derived
    assert found == {"all.q@b": queue_state.QState.ORPHANED, "all.q@c": queue_state.QState.ORPHANED}
    assert queue_state.derive(queue_state.View(instances=(inst,)), 0.0).derived == {}

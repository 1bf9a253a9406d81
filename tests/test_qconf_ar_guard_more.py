"""qconf changes under granted advance reservations, beyond capacities (qrsub(1), qconf(1)).

As Grid Engine's qmaster, a change to an execution host's complex_values that
leaves a value a reservation holding slots on that host asked for (a complex
that is not consumed, ``-l color=blue``) so that the request no longer fits is
refused, in Grid Engine's words, and the host stays as it was. What Grid
Engine does not refuse is made: the same change on the global host or a queue,
taking the value off the host, lowering a consumable below what running jobs
and reservations use together (only the reservations count), taking a reserved
consumable off a host, and taking a reserved host out of a queue's hostlist
(the reservation then goes into error).
"""

from conftest import wait_for
from qtools import add_complex, jid_of, queue_letters, wait_state
from test_qconf_ar_guard import ar_of, at, given_back, refused, shown

COLOR = "color col STRING == YES NO NONE 0"
MEMSIZE = "memsize msz MEMORY <= YES NO 0 0"


def values(cell, target):
    """The complex_values of ``qconf -se target`` as a name -> text mapping (the test
    cell's gpu=0 of every host left out)."""
    text = shown(cell, "-se", target, "complex_values")
    found = dict(item.split("=", 1) for item in text.split(",") if "=" in item)
    return {k: v for k, v in found.items() if (k, v) != ("gpu", "0")}


def host_text(cell, host):
    """``qconf -se host`` without what the host reports (what -Me takes back)."""
    text, skip = [], False
    for line in cell.run("qconf", "-se", host, check=True).stdout.splitlines():
        if line.startswith(("load_values", "processors")) or skip:
            skip = line.endswith("\\")
            continue
        text.append(line + "\n")
    return "".join(text)


def modified(proc):
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stdout + proc.stderr


def test_a_hosts_fixed_value_stays_what_a_reservation_asked_for(cell):
    add_complex(cell, COLOR)
    add_complex(cell, MEMSIZE)
    cell.run("qconf", "-mattr", "exechost", "complex_values", "color=blue,memsize=4G", "testhost", check=True)
    ar = ar_of(cell.run("qrsub", "-d", "1:0:0", "-pe", "make", "2", "-l", "col=blue,msz=2G"))
    color = 'denied: changing "color" in complex_values would break advance reservation'
    memsize = 'denied: changing "memsize" in complex_values would break advance reservation'
    refused(cell.run("qconf", "-mattr", "exechost", "complex_values", "color=red", "testhost"), color)
    refused(cell.run("qconf", "-mattr", "exechost", "complex_values", "memsize=1G", "testhost"), memsize)
    refused(cell.run("qconf", "-rattr", "exechost", "complex_values", "color=red,memsize=4G", "testhost"),
            color)
    refused(given_back(cell, "-Me", host_text(cell, "testhost").replace("color=blue", "color=red"),
                       "testhost.host"), color)
    assert values(cell, "testhost") == {"color": "blue", "memsize": "4G"}
    # what still fits is made
    modified(cell.run("qconf", "-mattr", "exechost", "complex_values", "memsize=2G", "testhost"))
    modified(cell.run("qconf", "-mattr", "exechost", "complex_values", "memsize=8G", "testhost"))
    assert values(cell, "testhost") == {"color": "blue", "memsize": "8G"}
    # a value the host no longer has is not judged; one it gets back is
    modified(cell.run("qconf", "-dattr", "exechost", "complex_values", "color=blue", "testhost"))
    assert values(cell, "testhost") == {"memsize": "8G"}
    refused(cell.run("qconf", "-aattr", "exechost", "complex_values", "color=red", "testhost"), color)
    assert values(cell, "testhost") == {"memsize": "8G"}
    modified(cell.run("qconf", "-aattr", "exechost", "complex_values", "color=blue", "testhost"))
    # Grid Engine judges neither the global host nor a queue's values here
    modified(cell.run("qconf", "-mattr", "exechost", "complex_values", "color=red", "global"))
    assert values(cell, "global") == {"color": "red"}
    modified(cell.run("qconf", "-mattr", "queue", "complex_values", "color=red", "all.q"))
    assert shown(cell, "-sq", "all.q", "complex_values") == "color=red"
    # without the reservation the host is free to change
    cell.run("qrdel", str(ar), check=True)
    modified(cell.run("qconf", "-mattr", "exechost", "complex_values", "color=red,memsize=1G", "testhost"))
    assert values(cell, "testhost") == {"color": "red", "memsize": "1G"}


def test_a_reservation_holds_only_the_hosts_it_has_slots_on(cell_two_hosts):
    cell = cell_two_hosts
    add_complex(cell, COLOR)
    for host in ("testhost", "node2"):
        cell.run("qconf", "-mattr", "exechost", "complex_values", "color=blue", host, check=True)
    ar_of(cell.run("qrsub", "-d", "1:0:0", "-q", "all.q@node2", "-l", "color=blue"))
    modified(cell.run("qconf", "-mattr", "exechost", "complex_values", "color=red", "testhost"))
    assert values(cell, "testhost") == {"color": "red"}
    refused(cell.run("qconf", "-mattr", "exechost", "complex_values", "color=red", "node2"),
            'denied: changing "color" in complex_values would break advance reservation')
    assert values(cell, "node2") == {"color": "blue"}


def test_what_grid_engine_does_not_refuse_is_made(cell, workdir):
    add_complex(cell, "lic lic INT <= YES YES 0 0")
    cell.run("qconf", "-mattr", "exechost", "complex_values", "lic=4", "testhost", check=True)
    jid = jid_of(cell.qsub("-l", "lic=2", "-b", "y", "sleep", "600", cwd=workdir))
    wait_state(cell, jid, "r")
    ar = ar_of(cell.run("qrsub", "-a", at(3600), "-d", "1:0:0", "-l", "lic=1"))
    # a running job's use is not counted: below the reservation's and the job's together
    modified(cell.run("qconf", "-mattr", "exechost", "complex_values", "lic=1", "testhost"))
    assert values(cell, "testhost") == {"lic": "1"}
    refused(cell.run("qconf", "-mattr", "exechost", "complex_values", "lic=0", "testhost"),
            'denied: changing "lic" in complex_values would break advance reservation')
    # the reserved consumable taken off the host, then out of the complexes
    modified(cell.run("qconf", "-dattr", "exechost", "complex_values", "lic=1", "testhost"))
    assert "lic" not in values(cell, "testhost")
    cell.run("qdel", str(jid), check=True)
    cell.wait_finished(jid)
    text = cell.run("qconf", "-sc", check=True).stdout
    proc = given_back(cell, "-Mc", "".join(line + "\n" for line in text.splitlines()
                                         if not line.startswith("lic ")), "complexes")
    assert (proc.returncode, proc.stderr) == (0, 'root@testhost removed "lic" from complex entry list\n')
    assert "lic " not in cell.run("qconf", "-sc", check=True).stdout
    # the reserved host taken out of the queue: its instance stays, orphaned, and the
    # reservation is not in error
    assert shown(cell, "-sq", "all.q", "hostlist") == "@allhosts"
    modified(cell.run("qconf", "-dattr", "hostgroup", "hostlist", "testhost", "@allhosts"))
    assert shown(cell, "-shgrp", "@allhosts", "hostlist") == "NONE"
    wait_for(lambda: queue_letters(cell, "all.q@testhost") == "o")
    proc = cell.run("qrstat", "-ar", str(ar))
    assert "\nstate                          w\n" in proc.stdout and "message" not in proc.stdout

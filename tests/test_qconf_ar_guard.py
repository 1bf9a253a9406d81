"""qconf changes under granted advance reservations (qrsub(1), qconf(1)).

As Grid Engine's qmaster, a change that would leave less than a granted
reservation holds in its window is refused, in Grid Engine's words, and the
object stays as it was: a queue's slots, a consumable's capacity in the
complex_values of a queue, a host or the global host, a parallel
environment's slots, a reserved queue instance's pe_list. Deleting a queue
(or a host) that reservations hold is refused as with running jobs. Changes
that leave enough are made.
"""

import re
import time

from qtools import add_complex, add_queue


def at(seconds_from_now):
    return time.strftime("%Y%m%d%H%M.%S", time.localtime(time.time() + seconds_from_now))


def ar_of(proc):
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = re.fullmatch(r"Your advance reservation (\d+) has been granted\n", proc.stdout)
    assert found, proc.stdout
    return int(found.group(1))


def shown(cell, option, name, attr):
    """The value line of ``attr`` in ``qconf -s… name``."""
    text = cell.run("qconf", option, name, check=True).stdout
    return next(line.split(None, 1)[1] for line in text.splitlines() if line.split()[:1] == [attr])


def capacity(cell, option, name):
    """The lic entry of an object's complex_values."""
    return next(v for v in shown(cell, option, name, "complex_values").split(",") if v.startswith("lic="))


def refused(proc, text):
    assert (proc.returncode, proc.stderr) == (1, text + "\n"), proc.stdout + proc.stderr


def given_back(cell, option, text, name):
    """``qconf option FILE`` of ``text`` written to the file ``name`` in the cell's folder."""
    path = f"{cell.root}/{name}"
    with open(path, "w") as fh:
        fh.write(text)
    return cell.run("qconf", option, path)


def test_queue_slots_below_the_reserved_slots_are_refused(cell):
    ar_of(cell.run("qrsub", "-d", "1:0:0", "-pe", "make", "2"))
    refused(cell.run("qconf", "-mattr", "queue", "slots", "1", "all.q"),
            "denied: 2 slots are already reserved in all.q@testhost by an advance reservation")
    assert shown(cell, "-sq", "all.q", "slots") == "2"
    refused(cell.run("qconf", "-rattr", "queue", "slots", "2,[testhost=1]", "all.q"),
            "denied: 2 slots are already reserved in all.q@testhost by an advance reservation")
    text = cell.run("qconf", "-sq", "all.q", check=True).stdout
    text = re.sub(r"(?m)^slots .*$", "slots                 1", text)
    refused(given_back(cell, "-Mq", text, "all.q"),
            "denied: 2 slots are already reserved in all.q@testhost by an advance reservation")
    assert shown(cell, "-sq", "all.q", "slots") == "2"
    cell.run("qconf", "-mattr", "queue", "slots", "3", "all.q", check=True)
    assert shown(cell, "-sq", "all.q", "slots") == "3"
    cell.run("qconf", "-mattr", "queue", "slots", "2", "all.q", check=True)


def test_reservations_count_where_their_windows_overlap(cell):
    """Two reservations of one slot each, one after the other: one slot holds both."""
    ar_of(cell.run("qrsub", "-d", "0:30:0"))
    later = ar_of(cell.run("qrsub", "-a", at(3600), "-d", "0:30:0"))
    cell.run("qconf", "-mattr", "queue", "slots", "1", "all.q", check=True)
    assert shown(cell, "-sq", "all.q", "slots") == "1"
    cell.run("qconf", "-mattr", "queue", "slots", "2", "all.q", check=True)
    ar_of(cell.run("qrsub", "-a", at(3600), "-d", "0:30:0"))
    refused(cell.run("qconf", "-mattr", "queue", "slots", "1", "all.q"),
            "denied: 2 slots are already reserved in all.q@testhost by an advance reservation")
    cell.run("qrdel", str(later), check=True)
    cell.run("qconf", "-mattr", "queue", "slots", "1", "all.q", check=True)


def test_pe_slots_below_the_reserved_slots_are_refused(cell):
    ar_of(cell.run("qrsub", "-d", "1:0:0", "-pe", "make", "2"))
    refused(cell.run("qconf", "-mattr", "pe", "slots", "1", "make"),
            "denied: lowering slots amount below 2 would break advance reservations")
    assert shown(cell, "-sp", "make", "slots") == "999"
    text = cell.run("qconf", "-sp", "make", check=True).stdout.replace("999", "1")
    refused(given_back(cell, "-Mp", text, "make.pe"),
            "denied: lowering slots amount below 2 would break advance reservations")
    assert shown(cell, "-sp", "make", "slots") == "999"
    cell.run("qconf", "-mattr", "pe", "slots", "2", "make", check=True)
    assert shown(cell, "-sp", "make", "slots") == "2"


def test_consumable_capacities_below_the_reserved_amounts_are_refused(cell):
    add_complex(cell, "lic lic INT <= YES YES 0 0")
    for target in ("global", "testhost"):
        cell.run("qconf", "-mattr", "exechost", "complex_values", "lic=4", target, check=True)
    cell.run("qconf", "-mattr", "queue", "complex_values", "lic=4", "all.q", check=True)
    ar_of(cell.run("qrsub", "-d", "1:0:0", "-pe", "make", "2", "-l", "lic=1"))
    words = 'denied: changing "lic" in complex_values would break advance reservation'
    for target in ("global", "testhost"):
        refused(cell.run("qconf", "-mattr", "exechost", "complex_values", "lic=1", target), words)
        assert capacity(cell, "-se", target) == "lic=4"
    refused(cell.run("qconf", "-mattr", "queue", "complex_values", "lic=1", "all.q"), words)
    assert capacity(cell, "-sq", "all.q") == "lic=4"
    text, skip = [], False
    for line in cell.run("qconf", "-se", "testhost", check=True).stdout.splitlines():
        if line.startswith(("load_values", "processors")) or skip:
            skip = line.endswith("\\")             # (what the host reports is not written back)
            continue
        text.append(line.replace("lic=4", "lic=1") + "\n")
    refused(given_back(cell, "-Me", "".join(text), "testhost.host"), words)
    assert capacity(cell, "-se", "testhost") == "lic=4"
    for target in ("global", "testhost"):
        cell.run("qconf", "-mattr", "exechost", "complex_values", "lic=2", target, check=True)
        assert capacity(cell, "-se", target) == "lic=2"
    cell.run("qconf", "-mattr", "queue", "complex_values", "lic=2", "all.q", check=True)
    assert capacity(cell, "-sq", "all.q") == "lic=2"


def test_a_reserved_pe_stays_in_the_queues_pe_list(cell):
    ar = ar_of(cell.run("qrsub", "-d", "1:0:0", "-pe", "make", "2"))
    refused(cell.run("qconf", "-dattr", "queue", "pe_list", "make", "all.q"),
            f'denied: removing "make" from pe_list would break advance reservation {ar}')
    assert "make" in shown(cell, "-sq", "all.q", "pe_list").split()
    assert cell.run("qconf", "-dp", "make").returncode == 1
    assert "make" in cell.run("qconf", "-spl", check=True).stdout.split()


def test_a_reserved_queue_is_not_deleted(cell):
    add_queue(cell, "res.q", slots="1")
    ar = ar_of(cell.run("qrsub", "-a", at(3600), "-d", "1:0:0", "-q", "res.q"))
    refused(cell.run("qconf", "-dq", "res.q"), "There are still running jobs in the queue. Deletion denied.")
    assert "res.q" in cell.run("qconf", "-sql", check=True).stdout.split()
    cell.run("qrdel", str(ar), check=True)
    cell.run("qconf", "-dq", "res.q", check=True)
    assert "res.q" not in cell.run("qconf", "-sql", check=True).stdout.split()

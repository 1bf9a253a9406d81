"""qconf -dattr for a queue instance (queue@host, queue@@group, or [host=...] in the
value) and the advance reservation guard on a queue's ckpt_list (qconf(1), qrsub(1)).

Grid Engine's master removes names only from a value the host or host group has of
its own: where only the cluster queue's default applies, -dattr changes nothing,
tells nothing and answers that the queue was modified. A checkpointing environment
that a granted reservation holds cannot be taken off the ckpt_list of the queue
instance it was granted, whichever option would take it off.
"""

import re

from qtools import add_object, add_queue
from test_ar import ar_of

MODIFIED = 'root@testhost modified "all.q" in cluster queue list\n'

CKPT = ("ckpt_name {name}\ninterface userdefined\nckpt_command none\nmigr_command none\n"
        "restart_command none\nclean_command none\nckpt_dir /tmp\nsignal none\nwhen sx\n")


def qconf(cell, *args):
    return cell.run("qconf", *args)


def shown(cell, attr, queue="all.q"):
    """The value of ``attr`` as qconf -sq shows it."""
    text = qconf(cell, "-sq", queue).stdout
    return next(line.split(None, 1)[1] for line in text.splitlines() if line.split()[:1] == [attr])


def answered(proc, stdout=MODIFIED):
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, stdout, "")


def refused(proc, text):
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", text + "\n")


def test_dattr_for_a_host_without_a_pe_list_of_its_own_changes_nothing(cell):
    for target in ("all.q@testhost", "all.q@@allhosts"):
        answered(qconf(cell, "-dattr", "queue", "pe_list", "make", target))
        assert shown(cell, "pe_list") == "make smp mpi"
    # a name the default lacks is not told about either
    answered(qconf(cell, "-dattr", "queue", "pe_list", "nosuch", "all.q@testhost"))
    # the same for a host entry in the value
    answered(qconf(cell, "-dattr", "queue", "pe_list", "[testhost=make]", "all.q"))
    assert shown(cell, "pe_list") == "make smp mpi"
    # the host's own value is still what -dattr removes from
    answered(qconf(cell, "-mattr", "queue", "pe_list", "make smp", "all.q@testhost"),
             '"pe_list" of "all.q" is empty - Adding new element(s).\n\n' + MODIFIED)
    answered(qconf(cell, "-dattr", "queue", "pe_list", "make", "all.q@testhost"))
    assert shown(cell, "pe_list") == "make smp mpi,[testhost=smp]"
    answered(qconf(cell, "-dattr", "queue", "pe_list", "make", "all.q@testhost"),
             '"make" does not exist in "pe_list" of "all.q"\n\n' + MODIFIED)
    assert shown(cell, "pe_list") == "make smp mpi,[testhost=smp]"


def test_dattr_for_a_host_without_user_lists_of_its_own_changes_nothing(cell):
    answered(qconf(cell, "-rattr", "queue", "user_lists", "arusers deadlineusers", "all.q"))
    for target in ("all.q@testhost", "all.q@@allhosts"):
        answered(qconf(cell, "-dattr", "queue", "user_lists", "arusers", target))
        assert shown(cell, "user_lists") == "arusers deadlineusers"
    answered(qconf(cell, "-dattr", "queue", "user_lists", "[@allhosts=deadlineusers]", "all.q"))
    assert shown(cell, "user_lists") == "arusers deadlineusers"
    # name=value lists alike
    answered(qconf(cell, "-rattr", "queue", "load_thresholds", "np_load_avg=1.75", "all.q"))
    answered(qconf(cell, "-dattr", "queue", "load_thresholds", "np_load_avg", "all.q@testhost"))
    assert shown(cell, "load_thresholds") == "np_load_avg=1.75"
    # what -dattr refuses is still refused
    refused(qconf(cell, "-dattr", "queue", "slots", "1", "all.q@testhost"),
            'denied: attribute "slots" is not a list attribute, use -mattr or -rattr')
    refused(qconf(cell, "-dattr", "queue", "user_lists", "arusers", "all.q@nosuch"),
            '"nosuch" is not an execution host')


# ---------------------------------------------------------------- ckpt_list under a reservation

def test_a_reserved_checkpointing_environment_stays_in_the_queues_ckpt_list(cell):
    for name in ("ck", "other"):
        add_object(cell, "-Ackpt", CKPT.format(name=name))
    add_queue(cell, "free.q", ckpt_list="ck")
    answered(qconf(cell, "-aattr", "queue", "ckpt_list", "ck", "all.q"))
    ar = ar_of(cell.run("qrsub", "-d", "1:0:0", "-q", "all.q", "-ckpt", "ck"))
    words = f'denied: removing "ck" from ckpt_list would break advance reservation {ar}'
    for args in (("-dattr", "ck", "all.q"),
                 ("-rattr", "other", "all.q"),
                 ("-rattr", "NONE", "all.q"),
                 ("-rattr", "ck,[testhost=other]", "all.q"),
                 ("-mattr", "[testhost=other]", "all.q"),
                 ("-mattr", "other", "all.q@testhost"),
                 ("-dattr", "ck", "all.q,free.q")):
        proc = qconf(cell, args[0], "queue", "ckpt_list", *args[1:])
        if args[-1] == "all.q,free.q":
            # each queue answers for itself: the one not reserved is changed
            assert (proc.returncode, proc.stderr) == (1, words + "\n")
            assert proc.stdout == 'root@testhost modified "free.q" in cluster queue list\n'
        else:
            refused(proc, words)
        assert shown(cell, "ckpt_list") == "ck", args
    assert shown(cell, "ckpt_list", "free.q") == "NONE"
    # the whole queue from a file
    text = re.sub(r"(?m)^ckpt_list .*$", "ckpt_list other", qconf(cell, "-sq", "all.q").stdout)
    path = cell.root + "/all.q"
    with open(path, "w") as fh:
        fh.write(text)
    refused(qconf(cell, "-Mq", path), words)
    assert shown(cell, "ckpt_list") == "ck"
    # adding keeps the reserved one: allowed
    answered(qconf(cell, "-aattr", "queue", "ckpt_list", "other", "all.q"))
    assert shown(cell, "ckpt_list") == "ck other"
    # once the reservation is gone, it may go
    assert cell.run("qrdel", str(ar)).returncode == 0
    answered(qconf(cell, "-dattr", "queue", "ckpt_list", "ck", "all.q"))
    assert shown(cell, "ckpt_list") == "other"

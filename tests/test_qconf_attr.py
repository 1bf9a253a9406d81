"""qconf attribute editing (-aattr family, -purge), name lists, access lists,
share tree nodes and the interactive editor forms."""

import os

import pytest


def ok(cell, *args, **kw):
    proc = cell.run("qconf", *args, **kw)
    assert proc.returncode == 0, proc.stderr
    return proc


def fails(cell, *args, **kw):
    proc = cell.run("qconf", *args, **kw)
    assert proc.returncode != 0, proc.stdout
    return proc.stderr


def line_of(text, attr):
    return next(line for line in text.splitlines() if line.split()[:1] == [attr])


def test_list_attributes_of_a_queue(cell):
    ok(cell, "-dattr", "queue", "pe_list", "mpi", "all.q")
    assert line_of(ok(cell, "-sq", "all.q").stdout, "pe_list") == "pe_list               make smp"
    assert ok(cell, "-dattr", "queue", "pe_list", "mpi", "all.q").stdout == \
        '"mpi" does not exist in "pe_list" of "all.q"\n\nroot@testhost modified "all.q" in cluster queue list\n'
    ok(cell, "-aattr", "queue", "pe_list", "mpi", "all.q")
    assert ok(cell, "-aattr", "queue", "pe_list", "mpi", "all.q").stdout == \
        'No modification because "mpi" already exists in "pe_list" of "all.q"\n' \
        'root@testhost modified "all.q" in cluster queue list\n'
    ok(cell, "-rattr", "queue", "pe_list", "smp", "all.q")
    assert line_of(ok(cell, "-sq", "all.q").stdout, "pe_list") == "pe_list               smp"
    ok(cell, "-rattr", "queue", "load_thresholds", "np_load_avg=1.75", "all.q")
    ok(cell, "-aattr", "queue", "load_thresholds", "load_avg=4", "all.q")
    ok(cell, "-mattr", "queue", "load_thresholds", "np_load_avg=2.5", "all.q")
    # the changed value moves to the end, as Grid Engine's master exchanges it
    assert line_of(ok(cell, "-sq", "all.q").stdout, "load_thresholds") == \
        "load_thresholds       load_avg=4,np_load_avg=2.5"
    ok(cell, "-dattr", "queue", "load_thresholds", "load_avg", "all.q")
    assert fails(cell, "-aattr", "queue", "slots", "3", "all.q").startswith('denied: attribute "slots"')
    assert fails(cell, "-mattr", "queue", "nosuch", "3", "all.q") == '"nosuch" is not a queue attribute\n'
    assert fails(cell, "-mattr", "queue", "qname", "x.q", "all.q").startswith('denied: attribute "qname"')
    assert fails(cell, "-mattr", "queue", "slots", "1", "nosuch.q") == \
        'No cluster queue or queue instance matches the phrase "nosuch.q"\n'


def test_per_host_and_per_group_values_and_purge(cell):
    ok(cell, "-mattr", "queue", "slots", "4", "all.q@testhost")
    ok(cell, "-mattr", "queue", "slots", "6", "all.q@@allhosts")
    assert line_of(ok(cell, "-sq", "all.q").stdout, "slots") == "slots                 2,[@allhosts=6],[testhost=4]"
    assert ok(cell, "-sobjl", "queue_domain", "slots", "6").stdout == "all.q@@allhosts\n"
    ok(cell, "-mattr", "queue", "pe_list", "make smp mpi", "all.q@testhost")
    ok(cell, "-dattr", "queue", "pe_list", "make", "all.q@testhost")
    assert line_of(ok(cell, "-sq", "all.q").stdout, "pe_list") == \
        "pe_list               make smp mpi,[testhost=smp mpi]"
    ok(cell, "-purge", "queue", "slots", "all.q@testhost")
    assert line_of(ok(cell, "-sq", "all.q").stdout, "slots") == "slots                 2,[@allhosts=6]"
    ok(cell, "-purge", "queue", "*", "all.q@@allhosts")
    ok(cell, "-purge", "queue", "*", "all.q@testhost")
    text = ok(cell, "-sq", "all.q").stdout
    assert "[" not in text


def test_host_entries_in_the_value(cell):
    """[host=value] and [@group=value], as Grid Engine's execution host installer writes
    them (qconf -aattr queue slots "[host=N]" all.q), for every attribute with per-host values."""
    ok(cell, "-aattr", "queue", "slots", "[testhost=1]", "all.q")
    assert line_of(ok(cell, "-sq", "all.q").stdout, "slots") == "slots                 2,[testhost=1]"
    ok(cell, "-mattr", "queue", "slots", "[testhost=3]", "all.q")
    ok(cell, "-aattr", "queue", "slots", "[@allhosts=5]", "all.q")
    ok(cell, "-mattr", "queue", "slots", "4,[testhost=6]", "all.q")
    assert line_of(ok(cell, "-sq", "all.q").stdout, "slots") == "slots                 4,[@allhosts=5],[testhost=6]"
    ok(cell, "-aattr", "queue", "load_thresholds", "[testhost=load_avg=4]", "all.q")
    ok(cell, "-mattr", "queue", "load_thresholds", "[testhost=np_load_avg=3]", "all.q")
    ok(cell, "-dattr", "queue", "load_thresholds", "[testhost=load_avg]", "all.q")
    ok(cell, "-aattr", "queue", "complex_values", "[testhost=h_vmem=2G]", "all.q")
    ok(cell, "-dattr", "queue", "pe_list", "[testhost=make]", "all.q")     # (no value of its own: nothing)
    text = ok(cell, "-sq", "all.q").stdout
    assert line_of(text, "load_thresholds") == "load_thresholds       NONE,[testhost=np_load_avg=3]"
    assert line_of(text, "complex_values") == "complex_values        NONE,[testhost=h_vmem=2G]"
    assert line_of(text, "pe_list") == "pe_list               make smp mpi"
    assert fails(cell, "-aattr", "queue", "slots", "[nosuch=2]", "all.q") == '"nosuch" is not an execution host\n'
    assert fails(cell, "-dattr", "queue", "slots", "[testhost=1]", "all.q").startswith(
        'denied: attribute "slots" is not a list attribute')
    assert fails(cell, "-aattr", "queue", "slots", "[testhost=x]", "all.q") == \
        'error: invalid value "x" for attribute "slots": expected an integer from 0 to 9999999\n'
    assert fails(cell, "-aattr", "exechost", "complex_values", "[x=1]", "testhost").startswith(
        'error: invalid value "[x=1]" for attribute "complex_values"')
    ok(cell, "-rattr", "queue", "slots", "2,[testhost=1]", "all.q")
    assert "all.q@testhost                 BIP   0/0/1" in cell.run("qstat", "-f").stdout


def test_attribute_files(cell, workdir):
    path = os.path.join(workdir, "attrs")
    with open(path, "w") as fh:
        fh.write("qname    ignored\nslots    3\nuser_lists arusers\n")
    proc = ok(cell, "-Mattr", "queue", path, "all.q")
    assert proc.stdout == '"user_lists" of "all.q" is empty - Adding new element(s).\n\n' \
        'root@testhost modified "all.q" in cluster queue list\n'
    text = ok(cell, "-sq", "all.q").stdout
    assert line_of(text, "slots") == "slots                 3"
    assert line_of(text, "user_lists") == "user_lists            arusers"
    with open(path, "w") as fh:
        fh.write("user_lists deadlineusers\n")
    ok(cell, "-Aattr", "queue", path, "all.q")
    assert line_of(ok(cell, "-sq", "all.q").stdout, "user_lists") == "user_lists            arusers deadlineusers"
    ok(cell, "-Dattr", "queue", path, "all.q")
    ok(cell, "-Rattr", "queue", path, "all.q")
    assert line_of(ok(cell, "-sq", "all.q").stdout, "user_lists") == "user_lists            deadlineusers"


def test_other_objects(cell):
    ok(cell, "-aattr", "exechost", "complex_values", "h_vmem=4G", "testhost")
    ok(cell, "-mattr", "exechost", "complex_values", "h_vmem=8G", "testhost")
    assert line_of(ok(cell, "-se", "testhost").stdout, "complex_values") == "complex_values        gpu=0,h_vmem=8G"
    assert fails(cell, "-mattr", "exechost", "load_values", "x=1", "testhost").startswith("denied:")
    ok(cell, "-aattr", "hostgroup", "hostlist", "localhost", "@allhosts")
    assert ok(cell, "-shgrp", "@allhosts").stdout == "group_name @allhosts\nhostlist testhost localhost\n"
    ok(cell, "-mattr", "pe", "slots", "16", "smp,mpi")
    assert line_of(ok(cell, "-sp", "mpi").stdout, "slots") == "slots              16"
    assert line_of(ok(cell, "-sp", "smp").stdout, "slots") == "slots              16"
    assert "user list" in fails(cell, "-aattr", "pe", "user_lists", "nolist", "smp")


def test_resource_quota_attributes(cell, workdir):
    path = os.path.join(workdir, "rqs")
    with open(path, "w") as fh:
        fh.write("{\n   name         cap\n   description  NONE\n   enabled      FALSE\n"
                 "   limit        users {*} to slots=4\n}\n")
    ok(cell, "-Arqs", path)
    ok(cell, "-mattr", "resource_quota", "enabled", "TRUE", "cap")
    ok(cell, "-mattr", "resource_quota", "limit", "slots=2", "cap/1")
    ok(cell, "-aattr", "resource_quota", "limit", "name night hosts {@allhosts} to slots=1", "cap")
    ok(cell, "-aattr", "resource_quota", "users", "!root", "cap/1")
    assert ok(cell, "-srqs", "cap").stdout == (
        "{\n   name         cap\n   description  NONE\n   enabled      TRUE\n"
        "   limit        users {*,!root} to slots=2\n"
        "   limit        name night hosts {@allhosts} to slots=1\n}\n")
    assert "does not exist" in fails(cell, "-mattr", "resource_quota", "limit", "slots=1", "cap/9")
    ok(cell, "-drqs", "cap")
    assert fails(cell, "-srqsl") == "no resource quota set list defined\n"


def test_managers_operators_and_hosts(cell):
    assert ok(cell, "-am", "someone").stderr == 'root@testhost added "someone" to manager list\n'
    assert fails(cell, "-am", "someone") == 'manager "someone" already exists\n'
    assert ok(cell, "-dm", "someone").stderr == 'root@testhost removed "someone" from manager list\n'
    assert fails(cell, "-dm", "someone") == 'denied: manager "someone" does not exist\n'
    assert fails(cell, "-dm", "root").startswith("denied:")
    ok(cell, "-ao", "op2,op1")
    ok(cell, "-ao", "Op3")
    assert ok(cell, "-so").stdout == "Op3\nop1\nop2\n"
    ok(cell, "-do", "op1,op2,Op3")
    assert fails(cell, "-so") == "no operator defined\n"
    ok(cell, "-am", "zed,abe")
    assert ok(cell, "-sm").stdout == "abe\nroot\nzed\n"
    ok(cell, "-dm", "zed,abe")
    ok(cell, "-ah", "node5")
    ok(cell, "-as", "node5")
    assert ok(cell, "-sh").stdout == "node5\ntesthost\n"
    assert ok(cell, "-ss").stdout == "node5\ntesthost\n"
    ok(cell, "-ds", "node5")
    assert ok(cell, "-ss").stdout == "testhost\n"


def test_access_list_entries(cell):
    proc = ok(cell, "-au", "u1,u2", "arusers,newlist")
    assert proc.stderr == ('added "u1" to access list "arusers"\nadded "u2" to access list "arusers"\n'
                           'added "u1" to access list "newlist"\nadded "u2" to access list "newlist"\n')
    assert ok(cell, "-su", "newlist").stdout == "name    newlist\ntype    ACL\nfshare  0\noticket 0\nentries u1,u2\n"
    assert fails(cell, "-au", "u1", "newlist") == '"u1" is already in access list "newlist"\n'
    assert ok(cell, "-du", "u1", "newlist").stderr == 'deleted user "u1" from access list "newlist"\n'
    assert fails(cell, "-du", "u1", "newlist") == 'user "u1" is not in access list "newlist"\n'
    ok(cell, "-dul", "newlist")
    assert ok(cell, "-sul").stdout == "arusers\ndeadlineusers\ndefaultdepartment\n"


def test_share_tree_nodes(cell, workdir):
    path = os.path.join(workdir, "prj")
    with open(path, "w") as fh:
        fh.write("name projA\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n")
    ok(cell, "-Aprj", path)
    with open(path, "w") as fh:
        fh.write("name alice\noticket 0\nfshare 0\ndelete_time 0\ndefault_project NONE\n")
    ok(cell, "-Auser", path)
    assert fails(cell, "-mstnode", "/projA=60") == "No sharetree\n"
    assert ok(cell, "-astnode", "/projA=60,/default=40").stderr == (
        "setting \n/projA=60\nsetting \n/default=40\nmodified sharetree\n")
    ok(cell, "-astnode", "/projA/alice=10")
    ok(cell, "-mstnode", "/projA/alice=20")
    assert ok(cell, "-sst").stdout == "Root=1\n   projA=60\n      alice=20\n   default=40\n"
    assert ok(cell, "-sstnode", "/projA").stdout == "/projA=60\n"
    assert ok(cell, "-rsstnode", "/projA").stdout == "/projA=60\n/projA/alice=20\n"
    assert "type=1" in ok(cell, "-sstree").stdout.split("name=projA\n", 1)[1].split("\n", 1)[0]
    assert fails(cell, "-dstnode", "/projA") == ("can't delete nodes with children\n"
                                                 "no modifications to sharetree\n")
    assert fails(cell, "-dstnode", "/") == "can't delete root node\nno modifications to sharetree\n"
    assert fails(cell, "-dprj", "projA") == 'denied: may not remove project "projA" still referenced in share tree\n'
    assert ok(cell, "-dstnode", "/projA/alice").stderr == "removing \n/projA/alice\nmodified sharetree\n"
    assert fails(cell, "-mstnode", "/nope=1") == ("Unable to locate /nope in sharetree\n"
                                                  "no modifications to sharetree\n")
    assert ok(cell, "-dstree").stderr == "root@testhost removed sharetree list\n"
    assert fails(cell, "-sstree") == "no sharetree element\n"
    assert fails(cell, "-dstree") == "sharetree does not exist\n"
    bad = os.path.join(workdir, "tree")
    with open(bad, "w") as fh:
        fh.write("id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1\n"
                 "id=1\nname=nosuch\ntype=1\nshares=10\nchildnodes=NONE\n")
    assert fails(cell, "-Astree", bad) == 'denied: share tree contains reference to unknown user/project "nosuch"\n'
    ok(cell, "-dprj", "projA")


@pytest.mark.parametrize("args,show,attr,value", [
    (("-mq", "all.q"), ("-sq", "all.q"), "seq_no", "5"),
    (("-me", "testhost"), ("-se", "testhost"), "usage_scaling", "cpu=2.000000"),
    (("-mhgrp", "@allhosts"), ("-shgrp", "@allhosts"), "hostlist", "testhost localhost"),
    (("-mp", "smp"), ("-sp", "smp"), "slots", "12"),
    (("-mu", "arusers"), ("-su", "arusers"), "entries", "alice"),
    (("-mconf",), ("-sconf",), "finished_jobs", "7"),
    (("-mconf", "global"), ("-sconf", "global"), "max_u_jobs", "9"),
    (("-msconf",), ("-ssconf",), "maxujobs", "2"),
])
def test_interactive_modification(cell, args, show, attr, value):
    editor = f"sed -i 's/^{attr} .*/{attr} {value}/'"
    proc = ok(cell, *args, env={"EDITOR": editor})
    assert ("changed" if args[0] == "-msconf" else "modified") in proc.stderr
    assert line_of(ok(cell, *show).stdout, attr).split(None, 1)[1] == value
    before = ok(cell, *show).stdout
    proc = cell.run("qconf", *args, env={"EDITOR": "true"})
    # Grid Engine's answer to a file left as written depends on the option
    unchanged = {"-mq": "Object has not been changed\n", "-mhgrp": "Object has not been changed\n",
                 "-mconf": "configuration unchanged\n"}
    if args[0] == "-mu":
        assert (proc.stdout, proc.stderr, proc.returncode) == ("file unchanged\n", "", 0)
    else:
        assert (proc.stderr, proc.returncode) == (unchanged.get(args[0], "file unchanged\n"), 1)
    editor = f"sed -i 's/^{attr} .*/{attr}/'"
    proc = cell.run("qconf", *args, env={"EDITOR": editor})
    assert proc.returncode == 1
    assert len(proc.stderr.splitlines()) == 1 and attr in proc.stderr
    if show[0] != "-se":
        assert ok(cell, *show).stdout == before


def test_interactive_additions(cell):
    proc = ok(cell, "-ap", "big", env={"EDITOR": "sed -i 's/^slots .*/slots 64/'"})
    assert proc.stderr == 'root@testhost added "big" to parallel environment list\n'
    assert line_of(ok(cell, "-sp", "big").stdout, "slots") == "slots              64"
    proc = ok(cell, "-acal", "weekend", env={"EDITOR": "sed -i 's/^week .*/week sat-sun=off/'"})
    assert line_of(ok(cell, "-scal", "weekend").stdout, "week") == "week             sat-sun=off"
    proc = ok(cell, "-ahgrp", "@two", env={"EDITOR": "sed -i 's/^hostlist .*/hostlist @allhosts/'"})
    assert ok(cell, "-shgrp_tree", "@two").stdout == "@two\n   @allhosts\n      testhost\n"
    proc = ok(cell, "-aconf", "testhost", env={"EDITOR": "sh -c 'echo \"mailer /bin/true\" >> \"$0\"'"})
    assert ok(cell, "-sconf", "testhost").stdout == "#testhost:\nmailer                       /bin/true\n\n"
    proc = cell.run("qconf", "-ap", "bad", env={"EDITOR": "sed -i 's/^slots .*/slots many/'"})
    assert proc.returncode == 1 and proc.stderr.startswith("error: line 2: ")
    assert fails(cell, "-sp", "bad") == "bad is not a parallel environment\n"
    proc = cell.run("qconf", "-ap", "gone", env={"EDITOR": "false"})
    assert (proc.stderr, proc.returncode) == ("error: editor exited with error 1\nedit failed\n", 1)


def test_users_and_projects_share_names(cell):
    ok(cell, "-auser", env={"EDITOR": "sed -i 's/^name .*/name alice/'"})
    assert ok(cell, "-suserl").stdout == "alice\n"
    proc = cell.run("qconf", "-aprj", env={"EDITOR": "sed -i 's/^name .*/name alice/'"})
    assert proc.returncode == 1 and "shared namespace" in proc.stderr
    proc = cell.run("qconf", "-aprj", env={"EDITOR": "sed -i 's/^name .*/name default/'"})
    assert proc.returncode == 1 and '"default"' in proc.stderr
    ok(cell, "-duser", "alice")
    assert fails(cell, "-suser", "alice") == "alice is not known as user\n"


def test_missing_objects_shown_in_grid_engines_words(cell):
    assert fails(cell, "-sprj", "nosuch") == "nosuch is not known as project\n"
    assert fails(cell, "-suser", "nosuch") == "nosuch is not known as user\n"
    assert fails(cell, "-duser", "nosuch") == 'denied: user "nosuch" does not exist\n'
    assert fails(cell, "-dprj", "nosuch") == 'denied: project "nosuch" does not exist\n'
    assert fails(cell, "-su", "nosuch") == 'denied: access list "nosuch" does not exist\n'
    assert fails(cell, "-srqs", "nosuch") == "No resource quota set found\n"


def test_objects_named_by_quota_rules_cannot_be_deleted(cell, workdir):
    path = os.path.join(workdir, "rqs")
    with open(path, "w") as fh:
        fh.write("{\n   name         r2\n   description  NONE\n   enabled      TRUE\n"
                 "   limit        users @deadlineusers pes smp to slots=3\n}\n")
    ok(cell, "-Arqs", path)
    assert fails(cell, "-dul", "deadlineusers") == \
        'denied: userset "deadlineusers" is still referenced in resource quota set "r2"\n'
    ok(cell, "-dattr", "queue", "pe_list", "smp", "all.q")
    assert fails(cell, "-dp", "smp") == \
        'denied: parallel environment "smp" is still referenced in resource quota set "r2"\n'
    ok(cell, "-drqs", "r2")
    ok(cell, "-dul", "deadlineusers")
    ok(cell, "-dp", "smp")


def test_detached_settings(cell, workdir):
    assert ok(cell, "-sds").stdout == ""
    host = os.path.join(workdir, "gone")
    with open(host, "w") as fh:
        fh.write(ok(cell, "-se", cell.host).stdout.replace(cell.host, "gone"))
    ok(cell, "-Ae", host)                       # an execution host outside all.q's host list
    ok(cell, "-mattr", "queue", "slots", "3", "all.q@gone")
    assert ok(cell, "-sds").stdout == "all.q: slots [gone]\n"


def test_resource_quota_sets_in_bulk(cell, workdir):
    two = ("{\n   name         a\n   description  NONE\n   enabled      TRUE\n   limit        to slots=4\n}\n"
           "{\n   name         b\n   description  NONE\n   enabled      FALSE\n   limit        to slots=2\n}\n")
    path = os.path.join(workdir, "two")
    with open(path, "w") as fh:
        fh.write(two)
    proc = ok(cell, "-Arqs", path)
    assert proc.stderr == ('root@testhost added "a" to resource quota set list\n'
                           'root@testhost added "b" to resource quota set list\n')
    assert ok(cell, "-srqs").stdout == two
    assert ok(cell, "-srqs", "b,a").stdout == two[two.index("{\n   name         b"):] + two[:two.index("}\n") + 2]
    proc = ok(cell, "-mrqs", "b", env={"EDITOR": "sed -i 's/slots=2/slots=3/'"})
    assert proc.stderr == 'root@testhost modified "b" in resource quota set list\n'
    assert "slots=3" in ok(cell, "-srqs", "b").stdout
    assert "was not named" in fails(cell, "-Mrqs", path, "a")
    one = two[:two.index("}\n") + 2]
    with open(path, "w") as fh:
        fh.write(one)
    proc = ok(cell, "-Mrqs", path)
    assert proc.stderr == ('root@testhost modified "a" in resource quota set list\n'
                           'root@testhost removed "b" from resource quota set list\n')
    assert ok(cell, "-srqsl").stdout == "a\n"
    assert fails(cell, "-arqs", "c,d", env={"EDITOR": "true"}) == "file unchanged\n"
    proc = ok(cell, "-arqs", "c,d", env={"EDITOR": "touch"})
    assert proc.stderr.endswith('added "d" to resource quota set list\n')
    assert ok(cell, "-srqsl").stdout == "a\nc\nd\n"


def test_rattr_none_empties_a_list_and_rattr_takes_per_host_values(cell):
    assert cell.run("qconf", "-mattr", "queue", "suspend_thresholds", "np_load_avg=3", "all.q").returncode == 0
    assert cell.run("qconf", "-rattr", "queue", "suspend_thresholds", "NONE", "all.q").returncode == 0
    assert "suspend_thresholds    NONE\n" in cell.run("qconf", "-sq", "all.q").stdout
    proc = cell.run("qconf", "-rattr", "queue", "slots", "2,[testhost=3]", "all.q")
    assert proc.returncode == 0, proc.stderr
    assert "slots                 2,[testhost=3]\n" in cell.run("qconf", "-sq", "all.q").stdout


def test_object_list_is_comma_separated_or_several_words_one_message_each(cell):
    proc = ok(cell, "-mattr", "pe", "slots", "12", "smp,mpi")
    assert [line.split(None, 1)[1] for line in proc.stdout.splitlines()] == [
        'modified "smp" in parallel environment list', 'modified "mpi" in parallel environment list']
    proc = ok(cell, "-mattr", "pe", "slots", "14", "smp", "mpi", "-sp", "mpi")
    assert [line.split(None, 1)[1] for line in proc.stdout.splitlines()[:2]] == [
        'modified "smp" in parallel environment list', 'modified "mpi" in parallel environment list']
    assert line_of(proc.stdout, "slots") == "slots              14"
    assert line_of(ok(cell, "-sp", "smp").stdout, "slots") == "slots              14"


def test_host_deletion_in_grid_engines_words(cell, workdir):
    ok(cell, "-ah", "node5")
    assert ok(cell, "-dh", "node5").stderr == 'root@testhost removed "node5" from administrative host list\n'
    assert fails(cell, "-dh", "node5") == 'denied: administrative host "node5" does not exist\n'
    ok(cell, "-as", "node5")
    assert ok(cell, "-ds", "node5").stderr == 'root@testhost removed "node5" from submit host list\n'
    assert fails(cell, "-ds", "node5") == 'denied: submit host "node5" does not exist\n'
    assert fails(cell, "-de", "node5") == 'denied: execution host "node5" does not exist\n'
    text = ok(cell, "-se", "testhost", env={"SGE_SINGLE_LINE": "1"}).stdout
    path = os.path.join(workdir, "node5")
    with open(path, "w") as fh:
        fh.write("".join(line.replace("testhost", "node5") + "\n" for line in text.splitlines()
                         if line.split()[0] not in ("load_values", "processors")))
    ok(cell, "-Ae", path)
    # a host that still has a queue instance (through @allhosts here), or that a host
    # group holds, stays
    ok(cell, "-aattr", "hostgroup", "hostlist", "node5", "@allhosts")
    assert fails(cell, "-de", "node5") == 'Host object "node5" is still referenced in cluster queue "all.q".\n'
    ok(cell, "-rattr", "queue", "hostlist", "testhost", "all.q")
    assert fails(cell, "-de", "node5") == 'Host object "node5" is still referenced in host group "@allhosts".\n'
    ok(cell, "-dattr", "hostgroup", "hostlist", "node5", "@allhosts")
    assert ok(cell, "-de", "node5").stderr == 'root@testhost removed "node5" from execution host list\n'


def test_ckpt_when_letters_add_up_as_grid_engine_adds_them(cell, workdir):
    """-mattr and -aattr add letters to a checkpointing environment's when, -dattr takes
    them away, -rattr sets them, each result in Grid Engine's order x s m r."""
    path = os.path.join(workdir, "ck")
    with open(path, "w") as fh:
        fh.write("ckpt_name ck\ninterface userdefined\nckpt_command none\nmigr_command none\n"
                 "restart_command none\nclean_command none\nckpt_dir /tmp\nsignal none\nwhen s\n")
    ok(cell, "-Ackpt", path)

    def when():
        return line_of(ok(cell, "-sckpt", "ck").stdout, "when").split()[1]
    ok(cell, "-mattr", "ckpt", "when", "m", "ck")
    assert when() == "sm"
    ok(cell, "-aattr", "ckpt", "when", "rx", "ck")
    assert when() == "xsmr"
    ok(cell, "-dattr", "ckpt", "when", "sr", "ck")
    assert when() == "xm"
    ok(cell, "-rattr", "ckpt", "when", "n", "ck")
    assert when() == "n"
    assert fails(cell, "-mattr", "ckpt", "when", "x", "ck") == 'Invalid "when" attribute for ckpt "ck"\n'
    assert fails(cell, "-aattr", "ckpt", "when", "q", "ck") == 'Invalid "when" attribute for ckpt "ck"\n'
    assert when() == "n"


def test_ckpt_stored_in_an_older_letter_order_shows_grid_engines(cell, workdir):
    """An environment written before its when letters were kept in Grid Engine's order
    (sx, as given) shows them in that order (xs), to -sckpt and to -mckpt's editor."""
    path = os.path.join(workdir, "ck")
    with open(path, "w") as fh:
        fh.write("ckpt_name ck\ninterface userdefined\nckpt_command none\nmigr_command none\n"
                 "restart_command none\nclean_command none\nckpt_dir /tmp\nsignal none\nwhen x\n")
    ok(cell, "-Ackpt", path)
    stored = os.path.join(cell.root, "etc", "ckpt", "ck")
    with open(stored) as fh:
        text = fh.read()
    with open(stored, "w") as fh:                 # as an older gridtools left it
        fh.write(text.replace("when               x\n", "when               rsmx\n"))
    shown = ok(cell, "-sckpt", "ck").stdout
    assert shown == text.replace("when               x\n", "when               xsmr\n")
    editor = os.path.join(workdir, "editor.sh")
    with open(editor, "w") as fh:
        fh.write(f"#!/bin/sh\ncp \"$1\" {workdir}/edited\n")
    os.chmod(editor, 0o755)
    proc = cell.run("qconf", "-mckpt", "ck", env={"EDITOR": editor})
    with open(os.path.join(workdir, "edited")) as fh:
        assert fh.read() == shown
    assert proc.returncode == 1                    # shown as stored: nothing changed


def test_ckpt_when_without_letters_is_stored(cell, workdir):
    """-dattr of every letter of when leaves none, which Grid Engine's master stores (its
    bit mask 0 is valid) and qconf -sckpt shows as NONE; letters may be added again."""
    path = os.path.join(workdir, "ck")
    with open(path, "w") as fh:
        fh.write("ckpt_name ck\ninterface userdefined\nckpt_command none\nmigr_command none\n"
                 "restart_command none\nclean_command none\nckpt_dir /tmp\nsignal none\nwhen xs\n")
    ok(cell, "-Ackpt", path)
    proc = ok(cell, "-dattr", "ckpt", "when", "sx", "ck")
    assert proc.stdout == 'root@testhost modified "ck" in checkpoint interface list\n'
    shown = ok(cell, "-sckpt", "ck").stdout
    assert shown.endswith("signal             none\nwhen               NONE\n")
    with open(path, "w") as fh:                  # what -sckpt shows reads back as it is
        fh.write(shown)
    ok(cell, "-Mckpt", path)
    assert ok(cell, "-sckpt", "ck").stdout == shown
    ok(cell, "-dattr", "ckpt", "when", "m", "ck")
    assert line_of(ok(cell, "-sckpt", "ck").stdout, "when") == "when               NONE"
    ok(cell, "-aattr", "ckpt", "when", "rs", "ck")
    assert line_of(ok(cell, "-sckpt", "ck").stdout, "when") == "when               sr"
    ok(cell, "-rattr", "ckpt", "when", "n", "ck")
    ok(cell, "-dattr", "ckpt", "when", "n", "ck")
    assert line_of(ok(cell, "-sckpt", "ck").stdout, "when") == "when               NONE"


def test_a_value_ending_in_a_backslash_is_refused_and_the_object_reads_back(cell, workdir):
    assert fails(cell, "-mattr", "queue", "tmpdir", "/tmp\\", "all.q") == \
        'error: invalid value "/tmp\\" for attribute "tmpdir": a value may not end in a backslash\n'
    assert fails(cell, "-mattr", "queue", "prolog", "/bin/true\\", "all.q").endswith(
        "a value may not end in a backslash\n")
    path = os.path.join(workdir, "r5")
    with open(path, "w") as fh:
        fh.write("{\n   name         r5\n   description  NONE\n   enabled      TRUE\n"
                 "   limit        users * to slots=0\n}\n")
    ok(cell, "-Arqs", path)
    assert fails(cell, "-mattr", "resource_quota", "description", "C:\\temp\\", "r5") == \
        'error: invalid value for attribute "description"\n'
    cell.run("gridtools", "daemon", "stop", check=True)
    cell.run("gridtools", "daemon", "start", check=True)
    shown = ok(cell, "-sq", "all.q").stdout
    assert line_of(shown, "tmpdir") == "tmpdir                /tmp"
    assert "enabled      TRUE" in ok(cell, "-srqs", "r5").stdout
    assert ok(cell, "-sql").stdout == "all.q\n"


def test_a_resource_quota_file_naming_a_set_twice_is_refused_whole(cell, workdir):
    path = os.path.join(workdir, "r2")
    with open(path, "w") as fh:
        fh.write("{\n name r2\n enabled TRUE\n limit users {*} to slots=1\n}\n"
                 "{\n name r2\n enabled FALSE\n limit users {*} to slots=100\n}\n")
    assert fails(cell, "-Arqs", path) == 'denied: resource quota set "r2" is given more than once\n'
    assert fails(cell, "-srqs", "r2").strip() == 'No resource quota set found for "r2"' or \
        "r2" not in cell.run("qconf", "-srqsl").stdout


def test_an_attribute_change_cannot_make_a_host_group_contain_itself(cell, workdir):
    for name, hosts in (("@ga", "testhost"), ("@gb", "@ga")):
        path = os.path.join(workdir, name[1:])
        with open(path, "w") as fh:
            fh.write(f"group_name {name}\nhostlist {hosts}\n")
        ok(cell, "-Ahgrp", path)
    for args in (("-aattr", "hostgroup", "hostlist", "@gb", "@ga"),
                 ("-mattr", "hostgroup", "hostlist", "@gb", "@ga")):
        assert fails(cell, *args) == 'error: host group "@ga" contains itself through @ga -> @gb -> @ga\n'
    assert ok(cell, "-shgrp_resolved", "@gb").stdout.split() == ["testhost"]


def test_an_execution_host_is_one_name_in_any_letter_case(cell, workdir):
    text = ok(cell, "-se", "testhost").stdout
    kept = [line for line in text.splitlines() if line.split()[:1] and line.split()[0] in
            ("complex_values", "load_scaling", "user_lists", "xuser_lists", "projects", "xprojects",
             "usage_scaling", "report_variables")]
    path = os.path.join(workdir, "upper")
    with open(path, "w") as fh:
        fh.write("hostname TESTHOST\n" + "\n".join(kept) + "\n")
    assert fails(cell, "-Ae", path) == 'exechost "testhost" already exists\n'
    assert ok(cell, "-sel").stdout.split() == ["testhost"]

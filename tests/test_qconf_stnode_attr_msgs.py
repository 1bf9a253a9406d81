"""What qconf says removing share tree nodes (-dstnode) and when the attribute options
(-aattr family) name an object type they do not know, as Grid Engine's qconf says it:
every line on standard error, and exit code 1 when nothing was done."""

import os

import pytest

TREE = ("id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,2\n"
        "id=1\nname=projA\ntype=1\nshares=60\nchildnodes=3\n"
        "id=2\nname=default\ntype=0\nshares=40\nchildnodes=NONE\n"
        "id=3\nname=default\ntype=0\nshares=10\nchildnodes=NONE\n")


def qconf(cell, *args):
    return cell.run("qconf", *args)


@pytest.fixture
def tree(cell, workdir):
    """The cell with a project projA and a share tree Root -> projA (-> default), default."""
    path = os.path.join(workdir, "prj")
    with open(path, "w") as fh:
        fh.write("name projA\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n")
    assert qconf(cell, "-Aprj", path).returncode == 0
    path = os.path.join(workdir, "tree")
    with open(path, "w") as fh:
        fh.write(TREE)
    proc = qconf(cell, "-Astree", path)
    assert proc.returncode == 0, proc.stderr
    return cell


def shown(cell):
    proc = qconf(cell, "-sst")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_dstnode_says_removing_and_the_path(tree):
    proc = qconf(tree, "-dstnode", "/default")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, "", "removing \n/default\nmodified sharetree\n")
    assert shown(tree) == "Root=1\n   projA=60\n      default=10\n"


def test_dstnode_prints_the_path_from_the_root(tree):
    # a dot searches the whole subtree; the line names the node's full path
    proc = qconf(tree, "-dstnode", "projA.default")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, "", "removing \n/projA/default\nmodified sharetree\n")
    assert shown(tree) == "Root=1\n   projA=60\n   default=40\n"


def test_dstnode_of_several_goes_on_after_one_it_cannot_remove(tree):
    proc = qconf(tree, "-dstnode", "/nosuch,/projA,/projA/default,/default")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, "", "Unable to locate /nosuch in sharetree\n"
               "can't delete nodes with children\n"
               "removing \n/projA/default\n"
               "removing \n/default\n"
               "modified sharetree\n")
    assert shown(tree) == "Root=1\n   projA=60\n"


@pytest.mark.parametrize("path, said", [
    ("/nosuch", "Unable to locate /nosuch in sharetree\n"),
    ("/projA", "can't delete nodes with children\n"),
    ("/", "can't delete root node\n"),
])
def test_dstnode_removing_nothing_says_so_and_fails(tree, path, said):
    before = shown(tree)
    proc = qconf(tree, "-dstnode", path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "", said + "no modifications to sharetree\n")
    assert shown(tree) == before


@pytest.mark.parametrize("option", ["-aattr", "-mattr", "-dattr", "-rattr"])
def test_attribute_option_with_an_unknown_object(cell, option):
    proc = qconf(cell, option, "foo", "slots", "1", "all.q")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "", 'Modification of object "foo" not supported\n')
    assert "slots                 2" in qconf(cell, "-sq", "all.q").stdout


@pytest.mark.parametrize("option", ["-Aattr", "-Mattr", "-Dattr", "-Rattr"])
def test_attribute_file_option_with_an_unknown_object(cell, workdir, option):
    path = os.path.join(workdir, "attrs")
    with open(path, "w") as fh:
        fh.write("slots 1\n")
    proc = qconf(cell, option, "foo", path, "all.q")
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        1, "", 'Modification of object "foo" not supported\n')

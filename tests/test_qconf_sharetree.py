"""qconf -Astree / -Mstree / -mstree / -astnode check the names of a share tree as Grid
Engine's qmaster does: a tree it refuses is refused whole, with its message and exit
code 1, and the stored tree stays as it was."""

import pytest

from test_qconf_change import write

USERS = ("stalice", "stbob")
PROJECTS = ("stprjA", "stprjB")


def node_text(nodes):
    """share_tree(5) text of ``[(name, shares, [child ids])]`` numbered from 0."""
    lines = []
    for number, (name, shares, children) in enumerate(nodes):
        lines += [f"id={number}", f"name={name}", "type=0", f"shares={shares}",
                  f"childnodes={','.join(map(str, children)) or 'NONE'}"]
    return "\n".join(lines) + "\n"


GOOD = node_text([("Root", 1, [1, 2, 3, 6]), ("stalice", 30, []), ("default", 10, []),
                  ("stprjA", 40, [4, 5]), ("stalice", 10, []), ("default", 5, []),
                  ("stprjB", 20, [7]), ("stbob", 1, [])])

# the tree, and what qconf says refusing it
REFUSED = [
    (node_text([("Root", 1, [1]), ("nosuchuser", 10, [])]),
     'denied: share tree contains reference to unknown user/project "nosuchuser"'),
    (node_text([("Root", 1, [1]), ("stalice", 10, [2]), ("stbob", 10, [])]),
     'found user "stalice" in share tree as a non-leaf node'),
    (node_text([("Root", 1, [1, 2]), ("stalice", 10, []), ("grp", 10, [3]), ("stalice", 10, [])]),
     'found user "stalice" twice in share tree'),
    (node_text([("Root", 1, [1]), ("stprjA", 10, [2]), ("stprjB", 10, [])]),
     'found project "stprjB" in project "stprjA" sub-tree of share tree'),
    (node_text([("Root", 1, [1]), ("stprjA", 10, [2]), ("ghost", 10, [])]),
     'denied: share tree contains reference to unknown user "ghost"'),
    (node_text([("Root", 1, [1]), ("stprjA", 10, [2, 3]), ("stbob", 10, []), ("grp", 1, [4]),
                ("stbob", 10, [])]),
     'found user "stbob" twice in project "stprjA" sub-tree of share tree'),
    (node_text([("Root", 1, [1, 3]), ("stprjA", 10, [2]), ("stbob", 10, []), ("grp", 1, [4]),
                ("stprjA", 10, [])]),
     'found project "stprjA" twice in share tree'),
    (node_text([("Root", 1, [1, 2]), ("stbob", 10, []), ("stbob", 20, [])]),
     'denied: found node "stbob" twice under node "Root"'),
]


def qconf(cell, *args, **kw):
    return cell.run("qconf", *args, **kw)


@pytest.fixture
def named(cell, workdir):
    """A cell with the users and projects the trees name, and the GOOD tree stored."""
    for user in USERS:
        path = write(workdir, user, f"name {user}\noticket 0\nfshare 0\ndelete_time 0\ndefault_project NONE\n")
        assert qconf(cell, "-Auser", path).returncode == 0
    for project in PROJECTS:
        path = write(workdir, project, f"name {project}\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n")
        assert qconf(cell, "-Aprj", path).returncode == 0
    proc = qconf(cell, "-Astree", write(workdir, "good", GOOD))
    assert (proc.returncode, proc.stderr) == (0, "changed sharetree\n")
    return cell


def test_a_tree_grid_engine_accepts_is_stored(named):
    """Users once outside and once in each project subtree, "default" leaves; the
    project nodes are shown with type 1."""
    shown = qconf(named, "-sstree").stdout
    assert shown == GOOD.replace("name=stprjA\ntype=0", "name=stprjA\ntype=1") \
                        .replace("name=stprjB\ntype=0", "name=stprjB\ntype=1")
    assert qconf(named, "-sst").stdout == ("Root=1\n   stalice=30\n   default=10\n   stprjA=40\n"
                                           "      stalice=10\n      default=5\n   stprjB=20\n      stbob=1\n")


@pytest.mark.parametrize("option", ["-Mstree", "-Astree", "-mstree"])
def test_trees_grid_engine_refuses_are_refused_whole(named, workdir, option):
    before = qconf(named, "-sstree").stdout
    for number, (text, message) in enumerate(REFUSED):
        if option == "-mstree":
            path = write(workdir, f"bad{number}", text)
            proc = qconf(named, option, env={"EDITOR": f"cp {path}"})
        else:
            proc = qconf(named, option, write(workdir, f"bad{number}", text))
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", message + "\n"), text
        assert qconf(named, "-sstree").stdout == before


def test_stnode_changes_are_checked_too(named):
    before = qconf(named, "-sstree").stdout
    proc = qconf(named, "-astnode", "/stprjA/ghost=5")
    assert (proc.returncode, proc.stderr) == (1, 'setting \n/stprjA/ghost=5\n'
                                                 'denied: share tree contains reference to unknown user "ghost"\n')
    proc = qconf(named, "-astnode", "/stprjB/stprjA=5")
    assert (proc.returncode, proc.stderr) == (1, 'setting \n/stprjB/stprjA=5\n'
                                                 'found project "stprjA" in project "stprjB" sub-tree of share tree\n')
    proc = qconf(named, "-astnode", "/dept=1,/dept/stalice=5")
    assert (proc.returncode, proc.stderr) == (1, 'setting \n/dept=1\nsetting \n/dept/stalice=5\n'
                                                 'found user "stalice" twice in share tree\n')
    assert qconf(named, "-sstree").stdout == before
    assert qconf(named, "-astnode", "/stprjB/stalice=5").returncode == 0


def test_astnode_without_a_tree_starts_one_at_root(cell, workdir):
    path = write(workdir, "user", "name stalice\noticket 0\nfshare 0\ndelete_time 0\ndefault_project NONE\n")
    assert qconf(cell, "-Auser", path).returncode == 0
    proc = qconf(cell, "-astnode", "/stalice=10")
    assert (proc.returncode, proc.stderr) == (0, "setting \n/stalice=10\nmodified sharetree\n")
    assert qconf(cell, "-sst").stdout == "Root=1\n   stalice=10\n"
    assert qconf(cell, "-dstree").returncode == 0
    proc = qconf(cell, "-mstnode", "/stalice=10")
    assert (proc.returncode, proc.stderr) == (1, "No sharetree\n")
    # a tree of one node "Root" has a leaf naming no user or project (the editor only
    # touches the template, which counts as a change)
    proc = qconf(cell, "-astree", env={"EDITOR": "touch"})
    assert (proc.returncode, proc.stderr) == (1, 'denied: share tree contains reference to unknown '
                                                 'user/project "Root"\n')
    assert qconf(cell, "-sstree").returncode == 1

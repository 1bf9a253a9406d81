"""Share tree, complex, host groups, cluster configuration and the shipped cell."""

import os

import pytest

from gridtools.errors import ConfigError
from gridtools.formats.sge import objects, sharetree
from gridtools.formats.sge import complex as complex_
from gridtools.formats.sge.conf import parse_params
from gridtools.formats.sge.defaults import default_cell_objects, shipped_files
from gridtools.formats.sge.hostgroup import render_resolved, render_tree, resolve_hostgroups

from test_sge_formats import needs_reference, reference_text

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NESTED = """\
id=0
name=Root
type=0
shares=1
childnodes=1,4
id=1
name=projA
type=1
shares=60
childnodes=2,3
id=2
name=alice
type=0
shares=10
childnodes=NONE
id=3
name=bob
type=0
shares=30
childnodes=NONE
id=4
name=default
type=0
shares=40
childnodes=NONE
"""


# --- share tree -----------------------------------------------------------------------

def test_shipped_sge_request_names_the_home_qsub_reads():
    """qsub reads .sge_request from the password database's home, not from $HOME (see
    sge_request(5)); the comment of the shipped file says so."""
    text = shipped_files()["sge_request"]
    assert "$HOME/.sge_request" not in text
    assert "then .sge_request in the user's home directory (the one the password\n" \
           "# database gives, whatever $HOME says)" in text


@needs_reference
def test_sharetree_views_match_qconf():
    root = objects.parse("sharetree", reference_text("qconf-sstree.txt"))
    assert [c["name"] for c in root["childnodes"]] == ["projA", "default"]
    assert root["childnodes"][0]["type"] == sharetree.PROJECT_NODE
    assert sharetree.render_tree(root) == reference_text("qconf-sst.txt")
    assert sharetree.render_nodes(root, "/projA") == reference_text("qconf-sstnode-projA.txt")


def test_nested_tree_paths_and_renumbering():
    root = objects.parse("sharetree", NESTED)
    assert objects.render("sharetree", root) == NESTED
    node, ancestors = sharetree.find_node(root, "/projA/bob")
    assert node["shares"] == 30 and [a["name"] for a in ancestors] == ["Root", "projA"]
    assert sharetree.find_node(root, "bob")[0] is node            # anywhere in the tree
    assert sharetree.find_node(root, "/projA.bob")[0] is node
    assert sharetree.find_node(root, "/bob") is None              # not a child of the root
    assert sharetree.render_nodes(root, "/", recursive=True) == (
        "/=1\n/projA=60\n/projA/alice=10\n/projA/bob=30\n/default=40\n")
    assert sharetree.render_tree(root) == "Root=1\n   projA=60\n      alice=10\n      bob=30\n   default=40\n"
    shuffled = NESTED.replace("childnodes=1,4", "childnodes=4,1")
    again = objects.parse("sharetree", shuffled)
    assert [c["name"] for c in again["childnodes"]] == ["default", "projA"]
    assert objects.render("sharetree", again).startswith("id=0\nname=Root\ntype=0\nshares=1\nchildnodes=1,2\n")
    with pytest.raises(ConfigError, match="Unable to locate"):
        sharetree.render_nodes(root, "/nobody")


@pytest.mark.parametrize("text,message", [
    (NESTED.replace("childnodes=1,4", "childnodes=1,9"), "found reference to node 9 but no specification"),
    (NESTED.replace("childnodes=2,3", "childnodes=2,3,1"), "appears twice"),
    (NESTED.replace("shares=30", "shares=lots"), 'invalid value "lots" for attribute "shares"'),
    (NESTED.replace("name=bob\n", ""), 'missing attribute "name" of node 3'),
    (NESTED.replace("childnodes=2,3", "childnodes=2"), "node 3 is not reachable"),
    ("name=x\n", 'a node must start with "id="'),
])
def test_broken_share_trees_are_refused(text, message):
    with pytest.raises(ConfigError, match=message):
        objects.parse("sharetree", text)


KNOWN = {"user": {"alice", "bob"}, "project": {"projA", "projB"}}


def test_share_tree_validation():
    root = objects.parse("sharetree", NESTED)
    objects.validate("sharetree", root, KNOWN)
    with pytest.raises(ConfigError, match='^denied: share tree contains reference to unknown project "projA"$'):
        objects.validate("sharetree", root, {"user": {"alice", "bob"}, "project": set()})
    root["childnodes"][0]["childnodes"][1]["name"] = "alice"
    with pytest.raises(ConfigError, match='^denied: found node "alice" twice under node "projA"$'):
        objects.validate("sharetree", root)


def tree_of(spec):
    """A share tree from nested ``(name, [children])`` pairs under a root "Root"."""
    def node(name, children=()):
        return {"id": 0, "name": name, "type": 0, "shares": 10, "childnodes": [node(*c) for c in children]}
    return node("Root", spec)


@pytest.mark.parametrize("spec,message", [
    ([("nosuch",)], 'denied: share tree contains reference to unknown user/project "nosuch"'),
    ([("alice", [("bob",)])], 'found user "alice" in share tree as a non-leaf node'),
    ([("alice",), ("grp", [("alice",)])], 'found user "alice" twice in share tree'),
    ([("projA",), ("projA",)], 'denied: found node "projA" twice under node "Root"'),
    ([("projA",), ("grp", [("projA",)])], 'found project "projA" twice in share tree'),
    ([("projA", [("alice",)]), ("grp", [("projA", [("bob",)])])], 'found project "projA" twice in share tree'),
    ([("projA", [("projB",)])], 'found project "projB" in project "projA" sub-tree of share tree'),
    ([("projA", [("grp", [("projB", [("bob",)])])])],
     'found project "projB" in project "projA" sub-tree of share tree'),
    ([("projA", [("ghost",)])], 'denied: share tree contains reference to unknown user "ghost"'),
    ([("projA", [("alice",), ("grp", [("alice",)])])],
     'found user "alice" twice in project "projA" sub-tree of share tree'),
    ([], 'denied: share tree contains reference to unknown user/project "Root"'),
])
def test_share_tree_names_grid_engine_refuses(spec, message):
    with pytest.raises(ConfigError) as info:
        objects.validate("sharetree", tree_of(spec), KNOWN)
    assert str(info.value) == message


def test_share_tree_names_grid_engine_accepts():
    """A user once outside and once in each project subtree, "default" leaves, inner
    group nodes of any other name; leaves naming a project become project nodes."""
    root = tree_of([("alice",), ("default",), ("projA", [("grp", [("alice",)]), ("default",)]),
                    ("projB", [("alice",), ("bob",)]), ("dept", [("bob",)])])
    objects.validate("sharetree", root, KNOWN)
    leaf = tree_of([("projB",)])
    objects.validate("sharetree", leaf, KNOWN)
    assert leaf["childnodes"][0]["type"] == sharetree.PROJECT_NODE
    assert [n["type"] for n in root["childnodes"]] == [0, 0, 1, 1, 0]


# --- complex -------------------------------------------------------------------------

def _complex_with(name, **row):
    table = complex_.template()
    table[name] = {"name": name, "shortcut": name, "type": "INT", "relop": "<=", "requestable": "YES",
                   "consumable": "YES", "default": "0", "urgency": 0, **row}
    return table


def test_custom_consumables_render_in_the_table():
    table = _complex_with("licenses", shortcut="lic", default="1", urgency=50)
    objects.validate("complex", table)
    text = objects.render("complex", table)
    assert "licenses            lic        INT       <=    YES         YES        1        50\n" in text
    assert objects.parse("complex", text) == table


def test_columns_grow_with_long_names():
    table = _complex_with("a_very_long_attribute_name", shortcut="avl")
    text = objects.render("complex", table)
    header, dashes = text.splitlines()[:2]
    assert header.startswith("#name" + " " * 25 + "shortcut")
    assert len(dashes) == 1 + 29 + 11 + 10 + 6 + 12 + 11 + 9 + 8
    assert objects.render("complex", objects.parse("complex", text)) == text


@pytest.mark.parametrize("row,message", [
    ({"type": "STRING", "relop": "==", "default": "NONE"}, 'Complex "licenses" of type "STRING" cannot be a '
                                                           "consumable"),
    ({"type": "STRING", "relop": "<=", "consumable": "NO", "default": "NONE"},
     'Complex "licenses" has an invalid relational operator'),
    ({"relop": "EXCL"}, 'Complex "licenses" must be BOOL to use EXCL as relational operator'),
    ({"type": "BOOL", "relop": "EXCL", "consumable": "NO"}, 'Exclusive complex "licenses" must be a consumable'),
    ({"type": "BOOL", "relop": "=="}, 'Exclusive complex "licenses" must have EXCL as relational operator'),
    ({"type": "DOUBLE", "relop": ">="}, 'Consumable "licenses" can have only <= as an relational operator'),
    ({"consumable": "NO", "default": "5"}, r'Complex "licenses" cannot have a \(non-zero\) default value$'),
    ({"type": "STRING", "relop": "==", "consumable": "NO", "default": "x"},
     r'Complex "licenses" cannot have a \(non-zero\) default value$'),
    ({"requestable": "NO"}, 'Consumable "licenses" needs a default value because it is not requestable.'),
    ({"requestable": "FORCED", "default": "3"},
     r'Consumable "licenses" cannot have a \(non-zero\) default value because it is forced.'),
    ({"type": "MEMORY", "default": "lots"}, "not a valid MEMORY value"),
    ({"shortcut": "s"}, 'shortcut "s" of attribute "licenses" is already used by "slots"'),
    ({"shortcut": "h_vmem"}, 'shortcut "h_vmem"'),
    ({"requestable": "SOMETIMES"}, 'invalid value "SOMETIMES" for column "requestable"'),
])
def test_complex_rules(row, message):
    with pytest.raises(ConfigError, match=message):
        objects.validate("complex", _complex_with("licenses", **row))


def test_tmpdir_cannot_be_requestable():
    table = complex_.template()
    table["tmpdir"] = dict(table["tmpdir"], requestable="YES")
    with pytest.raises(ConfigError, match='^Complex attribute "tmpdir" is not requestable$'):
        objects.validate("complex", table)


def test_exclusive_bool_consumable_is_allowed():
    objects.validate("complex", _complex_with("exclusive", shortcut="excl", type="BOOL", relop="EXCL",
                                              default="FALSE"))


def test_built_in_attributes_stay():
    table = complex_.template()
    del table["slots"]
    with pytest.raises(ConfigError, match='built-in attribute "slots" cannot be removed'):
        objects.validate("complex", table)
    table = complex_.template()
    table["h_vmem"]["type"] = "INT"
    with pytest.raises(ConfigError, match='type of built-in attribute "h_vmem"'):
        objects.validate("complex", table)


def test_complex_table_errors_and_spellings():
    with pytest.raises(ConfigError, match="line 2: expected 8 columns"):
        objects.parse("complex", "#name ...\nlicenses lic INT <= YES YES 1\n")
    with pytest.raises(ConfigError, match='line 2: invalid value "FLOAT" for column "type"'):
        objects.parse("complex", "# header\nlicenses lic FLOAT <= YES YES 1 0\n")
    with pytest.raises(ConfigError, match='line 3: attribute "lic" is defined twice'):
        objects.parse("complex", "\nlic l INT <= y y 1 0\nlic m INT <= n n 1 0\n")
    row = objects.parse("complex", "licenses lic int <= y j 1 0.5\n")["licenses"]
    assert (row["type"], row["requestable"], row["consumable"], row["urgency"]) == ("INT", "YES", "JOB", 0.5)
    table = complex_.template()
    assert complex_.lookup(table, "h_vmem") is table["h_vmem"] and complex_.lookup(table, "s") is table["slots"]
    assert complex_.lookup(table, "nothing") is None


# --- host groups --------------------------------------------------------------------

GROUPS = {"@all": {"group_name": "@all", "hostlist": ["@linux", "sun1", "@gpu"]},
          "@linux": {"group_name": "@linux", "hostlist": ["lx1", "lx2", "@gpu"]},
          "@gpu": {"group_name": "@gpu", "hostlist": ["gpu1"]}}


def test_nested_groups_resolve_in_order_without_duplicates():
    resolved = resolve_hostgroups(GROUPS)
    assert resolved["@all"] == ("lx1", "lx2", "gpu1", "sun1")
    assert resolved["@gpu"] == ("gpu1",)
    assert render_resolved("@all", GROUPS) == "lx1 lx2 gpu1 sun1\n"
    assert render_tree("@all", GROUPS) == ("@all\n   @linux\n      lx1\n      lx2\n      @gpu\n         gpu1\n"
                                           "   sun1\n   @gpu\n      gpu1\n")


def test_group_cycles_and_missing_groups_are_refused():
    cyclic = dict(GROUPS, **{"@gpu": {"group_name": "@gpu", "hostlist": ["@all"]}})
    with pytest.raises(ConfigError, match="contains itself through @all -> @linux -> @gpu -> @all"):
        resolve_hostgroups(cyclic)
    with pytest.raises(ConfigError, match='host group "@none" does not exist'):
        resolve_hostgroups({"@x": ["@none"]})


# --- cluster configuration -------------------------------------------------------------

def test_host_local_configuration():
    text = "#node1:\nmailer /usr/local/bin/mail\nexecd_params ENABLE_ADDGRP_KILL=true,KEEP_ACTIVE=true\nfoo_param 12\n"
    conf = objects.parse("conf", text)
    assert list(conf) == ["conf_name", "mailer", "execd_params", "foo_param"]
    assert conf["conf_name"] == "node1" and conf["foo_param"] == "12"
    rendered = objects.render("conf", conf)
    assert rendered == ("#node1:\nmailer                       /usr/local/bin/mail\n"
                        "execd_params                 ENABLE_ADDGRP_KILL=true,KEEP_ACTIVE=true\n"
                        "foo_param                    12\n\n")
    assert objects.parse("conf", rendered) == conf
    objects.validate("conf", conf)
    assert objects.template("conf", "node2") == {"conf_name": "node2"}
    conf["conf_name"] = "template"
    with pytest.raises(ConfigError, match="reserved"):
        objects.validate("conf", conf)


def test_configuration_without_header_and_with_spool_version():
    conf = objects.parse("conf", "conf_version 3\nmax_jobs 10\n")
    assert conf == {"conf_name": None, "max_jobs": 10}
    assert objects.render("conf", conf) == "max_jobs                     10\n\n"


def test_parse_params():
    assert parse_params("accounting=true reporting=false flush_time=00:00:15") == {
        "accounting": "true", "reporting": "false", "flush_time": "00:00:15"}
    assert parse_params("MONITOR=1,PROFILE") == {"MONITOR": "1", "PROFILE": "true"}
    assert parse_params(None) == {} and parse_params("none") == {}


def test_gid_range_is_checked():
    conf = objects.template("conf", "global")
    conf["gid_range"] = "20000-10000"
    with pytest.raises(ConfigError, match='attribute "gid_range"'):
        objects.validate("conf", conf)


# --- the shipped cell --------------------------------------------------------------------

def test_repository_etc_matches_the_shipped_defaults():
    for relative, text in shipped_files().items():
        with open(os.path.join(REPO, "etc", relative)) as f:
            assert f.read() == text, relative


@needs_reference
def test_shipped_scheduler_is_a_pristine_grid_engines():
    assert shipped_files()["sched_conf"] == reference_text("qconf-ssconf.pristine.txt")


@needs_reference
def test_shipped_complex_is_grid_engines_with_the_pipeline_attributes():
    from gridtools.formats.sge.defaults import PIPELINE_COMPLEXES
    extra = {line.split()[0] for line in PIPELINE_COMPLEXES}
    shipped = shipped_files()["complex"].splitlines(keepends=True)
    assert "".join(l for l in shipped if l.split()[:1] not in [[n] for n in extra]) == \
        reference_text("qconf-sc.txt")
    assert [l.split()[0] for l in shipped if l.split()[:1] in [[n] for n in extra]] == ["gpu", "tmem", "tscratch"]


@needs_reference
@pytest.mark.parametrize("relative,capture", [
    ("exechosts/global", "qconf-se-global.pristine.txt"), ("pe/make", "qconf-sp-make.txt"),
    ("pe/smp", "qconf-sp-smp.txt"), ("pe/mpi", "qconf-sp-mpi.txt"),
    ("usersets/arusers", "qconf-su-arusers.txt"), ("usersets/deadlineusers", "qconf-su-deadlineusers.txt"),
    ("usersets/defaultdepartment", "qconf-su-defaultdepartment.txt")])
def test_shipped_files_equal_a_pristine_grid_engine(relative, capture):
    assert shipped_files()[relative] == reference_text(capture)


@needs_reference
def test_shipped_global_configuration_points_into_the_cell():
    shipped = shipped_files()["conf/global"]
    pristine = reference_text("qconf-sconf.pristine.txt")
    assert shipped == pristine.replace("/var/spool/gridengine/execd", "$GRIDTOOLS_ROOT/spool/execd")
    queue = objects.parse("queue", shipped_files()["queues/all.q"])
    assert queue["hostlist"] == ["@allhosts"] and queue["pe_list"].default == ["make", "smp", "mpi"]


def test_every_shipped_object_is_valid():
    files = shipped_files()
    kinds = {"conf/global": "conf", "sched_conf": "sched", "complex": "complex", "queues/all.q": "queue",
             "hostgroups/@allhosts": "hostgroup", "exechosts/global": "exechost"}
    known = {"pe": {"make", "smp", "mpi"}, "hostgroup": {"@allhosts"}, "userset": set()}
    for relative, kind in kinds.items():
        objects.validate(kind, objects.parse(kind, files[relative]), known)
    assert all(line.startswith("#") or not line.strip()
               for name in ("sge_request", "sge_aliases") for line in files[name].splitlines())
    assert "#/tmp_mnt/   *           *           /" in files["sge_aliases"]


def test_default_cell_objects_for_one_host():
    files = default_cell_objects(["node1"], 4, "alice")
    assert sorted(files) == ["adminhosts", "exechosts/node1", "hostgroups/@allhosts", "managers",
                             "queues/all.q", "submithosts"]
    assert files["hostgroups/@allhosts"] == "group_name @allhosts\nhostlist node1\n"
    assert "slots                 4\n" in files["queues/all.q"]
    assert files["managers"] == "root\nalice\n" and files["submithosts"] == "node1\n"
    host = objects.template("exechost", "node1")
    host["complex_values"] = {"gpu": "0"}                 # no GPUs: the gpu consumable at 0
    assert files["exechosts/node1"] == objects.render("exechost", host)
    with_gpus = default_cell_objects(["node1"], 4, "alice", gpus=2)["exechosts/node1"]
    assert "complex_values        gpu=2\n" in with_gpus


def test_default_cell_objects_for_several_hosts():
    files = default_cell_objects(["host1", "host2", "host1"], {"host1": 4, "host2": 2}, "root")
    assert "slots                 1,[host1=4],[host2=2]\n" in files["queues/all.q"]
    assert files["hostgroups/@allhosts"] == "group_name @allhosts\nhostlist host1 host2\n"
    assert files["managers"] == "root\n" and files["adminhosts"] == "host1\nhost2\n"
    queue = objects.parse("queue", files["queues/all.q"])
    assert queue["slots"].for_host("host2") == 2
    assert "slots                 1,[a=3],[b=3]\n" in default_cell_objects(["a", "b"], 3, "u")["queues/all.q"]


def test_default_cell_objects_refuse_bad_hosts():
    with pytest.raises(ConfigError, match="reserved"):
        default_cell_objects(["global"], 1, "root")
    with pytest.raises(ConfigError, match="at least one execution host"):
        default_cell_objects([], 1, "root")
    with pytest.raises(ConfigError, match="invalid slot count"):
        default_cell_objects(["a"], -2, "root")


def test_wide_share_tree_breaks_the_child_list():
    root = sharetree.template("Root")
    root["childnodes"] = [{"id": 0, "name": f"user{i:03d}", "type": 0, "shares": 1, "childnodes": []}
                          for i in range(40)]
    text = objects.render("sharetree", root)
    child_line = text.split("childnodes=", 1)[1].split("\nid=", 1)[0]
    assert "\\\n           " in child_line and all(len(line) <= 80 for line in text.splitlines())
    again = objects.parse("sharetree", text)
    assert [c["name"] for c in again["childnodes"]] == [c["name"] for c in root["childnodes"]]
    assert objects.render("sharetree", again) == text

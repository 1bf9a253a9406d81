"""Job transforms and submit requirements as functions: the rules a configuration
gives, and what they make of a job's ad."""

import pytest

from gridtools.classad import ClassAd
from gridtools.classad.values import UNDEFINED
from gridtools.formats.condor import submitreqs, transforms

TAG = """
# every job of the site
REQUIREMENTS JobUniverse == 5
site = north
DEFAULT RequestMemory 1024
SET Site "$(site)"
EVALSET Who strcat(Owner, "@", "$(site)")
EVALMACRO twice RequestMemory * 2
SET Doubled $(twice)
SET Named $(MY.Owner)
SET Fallback $(unset:7)
COPY Owner OwnerCopy
RENAME Old New
DELETE Gone
TRANSFORM 2
"""


def test_a_transform_changes_the_ads_its_requirements_match_statement_by_statement():
    found, problems = transforms.load("Tag, Local", {"JOB_TRANSFORM_Tag": TAG,
                                                     "JOB_TRANSFORM_Local": "UNIVERSE local\nSET Local true\n"}.get)
    assert problems == [] and [t.name for t in found] == ["Tag", "Local"]
    ad = ClassAd({"JobUniverse": 5, "Owner": "bob", "Old": 3, "Gone": 1})
    assert transforms.apply(found, ad) == ["Tag"]
    assert str(ad) == ('JobUniverse = 5\nOwner = "bob"\nRequestMemory = 1024\nSite = "north"\nWho = "bob@north"\n'
                       'Doubled = 2048\nNamed = "bob"\nFallback = 7\nOwnerCopy = "bob"\nNew = 3\n')
    local = ClassAd({"JobUniverse": 12, "Owner": "ann", "RequestMemory": 5})
    assert transforms.apply(found, local) == ["Local"] and local.eval("Local") is True
    assert local.eval("RequestMemory") == 5 and "Site" not in local


def test_transforms_that_do_not_read_are_left_out_in_htcondor_s_words():
    raw = {"JOB_TRANSFORM_Old": "[ set_X = 1 ]", "JOB_TRANSFORM_Bad": "SET\n", "JOB_TRANSFORM_Odd": "what is this\n"}
    found, problems = transforms.load("Old Bad Odd Missing NAMES", raw.get)
    assert found == []
    assert problems == [
        "JOB_TRANSFORM_Old macro appears to be in ClassAd format, which is no longer supported. Ignoring.",
        "JOB_TRANSFORM_Bad macro stream malformed, ignoring. line 1: 'SET' does not read",
        "JOB_TRANSFORM_Odd macro stream malformed, ignoring. line 1: 'what is this' is neither a statement "
        "nor a macro",
        "JOB_TRANSFORM_Missing not defined, ignoring."]
    found, _ = transforms.load("Late", {"JOB_TRANSFORM_Late": "SET X ((\n"}.get)
    with pytest.raises(ValueError):
        transforms.apply(found, ClassAd({"Owner": "bob"}))


RULES = {"SUBMIT_REQUIREMENT_NAMES": "Mem, Bad, Missing, Warn, Typed",
         "SUBMIT_REQUIREMENT_Mem": "RequestMemory <= 1024",
         "SUBMIT_REQUIREMENT_Mem_REASON": 'strcat("too much memory: ", JOB.RequestMemory, " on ", SCHEDD.Name)',
         "SUBMIT_REQUIREMENT_Bad": "((",
         "SUBMIT_REQUIREMENT_Warn": 'MY.Name == "elsewhere"', "SUBMIT_REQUIREMENT_Warn_IS_WARNING": "true",
         "SUBMIT_REQUIREMENT_Typed": "TARGET.Owner"}


def test_submit_requirements_refuse_warn_or_pass_a_job_in_their_order():
    found, problems = submitreqs.rules(RULES.get)
    assert [rule.name for rule in found] == ["Mem", "Warn", "Typed"]
    assert problems == ["Unable to parse submit requirement Bad, ignoring.",
                        "Submit requirement Missing not defined, ignoring."]
    schedd = submitreqs.schedd_ad("here", "24")
    assert submitreqs.check(found, schedd, ClassAd({"RequestMemory": 2048, "Owner": "bob"})) == \
        ("too much memory: 2048 on here", [])
    assert submitreqs.check(found, schedd, ClassAd({"RequestMemory": 512, "Owner": "bob"})) == \
        ("Submit requirement Typed evaluated to non-boolean.\n", ["Submit requirement Warn not met.\n"])
    plain, _ = submitreqs.rules({"SUBMIT_REQUIREMENT_NAMES": "Mem", "SUBMIT_REQUIREMENT_Mem": "RequestMemory <= 1024"}.get)
    assert submitreqs.check(plain, schedd, ClassAd({"RequestMemory": 4096})) == \
        ("Submit requirement Mem not met.\n", [])
    assert submitreqs.check(plain, schedd, ClassAd({"RequestMemory": 64})) == (None, [])


def test_copy_rename_and_delete_take_a_regular_expression_of_names():
    found, problems = transforms.load("R", {"JOB_TRANSFORM_R": "COPY /^Request(.*)/ Orig\\1\nDELETE /^junk/\n"
                                                              "RENAME /^old_(.*)$/ New_\\1\nCOPY /^Keep$/ \\0Too\n"}.get)
    assert problems == []
    ad = ClassAd({"RequestMemory": 5, "RequestCpus": 1, "JunkA": 1, "junkB": 2, "old_x": 3, "Keep": 4})
    transforms.apply(found, ad)
    assert str(ad) == ("RequestMemory = 5\nRequestCpus = 1\nKeep = 4\nOrigMemory = 5\nOrigCpus = 1\nNew_x = 3\n"
                       "KeepToo = 4\n")
    _found, problems = transforms.load("Bad", {"JOB_TRANSFORM_Bad": "DELETE /(/\n"}.get)
    assert problems[0].startswith("JOB_TRANSFORM_Bad macro stream malformed, ignoring. invalid regex '('")


MAP = """# method principal canonical
* alice physics,chem
* "a b" spaced
* /^b(.*)$/i bio\\1
x carol xonly
"""


def test_user_maps_read_htcondor_s_map_lines_and_usermap_answers_from_them(tmp_path):
    """SCHEDD_CLASSAD_USER_MAP_NAMES: each map from CLASSAD_USER_MAPFILE_<name> (or
    _MAPDATA_); userMap() gives the list, or the preferred item when it is in it, else
    the first; UNDEFINED (or the 4th argument) when nothing matches."""
    from gridtools.classad import parse
    from gridtools.formats.condor import usermaps
    path = tmp_path / "groups.map"
    path.write_text(MAP)
    knobs = {"SCHEDD_CLASSAD_USER_MAP_NAMES": "groups inline gone", "CLASSAD_USER_MAPFILE_groups": str(path),
             "CLASSAD_USER_MAPDATA_inline": "* dave ops\n", "CLASSAD_USER_MAPFILE_gone": str(tmp_path / "no")}
    maps, problems = usermaps.load(knobs.get)
    assert sorted(maps) == ["groups", "inline"] and len(problems) == 1 and "'gone'" in problems[0]
    usermaps.install(maps)

    def value(text):
        return parse(text).eval()
    assert value('userMap("groups", "alice")') == "physics,chem"
    assert value('userMap("groups", "alice", "CHEM")') == "chem"
    assert value('userMap("groups", "alice", "bio")') == "physics"
    assert value('userMap("groups", "Bert")') == "bioert"            # (a regex, any case, its group)
    assert value('userMap("groups", "a b")') == "spaced"
    assert value('userMap("groups", "carol")') is UNDEFINED          # (method x only)
    assert value('userMap("groups.x", "carol")') == "xonly"
    assert value('userMap("groups", "zed")') is UNDEFINED
    assert value('userMap("groups", "zed", "a", "fallback")') == "fallback"
    assert value('userMap("inline", "dave")') == "ops" and value('userMap("nomap", "dave")') is UNDEFINED
    usermaps.install({})


def test_user_maps_include_files_and_folders_and_read_prefix_maps(tmp_path):
    """``@include`` reads a file (relative to the including one) or a folder's files in
    the order of their names (backups passed over) in its place, not an included file's
    own includes; CLASSAD_USER_MAP_PREFIX_<name> makes a map of prefixes, the longest
    that a name starts with giving the value (a /.../ is a plain text there)."""
    from gridtools.formats.condor import usermaps
    (tmp_path / "parts").mkdir()
    (tmp_path / "parts" / "10-a.map").write_text("* alice from-a\n@include ../deep.map\n")
    (tmp_path / "parts" / "20-b.map").write_text("* alice from-b\n* bob from-b\n")
    (tmp_path / "parts" / "30-c.map~").write_text("* carol backup\n")
    (tmp_path / "deep.map").write_text("* dave deep\n")
    (tmp_path / "one.map").write_text("* erin one\n")
    (tmp_path / "main.map").write_text("* zed first\n@include one.map\n@include parts\n@include missing.map\n"
                                       "* alice last\n")
    knobs = {"SCHEDD_CLASSAD_USER_MAP_NAMES": "main pre", "CLASSAD_USER_MAPFILE_main": str(tmp_path / "main.map"),
             "CLASSAD_USER_MAPDATA_pre": "* /grp /slash\n* group_ short\n* group_physics long\n* g x\n",
             "CLASSAD_USER_MAP_PREFIX_pre": "True"}
    maps, problems = usermaps.load(knobs.get)
    assert len(problems) == 1 and "missing.map" in problems[0]
    main, pre = maps["main"], maps["pre"]
    assert [main.lookup("*", n) for n in ("zed", "erin", "alice", "bob", "carol", "dave")] == [
        "first", "one", "from-a", "from-b", None, None]
    assert [pre.lookup("*", n) for n in ("group_physics.alice", "group_chem", "gx", "/grp/a", "h")] == [
        "long", "short", "x", "/slash", None]
    for plain in ("false", "0", "not a boolean"):          # (a plain map: whole names only)
        assert usermaps.load(dict(knobs, CLASSAD_USER_MAP_PREFIX_pre=plain).get)[0]["pre"].lookup(
            "*", "group_chem") is None
    assert usermaps.load(dict(knobs, CLASSAD_USER_MAP_PREFIX_pre="1").get)[0]["pre"].lookup(
        "*", "group_chem") == "short"


def test_a_statement_may_put_an_equals_sign_or_a_comma_after_its_attribute():
    found, problems = transforms.load("T", {"JOB_TRANSFORM_T": "SET A = 1 + 1\nCOPY Owner = Who\n"
                                                              "COPY Owner, Also\nEVALSET B= A * 2\n"}.get)
    assert problems == []
    ad = ClassAd({"Owner": "bob"})
    transforms.apply(found, ad)
    assert [ad.eval(n) for n in ("A", "Who", "Also", "B")] == [2, "bob", "bob", 4]

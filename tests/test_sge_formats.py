"""Grid Engine configuration objects against real qconf output (SGE 8.1.9).

Every reference ``qconf -s…`` capture parses and renders back byte for
byte; every editor template matches; broken texts are refused with a
message naming the attribute; references to missing objects and reserved
host names are refused by ``validate``.
"""

import os

import pytest

from gridtools.errors import ConfigError
from gridtools.formats.sge import objects
from gridtools.formats.sge.attrfile import FieldError

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "reference", "sge")

needs_reference = pytest.mark.skipif(not os.path.isdir(REFERENCE), reason="reference captures not present")


def reference_text(name):
    """The stdout (or editor file) part of a reference capture."""
    with open(os.path.join(REFERENCE, name)) as f:
        text = f.read()
    marker = "# ---- editor file ----\n"
    if marker in text:
        body = text.split(marker, 1)[1]
        # the capture adds one newline after the copied editor file
        return body[:-1] if body.endswith("\n\n") else body
    return text.split("# ---- stdout ----\n", 1)[1].split("# ---- stderr ----", 1)[0]


SHOW_CAPTURES = [
    ("qconf-sq-all.q.txt", "queue"),
    ("qconf-sq.template.txt", "queue"),
    ("qconf-se-global.txt", "exechost"),
    ("qconf-se-global.pristine.txt", "exechost"),
    ("qconf-se-localhost.txt", "exechost"),
    ("qconf-shgrp-@allhosts.txt", "hostgroup"),
    ("qconf-sconf-global.txt", "conf"),
    ("qconf-sconf.pristine.txt", "conf"),
    ("qconf-sconf.txt", "conf"),
    ("qconf-ssconf.pristine.txt", "sched"),
    ("qconf-ssconf.txt", "sched"),
    ("qconf-sc.txt", "complex"),
    ("qconf-sp-make.txt", "pe"),
    ("qconf-sp-smp.txt", "pe"),
    ("qconf-sp-mpi.txt", "pe"),
    ("qconf-sckpt-ckpt_test.txt", "ckpt"),
    ("qconf-scal-night.txt", "calendar"),
    ("qconf-su-arusers.txt", "userset"),
    ("qconf-su-arusers.after-au-alice.txt", "userset"),
    ("qconf-su-deadlineusers.txt", "userset"),
    ("qconf-su-defaultdepartment.txt", "userset"),
    ("qconf-suser-alice.txt", "user"),
    ("qconf-suser-carol.txt", "user"),
    ("qconf-sprj-projA.txt", "project"),
    ("qconf-srqs.txt", "rqs"),
    ("qconf-srqs-max_slots_per_user.txt", "rqs"),
    ("qconf-sstree.txt", "sharetree"),
    ("qconf-sm.txt", "managers"),
    ("qconf-sm.pristine.txt", "managers"),
    ("qconf-so.txt", "operators"),
    ("qconf-sh.txt", "adminhosts"),
    ("qconf-ss.txt", "submithosts"),
]

EDITOR_TEMPLATES = [
    ("qconf-aq.editor-template.txt", "queue", "all.q"),
    ("qconf-ae.editor-template.txt", "exechost", None),
    ("qconf-ap.editor-template.txt", "pe", "mpi"),
    ("qconf-ackpt.editor-template.txt", "ckpt", "ckpt_test"),
    ("qconf-acal.editor-template.txt", "calendar", "night"),
    ("qconf-aprj.editor-template.txt", "project", None),
    ("qconf-auser.editor-template.txt", "user", None),
    ("qconf-arqs.editor-template.txt", "rqs", "max_slots_per_user"),
]


@needs_reference
@pytest.mark.parametrize("capture,kind", SHOW_CAPTURES)
def test_reference_output_round_trips_byte_for_byte(capture, kind):
    text = reference_text(capture)
    obj = objects.parse(kind, text)
    assert objects.render(kind, obj) == text
    objects.validate(kind, obj)


@needs_reference
@pytest.mark.parametrize("capture,kind,name", EDITOR_TEMPLATES)
def test_template_matches_the_editor_file(capture, kind, name):
    assert objects.render(kind, objects.template(kind, name)) == reference_text(capture)


@pytest.mark.parametrize("kind", objects.KINDS)
def test_every_kind_round_trips_from_its_template(kind):
    text = objects.render(kind, objects.template(kind, _name_for(kind)))
    again = objects.render(kind, objects.parse(kind, text))
    if kind == "ckpt":
        # the editor template's "when sx" is read, as Grid Engine stores it, as "xs"
        assert "when               sx\n" in text
        text = text.replace("when               sx\n", "when               xs\n")
    assert again == text


def _name_for(kind):
    return {"hostgroup": "@grp", "conf": "global", "exechost": "node1"}.get(kind, "thing")


@needs_reference
def test_parsed_values_are_typed():
    queue = objects.parse("queue", reference_text("qconf-sq-all.q.txt"))
    assert list(queue)[:3] == ["qname", "hostlist", "seq_no"]
    assert queue["hostlist"] == ["@allhosts"]
    assert queue["slots"].default == 2 and queue["slots"].overrides == {}
    assert queue["pe_list"].default == ["make", "smp", "mpi"]
    assert queue["load_thresholds"].default == {"np_load_avg": "1.75"}
    assert queue["notify"].default == "00:00:60" and queue["notify"].default.seconds == 60
    assert queue["h_vmem"].default.bytes == float("inf")
    assert queue["rerun"].default is False and queue["prolog"].default is None
    host = objects.parse("exechost", reference_text("qconf-se-localhost.txt"))
    assert host["processors"] == 2
    assert host["load_values"]["arch"] == "lx-amd64" and host["load_values"]["num_proc"] == "2"
    sched = objects.parse("sched", reference_text("qconf-ssconf.txt"))
    assert sched["weight_waiting_time"] == pytest.approx(0.278)
    assert sched["usage_weight_list"] == {"cpu": 1.0, "mem": 0.0, "io": 0.0}
    assert sched["schedule_interval"].seconds == 15 and sched["params"] is None
    conf = objects.parse("conf", reference_text("qconf-sconf-global.txt"))
    assert conf["conf_name"] == "global" and conf["min_uid"] == 1000
    assert conf["reporting_params"].endswith("joblog=false sharelog=00:00:00")
    assert conf["login_shells"] == ["bash", "sh", "ksh", "csh", "tcsh"]
    assert conf["enforce_project"] is False


@needs_reference
def test_name_of_every_named_kind():
    assert objects.name_of("queue", objects.parse("queue", reference_text("qconf-sq-all.q.txt"))) == "all.q"
    assert objects.name_of("exechost", objects.parse("exechost", reference_text("qconf-se-localhost.txt"))) == "localhost"
    assert objects.name_of("hostgroup", objects.parse("hostgroup", reference_text("qconf-shgrp-@allhosts.txt"))) == "@allhosts"
    assert objects.name_of("pe", objects.parse("pe", reference_text("qconf-sp-smp.txt"))) == "smp"
    assert objects.name_of("rqs", objects.parse("rqs", reference_text("qconf-srqs.txt"))) == "max_slots_per_user"
    assert objects.name_of("conf", objects.parse("conf", reference_text("qconf-sconf.txt"))) == "global"
    assert objects.name_of("sched", objects.template("sched")) is None


def test_unknown_kind_is_refused():
    with pytest.raises(ConfigError, match="unknown configuration object kind"):
        objects.parse("queues", "")


# --- broken texts -------------------------------------------------------------------

def _without_line(text, attribute):
    return "".join(line for line in text.splitlines(True) if not line.startswith(attribute + " "))


def _replace_value(text, attribute, value):
    lines = []
    for line in text.splitlines(True):
        if line.split()[:1] == [attribute]:
            line = line[:line.index(line.split()[1], len(attribute))] + value + "\n"
        lines.append(line)
    return "".join(lines)


MISSING = [("queue", "qtype"), ("exechost", "complex_values"), ("hostgroup", "hostlist"),
           ("sched", "maxujobs"), ("pe", "allocation_rule"), ("ckpt", "when"),
           ("calendar", "week"), ("userset", "entries"), ("user", "fshare"), ("project", "acl")]


@pytest.mark.parametrize("kind,attribute", MISSING)
def test_missing_attribute_is_named(kind, attribute):
    text = _without_line(objects.render(kind, objects.template(kind, _name_for(kind))), attribute)
    with pytest.raises(ConfigError, match=f'missing attribute "{attribute}"') as err:
        objects.parse(kind, text)
    assert err.value.field == attribute


BAD_VALUES = [("queue", "slots", "abc"), ("queue", "rerun", "maybe"), ("queue", "h_rt", "1:xx"),
              ("queue", "h_rt", "1:30"), ("queue", "s_cpu", "09"),
              ("queue", "h_vmem", "12Q"), ("queue", "qtype", "BATCH PARALLELX"),
              ("queue", "priority", "21"), ("queue", "shell_start_mode", "bogus"),
              ("queue", "load_thresholds", "np_load_avg"), ("queue", "slots", "1,[node1=x]"),
              ("queue", "slots", "[node1=2]"), ("exechost", "complex_values", "h_vmem"),
              ("exechost", "load_scaling", "np_load_avg=fast"), ("sched", "weight_user", "heavy"),
              ("sched", "queue_sort_method", "random"), ("pe", "allocation_rule", "$everywhere"),
              ("pe", "urgency_slots", "most"), ("pe", "control_slaves", "perhaps"),
              ("calendar", "week", "mon-mon=off"), ("calendar", "year", "31.2.2026=off"),
              ("userset", "type", "GROUP"), ("user", "delete_time", "soon"), ("conf", "min_uid", "x"),
              ("conf", "load_report_time", "forty")]


@pytest.mark.parametrize("kind,attribute,value", BAD_VALUES)
def test_bad_value_is_refused_with_attribute_and_line(kind, attribute, value):
    text = objects.render(kind, objects.template(kind, _name_for(kind)))
    number = next(n for n, line in enumerate(text.splitlines(), 1) if line.split()[:1] == [attribute])
    with pytest.raises(ConfigError) as err:
        objects.parse(kind, _replace_value(text, attribute, value))
    assert str(err.value).startswith(f'line {number}: invalid value "{value}" for attribute "{attribute}"')
    assert err.value.field == attribute and err.value.line == number


TIMES = [("00:5:00", 300), ("0:0:15", 15), ("1::", 3600), ("::30", 30), ("1:30:", 5400),
         (" 1: 2: 3 ", 3723), ("1.5:0:0", 5400), ("3600", 3600), ("1.5", 1.5), ("2e3", 2000),
         ("0x10", 16), ("010", 8), ("0", 0), ("1k", 1000), ("0x10K", 16384), ("INFINITY", float("inf")),
         ("true", 1), ("FALSE", 0)]


@pytest.mark.parametrize("text,seconds", TIMES)
def test_time_values_read_as_grid_engine_reads_them(text, seconds):
    from gridtools.formats import values
    assert values.parse_time(text) == seconds
    queue = objects.parse("queue", _replace_value(objects.render("queue", objects.template("queue", "q")),
                                                  "h_rt", text.strip()))
    assert queue["h_rt"].default.seconds == seconds


@pytest.mark.parametrize("text", ["1:30", "0:05", "1:2:3:4", ":", "2:", "08", "0x", "0e3", "1e", "1t",
                                  "abc", "a:b:c", "-5", "0:-1:0", "1e999", "inf", ""])
def test_other_time_forms_are_refused(text):
    from gridtools.errors import InputError
    from gridtools.formats import values
    with pytest.raises(InputError, match="invalid time value"):
        values.parse_time(text)


MEMORIES = [("1G", 2 ** 30), ("1.5G", 3 * 2 ** 29), ("2k", 2000), ("0x10", 16), ("0x10M", 2 ** 24),
            ("010", 8), ("010K", 8192), (".5K", 512), ("2e3", 2000), ("1T", 2 ** 40), ("1t", 10 ** 12),
            ("1:0:0", 3600), ("true", 1), (" 3M ", 3 * 2 ** 20), ("INFINITY", float("inf"))]


@pytest.mark.parametrize("text,nbytes", MEMORIES)
def test_memory_values_read_as_grid_engine_reads_them(text, nbytes):
    from gridtools.formats import values
    assert values.parse_memory(text) == nbytes
    queue = objects.parse("queue", _replace_value(objects.render("queue", objects.template("queue", "q")),
                                                  "h_vmem", text.strip()))
    assert queue["h_vmem"].default.bytes == nbytes


@pytest.mark.parametrize("text", ["-1", "1X", "0x", "08", "1GG", "1 G", "abc", "1:30", "1e999", "inf", ""])
def test_other_memory_forms_are_refused(text):
    from gridtools.errors import InputError
    from gridtools.formats import values
    with pytest.raises(InputError, match="invalid memory value"):
        values.parse_memory(text)


def test_unknown_and_repeated_attributes_are_refused():
    text = objects.render("pe", objects.template("pe", "smp"))
    with pytest.raises(ConfigError, match='line 13: unknown attribute "colour"'):
        objects.parse("pe", text + "colour blue\n")
    with pytest.raises(ConfigError, match='line 13: attribute "slots" is given twice'):
        objects.parse("pe", text + "slots 4\n")
    with pytest.raises(ConfigError, match='line 2: missing value for attribute "slots"'):
        objects.parse("pe", _replace_value(text, "slots", ""))


def test_comments_blank_lines_and_continuations_are_read():
    text = ("# a parallel environment\n\npe_name  smp\nslots 4\nuser_lists  arusers, \\\n   deadlineusers\n"
            "xuser_lists NONE\nstart_proc_args /bin/true \\\n  -x\nstop_proc_args none\n"
            "allocation_rule 2\ncontrol_slaves true\njob_is_first_task 0\nurgency_slots 3\n"
            "accounting_summary yes\nqsort_args NONE\n")
    pe = objects.parse("pe", text)
    assert pe["user_lists"] == ["arusers", "deadlineusers"]
    assert pe["start_proc_args"] == "/bin/true -x" and pe["stop_proc_args"] is None
    assert pe["allocation_rule"] == 2 and pe["urgency_slots"] == 3
    assert pe["control_slaves"] is True and pe["job_is_first_task"] is False
    assert "control_slaves     TRUE\n" in objects.render("pe", pe)


def test_render_refuses_values_of_the_wrong_type():
    queue = objects.template("queue", "q")
    queue["slots"] = "many"
    with pytest.raises(ConfigError, match='invalid value "many" for attribute "slots"'):
        objects.render("queue", queue)
    with pytest.raises(ConfigError, match='invalid value "many" for attribute "slots"'):
        objects.validate("queue", queue)
    del queue["slots"]
    with pytest.raises(ConfigError, match='missing attribute "slots"'):
        objects.validate("queue", queue)


# --- references and names ---------------------------------------------------------

KNOWN = {"pe": {"make", "smp", "mpi"}, "ckpt": set(), "calendar": {"night"},
         "userset": {"arusers", "deadlineusers", "defaultdepartment"}, "project": {"projA"},
         "hostgroup": {"@allhosts"}, "exechost": {"node1", "node2"}, "queue": {"all.q", "low.q"},
         "complex": {"slots", "h_vmem", "np_load_avg", "arch"}}


def _queue(**values):
    queue = objects.template("queue", "all.q")
    queue.update(values)
    return queue


def test_valid_queue_passes_reference_checks():
    objects.validate("queue", _queue(hostlist=["@allhosts", "node1"], calendar="night",
                                     user_lists=["arusers"], subordinate_list=["low.q=2"]), KNOWN)


REFERENCE_ERRORS = [                  # (Grid Engine's words where it has them)
    ({"pe_list": ["make", "bigmpi"]}, "pe_list", 'Parallel environment "bigmpi" does not exist'),
    ({"ckpt_list": ["blcr"]}, "ckpt_list", 'Ckpt "blcr" does not exist'),
    ({"calendar": "weekend"}, "calendar", 'Calendar "weekend" does not exist'),
    ({"user_lists": ["staff"]}, "user_lists", 'Userset "staff" does not exist'),
    ({"xprojects": ["projB"]}, "xprojects", 'Project "projB" does not exist'),
    ({"hostlist": ["@gpu"]}, "hostlist",
     'attribute "hostlist" refers to host group "@gpu" which does not exist'),
    ({"hostlist": ["node9"]}, "hostlist",
     'attribute "hostlist" refers to execution host "node9" which does not exist'),
    ({"subordinate_list": ["other.q"]}, "subordinate_list",
     'Subordinated cluster queue "other.q" referenced in "all.q" does not exist'),
    ({"complex_values": {"gpu": "2"}}, "complex_values", 'Complex attribute "gpu" does not exist'),
]


@pytest.mark.parametrize("values,attribute,message", REFERENCE_ERRORS)
def test_queue_naming_missing_objects_is_refused(values, attribute, message):
    with pytest.raises(ConfigError) as err:
        objects.validate("queue", _queue(**values), KNOWN)
    assert str(err.value) == message
    assert err.value.field == attribute


def test_references_in_host_overrides_are_checked():
    text = objects.render("queue", _queue()).replace("make smp mpi", "make,[node1=smp hpc]")
    queue = objects.parse("queue", text)
    with pytest.raises(ConfigError, match='Parallel environment "hpc" does not exist'):
        objects.validate("queue", queue, KNOWN)
    text = objects.render("queue", _queue()).replace("slots                 1", "slots 1,[@gpu=4]")
    with pytest.raises(ConfigError, match='"slots" refers to host group "@gpu"'):
        objects.validate("queue", objects.parse("queue", text), KNOWN)


def test_references_are_not_checked_without_known():
    objects.validate("queue", _queue(pe_list=["nonexistent"], calendar="none_such"))


@pytest.mark.parametrize("reserved", ["global", "template", "all", "default", "unknown", "none", "NONE"])
def test_reserved_host_names_are_refused(reserved):
    with pytest.raises(ConfigError, match=f'host name "{reserved}" is reserved') as err:
        objects.validate("queue", _queue(hostlist=[reserved]))
    assert err.value.field == "hostlist"
    with pytest.raises(ConfigError, match="reserved"):
        objects.validate("hostgroup", {"group_name": "@grp", "hostlist": [reserved]})
    with pytest.raises(ConfigError, match="reserved"):
        objects.validate("submithosts", [reserved])
    if reserved.lower() != "global":
        with pytest.raises(ConfigError, match="reserved") as err:
            objects.validate("exechost", objects.template("exechost", reserved))
        assert err.value.field == "hostname"


def test_global_exec_host_is_allowed():
    objects.validate("exechost", objects.template("exechost", "global"))


def test_exec_host_references():
    host = objects.template("exechost", "node1")
    host["user_lists"] = ["staff"]
    with pytest.raises(ConfigError, match='"user_lists" refers to user list "staff"'):
        objects.validate("exechost", host, KNOWN)
    host["user_lists"] = []
    host["complex_values"] = {"h_vmem": "4G", "licenses": "5"}
    with pytest.raises(ConfigError, match='complex attribute "licenses"'):
        objects.validate("exechost", host, KNOWN)


def test_other_kinds_check_their_references():
    pe = objects.template("pe", "mpi")
    pe["xuser_lists"] = ["staff"]
    with pytest.raises(ConfigError, match='"xuser_lists" refers to user list "staff"'):
        objects.validate("pe", pe, KNOWN)
    user = objects.template("user", "alice")
    user["default_project"] = "projZ"
    with pytest.raises(ConfigError, match='"default_project" refers to project "projZ"'):
        objects.validate("user", user, KNOWN)
    project = objects.template("project", "projA")
    project["acl"] = ["staff"]
    with pytest.raises(ConfigError, match='"acl" refers to user list "staff"'):
        objects.validate("project", project, KNOWN)
    conf = objects.template("conf", "global")
    conf["projects"] = ["projZ"]
    with pytest.raises(ConfigError, match='"projects" refers to project "projZ"'):
        objects.validate("conf", conf, KNOWN)
    group = {"group_name": "@all", "hostlist": ["@gpu", "node1"]}
    with pytest.raises(ConfigError, match='"hostlist" refers to host group "@gpu"'):
        objects.validate("hostgroup", group, KNOWN)


@pytest.mark.parametrize("kind,field,name", [
    ("queue", "qname", "my/queue"), ("pe", "pe_name", "a b"), ("ckpt", "ckpt_name", "x@y"),
    ("calendar", "calendar_name", "NONE"), ("userset", "name", "a,b"), ("project", "name", "p*")])
def test_bad_object_names_are_refused(kind, field, name):
    obj = objects.template(kind, "x")
    obj[field] = name
    with pytest.raises(FieldError) as err:
        objects.validate(kind, obj)
    assert err.value.field == field


def test_hostgroup_names_start_with_at():
    with pytest.raises(ConfigError, match='must start with "@"'):
        objects.validate("hostgroup", {"group_name": "allhosts", "hostlist": []})
    with pytest.raises(ConfigError, match="cannot contain itself"):
        objects.validate("hostgroup", {"group_name": "@a", "hostlist": ["@a"]})


def test_ckpt_and_sched_value_rules():
    ckpt = objects.template("ckpt", "c")
    ckpt["when"] = "sxz"
    with pytest.raises(ConfigError, match='Invalid "when" attribute for ckpt "c"'):
        objects.validate("ckpt", ckpt)
    ckpt["when"] = "n"
    objects.validate("ckpt", ckpt)
    ckpt = objects.template("ckpt", "c")
    ckpt["interface"] = "magic"
    with pytest.raises(ConfigError, match="no valid checkpoint interface magic"):
        objects.validate("ckpt", ckpt)
    sched = objects.template("sched")
    sched["policy_hierarchy"] = "OFSO"
    with pytest.raises(ConfigError, match='attribute "policy_hierarchy"'):
        objects.validate("sched", sched)
    sched = objects.template("sched")
    sched["schedd_job_info"] = "job_list 1,2,3"
    objects.validate("sched", sched)
    sched["schedd_job_info"] = "sometimes"
    with pytest.raises(ConfigError, match='attribute "schedd_job_info"'):
        objects.validate("sched", sched)


def test_lists_refuse_repeats_and_odd_lines():
    assert objects.parse("managers", "root\n\n# comment\nalice\n") == ["root", "alice"]
    with pytest.raises(ConfigError, match="line 2: expected one name per line"):
        objects.parse("operators", "carol\nbob dave\n")
    with pytest.raises(ConfigError, match="listed twice"):
        objects.validate("adminhosts", ["node1", "NODE1"])
    assert objects.render("submithosts", []) == ""


def test_single_attribute_helpers_for_qconf_attr_options():
    assert objects.parse_attribute("queue", "slots", " 1,[node1=4]") == objects.parse(
        "queue", objects.render("queue", objects.template("queue", "q")).replace(
            "slots                 1", "slots 1,[node1=4]"))["slots"]
    assert objects.render_attribute("queue", "pe_list", ["mpi", "smp"]) == "mpi smp"
    assert objects.render_attribute("exechost", "load_scaling", {"np_load_avg": 1.5}) == "np_load_avg=1.500000"
    assert objects.attributes("userset") == ("name", "type", "fshare", "oticket", "entries")
    with pytest.raises(ConfigError, match='invalid value "x" for attribute "nsuspend"'):
        objects.parse_attribute("queue", "nsuspend", "x")
    with pytest.raises(ConfigError, match='unknown attribute "colour"'):
        objects.parse_attribute("pe", "colour", "red")
    with pytest.raises(ConfigError, match="no attribute lines"):
        objects.attributes("complex")


def test_lark_and_re_are_loaded_only_when_a_grammar_is_needed():
    import subprocess
    import sys
    code = ("import sys\n"
            "from gridtools.formats.sge import objects\n"
            "objects.parse('queue', objects.render('queue', objects.template('queue', 'q')))\n"
            "print('lark' in sys.modules, 're' in sys.modules)\n"
            "objects.parse('calendar', 'calendar_name c\\nyear NONE\\nweek mon=6-20\\n')\n"
            "print('lark' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "True"]

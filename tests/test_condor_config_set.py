"""condor_config_val with a daemon target (-master, -schedd ..., -name, -pool,
-address), its edits (-set, -unset, -rset, -runset) and -evaluate, against a real
daemon in a temporary cell: what a user sees (outputs, exit codes, the files kept,
the values before and after condor_reconfig and a restart) and the refusals."""

import os
import re

from conftest import wait_for

NOT_FOUND = "Can't find address for this {}\nPerhaps you need to query another pool.\n"
#: "on master testhost <ip:0>" in the answers of the edits
TARGET = r"on (\w+) testhost <[0-9.]+:0>"


def enable(cell, settable="MY_*, START", runtime=True):
    """Turn on the edits in the cell's condor_config (before its daemon starts: what it
    honours is fixed then); returns the folder of the persistent settings."""
    folder = os.path.join(cell.root, "persist")
    os.mkdir(folder)
    os.chmod(folder, 0o755)
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(f"ENABLE_PERSISTENT_CONFIG = true\nPERSISTENT_CONFIG_DIR = {folder}\n"
                 f"ENABLE_RUNTIME_CONFIG = {str(runtime).lower()}\n"
                 f"ALLOW_CONFIG = root@*\nSETTABLE_ATTRS_CONFIG = {settable}\n")
    return folder


def ccv(cell, *args, **kw):
    return cell.run("condor_config_val", *args, **kw)


def answered(proc, verb, text, daemon="master"):
    """True when ``proc`` printed HTCondor's success line for one edit."""
    line = (f'Successfully {verb} configuration "{re.escape(text)}" {TARGET}\\. '
            r"The change will take effect on the next condor_reconfig\.\n")
    found = re.fullmatch(line, proc.stdout)
    return proc.returncode == 0 and found is not None and found.group(1) == daemon


def refused(proc, verb, text, daemon="master"):
    line = f'Attempt to {verb} configuration "{re.escape(text)}" {TARGET} failed\\.\n'
    found = re.fullmatch(line, proc.stderr)
    return proc.returncode == 1 and proc.stdout == "" and found is not None and found.group(1) == daemon


def starts(cell):
    with open(os.path.join(cell.root, "spool", "messages")) as fh:
        return fh.read().count("|I|daemon started")


def test_without_a_daemon_a_target_is_not_found(idle_cell):
    for daemon in ("master", "schedd", "startd", "collector", "negotiator"):
        proc = ccv(idle_cell, f"-{daemon}", "HOUR")
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", NOT_FOUND.format(daemon))
    proc = ccv(idle_cell, "-set", "MY_KNOB = 1")          # (an edit goes to the master)
    assert (proc.returncode, proc.stderr) == (1, NOT_FOUND.format("master"))
    proc = ccv(idle_cell, "-name", "testhost", "HOUR")
    assert (proc.returncode, proc.stderr) == (1, NOT_FOUND.format("master"))
    assert ccv(idle_cell, "HOUR").stdout == "(60 * 60)\n"     # (the files, as ever)


def test_set_takes_effect_on_reconfig_and_survives_a_restart(idle_cell):
    cell = idle_cell
    folder = enable(cell)
    cell.start_daemon()
    proc = ccv(cell, "-master", "MY_KNOB")
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", "Not defined: MY_KNOB\n")

    proc = ccv(cell, "-set", "MY_KNOB = $(HOUR) + 1")
    assert answered(proc, "set", "MY_KNOB = $(HOUR) + 1"), proc.stdout + proc.stderr
    with open(os.path.join(folder, ".config.MASTER")) as fh:
        assert fh.read() == "RUNTIME_CONFIG_ADMIN = my_knob\n"
    kept = os.path.join(folder, ".config.MASTER.my_knob")
    with open(kept) as fh:
        assert fh.read() == "MY_KNOB = $(HOUR) + 1\n"
    # (in use from the next reading only, as in HTCondor)
    assert ccv(cell, "-master", "MY_KNOB").returncode == 1
    cell.run("condor_reconfig", check=True)
    assert ccv(cell, "-master", "MY_KNOB").stdout == "(60 * 60) + 1\n"
    assert ccv(cell, "-schedd", "-raw", "MY_KNOB").stdout == "$(HOUR) + 1\n"
    assert ccv(cell, "-master", "-verbose", "my_knob").stdout == (
        f"MY_KNOB = (60 * 60) + 1\n # at: {kept}, line 1\n # raw: MY_KNOB = $(HOUR) + 1\n\n")
    # a tool reads the files, not a daemon's settings (HTCondor's tools alike)
    assert ccv(cell, "MY_KNOB").stderr == "Not defined: MY_KNOB\n"

    before = starts(cell)
    cell.run("condor_restart", check=True)
    wait_for(lambda: starts(cell) > before)
    assert ccv(cell, "-master", "MY_KNOB").stdout == "(60 * 60) + 1\n"

    proc = ccv(cell, "-unset", "MY_KNOB")
    assert answered(proc, "unset", "MY_KNOB"), proc.stdout + proc.stderr
    assert not os.path.exists(kept) and not os.path.exists(os.path.join(folder, ".config.MASTER"))
    assert ccv(cell, "-master", "MY_KNOB").stdout == "(60 * 60) + 1\n"
    cell.run("condor_reconfig", check=True)
    assert ccv(cell, "-master", "MY_KNOB").returncode == 1


def test_rset_lasts_until_the_daemon_stops(idle_cell):
    cell = idle_cell
    enable(cell)
    cell.start_daemon()
    proc = ccv(cell, "-startd", "-rset", "START = False", "MY_RT = 7")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("Successfully set configuration") == 2
    assert 'configuration "START = False" on startd testhost' in proc.stdout
    assert ccv(cell, "-startd", "START").stdout == "True\n"
    cell.run("condor_reconfig", check=True)
    proc = ccv(cell, "-startd", "-v", "START", "MY_RT")
    assert proc.stdout == ("START = False\n # at: <runtime>\n # raw: START = False\n # default: true\n\n"
                           "MY_RT = 7\n # at: <runtime>\n # raw: MY_RT = 7\n\n")
    proc = ccv(cell, "-runset", "MY_RT")
    assert answered(proc, "unset", "MY_RT"), proc.stdout + proc.stderr
    cell.run("condor_reconfig", check=True)
    assert ccv(cell, "-startd", "MY_RT", "START").stdout == "False\n"
    before = starts(cell)
    cell.run("condor_restart", check=True)
    wait_for(lambda: starts(cell) > before)
    assert ccv(cell, "-startd", "START").stdout == "True\n"


def test_edits_are_refused_unless_enabled_and_settable(idle_cell):
    cell = idle_cell
    folder = enable(cell, runtime=False)
    cell.start_daemon()
    assert refused(ccv(cell, "-set", "OTHER_KNOB = 1"), "set", "OTHER_KNOB = 1")
    assert refused(ccv(cell, "-rset", "MY_KNOB = 1"), "set", "MY_KNOB = 1")
    assert refused(ccv(cell, "-runset", "MY_KNOB"), "unset", "MY_KNOB")
    # the first refused ends the command; those before it were made
    proc = ccv(cell, "-schedd", "-set", "MY_A = 1", "ALLOW_CONFIG = *", "MY_B = 2")
    assert proc.returncode == 1 and proc.stdout.startswith('Successfully set configuration "MY_A = 1" on schedd')
    assert proc.stderr.startswith('Attempt to set configuration "ALLOW_CONFIG = *" on schedd testhost')
    assert sorted(os.listdir(folder)) == [".config.MASTER", ".config.MASTER.my_a"]
    messages = open(os.path.join(cell.root, "spool", "messages")).read()
    assert 'is trying to modify "allow_config"' in messages


def test_edits_are_refused_without_the_config_level(idle_cell, users):
    cell = idle_cell
    folder = enable(cell, settable="*")
    cell.start_daemon()
    assert refused(ccv(cell, "-set", "MY_KNOB = 1", user="gtbob"), "set", "MY_KNOB = 1")
    assert refused(ccv(cell, "-rset", "START = False", user="gtbob"), "set", "START = False")
    assert os.listdir(folder) == []
    assert answered(ccv(cell, "-set", "MY_KNOB = 1"), "set", "MY_KNOB = 1")
    assert refused(ccv(cell, "-unset", "MY_KNOB", user="gtbob"), "unset", "MY_KNOB")
    assert os.listdir(folder) != []
    cell.run("condor_reconfig", check=True)
    assert ccv(cell, "-master", "MY_KNOB", user="gtbob").stdout == "1\n"


#: (arguments, what condor_config_val says on stderr, exit status 1, nothing on stdout)
BAD = [
    (["-set", "MY_KNOB 1"], 'condor_config_val: Can\'t set configuration value ("MY_KNOB 1")\n'
                            'You must specify "macro_name = value" or "expr_name : value"\n'),
    (["-unset", "MY_KNOB = 1"], 'condor_config_val: Can\'t unset configuration value ("MY_KNOB = 1")\n'
                                "To unset, you only specify the name of the attribute\n"),
    (["-set", "../MY = 1"], "condor_config_val: Error: Configuration variable name (../MY) is not valid, "
                            "alphanumeric and _ only\n"),
    (["-set", "MY_KNOB = 1\nALLOW_CONFIG = *"], 'condor_config_val: Can\'t set configuration value ("MY_KNOB"): '
                                                "it must be one line of printable characters\n"),
    (["-set", "MY_KNOB = x \\"], 'condor_config_val: Can\'t set configuration value ("MY_KNOB"): '
                                 "it must not end in a backslash\n"),
    (["-pool", "cm.example.org", "HOUR"], "Error: you must specify -name with -pool\n"),
    (["-master", "-name"], "-name requires an argument\n"),
]


def test_bad_edits_and_locations_get_htcondor_s_words(idle_cell):
    folder = enable(idle_cell, settable="*")
    idle_cell.start_daemon()
    for args, said in BAD:
        proc = ccv(idle_cell, *args)
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", said), args
    assert os.listdir(folder) == []


def test_the_daemon_checks_a_request_itself(idle_cell, monkeypatch):
    """A request written by hand (not by condor_config_val) is checked again: a name that
    could be a path, a text of several lines, an assignment of another name."""
    cell = idle_cell
    folder = enable(cell, settable="*")
    cell.start_daemon()
    monkeypatch.setenv("GRIDTOOLS_ROOT", cell.root)
    from gridtools.spool import requests, wake
    for name, text in (("../../x", "../../x = 1"), ("my_a", "MY_A = 1\nALLOW_READ = *"),
                       ("my_a", "MY_B = 1"), ("my_a", "MY_A = 1 \\")):
        request = requests.write("config_set", {"mode": "persist", "subsystem": "MASTER",
                                                "name": name, "text": text}, reply=True)
        wake.poke()
        code, _out, _err = requests.wait_reply(request, 30.0)
        assert code == 1
    assert os.listdir(folder) == []
    assert not os.path.exists(os.path.join(cell.root, "x"))


def test_evaluate_against_the_daemon_s_ad(idle_cell):
    cell = idle_cell
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write("MY_EXPR = TotalRunningJobs + 5\nMY_NAME = Name\nMY_TEXT = a b c\n")
    cell.start_daemon()
    proc = ccv(cell, "-schedd", "-evaluate", "MY_EXPR", "MY_NAME", "HOUR")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, '5\n"testhost"\n3600\n', "")
    assert ccv(cell, "-master", "-ev", "MY_NAME", "NO_SUCH_ATTR_HERE").stdout == '"testhost"\n'
    proc = ccv(cell, "-collector", "-evaluate", "MY_TEXT")
    assert (proc.stdout, proc.stderr) == ("a b c\n", "Warning: Failed to evaluate 'a b c', "
                                                     "returning it as config value\n")
    proc = ccv(cell, "-negotiator", "-evaluate", "-verbose", "MY_EXPR")
    assert proc.stdout.startswith("MY_EXPR = undefined\n # at: ")
    assert ccv(cell, "-evaluate", "MY_EXPR").stdout == "TotalRunningJobs + 5\n"   # (no daemon named)


def test_locations_name_the_cell_s_daemon(cell):
    proc = ccv(cell, "-name", "elsewhere.example.org", "-schedd", "HOUR")
    assert (proc.returncode, proc.stderr) == (1, NOT_FOUND.format("schedd"))
    for args in (["-name", "testhost"], ["-name", "master@testhost", "-pool", "testhost:9618"],
                 ["-address", "<127.0.0.1:9618>"], ["-collector"]):
        proc = ccv(cell, *args, "HOUR")
        assert (proc.returncode, proc.stdout) == (0, "(60 * 60)\n"), args
    proc = ccv(cell, "-address", "nowhere", "HOUR")
    assert proc.returncode == 1 and proc.stderr.startswith("condor_config_val: invalid address nowhere\n")
    proc = ccv(cell, "-master", "use", "ROLE")
    assert (proc.returncode, proc.stderr) == (1, "remote query not supported for use ROLE\n")
    dump = ccv(cell, "-master", "-dump", "^HOUR$").stdout
    assert re.fullmatch(r"# Configuration from master on testhost <[0-9.]+:0>\n\n"
                        r"# Parameters with names that match \^HOUR\$:\nHOUR = \(60 \* \$\(MINUTE\)\)\n"
                        r"# Contributing configuration file\(s\):\n#\t.*/etc/condor_config\n", dump), dump


def test_what_the_daemon_publishes_for_other_users_holds_only_what_they_may_read(idle_cell, users):
    """What the daemon read from a file only root may read, from its own environment
    (_CONDOR_*, $ENV()), or built of those, is not in the configuration it publishes
    for every user (another user's tool would read the file itself); root's daemon
    targets see it all, from a file only root may read."""
    cell = idle_cell
    secret = os.path.join(cell.root, "etc", "secret.local")
    with open(secret, "w") as fh:
        fh.write("DB_PASSWORD = hunter2\n")
    os.chmod(secret, 0o600)
    with open(os.path.join(cell.root, "etc", "condor_config"), "a") as fh:
        fh.write(f"LOCAL_CONFIG_FILE = {secret}\nFROM_ENV = $ENV(GT_TEST_SECRET)\n"
                 "TAKES_SECRET = x$(DB_PASSWORD)\nPLAIN_KNOB = $(HOUR) + 1\n")
    cell.run("gridtools", "daemon", "start", check=True,
             env={"GT_TEST_SECRET": "envsecret", "_CONDOR_POOL_PASSWORD": "s3cretpw"})
    hidden = ("DB_PASSWORD", "FROM_ENV", "TAKES_SECRET", "POOL_PASSWORD")
    assert [ccv(cell, "-schedd", name).stdout for name in hidden] == [
        "hunter2\n", "envsecret\n", "xhunter2\n", "s3cretpw\n"]
    public = cell.run("cat", os.path.join(cell.root, "spool", "daemon_config"), user="gtbob", text=False)
    assert public.returncode == 0
    for word in (b"hunter2", b"envsecret", b"s3cretpw", b"DB_PASSWORD", b"FROM_ENV", b"TAKES_SECRET"):
        assert word not in public.stdout, word
    assert b"PLAIN_KNOB" in public.stdout and b"(60 * 60) + 1" in public.stdout
    private = os.path.join(cell.root, "spool", "daemon_config.private")
    assert cell.run("cat", private, user="gtbob").returncode != 0
    with open(private, "rb") as fh:
        assert b"hunter2" in fh.read()

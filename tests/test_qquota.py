"""qquota against a running daemon: the reference capture's rule and layout."""

import os

from qtools import add_object, jid_of, wait_state

RQS = "{\n   name         max_slots_per_user\n   description  NONE\n   enabled      TRUE\n" \
      "   limit        users {*} queues all.q to slots=100\n}\n"


def reference_stdout(name):
    from conftest import REPO
    path = os.path.join(REPO, "tests", "data", "reference", "sge", name)
    text = open(path).read()
    return text.split("# ---- stdout ----\n", 1)[1].split("# ---- stderr ----", 1)[0]


def test_qquota_shows_the_slots_in_use(cell, users, workdir):
    os.chmod(workdir, 0o777)
    add_object(cell, "-Arqs", RQS)
    jobs = [jid_of(cell.qsub("-b", "y", "sleep", "60", user="gtalice", cwd=workdir)) for _ in range(2)]
    for jid in jobs:
        wait_state(cell, jid, "r")
    mine = cell.run("qquota", user="gtalice")
    assert mine.returncode == 0, mine.stderr
    expected = reference_stdout("qquota.txt").replace("alice", "gtalice")
    want = expected.splitlines()
    got = mine.stdout.splitlines()
    assert got[:2] == want[:2]
    assert got[2] == "max_slots_per_user/1 slots=2/100          users gtalice queues all.q"
    assert cell.run("qquota", user="gtbob").stdout.splitlines()[2:] == []    # bob uses nothing
    everyone = cell.run("qquota", "-u", "*", user="gtbob").stdout.splitlines()
    assert everyone[2:] == [got[2]]
    for picked in (["-q", "all.q"], ["-l", "slots"], ["-h", "testhost"], ["-pe", "smp"], ["-P", "p1"]):
        assert cell.run("qquota", "-u", "*", *picked).stdout.splitlines()[2:] == [got[2]], picked
    assert cell.run("qquota", "-u", "*", "-l", "h_vmem").stdout.splitlines()[2:] == []
    xml = cell.run("qquota", "-u", "*", "-xml").stdout
    assert "<limit resource='slots' limit='100' value='2'/>" in xml
    assert "<users>gtalice</users>" in xml
    bad = cell.run("qquota", "-x")
    assert bad.returncode != 0 and "invalid option" in bad.stderr


def _me():
    import pwd
    return pwd.getpwuid(os.getuid()).pw_name


def test_qquota_prints_memory_in_grid_engines_form(cell, workdir):
    from conftest import wait_for
    from qtools import add_complex
    add_complex(cell, "memc                mc         MEMORY    <=    YES         YES        1G       0")
    cell.run("qconf", "-mattr", "exechost", "complex_values", "memc=8G", "testhost", check=True)
    add_object(cell, "-Arqs", "{\n   name         memlim\n   description  NONE\n   enabled      TRUE\n"
                              "   limit        users {*} to memc=3G\n}\n")
    jid = jid_of(cell.qsub("-pe", "smp", "2", "-b", "y", "sleep", "60", cwd=workdir))   # 2 x default 1G
    wait_state(cell, jid, "r")
    line = f"memlim/1           memc=2.000G/3.000G   users {_me()}"
    assert wait_for(lambda: line in cell.run("qquota").stdout.splitlines()), cell.run("qquota").stdout
    assert "<limit resource='memc' limit='3.000G' value='2.000G'/>" in cell.run("qquota", "-xml").stdout


def test_qquota_filter_column_shows_every_filter_as_written(cell, workdir):
    add_object(cell, "-Arqs", "{\n   name         stat\n   description  NONE\n   enabled      TRUE\n"
                              f"   limit        users {_me()} hosts {{*}} to h_vmem=4G\n"
                              "   limit        users {*} queues all.q hosts testhost to h_rt=1:0:0\n}\n")
    add_object(cell, "-Arqs", "{\n   name         pstar\n   description  NONE\n   enabled      TRUE\n"
                              "   limit        projects * to slots=4\n}\n")
    add_object(cell, "-Aprj", "name projA\noticket 0\nfshare 0\nacl NONE\nxacl NONE\n")
    jid = jid_of(cell.qsub("-P", "projA", "-b", "y", "sleep", "60", cwd=workdir))
    wait_state(cell, jid, "r")
    from conftest import wait_for
    assert wait_for(lambda: "pstar/1" in cell.run("qquota").stdout)
    assert cell.run("qquota").stdout.splitlines()[2:] == [
        "pstar/1            slots=1/4            -",                  # (a plain *: as the guide)
        f"stat/1             h_vmem=4G            users {_me()} hosts {{*}}",
        "stat/2             h_rt=1:0:0           users {*} queues all.q hosts testhost"]
    xml = cell.run("qquota", "-xml").stdout
    assert "<qquota_rule name='stat/2'>\n   <users>*</users>\n   <queues>all.q</queues>\n" \
           "   <hosts>testhost</hosts>\n   <limit resource='h_rt' limit='1:0:0'/>" in xml
    assert "<qquota_rule name='pstar/1'>\n   <limit resource='slots'" in xml


def test_a_rule_naming_an_access_list_shows_its_use(cell, workdir):
    """A rule whose users are an access list (@list): its use shows, as the scheduler
    counts it (the running jobs' owners' lists were left out)."""
    cell.run("qconf", "-au", _me(), "grp", check=True)
    add_object(cell, "-Arqs", "{\n   name         acl\n   description  NONE\n   enabled      TRUE\n"
                              "   limit        users @grp hosts {*} to slots=2\n}\n")
    jid = jid_of(cell.qsub("-b", "y", "sleep", "60", cwd=workdir))
    wait_state(cell, jid, "r")
    from conftest import wait_for
    line = "acl/1              slots=1/2            users @grp hosts testhost"
    assert wait_for(lambda: line in cell.run("qquota").stdout.splitlines()), cell.run("qquota").stdout


def test_list_arguments_are_several_words_or_blank_separated(cell):
    add_object(cell, "-Arqs", "{\n   name         twoq\n   description  NONE\n   enabled      TRUE\n"
                              "   limit        users {*} queues all.q to h_rt=1:0:0\n"
                              "   limit        users {*} queues other.q to h_rt=2:0:0\n}\n")

    def rules(*args):
        proc = cell.run("qquota", "-u", "*", *args)
        assert proc.returncode == 0, proc.stderr
        return [line.split()[0] for line in proc.stdout.splitlines()[2:]]
    assert rules("-q", "all.q") == ["twoq/1"]
    assert rules("-q", "all.q,other.q") == ["twoq/1", "twoq/2"]
    assert rules("-q", "all.q", "other.q") == ["twoq/1", "twoq/2"]
    assert rules("-q", "all.q other.q") == ["twoq/1", "twoq/2"]
    assert rules("-q", "other.q", "-l", "h_vmem slots") == []
    assert rules("-l", "h_vmem h_rt", "-q", "all.q") == ["twoq/1"]


def _own_user(name):
    """A plain user of this test alone (its home holds option files no other test reads)."""
    from conftest import test_user
    return test_user(name)


def test_default_option_files_come_before_the_command_line(cell):
    """The cell's sge_qquota, then ~/.sge_qquota from the password database's home, then
    the command line, as qquota(1) says; a list option of a file adds to the later ones."""
    entry = _own_user("gtquota")
    add_object(cell, "-Arqs", "{\n   name         peruser\n   description  NONE\n   enabled      TRUE\n"
                              "   limit        users gtalice to h_rt=1:0:0\n"
                              "   limit        users gtbob to h_rt=2:0:0\n}\n")
    cell_file = os.path.join(cell.root, "etc", "sge_qquota")
    home_file = os.path.join(entry.pw_dir, ".sge_qquota")

    def qquota(*args):
        proc = cell.run("env", "HOME=/nonexistent", "qquota", *args, user="gtquota")
        return proc.returncode, proc.stdout, proc.stderr
    try:
        assert qquota()[1].splitlines()[2:] == []
        with open(cell_file, "w") as fh:
            fh.write("# site defaults\n-u gtalice\n")
        code, out, err = qquota()
        assert (code, err) == (0, "") and [line.split()[0] for line in out.splitlines()[2:]] == ["peruser/1"]
        with open(home_file, "w") as fh:
            fh.write("-xml\n")
        code, out, err = qquota("-u", "gtbob")
        assert (code, err) == (0, "")
        assert "<qquota_rule name='peruser/1'>" in out and "<qquota_rule name='peruser/2'>" in out
        with open(home_file, "w") as fh:
            fh.write("-u gtalice\n")                 # a list of a file ends with the file
        code, out, err = qquota("gtbob")
        assert code == 1 and 'invalid option argument "gtbob"' in err and out == ""
        with open(home_file, "w") as fh:
            fh.write("-nosuch\n")
        code, out, err = qquota()
        assert code == 1 and 'invalid option argument "-nosuch"' in err and out == ""
    finally:
        for path in (cell_file, home_file):
            if os.path.exists(path):
                os.unlink(path)


QQUOTA_USAGE = """SGE 8.1.9
usage: qquota [options]
  [-help]                              print this help
  [-h wc_host_list|wc_hostgroup_list]  display only selected hosts
  [-l resource_attributes]             request the given resources
  [-u user_list]                       display only selected users
  [-pe wc_pe_list]                     display only selected parallel environments
  [-P wc_project_list]                 display only selected projects
  [-q wc_cqueue_list]                  display only selected queues
  [-xml]                               display the information in XML format

resource_attributes     resource_name,resource_name,...
wc_cqueue               wildcard expression matching a cluster queue
wc_cqueue_list          wc_cqueue[,wc_cqueue,...]
wc_host                 wildcard expression matching a host
wc_host_list            wc_host[,wc_host,...]
wc_hostgroup            wildcard expression matching a hostgroup
wc_hostgroup_list       wc_hostgroup[,wc_hostgroup,...]
wc_pe                   wildcard expression matching a parallel environment
wc_pe_list              wc_pe[,wc_pe,...]
wc_project              wildcard expression matching a project
wc_project_list         wc_project[,wc_project,...]
user_list               user[,user,...]
"""


def test_help_prints_grid_engines_usage_text(cell):
    """-help: Grid Engine 8.1.9's text on stdout, exit 0, wherever -help stands among good
    options; a bad option: the same text on stderr, then the error line, exit 1."""
    for args in (["-help"], ["-u", "*", "-help", "-xml"], ["-l", "nosuch", "-help"]):
        proc = cell.run("qquota", *args)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, QQUOTA_USAGE, ""), args
    proc = cell.run("qquota", "-help", "-x")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == QQUOTA_USAGE + 'error: invalid option argument "-x"\n'

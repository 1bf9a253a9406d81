"""qsub against a running daemon: messages, options, output files, environment."""

import os
import pwd
import re
import shutil
import subprocess

import pytest


def submit_ok(cell, *args, **kw):
    proc = cell.qsub(*args, **kw)
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"(\d+)", proc.stdout)
    return int(m.group(1)), proc


def read(path):
    with open(path) as fh:
        return fh.read()


def env_of(path):
    return dict(line.split("=", 1) for line in read(path).splitlines() if "=" in line)


# ---------------------------------------------------------------- messages

def test_submit_message_and_terse(cell, workdir):
    proc = cell.qsub("-b", "y", "/bin/true", cwd=workdir)
    assert re.fullmatch(r'Your job \d+ \("true"\) has been submitted\n', proc.stdout)
    proc = cell.qsub("-terse", "-b", "y", "/bin/true", cwd=workdir)
    assert re.fullmatch(r"\d+\n", proc.stdout)
    proc = cell.qsub("-terse", "-t", "1-10:3", "-b", "y", "/bin/true", cwd=workdir)
    assert re.fullmatch(r"\d+\.1-10:3\n", proc.stdout)
    proc = cell.qsub("-t", "1-5", "-b", "y", "/bin/true", cwd=workdir)
    assert re.fullmatch(r'Your job-array \d+\.1-5:1 \("true"\) has been submitted\n', proc.stdout)


def test_ids_are_consecutive_and_distinct(cell, workdir):
    ids = [submit_ok(cell, "-h", "-b", "y", "true", cwd=workdir)[0] for _ in range(3)]
    assert ids == list(range(ids[0], ids[0] + 3))


def test_reversed_task_range_is_swapped(cell, workdir):
    proc = cell.qsub("-t", "5-1", "-h", "-b", "y", "true", cwd=workdir)
    assert ".1-5:1" in proc.stdout


@pytest.mark.parametrize("args, code, text", [
    (["-badopt"], 2, 'qsub: invalid option argument "-badopt"'),
    (["/no/such/script.sh"], 14,
     "Unable to read script file because of error: error opening /no/such/script.sh: No such file or directory"),
    (["-q", "nosuch.q", "-b", "y", "true"], 1,
     'Unable to run job: Job was rejected because job requests unknown queue "nosuch.q"'),
    (["-q", "all.q@nosuchhost", "-b", "y", "true"], 1,
     'Unable to run job: Job was rejected because job requests unknown queue "all.q@nosuchhost"'),
    (["-pe", "nosuchpe", "2", "-b", "y", "true"], 1,
     'Unable to run job: job rejected: the requested parallel environment "nosuchpe" does not exist'),
    (["-P", "nosuchprj", "-b", "y", "true"], 1,
     'Unable to run job: job rejected: the requested project "nosuchprj" does not exist'),
    (["-p", "2000", "-b", "y", "true"], 7,
     'qsub: invalid priority "2000".  Must be an integer from -1023 to 1024'),
    (["-l", "h_rt=abc", "-b", "y", "true"], 1, 'Unable to run job: attribute "h_rt" is not a time value'),
])
def test_bad_input_one_line_and_exit_code(cell, workdir, args, code, text):
    proc = cell.qsub(*args, cwd=workdir)
    assert proc.returncode == code
    assert text in proc.stderr
    assert proc.stdout == ""
    assert os.listdir(os.path.join(cell.root, "spool", "requests")) == []


def test_masterq_without_a_parallel_environment_is_refused_at_submission(cell, workdir):
    """Grid Engine refuses a master queue for a job without -pe when it is submitted
    (qsub options, #$ lines, qrsh); qalter may still set one, and with -pe it is taken."""
    text = ("Unable to run job: job rejected: specification of master queue is not allowed for "
            "non-parallel jobs\nExiting.\n")
    script = os.path.join(workdir, "mq.sh")
    with open(script, "w") as fh:
        fh.write("#!/bin/sh\n#$ -masterq all.q\ntrue\n")
    for proc in (cell.qsub("-masterq", "all.q", "-b", "y", "true", cwd=workdir),
                 cell.qsub("-masterq", "nosuch.q", "-b", "y", "true", cwd=workdir),
                 cell.qsub(script, cwd=workdir),
                 cell.run("qrsh", "-masterq", "all.q", "true", cwd=workdir)):
        assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", text)
    assert os.listdir(os.path.join(cell.root, "spool", "requests")) == []
    with_pe, _ = submit_ok(cell, "-h", "-pe", "smp", "1", "-masterq", "all.q", "-b", "y", "true", cwd=workdir)
    plain, _ = submit_ok(cell, "-h", "-b", "y", "true", cwd=workdir)
    proc = cell.run("qalter", "-masterq", "all.q", str(plain), cwd=workdir)
    assert proc.returncode == 0, proc.stderr
    for jid in (with_pe, plain):
        out = cell.run("qstat", "-j", str(jid), check=True).stdout
        assert re.search(r"^master_hard_queue_list: +all\.q$", out, re.M), out
    cell.run("qdel", str(with_pe), str(plain), check=True)


def test_no_script_on_stdin(cell, workdir):
    proc = cell.qsub(cwd=workdir, input="")
    assert proc.returncode == 4
    assert "no input read from stdin" in proc.stderr


def test_verification_prints_why_no_queue_fits(cell, workdir):
    """-w v and -w p give the reasons (as qalter -w v does), naming the job by the number it
    gets, which is used up as Grid Engine's qmaster uses it up, and queue nothing; -w e
    only refuses."""
    last, _ = submit_ok(cell, "-h", "-b", "y", "true", cwd=workdir)
    for number, mode in enumerate(("v", "p"), last + 1):
        why = (rf'Job {number} \(-l arch=sol-sparc64\) cannot run in queue "all\.q@testhost" '
               r"because it offers only hl:arch=\S+")
        proc = cell.qsub("-w", mode, "-l", "arch=sol-sparc64", "-b", "y", "true", cwd=workdir)
        assert proc.returncode == 1 and proc.stdout == ""
        assert re.fullmatch(rf"Unable to run job: {why}\nverification: no suitable queues\nExiting\.\n",
                            proc.stderr), proc.stderr
    proc = cell.qsub("-w", "v", "-pe", "smp", "4", "-b", "y", "true", cwd=workdir)
    # (as the reference capture qsub-w-v-unsatisfiable: $pe_slots gathers nothing from a 2-slot host)
    assert proc.stderr == (f'Unable to run job: Job {last + 3} cannot run in PE "smp" because it only '
                           "offers 0 slots\nverification: no suitable queues\nExiting.\n")
    proc = cell.qsub("-w", "e", "-l", "arch=sol-sparc64", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (1, "Unable to run job: error: no suitable queues\nExiting.\n")
    assert submit_ok(cell, "-h", "-b", "y", "true", cwd=workdir)[0] == last + 4


# ---------------------------------------------------------------- running jobs

def test_script_from_stdin_runs_and_writes_output(cell, workdir):
    jid, proc = submit_ok(cell, "-cwd", cwd=workdir, input="echo from stdin\n")
    assert '("STDIN")' in proc.stdout
    cell.wait_finished(jid)
    assert read(os.path.join(workdir, f"STDIN.o{jid}")) == "from stdin\n"
    assert read(os.path.join(workdir, f"STDIN.e{jid}")) == ""


def test_binary_job_with_arguments(cell, workdir):
    jid, _ = submit_ok(cell, "-cwd", "-b", "y", "/bin/echo", "hello", "binary", cwd=workdir)
    cell.wait_finished(jid)
    assert read(os.path.join(workdir, f"echo.o{jid}")) == "hello binary\n"


def test_missing_binary_exits_127_like_a_shell(cell, workdir):
    jid, _ = submit_ok(cell, "-cwd", "-N", "nobin", "-b", "y", "/no/such/binary", cwd=workdir)
    cell.wait_finished(jid)
    assert "not found" in read(os.path.join(workdir, f"nobin.e{jid}"))
    rec = [r for r in cell.accounting() if r[5] == str(jid)]
    assert rec and rec[0][12] == "127"


def test_default_output_in_home_without_cwd(cell, workdir, users):
    name = f"home{os.getpid()}"
    jid, _ = submit_ok(cell, "-N", name, "-b", "y", "pwd", user="gtalice", cwd=workdir)
    cell.wait_finished(jid)
    out = os.path.join("/home/gtalice", f"{name}.o{jid}")
    os.unlink(os.path.join("/home/gtalice", f"{name}.e{jid}"))
    os.chmod(out, 0o644)
    assert read(out) == "/home/gtalice\n"
    assert os.stat(out).st_uid == pwd.getpwnam("gtalice").pw_uid
    os.unlink(out)


def test_output_names_directories_and_pseudo_variables(cell, workdir):
    os.mkdir(os.path.join(workdir, "out"))
    jid, _ = submit_ok(cell, "-cwd", "-N", "pseudo", "-o", "out/$JOB_NAME.$JOB_ID.$TASK_ID.$USER.o",
                       "-e", "out/", "-t", "1-2", cwd=workdir, input="echo hi; echo err >&2\n")
    cell.wait_finished(jid, (1, 2))
    for task in (1, 2):
        assert read(os.path.join(workdir, "out", f"pseudo.{jid}.{task}.root.o")) == "hi\n"
        assert read(os.path.join(workdir, "out", f"pseudo.e{jid}.{task}")) == "err\n"


def test_join_merges_stderr_into_stdout(cell, workdir):
    jid, _ = submit_ok(cell, "-cwd", "-j", "y", "-N", "joined", "-e", "ignored.err",
                       cwd=workdir, input="echo out; echo err >&2\n")
    cell.wait_finished(jid)
    assert read(os.path.join(workdir, f"joined.o{jid}")) == "out\nerr\n"
    assert not os.path.exists(os.path.join(workdir, "ignored.err"))


def test_job_environment(cell, workdir):
    jid, _ = submit_ok(cell, "-cwd", "-N", "envjob", "-v", "FOO=bar,BAZ", "-t", "1-3:2",
                       cwd=workdir, input="env\n")
    cell.wait_finished(jid, (1, 3))
    env = env_of(os.path.join(workdir, f"envjob.o{jid}.3"))
    assert env["JOB_ID"] == str(jid)
    assert env["JOB_NAME"] == env["REQUEST"] == "envjob"
    assert (env["SGE_TASK_ID"], env["SGE_TASK_FIRST"], env["SGE_TASK_LAST"], env["SGE_TASK_STEPSIZE"]) == \
        ("3", "1", "3", "2")
    assert env["NSLOTS"] == "1" and env["NHOSTS"] == "1" and env["NQUEUES"] == "1"
    assert env["QUEUE"] == "all.q" and env["HOSTNAME"] == "testhost"
    assert env["ENVIRONMENT"] == "BATCH"
    assert env["FOO"] == "bar" and env["BAZ"] == ""
    assert env["SGE_O_WORKDIR"] == workdir == env["PWD"]
    from gridtools.exec.tmpdir import cell_folder_name
    assert env["TMPDIR"] == f"/tmp/{cell_folder_name(cell.root)}/{jid}.3.all.q"
    assert env["SGE_STDOUT_PATH"] == os.path.join(workdir, f"envjob.o{jid}.3")
    assert not os.path.exists(env["TMPDIR"])      # removed after the job


def test_path_starts_with_tmpdir_and_sge_o_holds_what_was_set(cell, workdir):
    """Grid Engine's execd puts TMPDIR first on the job's PATH (the -v PATH, or its
    default), and job_initialize_env copies HOME, LOGNAME, PATH, SHELL, TZ and MAIL
    of qsub's environment, only those set."""
    submit_env = {k: v for k, v in cell.env.items() if k not in ("MAIL", "SHELL")}
    submit_env["TZ"] = "Europe/Paris"
    proc = subprocess.run(["qsub", "-cwd", "-N", "pathenv", "-v", "PATH=/opt/x:/usr/bin:/bin"],
                          input="env\n", env=submit_env, cwd=workdir, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    jid = int(proc.stdout.split()[2])
    cell.wait_finished(jid)
    env = env_of(os.path.join(workdir, f"pathenv.o{jid}"))
    assert env["PATH"] == env["TMPDIR"] + ":/opt/x:/usr/bin:/bin"
    assert env["SGE_O_TZ"] == "Europe/Paris" and env["SGE_O_PATH"] == submit_env["PATH"]
    assert "SGE_O_MAIL" not in env and "SGE_O_SHELL" not in env
    jid, _ = submit_ok(cell, "-cwd", "-N", "pathdef", cwd=workdir, input="env\n")
    cell.wait_finished(jid)
    env = env_of(os.path.join(workdir, f"pathdef.o{jid}"))
    assert env["PATH"] == (env["TMPDIR"] + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:"
                           + env["SGE_BINARY_PATH"])
    assert env.get("SGE_O_TZ") == cell.env.get("TZ")


def test_plain_job_task_variables_are_undefined(cell, workdir):
    jid, _ = submit_ok(cell, "-cwd", "-N", "plainenv", cwd=workdir, input="env\n")
    cell.wait_finished(jid)
    env = env_of(os.path.join(workdir, f"plainenv.o{jid}"))
    for name in ("SGE_TASK_ID", "SGE_TASK_FIRST", "SGE_TASK_LAST", "SGE_TASK_STEPSIZE"):
        assert env[name] == "undefined"
    assert "PE_HOSTFILE" not in env
    assert env["SGE_EXECD_PIDFILE"] == os.path.join(cell.root, "spool", "daemon.pid")


def test_a_job_finds_the_commands_in_sge_binary_path(cell, workdir):
    jid, _ = submit_ok(cell, "-cwd", "-N", "binpath", cwd=workdir,
                       input='"$SGE_BINARY_PATH/qstat" -j "$JOB_ID" | grep "^job_number"\n')
    cell.wait_finished(jid)
    assert read(os.path.join(workdir, f"binpath.o{jid}")).split() == ["job_number:", str(jid)]


def test_a_job_finds_the_commands_on_its_path(cell, workdir):
    """Without -V a job's PATH is the system's folders, then the commands' folder."""
    jid, _ = submit_ok(cell, "-cwd", "-N", "onpath", cwd=workdir,
                       input='command -v qsub\necho "$PATH"\nqstat -j "$JOB_ID" | grep "^job_number"\n'
                             'echo "$SGE_BINARY_PATH"\n')
    cell.wait_finished(jid)
    where, path, number, commands = read(os.path.join(workdir, f"onpath.o{jid}")).splitlines()
    assert commands and os.path.samefile(commands, os.path.dirname(shutil.which("qsub", path=cell.env["PATH"])))
    assert where == os.path.join(commands, "qsub")
    assert path.split(":")[-1] == commands
    assert path.split(":")[1:7] == ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
    assert number.split() == ["job_number:", str(jid)]


def test_export_all_with_V(cell, workdir):
    jid, _ = submit_ok(cell, "-cwd", "-V", "-N", "vjob", cwd=workdir, input="echo $MY_EXPORTED\n",
                       env={"MY_EXPORTED": "hello_V"})
    cell.wait_finished(jid)
    assert read(os.path.join(workdir, f"vjob.o{jid}")) == "hello_V\n"


def test_export_all_keeps_exported_functions_and_names_a_shell_would_not_take(cell, workdir):
    """An exported bash function (BASH_FUNC_name%%, as environment modules' ``module``)
    and a variable whose name has a dot reach the job with -V: the launcher of the
    commands that pass the environment on is run by bash, which keeps them."""
    env = {"BASH_FUNC_greet%%": "() {  echo \"hello from $1\"\n}", "MY.DOTTED": "dotted"}
    jid, _ = submit_ok(cell, "-cwd", "-V", "-S", "/bin/bash", "-N", "funcs", cwd=workdir, env=env,
                       input='greet job\nenv | grep "^MY.DOTTED="\n')
    cell.wait_finished(jid)
    assert read(os.path.join(workdir, f"funcs.o{jid}")) == "hello from job\nMY.DOTTED=dotted\n"


def test_the_launchers_are_one_program(cell):
    """bin/gridtools-env is bin/gridtools run by bash: the same text after the first line."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bin")
    plain, full = (open(os.path.join(here, name)).read().split("\n", 1) for name in ("gridtools", "gridtools-env"))
    assert (plain[0], full[0]) == ("#!/bin/sh", "#!/bin/bash -p") and plain[1] == full[1]
    for command in ("qsub", "qrsh", "qalter", "condor_submit", "condor_submit_dag", "condor_dagman"):
        assert os.readlink(os.path.join(here, command)) == "gridtools-env"


def test_pe_job_gets_slots_and_hostfile(cell, workdir):
    jid, _ = submit_ok(cell, "-cwd", "-pe", "smp", "2", "-N", "pejob", cwd=workdir,
                       input='echo "$NSLOTS $PE"; cat $PE_HOSTFILE\n')
    cell.wait_finished(jid)
    assert read(os.path.join(workdir, f"pejob.o{jid}")) == "2 smp\ntesthost 2 all.q@testhost UNDEFINED\n"


def test_wd_option_and_shell_option(cell, workdir):
    sub = os.path.join(workdir, "sub")
    os.mkdir(sub)
    jid, _ = submit_ok(cell, "-wd", sub, "-S", "/bin/bash", "-N", "wdjob", cwd=workdir,
                       input='echo "$PWD ${BASH_VERSION:+bash}"\n')
    cell.wait_finished(jid)
    assert read(os.path.join(sub, f"wdjob.o{jid}")) == f"{sub} bash\n"


def test_shebang_or_queue_shell(cell, workdir):
    script = os.path.join(workdir, "s.sh")
    with open(script, "w") as fh:
        fh.write("#!/bin/bash\necho ${BASH_VERSION:+bash}\n")
    jid, _ = submit_ok(cell, "-cwd", script, cwd=workdir)
    cell.wait_finished(jid)
    # the shipped queue runs scripts the Unix way: the #! line is honoured
    assert read(os.path.join(workdir, f"s.sh.o{jid}")) == "bash\n"


# ---------------------------------------------------------------- directives and defaults

def test_directives_defaults_and_precedence(cell, workdir):
    with open(os.path.join(cell.root, "etc", "sge_request"), "a") as fh:
        fh.write("-N from_global\n-v LEVEL=global\n")
    with open(os.path.join(workdir, ".sge_request"), "w") as fh:
        fh.write("# local defaults\n-v LEVEL=local -v LOCALONLY=yes\n")
    script = "#$ -N from_directive\n#$ -v LEVEL=directive\necho $LEVEL $LOCALONLY\n"
    jid, proc = submit_ok(cell, "-cwd", cwd=workdir, input=script)
    assert '("from_directive")' in proc.stdout
    cell.wait_finished(jid)
    assert read(os.path.join(workdir, f"from_directive.o{jid}")) == "directive yes\n"
    jid, proc = submit_ok(cell, "-cwd", "-N", "cmdline", "-v", "LEVEL=cmd", cwd=workdir, input=script)
    assert '("cmdline")' in proc.stdout
    cell.wait_finished(jid)
    assert read(os.path.join(workdir, f"cmdline.o{jid}")) == "cmd yes\n"


def test_per_user_files_come_from_the_password_database_home(cell, workdir):
    """~/.sge_request and ~/.sge_qstat are read from the user's home in the password
    database, as Grid Engine reads them, whatever $HOME says: a $HOME the user may not
    read (sudo -E, a service that keeps root's) is no error."""
    import tempfile
    from conftest import test_user
    user = "gtdora"
    entry = test_user(user)
    closed = tempfile.mkdtemp(prefix="gtclosed-")            # (root's, mode 0700)
    files = {".sge_request": "-N fromhome\n", ".sge_qstat": "-ext\n"}
    try:
        for name, text in files.items():
            path = os.path.join(entry.pw_dir, name)
            with open(path, "w") as fh:
                fh.write(text)
            os.chown(path, entry.pw_uid, entry.pw_gid)
        proc = cell.run("env", f"HOME={closed}", "qsub", "-h", "-b", "y", "true", user=user, cwd=workdir)
        assert (proc.returncode, proc.stderr) == (0, "")
        assert '("fromhome") has been submitted' in proc.stdout
        proc = cell.run("env", f"HOME={closed}", "qstat", user=user, cwd=workdir)
        assert (proc.returncode, proc.stderr) == (0, "")
        assert proc.stdout.split()[:3] == ["job-ID", "prior", "ntckts"] and "fromhome" in proc.stdout
        for name in files:
            os.unlink(os.path.join(entry.pw_dir, name))
        proc = cell.run("env", f"HOME={closed}", "qsub", "-h", "-b", "y", "true", user=user, cwd=workdir)
        assert (proc.returncode, proc.stderr) == (0, "") and '("true")' in proc.stdout
        proc = cell.run("env", f"HOME={closed}", "qstat", user=user, cwd=workdir)
        assert (proc.returncode, proc.stderr) == (0, "") and proc.stdout.split()[:3] == ["job-ID", "prior", "name"]
    finally:
        for name in files:
            if os.path.exists(os.path.join(entry.pw_dir, name)):
                os.unlink(os.path.join(entry.pw_dir, name))
        os.rmdir(closed)
        cell.run("qdel", "-u", user)


def test_a_request_file_another_user_planted_is_not_read(cell, workdir, users):
    """./.sge_request in a folder others may write is read only when it is the caller's
    own (or root's) and nobody else may write it: one another user planted there (to set
    the caller's shell, say) is not, with a warning; the caller's own still is."""
    shared = os.path.join(workdir, "shared")
    os.mkdir(shared)
    os.chmod(shared, 0o1777)
    planted = os.path.join(shared, ".sge_request")
    cell.run("sh", "-c", f"echo '-N planted' > {planted}", user=users[1], check=True)
    for who in (users[0], None):                        # gtalice, then root
        proc = cell.run("qsub", "-h", "-b", "y", "true", user=who, cwd=shared)
        assert proc.returncode == 0 and '("true") has been submitted' in proc.stdout, proc.stdout
        assert proc.stderr == (f"warning: {planted} not read: it must be a file of your own (or root's) that "
                               "no one else may write, reached only through links of your own (or root's) "
                               "in folders no one else may change\n")
    os.unlink(planted)
    os.symlink(os.path.join(workdir, "elsewhere"), planted)   # (root's link to root's own file)
    with open(os.path.join(workdir, "elsewhere"), "w") as fh:
        fh.write("-N linked\n")
    proc = cell.run("qsub", "-h", "-b", "y", "true", cwd=shared)
    assert '("linked")' in proc.stdout and proc.stderr == ""
    proc = cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=shared)
    assert '("linked")' in proc.stdout and proc.stderr == ""
    os.unlink(planted)
    mine = os.path.join(workdir, "mine")
    cell.run("mkdir", mine, user=users[0], check=True)
    cell.run("sh", "-c", f"echo '-N ownfile' > {mine}/.sge_request", user=users[0], check=True)
    proc = cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=mine)
    assert (proc.stderr, '("ownfile") has been submitted' in proc.stdout) == ("", True)
    # (group-writable is the owner's own affair when the group is the owner's alone: umask 002)
    cell.run("chmod", "g+w", f"{mine}/.sge_request", user=users[0], check=True)
    proc = cell.run("qsub", "-h", "-b", "y", "true", user=users[0], cwd=mine)
    assert (proc.stderr, '("ownfile") has been submitted' in proc.stdout) == ("", True)
    cell.run("qdel", "-u", users[0])


def test_clear_discards_earlier_requests(cell, workdir):
    with open(os.path.join(workdir, ".sge_request"), "w") as fh:
        fh.write("-N defaulted -v GONE=1\n")
    jid, proc = submit_ok(cell, "-clear", "-cwd", cwd=workdir, input="echo x${GONE}x\n")
    assert '("STDIN")' in proc.stdout
    cell.wait_finished(jid)
    assert read(os.path.join(workdir, f"STDIN.o{jid}")) == "xx\n"


def test_directive_prefix_C(cell, workdir):
    script = "#PBS -N fromprefix\n#$ -N ignored\necho ok\n"
    _, proc = submit_ok(cell, "-C", "#PBS", "-h", cwd=workdir, input=script)
    assert '("fromprefix")' in proc.stdout


def test_qsub_only_options_in_directives_and_request_files(cell, workdir):
    """As Grid Engine's qsub (qsub.c, parse_job_cull.c): -terse, -sync, -verify and -C are
    taken in #$ directives and .sge_request files too; -terse and -C count there for
    nothing (Nextflow writes "#$ -terse" into every job script), -sync and -verify do."""
    proc = cell.qsub("-h", cwd=workdir, input="#!/bin/bash\n#$ -terse\n#$ -C %X\necho hi\n")
    assert (proc.returncode, proc.stderr) == (0, "")
    assert re.fullmatch(r'Your job \d+ \("STDIN"\) has been submitted\n', proc.stdout)
    proc = cell.qsub("-cwd", cwd=workdir, input="#!/bin/bash\n#$ -sync y\nexit 4\n")
    jid = int(re.search(r"(\d+)", proc.stdout).group(1))
    assert (proc.returncode, proc.stderr) == (4, f"Job {jid} exited with exit code 4.\n")
    proc = cell.qsub(cwd=workdir, input="#!/bin/bash\n#$ -verify\necho\n")
    assert (proc.returncode, proc.stdout.splitlines()[0]) == (0, "job_number:                 unassigned")
    with open(os.path.join(workdir, ".sge_request"), "w") as fh:
        fh.write("-terse -sync y -C %X\n")
    proc = cell.qsub("-b", "y", "true", cwd=workdir)
    jid = int(re.search(r"(\d+)", proc.stdout).group(1))
    assert (proc.returncode, proc.stdout) == (0, f'Your job {jid} ("true") has been submitted\n'
                                                 f"Job {jid} exited with exit code 0.\n")
    # the command line's own -terse wins; its -sync n does not undo a -sync y (qsub.c 8.1.9)
    proc = cell.qsub("-terse", "-sync", "n", "-b", "y", "false", cwd=workdir)
    assert (proc.returncode, re.fullmatch(r"\d+\n", proc.stdout) is not None) == (1, True)


def test_verify_shows_the_job_it_would_submit_and_submits_nothing(cell, workdir):
    """As Grid Engine's qsub -verify (cull_show_job before the job is sent): the job in
    qstat -j's layout, with no number, owner, script or submission time yet (the master
    sets them), exit 0; no job is queued and no number used up."""
    before = cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True)
    proc = cell.qsub("-verify", "-N", "vjob", "-l", "h_rt=60", "-hold_jid", "5", "-cwd", "-p", "-3",
                     "-b", "y", "/bin/echo", "hi", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (0, "")
    lines = proc.stdout.splitlines()
    assert lines[:5] == ["job_number:                 unassigned", "owner:                      ",
                         "uid:                        0", "group:                      ",
                         "gid:                        0"]
    fields = dict((line[:28].rstrip(": "), line[28:]) for line in lines)
    assert (fields["cwd"], fields["hard resource_list"], fields["job_name"], fields["priority"]) == \
        (workdir, "h_rt=60", "vjob", "-3")
    assert (fields["job_args"], fields["script_file"], fields["jid_predecessor_list (req)"]) == \
        ("hi", "/bin/echo", "5")
    assert lines[-2:] == ["binding:                    NONE", "job_type:                   binary"]
    assert "submission_time" not in fields and "exec_file" not in fields
    after = cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True)
    assert int(after.stdout) == int(before.stdout) + 1
    listed = cell.run("qstat", "-u", "*").stdout.split()
    assert "vjob" not in listed


def test_option_file_with_at(cell, workdir):
    path = os.path.join(workdir, "opts")
    with open(path, "w") as fh:
        fh.write("-N fromfile\n-h\n")
    _, proc = submit_ok(cell, "-@", path, "-b", "y", "true", cwd=workdir)
    assert '("fromfile")' in proc.stdout


def test_path_aliases_rewrite_working_directory(cell, workdir):
    real = os.path.join(workdir, "real")
    os.mkdir(real)
    link = os.path.join(workdir, "mnt")
    os.mkdir(link)
    with open(os.path.join(cell.root, "etc", "sge_aliases"), "a") as fh:
        fh.write(f"{link}/ * * {real}/\n")
    jid, _ = submit_ok(cell, "-cwd", "-N", "aliased", "-o", real + "/", cwd=link, input="pwd\n")
    cell.wait_finished(jid)
    assert read(os.path.join(real, f"aliased.o{jid}")) == real + "\n"


def test_a_job_sources_the_cells_settings_and_reads_its_accounting(cell, workdir):
    """A job script written for Grid Engine: ". $SGE_ROOT/$SGE_CELL/common/settings.sh" gives
    it the cell's commands (its PATH had none), and common/accounting is the accounting file."""
    first, _ = submit_ok(cell, "-sync", "y", "-b", "y", "true", cwd=workdir)
    script = ("#!/bin/sh\nPATH=/usr/bin:/bin; unset GRIDTOOLS_ROOT\n"
              ". $SGE_ROOT/$SGE_CELL/common/settings.sh\n"
              "qsub -terse -sync y -b y true\necho rc=$?\n"
              f"grep -c '^all.q:[^:]*:[^:]*:[^:]*:[^:]*:{first}:' $SGE_ROOT/$SGE_CELL/common/accounting\n")
    jid, _ = submit_ok(cell, "-sync", "y", "-cwd", "-j", "y", "-o", "inner.out", cwd=workdir, input=script)
    lines = read(os.path.join(workdir, "inner.out")).splitlines()
    assert len(lines) == 3 and lines[0].isdigit() and int(lines[0]) > jid
    assert lines[1:] == ["rc=0", "1"]


def test_thousands_of_arguments_and_variables_are_a_job(cell, workdir):
    """Past the 4096 items a job description once held: an xargs-built command line, a
    -v list or a -V environment of 5000 entries, and condor_submit arguments of 5000 words."""
    words = [str(i) for i in range(5000)]
    jid, _ = submit_ok(cell, "-h", "-b", "y", "echo", *words)
    assert cell.run("qstat", "-j", str(jid), check=True).stdout.count(",") >= 4999
    submit_ok(cell, "-h", "-v", ",".join(f"V{i}=1" for i in range(5000)), "-b", "y", "true")
    submit_ok(cell, "-h", "-V", "-b", "y", "true", env={f"HV_{i}": "x" for i in range(5000)})
    with open(f"{workdir}/args.sub", "w") as fh:
        fh.write("executable = /bin/echo\nhold = true\narguments = " + " ".join(words) + "\nqueue\n")
    proc = cell.run("condor_submit", f"{workdir}/args.sub", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    cluster = re.search(r"submitted to cluster (\d+)", proc.stdout).group(1)
    args = cell.run("condor_q", cluster, "-af", "Args", check=True).stdout.split()
    assert args == words
    proc = cell.qsub("-h", "-b", "y", "echo", *[str(i) for i in range(131073)])
    assert proc.returncode == 1
    assert proc.stderr.splitlines()[0] == "Unable to run job: too many job arguments (more than 131072)"


def test_options_of_other_commands_are_refused_after_all_are_read(cell, workdir):
    """Grid Engine's option parser knows qalter's, qrsh's and qstat's options; qsub refuses
    those its job has no place for only after reading every option (directives
    included), one "Unknown option" line each followed by an empty line, exit 5
    (STATUS_ENOIMP); their arguments are checked first. -u and -pty are kept in the job
    and do nothing. Nothing is queued by a refusal."""
    before = cell.qsub("-terse", "-h", "-b", "y", "true", cwd=workdir, check=True)
    script = os.path.join(workdir, "foreign.sh")
    with open(script, "w") as fh:
        fh.write("#!/bin/sh\n#$ -xml\n#$ -display host:0\necho hi\n")
    proc = cell.qsub("-h", "-ot", "5", "-uall", script, cwd=workdir)
    assert (proc.returncode, proc.stdout) == (5, "")
    assert proc.stderr == ("qsub: Unknown option -xml\n\nqsub: Unknown option -display host:0\n\n"
                           "qsub: Unknown option -ot 5\n\nqsub: Unknown option -uall\n\n")
    proc = cell.qsub("-h", "-ot", "many", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (2, "qsub: invalid override tickets, must be an unsigned integer\n")
    proc = cell.qsub("-terse", "-h", "-u", "gtbob", "-pty", "y", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert int(proc.stdout) == int(before.stdout) + 1
    proc = cell.qsub("-h", "-pty", "maybe", "-b", "y", "true", cwd=workdir)
    assert (proc.returncode, proc.stderr) == (2, 'qsub: invalid option argument "-pty maybe"\n')
    listed = [line.split()[0] for line in cell.run("qstat", "-u", "*").stdout.splitlines()[2:]]
    assert listed == [before.stdout.strip(), str(int(before.stdout) + 1)]

"""HTCondor's own submit code (the ``htcondor`` package, version 1 bindings)
as a test oracle, and the fixture directory the submit cases run in.

Run as a script to regenerate the committed expected ads, or to compare
gridtools with the oracle on N random descriptions (differences are printed
by attribute, each with the shortest description that shows it)::

    GRIDTOOLS_HTCONDOR_PYTHON=/path/to/python python tests/condor_oracle.py
    GRIDTOOLS_HTCONDOR_PYTHON=/path/to/python python tests/condor_oracle.py fuzz N [SEED]
    GRIDTOOLS_HTCONDOR_PYTHON=/path/to/python python tests/condor_oracle.py sweep KEYS_FILE

(sweep: each submit command of KEYS_FILE, one a line, with each of a few values).

The interpreter named by GRIDTOOLS_HTCONDOR_PYTHON (default: this one) must
import an ``htcondor`` whose ``Submit.jobs()`` works (HTCondor 23 or 24).
"""

import glob
import os
import random
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "data", "condor_submit")
CLUSTER = 7
QDATE = 1700000000
# The environment the oracle runs in and gridtools is handed (getenv cases).
ENVIRON = {"PATH": "/usr/bin:/bin", "HOME": "/home/gtuser", "LANG": "C.UTF-8",
           "GT_A": "1", "GT_B": "two words", "CONDOR_CONFIG": "/dev/null"}
EXECUTABLE_BYTES = 3000  # run.sh's size: 3 KiB in ImageSize


def make_fixture(root):
    """The files the cases refer to."""
    with open(os.path.join(root, "run.sh"), "w") as handle:
        handle.write("#!/bin/sh\n" + "#" * (EXECUTABLE_BYTES - 11) + "\n")
    os.chmod(os.path.join(root, "run.sh"), 0o755)
    with open(os.path.join(root, "list.txt"), "w") as handle:
        handle.write("l1 x\nl2, y z\nl3\n")
    os.makedirs(os.path.join(root, "g", "sub1.dat"))
    os.makedirs(os.path.join(root, "sub"))
    for name in ("g/a.dat", "g/b.dat", "g/c.txt", "in.txt"):
        open(os.path.join(root, name), "w").close()


_RUN = r"""
import sys, warnings
warnings.simplefilter("ignore")
import htcondor
text = sys.stdin.read()
try:
    ads = list(htcondor.Submit(text).jobs(clusterid=%d, qdate=%d))
except Exception as exc:
    print("ERROR", str(exc).strip().replace("\n", " "))
    sys.exit(0)
for ad in ads:
    print(ad.printOld())
""" % (CLUSTER, QDATE)


def oracle_python():
    return os.environ.get("GRIDTOOLS_HTCONDOR_PYTHON", sys.executable)


def available():
    """Whether the oracle can make job ads here."""
    try:
        proc = subprocess.run([oracle_python(), "-c", _RUN], input="executable=/bin/sh\nqueue\n",
                              capture_output=True, text=True, env=ENVIRON, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0 and "ClusterId = %d" % CLUSTER in proc.stdout


def oracle_text(submit_text, root):
    """The oracle's ads for ``submit_text`` run in ``root``, long form,
    with ``root`` as @CWD@ and the host name as @HOST@."""
    proc = subprocess.run([oracle_python(), "-c", _RUN], input=submit_text, cwd=root,
                          capture_output=True, text=True, env=ENVIRON, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    return placeholders(proc.stdout, root)


def placeholders(text, root):
    text = text.replace(root, "@CWD@")
    return text.replace(f'"{socket.gethostname()}"', '"@HOST@"')


def cases():
    return sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(CASES, "*.sub")))


def regenerate():
    with tempfile.TemporaryDirectory() as root:
        root = os.path.realpath(root)
        make_fixture(root)
        for name in cases():
            with open(os.path.join(CASES, name + ".sub")) as handle:
                text = oracle_text(handle.read(), root)
            with open(os.path.join(CASES, name + ".ads"), "w") as handle:
                handle.write(text)


# ---------------------------------------------------------------- fuzzing

#: submit commands and values a random description picks from
FUZZ_COMMANDS = {
    "executable": ["run.sh", "/bin/echo", "./run.sh"],
    "arguments": ['"a b c"', "a b c", "\"'one two' three\"", '"x=$(Process)"', "$(Item) $(Step)", "a\\ b",
                  "\"it''s ok\"", '"say ""hi"""', '"  spaced   out  "', "\"''\"", 'old \\"q\\" x'],
    "environment": ['"A=1 B=two"', "A=1;B=2", '"A=\'x y\' C=3"', "X=$(Process)",
                    '"A=\'it\'\'s\' B="', "A=;B=x y", '"Q=""quoted"""', "C=a=b"],
    "getenv": ["true", "false", "GT_A", "GT_*", "GT_A, PATH"],
    "input": ["in.txt", "/dev/null", "list.txt"],
    "output": ["out.$(Process)", "/tmp/x.out", "o_$(Item)", "/dev/null"],
    "error": ["err.$(Process)", "err.txt"],
    "log": ["job.log", "log.$(Cluster)", "./x.log"],
    "initialdir": ["sub", "/tmp", "g", "sub/.."],
    "universe": ["vanilla", "local", "scheduler"],
    "requirements": ["Memory > 100", "Cpus > 1", "GPUs > 0", "HasFileTransfer", 'FileSystemDomain == "x"', "foo > 1",
                     'OpSys == "LINUX"', "TARGET.Cpus >= 2"],
    "rank": ["Memory", "-KFlops", "0"],
    "deferral_time": ["1700003600", "CurrentTime + 60", "-5", "1.5", "x"],
    "deferral_window": ["0", "60", "-1", "abc"],
    "cron_prep_time": ["10", "true"],
    "cron_minute": ["*/5", "0", "99-x", ""],
    "cron_day_of_week": ["1-5", "*"],
    "request_cpus": ["1", "2", "$(Step)+1"],
    "request_memory": ["100", "1G", "512 MB", "1.5G", "100K", "MY.RequestCpus * 100"],
    "request_disk": ["1G", "100", "10 MB"],
    "request_gpus": ["1", "0"],
    "request_foo": ["3", "0", "MY.X"],
    "request_bar": ["1 + 1"],
    "priority": ["0", "5", "-3"],
    "nice_user": ["true", "false", "1"],
    "accounting_group": ["physics", "group_a.sub"],
    "accounting_group_user": ["bob"],
    "notification": ["never", "Always", "complete", "error", "Start"],
    "notify_user": ["me@example.org"],
    "hold": ["true", "False", "1"],
    "on_exit_remove": ["ExitCode == 0", "true"],
    "on_exit_hold": ["ExitCode != 0", "false"],
    "periodic_hold": ["NumJobStarts > 2"],
    "periodic_release": ["true"],
    "periodic_remove": ["JobStatus == 5"],
    "max_retries": ["3", "0"],
    "success_exit_code": ["2"],
    "retry_until": ["3", "ExitCode > 10", "2.5"],
    "kill_sig": ["SIGINT", "9"],
    "batch_name": ["mybatch", '"quoted batch"', "b_$(Cluster)", "$(p)_$(q)_$(c)", "$(e)$(h)$(fn)$(fx)$(fq)$(d)",
                   "$(s)|$(v)|$(b)|$(dn)|$(l)|$(i)"],
    "should_transfer_files": ["YES", "IF_NEEDED"],
    "transfer_input_files": ["in.txt", "in.txt, run.sh , list.txt"],
    "transfer_output_files": ["out.txt", "a , b"],
    "transfer_executable": ["false", "true"],
    "leave_in_queue": ["true", "false"],
    "stream_output": ["true", "0"],
    "concurrency_limits": ["Foo, bar:2", "a b"],
    "description": ["my job", '"quoted"'],
    "email_attributes": ["A, B"],
    "hold_kill_sig": ["SIGKILL", "3"],
    "kill_sig_timeout": ["5", "12abc"],
    "log_xml": ["true", "0"],
    "image_size": ["100", "1 GB", "1.5k"],
    "job_lease_duration": ["100"],
    "dagman_log": ["dag.log"],
    "coresize": ["0", "05"],
    "transfer_output_remaps": ['"a = b"'],
    "want_graceful_removal": ["MY.X"],
    "job_max_vacate_time": ["60"],
    "max_idle": ["1+2"],
    "shell": ["echo hi && ls", "x=$(Process); echo $x", "printf '%s\\n' a"],
    "prio": ["3", "true"],
    "preferences": ["Memory"],
    "arguments2": ['"p q"', '"a ""b"" c"', '""'],
    "environment2": ['"C=3 D=\'x y\'"'],
    "allow_arguments_v1": ["true"],
    "allow_environment_v1": ["true"],
    "disk_usage": ["5", "2.5", "1 MB"],
}
#: other lines: macros, custom attributes, and queue statements (one ends each description)
FUZZ_MACROS = ["x = 5", "name = job_$(x)", "base = $(x:7)", "r = $INT(x)", "f = $REAL(x)",
               "p = $INT(x,%03d)", "q = $REAL(x,%.2f)", "c = $CHOICE(Step, a, b, c)", "e = $ENV(GT_A)",
               "h = $ENV(NOPE:dflt)", "fn = $Fn(Item)", "fx = $Fx(Item)", "fq = $Fqd(Item)",
               "d = $(Item:none)", "u = $F(Cmd)", "s = $STRING(x,%4s)", "v = $EVAL(x * 3)",
               "b = $BASENAME(Item, .dat)", "dn = $DIRNAME(Item)", "l = $CHOICE(0, x)", "i = $INT(x,%+05d)"]
FUZZ_CUSTOM = ["+Foo = 1", '+Bar = "text"', "MY.Baz = 3.5", "+Expr = Memory * 2", '+Name = "$(Item)"',
               "MY.List = {1, 2}", "+Big = 9223372036854775807", "+Proc = $(Process)",
               r'+Pattern = regexp("a\.b\d", Name)', r'+Escapes = "x\ny\\z\"q"', r'+Ends = "end\\"']
FUZZ_QUEUES = ["queue", "queue 3", "queue 2 Item from (a b c)", "queue Item in (x y z)",
               "queue Item matching g/*.dat", "queue a,b from list.txt", "queue 2 Item in (p, q)",
               "queue Item from (\n  r1\n  r2\n)", "queue Item in [1:] (a b c)", "queue Item in [::2] (a b c d)",
               "queue 2 a,b from list.txt", "queue Item matching files g/*", "queue Item matching dirs g/*",
               "queue a b from (\n  1 2\n  3, 4\n)", "queue Item in (\n  x, y\n  z\n)", "queue Item from [1:2] list.txt",
               "queue $(x) Item in (p)", "queue 2*2"]

_RUN_MANY = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import htcondor
out = []
for text in json.load(sys.stdin):
    try:
        ads = htcondor.Submit(text).jobs(clusterid=%d, qdate=%d)
        out.append(["\n".join("%%s = %%s" %% (k, " ".join(str(ad.lookup(k)).split())) for k in ad.keys())
                    for ad in ads])
    except Exception as exc:
        out.append(str(exc).strip().replace("\n", " "))
json.dump(out, sys.stdout)
""" % (CLUSTER, QDATE)


def random_description(rng):
    """A submit description of macros, commands, custom attributes and one queue statement
    (one command name in five in another case)."""
    # (x first: HTCondor's submit code stops the whole process on $INT(x) of an undefined x)
    lines = ["x = 5"] + rng.sample(FUZZ_MACROS[1:], rng.randint(1, 5)) if rng.random() < 0.4 else []
    names = rng.sample(sorted(FUZZ_COMMANDS), rng.randint(2, 10))
    if "executable" not in names:
        names.insert(0, "executable")
    for name in names:
        shown = name if rng.random() < 0.8 else rng.choice([name.upper(), name.title()])
        lines.append(f"{shown} = {rng.choice(FUZZ_COMMANDS[name])}")
    if rng.random() < 0.4:
        lines += rng.sample(FUZZ_CUSTOM, rng.randint(1, 3))
    lines.append(rng.choice(FUZZ_QUEUES))
    return "\n".join(lines) + "\n"


def gridtools_ads(text, root, version):
    """{lower-case name: (name, canonical value text)} of each job ad gridtools makes of
    ``text`` in ``root`` (as the oracle's: placeholders, the oracle's version), or the
    error's text."""
    from gridtools.classad import parse
    from gridtools.errors import GridError
    from gridtools.formats.condor.fsview import LocalFiles
    from gridtools.formats.condor.jobad import SUBMIT_METHOD_PYTHON, SubmitContext
    from gridtools.formats.condor.submit import parse_submit
    ctx = SubmitContext(cwd=root, owner="root", now=QDATE, files=LocalFiles(root), environ=dict(ENVIRON),
                        filesystem_domain="@HOST@", condor_version=version, submit_method=SUBMIT_METHOD_PYTHON)
    try:
        ads = parse_submit(text).job_ads(CLUSTER, ctx)
    except GridError as exc:
        return str(exc)
    return [{name.lower(): (name, parse(placeholders(ad[name].unparse(), root)).unparse()) for name in ad}
            for ad in ads]


def _oracle_ads(block, root):
    from gridtools.classad import parse
    ad = {}
    for line in placeholders(block, root).splitlines():
        name, _, value = line.partition(" = ")
        ad[name.lower()] = (name, parse(value).unparse())
    return ad


#: what gridtools and the oracle may rightly make differently: the oracle's own build, the
#: owner (which HTCondor's submit library leaves to the schedd)
FUZZ_IGNORED = {"condorplatform", "condorversion", "owner"}


def differences(texts):
    """{what differs (an attribute and both values, or a refusal): [descriptions]} of
    gridtools against the oracle on ``texts``. A missing executable is not compared: the
    oracle does not look for files; nor is a $CHOICE index out of range (see below)."""
    import json
    found = {}
    with tempfile.TemporaryDirectory() as root:
        root = os.path.realpath(root)
        make_fixture(root)
        proc = subprocess.run([oracle_python(), "-c", _RUN_MANY], input=json.dumps(texts), cwd=root,
                              capture_output=True, text=True, env=ENVIRON, timeout=1200)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)
        for text, answer in zip(texts, json.loads(proc.stdout)):
            ours = gridtools_ads(text, root, "$CondorVersion: fuzz $")
            if isinstance(ours, str) and "does not exist" in ours:
                continue
            if isinstance(ours, str) and "$CHOICE() config macro: index" in ours:
                # HTCondor's binding stops at (or crashes on) the proc whose $CHOICE index is
                # out of range without an error, where condor_submit refuses the whole file
                continue
            if isinstance(answer, str) or isinstance(ours, str):
                if isinstance(answer, str) != isinstance(ours, str):
                    key = "oracle refuses: " + answer if isinstance(answer, str) else "gridtools refuses: " + ours
                    found.setdefault(key[:100], []).append(text)
                continue
            theirs = [_oracle_ads(block, root) for block in answer]
            if len(theirs) != len(ours):
                found.setdefault(f"{len(ours)} ads, oracle {len(theirs)}", []).append(text)
                continue
            for want, have in zip(theirs, ours):
                for key in sorted((set(want) | set(have)) - FUZZ_IGNORED):
                    if (want.get(key) or (None, None))[1] != (have.get(key) or (None, None))[1]:
                        found.setdefault(f"{key}: oracle {want.get(key)}, gridtools {have.get(key)}"[:160],
                                         []).append(text)
    return found


def report(found, count, what="descriptions"):
    for kind, texts_ in sorted(found.items(), key=lambda kv: -len(kv[1])):
        example = min(texts_, key=len).rstrip("\n").replace("\n", "\n    ")
        print(f"{len(texts_)} x {kind}\n    {example}")
    print(f"{count} {what}, {len(found)} kinds of difference")
    return len(found)


def fuzz(count, seed=1):
    """Compare gridtools with the oracle on ``count`` random descriptions; print what
    differs, by attribute (or kind of refusal), each with its shortest example."""
    rng = random.Random(seed)
    texts = [random_description(rng) for _ in range(count)]
    return report(differences(texts), count)


#: the values ``sweep`` gives each submit command
SWEEP_VALUES = ["true", "false", "5", "abc", "1 + 2", '"quoted"', "a, b"]


def sweep(keys_file):
    """Compare gridtools with the oracle on one description per submit command named in
    ``keys_file`` (one a line, as HTCondor's submit_utils.h defines them) and value of
    SWEEP_VALUES: ``executable = run.sh``, the command, ``queue``."""
    with open(keys_file) as handle:
        keys = [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    texts = [f"executable = run.sh\n{key} = {value}\nqueue\n" for key in keys for value in SWEEP_VALUES
             if key.lower() not in ("executable", "queue")]
    return report(differences(texts), len(texts))


if __name__ == "__main__":
    if sys.argv[1:2] == ["fuzz"]:
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
        sys.exit(1 if fuzz(int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 1) else 0)
    if sys.argv[1:2] == ["sweep"]:
        sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))
        sys.exit(1 if sweep(sys.argv[2]) else 0)
    regenerate()

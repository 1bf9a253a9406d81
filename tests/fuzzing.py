"""Mutation fuzzing of gridtools' parsers, shared by tests/test_fuzz.py and bench/fuzz.py.

An input is a seed (a real command line, option file, job script,
configuration object or spool file) changed by one to four random
mutations; each parser (a ``Target``) is fed inputs of its kind, in
process. A parser passes an input when it returns, or raises one of the
project's errors (``gridtools.errors.GridError``) whose text is one
non-empty line. Anything else -- another exception, an empty or multi-line
message -- is a ``Finding``, kept with the input that caused it.

``make_targets(root)`` builds the targets against the cell at ``root``
(created with ``cellsetup.initialise``; it is only read); ``run(targets,
seed, count)`` feeds ``count`` inputs to every target, deterministically
for a given seed.
"""

import glob
import os
import random
import re
import shlex
import traceback
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
CAPTURES = os.path.join(HERE, "data", "reference", "sge")
SPOOL_V1 = os.path.join(HERE, "data", "spool-v1")

#: characters mutations insert: the separators and quotes of every format,
#: control characters, non-ASCII text and a lone surrogate (an undecodable byte)
ALPHABET = (list(",=:;@/\\-+.[]{}()\"'` \t\n#$*?|!%&<>~^0123456789aAzZ_")
            + ["\x00", "\x1b", "\x7f", "\r", "\u00e9", "\u2028", "\udcff", "\u0663"])
#: whole words mutations insert
TOKENS = ["", "NONE", "none", "INFINITY", "TRUE", "FALSE", "-1", "0", "1", "-0", "+5", "1.5",
          "1e999", "-1e999", "nan", "inf", "99999999999999999999999", "0x10", "1_0", "\u0663",
          "@", "@@", "@allhosts", "all.q", "all.q@", "*", "?", "a=b", "=", ",", ":", "::", "1-0",
          "0-0", "5-1", "1-", "-5", "1:2:3:4", "[", "]", ",[a=1]", "\\", '"', "'", "#", "#$",
          "{", "}", "/", "../x", "a" * 300, "h_rt=abc", "slots=-1", "np_load_avg=x",
          "\u00e9t\u00e9", "x\ny", "\x1b[31m"]


@dataclass
class Finding:
    """An input a parser did not handle: its target, the input and what happened."""
    target: str
    data: object
    problem: str

    def __str__(self):
        return f"{self.target}: {self.problem}\n  input: {self.data!r}"


@dataclass
class Target:
    """One parser: how its inputs look (``words`` or ``text``), seeds, and the call."""
    name: str
    kind: str
    seeds: list
    call: object
    vocabulary: list = field(default_factory=list)


# ---------------------------------------------------------------- mutations

def _char(rng):
    return rng.choice(ALPHABET)


def mutate_text(rng, text):
    """``text`` changed by one random edit."""
    n = len(text)
    i = rng.randrange(n + 1)
    j = min(n, i + rng.randint(1, 8))
    choice = rng.randrange(11)
    if choice == 0:
        return text[:i] + _char(rng) + text[i:]
    if choice == 1:
        return text[:i] + text[j:]
    if choice == 2:
        return text[:i] + _char(rng) + text[i + 1:]
    if choice == 3:
        return text[:i] + rng.choice(TOKENS) + text[i:]
    if choice == 4:
        return text[:i] + rng.choice(TOKENS) + text[j:]
    if choice == 5:
        return text[:i]
    if choice == 6:
        k = rng.randrange(n + 1)
        return text[:k] + text[i:j] + text[k:]
    if choice == 7:
        return text[:i] + text[i:j].swapcase() + text[j:]
    return _mutate_lines(rng, text, choice)


def _mutate_lines(rng, text, choice):
    lines = text.split("\n")
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    if choice == 8:
        lines.insert(a, lines[b])
    elif choice == 9:
        del lines[a]
    else:
        lines[a], lines[b] = lines[b], lines[a]
    return "\n".join(lines)


def mutate_words(rng, words, vocabulary):
    """The word list changed by one random edit."""
    words = list(words)
    i = rng.randrange(len(words) + 1)
    choice = rng.randrange(8)
    pool = vocabulary or TOKENS
    if choice == 0 and words:
        del words[min(i, len(words) - 1)]
    elif choice == 1:
        words.insert(i, rng.choice(pool))
    elif choice == 2:
        words.insert(i, rng.choice(TOKENS))
    elif choice == 3 and words:
        k = min(i, len(words) - 1)
        words[k] = mutate_text(rng, words[k])
    elif choice == 4 and words:
        k = min(i, len(words) - 1)
        words[k] = rng.choice(TOKENS)
    elif choice == 5 and len(words) > 1:
        a, b = rng.randrange(len(words)), rng.randrange(len(words))
        words[a], words[b] = words[b], words[a]
    elif choice == 6 and words:
        words.insert(i, words[rng.randrange(len(words))])
    else:
        k = rng.randrange(len(words)) if words else 0
        words[k:k + 1] = [mutate_text(rng, words[k]) if words else rng.choice(TOKENS)]
    return words


def mutated(rng, target):
    """A seed of ``target`` after one to four mutations."""
    data = rng.choice(target.seeds)
    for _ in range(rng.randint(1, 4)):
        if target.kind == "words":
            data = mutate_words(rng, data, target.vocabulary)
        else:
            data = mutate_text(rng, data)
    return data


# ---------------------------------------------------------------- running

def check(target, data):
    """None when ``target`` handles ``data``, else a Finding."""
    from gridtools.errors import GridError
    try:
        target.call(data)
    except GridError as exc:
        text = str(exc)
        if not text and type(exc).__name__ == "UsageError":
            return None             # (the usage alone, as Grid Engine's qacct and HTCondor's tools give it)
        if not text.strip() or "\n" in text.strip():
            return Finding(target.name, data, f"{type(exc).__name__} not one line: {text!r}")
    except RecursionError:
        return Finding(target.name, data, "RecursionError")
    except Exception:  # noqa: BLE001 - every other exception is what the fuzzer looks for
        return Finding(target.name, data, traceback.format_exc(limit=-3).strip())
    return None


def run(targets, seed, count, stop_after=20):
    """Feed ``count`` mutated inputs to each target; (inputs fed, findings), at most
    ``stop_after`` findings per target. Each target has its own random stream (from
    the seed and its name), so a run of some targets repeats that of all."""
    findings, fed = [], 0
    for target in targets:
        rng = random.Random(f"{seed}:{target.name}")
        found = 0
        for _ in range(count):
            fed += 1
            finding = check(target, mutated(rng, target))
            if finding is not None:
                findings.append(finding)
                found += 1
                if found >= stop_after:
                    break
    return fed, findings


def _run_names(root, names, seed, count, stop_after):
    os.environ["GRIDTOOLS_ROOT"] = root
    targets = [t for t in make_targets(root) if t.name in names]
    return run(targets, seed, count, stop_after)


def run_parallel(root, seed, count, workers=None, names=None, stop_after=20):
    """``run`` over every target (or those ``names``), split among worker processes."""
    from concurrent.futures import ProcessPoolExecutor
    os.environ["GRIDTOOLS_ROOT"] = root
    names = names or [t.name for t in make_targets(root)]
    workers = max(1, min(workers or os.cpu_count() or 1, len(names)))
    if workers == 1:
        return _run_names(root, names, seed, count, stop_after)
    shares = [names[i::workers] for i in range(workers)]
    fed, findings = 0, []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for part_fed, part_findings in pool.map(_run_names, [root] * workers, shares, [seed] * workers,
                                                [count] * workers, [stop_after] * workers):
            fed += part_fed
            findings += part_findings
    return fed, findings


# ---------------------------------------------------------------- seeds

def captured_commands(command):
    """Argument lists of ``command`` from the "# command:" lines of the Grid Engine captures."""
    found = []
    for path in sorted(glob.glob(os.path.join(CAPTURES, "*.txt"))):
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.readline()
        if not head.startswith("# command:"):
            continue
        line = head[len("# command:"):].split("&&")[-1]
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        for stop in ("|", ";", ">", "2>&1", "2>/dev/null"):
            if stop in words:
                words = words[:words.index(stop)]
        if words and words[0] == command:
            found.append(words[1:])
    return found or [[]]


def captured_stdout(name):
    """The standard output of a capture (or the file an editor was handed)."""
    with open(os.path.join(CAPTURES, name), encoding="utf-8") as fh:
        text = fh.read()
    for head in ("# ---- stdout ----\n", "# ---- editor file ----\n"):
        if head in text:
            return text.split(head, 1)[1].split("# ---- stderr ----\n", 1)[0]
    return ""


#: a typical value of each submit option (qsub, qalter, qrsh, #$ lines, sge_request)
OPTION_EXAMPLES = {
    "-a": ["202612011200"], "-ac": ["a=1,b"], "-A": ["acct"], "-ar": ["3"], "-b": ["y"],
    "-binding": ["linear:1"], "-c": ["sx"], "-ckpt": ["ck"], "-clear": [], "-cwd": [],
    "-C": ["#%"], "-dc": ["a"], "-dl": ["12011200.30"], "-e": ["err.txt"], "-h": [],
    "-hard": [], "-he": ["n"], "-hold_jid": ["1,name*"], "-hold_jid_ad": ["2"],
    "-i": ["/dev/null"], "-j": ["y"], "-js": ["10"], "-jsv": ["none"],
    "-l": ["h_rt=1:00:00,h_vmem=2G,arch=lx*"], "-m": ["bea"], "-M": ["me@host"],
    "-masterq": ["all.q@fuzzhost"], "-N": ["name"], "-notify": [], "-now": ["n"],
    "-o": ["host:/tmp/out"], "-ot": ["5"], "-u": ["root"], "-P": ["proj"], "-p": ["-10"],
    "-pe": ["smp", "2-4"], "-q": ["all.q,*@fuzzhost"], "-R": ["y"], "-r": ["n"],
    "-sc": ["x=2"], "-shell": ["n"], "-soft": [], "-S": ["/bin/sh"], "-sync": ["n"],
    "-t": ["1-10:2"], "-tc": ["2"], "-terse": [], "-v": ["A=1,PATH"], "-V": [],
    "-verify": [], "-w": ["n"], "-wd": ["/tmp"],
}


def submit_seeds():
    seeds = [w[:-1] + ["-b", "y", "true"] for w in captured_commands("qsub")]
    every = []
    for option, args in OPTION_EXAMPLES.items():
        if option not in ("-ot", "-u", "-sync", "-verify"):
            every += [option, *args]
            seeds.append([option, *args, "script.sh", "arg"])
    seeds.append(every + ["script.sh"])
    return seeds


def _kind_of_capture(name):
    table = (("qconf-sq-", "queue"), ("qconf-sq.", "queue"), ("qconf-aq.", "queue"),
             ("qconf-se-", "exechost"), ("qconf-ae.", "exechost"), ("qconf-shgrp-", "hostgroup"),
             ("qconf-su-", "userset"), ("qconf-sp-", "pe"), ("qconf-ap.", "pe"),
             ("qconf-sp.", "pe"), ("qconf-sckpt-", "ckpt"), ("qconf-ackpt.", "ckpt"),
             ("qconf-sc.", "complex"), ("qconf-ssconf", "sched"), ("qconf-sconf-", "conf"),
             ("qconf-suser-", "user"), ("qconf-auser.", "user"), ("qconf-sprj-", "project"),
             ("qconf-aprj.", "project"), ("qconf-sstree", "sharetree"), ("qconf-srqs", "rqs"),
             ("qconf-arqs.", "rqs"), ("qconf-scal-", "calendar"), ("qconf-acal.", "calendar"),
             ("qconf-sm.", "managers"), ("qconf-so.", "operators"), ("qconf-sh.", "adminhosts"),
             ("qconf-ss.", "submithosts"))
    return next((kind for prefix, kind in table if name.startswith(prefix)), None)


def object_seeds():
    """kind -> texts: the captures of qconf -s…, the templates and a new cell's objects."""
    from gridtools.formats.sge import defaults, objects
    seeds = {kind: [] for kind in objects.KINDS}
    for path in sorted(glob.glob(os.path.join(CAPTURES, "qconf-*.txt"))):
        kind = _kind_of_capture(os.path.basename(path))
        text = captured_stdout(os.path.basename(path))
        if kind and text.strip() and "denied" not in text and "not" not in text.split("\n")[0]:
            seeds[kind].append(text)
    for kind in objects.KINDS:
        try:
            seeds[kind].append(objects.render(kind, objects.template(kind, "fuzz")))
        except TypeError:
            seeds[kind].append(objects.render(kind, objects.template(kind)))
    files = {**defaults.shipped_files(), **defaults.default_cell_objects(["fuzzhost"], 2, "root")}
    for rel, text in files.items():
        kind = {"queues": "queue", "exechosts": "exechost", "hostgroups": "hostgroup",
                "usersets": "userset", "pe": "pe", "conf": "conf", "sched_conf": "sched",
                "complex": "complex"}.get(rel.split("/")[0], rel if rel in seeds else None)
        if kind in seeds:
            seeds[kind].append(text)
    return {kind: texts for kind, texts in seeds.items() if texts}


def spool_seeds():
    """Texts of the spool files the daemon and the commands read."""
    texts = []
    for path in sorted(glob.glob(os.path.join(SPOOL_V1, "**", "*.yaml"), recursive=True)):
        with open(path, encoding="utf-8") as fh:
            texts.append(fh.read())
    return texts


def accounting_seeds():
    with open(os.path.join(SPOOL_V1, "accounting"), encoding="utf-8") as fh:
        return [line for line in fh.read().splitlines() if line and not line.startswith("#")]


def script_seeds():
    with open(os.path.join(CAPTURES, "jobscript-directives.sh.txt"), encoding="utf-8") as fh:
        captured = "".join(line for line in fh if not line.startswith("# job script"))
    lines = [f"#$ {opt} {' '.join(shlex.quote(a) for a in args)}".rstrip()
             for opt, args in OPTION_EXAMPLES.items() if opt not in ("-ot", "-u", "-sync", "-verify", "-C")]
    return [captured, "#!/bin/sh\n" + "\n".join(lines) + "\necho hi\n",
            "#!/bin/sh\n#$ -l h_rt=10 -q all.q # comment\n#$ -N 'a name'\ntrue\n"]


def request_file_seeds():
    from gridtools.formats.sge import defaults
    lines = [f"{opt} {' '.join(shlex.quote(a) for a in args)}".rstrip()
             for opt, args in OPTION_EXAMPLES.items() if opt not in ("-ot", "-u", "-sync", "-verify", "-C")]
    return [defaults.SGE_REQUEST + "-cwd\n-j y\n", "\n".join(lines) + "\n", '-l "h_rt=1:0:0" -p -5 # c\n']


# ---------------------------------------------------------------- targets

def _complex_rows(table):
    """The complex table as the status snapshot carries it (qstat and qhost read that)."""
    return {row["name"]: [row["shortcut"], row["type"], row["relop"], str(row["requestable"]),
                          str(row["consumable"]), str(row["default"]), float(row["urgency"])]
            for row in table.values()}


def _submit_calls(root):
    from gridtools.cli.sge import options, qalter, qrsh, submit, tokens

    def options_of(words, allowed=("all", "submit", "cli"), stop=True):
        req = options.fresh_request()
        options.parse(list(words), req, options.Context("qsub", cwd=root, env={"PATH": "/bin"}),
                      allowed=allowed, stop_at_arg=stop)
        submit.check_request(req)

    def request_file(text):
        words = [w for line in text.splitlines() for w in tokens.split_words(line)]
        options_of(words, ("all", "submit"), stop=False)

    def directives(text):
        options_of(tokens.script_directives(text), ("all", "submit"))

    def alter(words):
        qalter.changes_of(qalter.parse_args(list(words), cwd=root))

    return {"qsub-options": options_of, "sge_request": request_file, "script-directives": directives,
            "qalter": alter, "qrsh": lambda words: qrsh.build_request(list(words), root)}


def _query_calls(complexes):
    from gridtools.cli.sge import jobsel, loadvalues, qacct, qdel, qhold, qhost, qmod, qstat

    def stat(words):
        opts = qstat.parse_args(list(words))
        loadvalues.check_requests(opts.requests, complexes)

    def host(words):
        opts = qhost.parse_args(list(words))
        loadvalues.check_requests(opts.requests, complexes)

    def acct(words):
        try:
            qacct.parse_args(list(words), 1_800_000_000)
        except qacct._Help:
            pass

    return {"qstat": stat, "qhost": host, "qacct": acct,
            "qdel": lambda words: jobsel.split_items(qdel.parse_args(list(words))[2]),
            "qhold": lambda words: jobsel.split_items(qhold.parse_args(list(words))[2]),
            "qmod": lambda words: qmod._items(qmod.parse_args(list(words))[3])}


def _qconf_calls(known):
    from gridtools.cli.sge import qconf
    from gridtools.daemon import confattr
    from gridtools.errors import GridError
    from gridtools.formats.sge import objects

    def attribute(words):
        """What the daemon does with -aattr/-dattr/-mattr/-rattr, short of storing."""
        if len(words) != 5:
            raise GridError("error: wrong number of words")
        mode, obj_nm, attr, text, target = words
        kind = confattr.OBJECTS.get(obj_nm)
        if kind is None or mode not in ("add", "delete", "modify", "replace"):
            raise GridError("error: invalid attribute request")
        name, key, rule = confattr._split_target(kind, target)
        obj = confattr._load(kind, name)
        confattr._check_host_key(key)
        if kind == "rqs":
            confattr._apply_rqs(obj, attr, text, mode, rule, target)
        else:
            confattr._apply_one(kind, obj, attr, text, mode, key, target, [])
        objects.validate(kind, obj, known)
        objects.render(kind, obj)

    return {"qconf": lambda words: qconf.parse(list(words)), "qconf-attributes": attribute}


def _object_call(kind, known):
    from gridtools.formats.sge import objects, rqs

    def call(text):
        if kind == "rqs":
            for one in rqs.parse_list(text):
                objects.validate("rqs", one, known)
                rqs.parse_list(objects.render("rqs", one))
            return
        obj = objects.parse(kind, text)
        objects.validate(kind, obj, known)
        objects.parse(kind, objects.render(kind, obj))
    return call


def _spool_calls():
    from gridtools.formats import accounting, spoolyaml
    return {"spool-files": spoolyaml.load, "accounting": accounting.parse}


ATTRIBUTE_SEEDS = [
    ["modify", "queue", "slots", "4", "all.q"], ["replace", "queue", "slots", "2,[fuzzhost=3]", "all.q"],
    ["modify", "queue", "load_thresholds", "np_load_avg=2", "all.q@fuzzhost"],
    ["add", "queue", "pe_list", "mpi", "all.q@@allhosts"], ["delete", "queue", "pe_list", "make", "all.q"],
    ["modify", "queue", "h_rt", "1:00:00", "all.q"], ["modify", "queue", "complex_values", "slots=4", "all.q"],
    ["modify", "exechost", "complex_values", "h_vmem=4G", "fuzzhost"],
    ["add", "hostgroup", "hostlist", "fuzzhost", "@allhosts"], ["modify", "pe", "slots", "8", "smp"],
    ["modify", "queue", "suspend_thresholds", "np_load_avg=3", "all.q"],
    ["modify", "queue", "calendar", "NONE", "all.q"], ["modify", "queue", "qtype", "BATCH INTERACTIVE", "all.q"],
]


def make_targets(root):
    """Every target, against the cell at ``root`` (GRIDTOOLS_ROOT must name it)."""
    from gridtools.cli.sge import options
    from gridtools.daemon import confstore
    known = confstore.known()
    complexes = _complex_rows(known["complex"])
    submit_words = submit_seeds()
    vocabulary = list(options.OPTIONS) + TOKENS
    targets = []
    for name, call in _submit_calls(root).items():
        if name == "sge_request":
            targets.append(Target(name, "text", request_file_seeds(), call))
        elif name == "script-directives":
            targets.append(Target(name, "text", script_seeds(), call))
        else:
            seeds = submit_words if name != "qalter" else [w[:-3] + ["1"] for w in submit_words]
            targets.append(Target(name, "words", seeds, call, vocabulary))
    for name, call in _query_calls(complexes).items():
        command = "qrls" if name == "qhold" and not captured_commands("qhold") else name
        targets.append(Target(name, "words", captured_commands(command), call, vocabulary))
    qconf_calls = _qconf_calls(known)
    targets.append(Target("qconf", "words", captured_commands("qconf"), qconf_calls["qconf"], vocabulary))
    targets.append(Target("qconf-attributes", "words", ATTRIBUTE_SEEDS, qconf_calls["qconf-attributes"]))
    for kind, texts in object_seeds().items():
        targets.append(Target(f"object-{kind}", "text", texts, _object_call(kind, known)))
    spool = _spool_calls()
    targets.append(Target("spool-files", "text", spool_seeds(), spool["spool-files"]))
    targets.append(Target("accounting", "text", accounting_seeds(), spool["accounting"]))
    return targets


def make_cell(root):
    """A cell at ``root`` for the targets to read: one host, two slots, a shipped etc/."""
    from gridtools.spool import cellsetup
    cellsetup.initialise(root, ["fuzzhost"], 2, "root")
    return root


# ---------------------------------------------------------------- through the real commands

#: the commands fed mutated command lines in a real cell
COMMANDS = ("qsub", "qstat", "qhost", "qacct", "qdel", "qhold", "qrls", "qmod", "qalter", "qconf")
#: words left out of those command lines: they wait for jobs, stop daemons or open editors
UNSAFE = frozenset({"-sync", "-now", "-km", "-ks", "-ke", "-kej", "-kt", "-at", "-tsm"})


def command_lines(seed, count):
    """``count`` mutated command lines ([command, words...]), commands taken in turn;
    qsub always holds its job (``-h`` first), so nothing submitted runs by itself."""
    from gridtools.cli.sge import options
    rng = random.Random(f"{seed}:commands")
    seeds = {name: captured_commands(name) for name in COMMANDS}
    seeds["qsub"] = submit_seeds()
    seeds["qconf"] += [[f"-{mode[0]}attr", *words] for mode, *words in ATTRIBUTE_SEEDS]
    seeds["qalter"] += [w[:-3] + ["1"] for w in seeds["qsub"][-len(OPTION_EXAMPLES):]]
    vocabulary = sorted(set(options.OPTIONS) - UNSAFE) + TOKENS
    lines = []
    while len(lines) < count:
        name = COMMANDS[len(lines) % len(COMMANDS)]
        words = rng.choice(seeds[name])
        for _ in range(rng.randint(1, 3)):
            words = mutate_words(rng, words, vocabulary)
        if any(w in UNSAFE or (name == "qconf" and w.startswith(("-k", "-d", "-purge"))) for w in words):
            continue
        if not all(_argument(w) for w in words):
            continue
        lines.append([name] + (["-h"] if name == "qsub" else []) + words)
    return lines


def _argument(word):
    """True when ``word`` can be a program argument (no NUL byte, encodable)."""
    try:
        return b"\0" not in os.fsencode(word)
    except UnicodeError:
        return False


def cell_digest(root):
    """What a refused command may not change: requests waiting, the job id sequence,
    the set of jobs and the configuration."""
    import hashlib
    spool = os.path.join(root, "spool")
    digest = hashlib.sha256()
    for base, dirs, files in sorted(os.walk(os.path.join(root, "etc"))):
        dirs.sort()
        for name in sorted(files):
            with open(os.path.join(base, name), "rb") as fh:
                digest.update(name.encode() + b"\0" + fh.read())
    with open(os.path.join(spool, "jobseqnum"), "rb") as fh:
        sequence = fh.read()
    taken = os.path.join(spool, "taken")
    queued = os.listdir(os.path.join(spool, "requests")) + (os.listdir(taken) if os.path.isdir(taken) else [])
    return {"requests": sorted(queued), "sequence": sequence,
            "jobs": set(os.listdir(os.path.join(spool, "jobs"))), "etc": digest.hexdigest()}


def changed(before, after):
    """What differs between two digests in a way a refused command could have caused."""
    found = [key for key in ("requests", "sequence", "etc") if before[key] != after[key]]
    if after["jobs"] - before["jobs"]:
        found.append("jobs")
    return found


#: commands that answer a bad option with their usage alone, as Grid Engine's qacct does
USAGE_ALONE = ("qacct",)


def judge(argv, code, out, err, usage, difference):
    """None when a command ran as it should: no traceback; a refusal says why in a line
    of its own (besides usage text and Grid Engine's "Exiting."); a refusal that
    reports nothing done leaves the cell as it was; qsub's error is one line."""
    if "Traceback (most recent call last)" in err:
        return "traceback: " + err.strip().splitlines()[-1]
    if code == 0:
        return None
    lines = [line for line in err.splitlines() if line.strip() and line not in usage and line != "Exiting."]
    if not lines and not out.strip() and not (argv[0] in USAGE_ALONE and err.strip()):
        return f"exit {code} without an error line"
    if argv[0] == "qsub" and len(lines) != 1 and not lines[-1].startswith("verification: ") \
            and not all(line.startswith("qsub: Unknown option ") for line in lines) \
            and not (len(lines) == 2 and "Wrong date/time format" in lines[1]):
        # (-w v and -w p list the reasons the job cannot run, then their verdict; the
        # options qsub does not take are named a line each; a bad date is said what is
        # wrong with first)
        return f"qsub refused with {len(lines)} lines: {lines!r}"
    done = [line for line in lines if _DONE.match(line)]     # (qconf says what it did on stderr)
    if not out.strip() and not done and difference:
        return f"refused (exit {code}) but changed {', '.join(difference)}"
    return None


#: a line in which qconf reports a change it made (on standard error, as Grid Engine's
#: qconf does), before it refused the rest of a list of objects
_DONE = re.compile(r"^\S+@\S+ (added|modified|removed) ")

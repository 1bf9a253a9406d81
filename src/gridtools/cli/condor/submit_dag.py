"""condor_submit_dag: submit a DAG as a DAGMan job.

    condor_submit_dag [-f] [-no_submit] [-maxjobs N] [-batch-name NAME]
                      [-DoRescueFrom N] [-AutoRescue 0|1] [-notification WHEN]
                      [-config FILE] [-outfile_dir DIR] [-append CMD]
                      [-insert_sub_file FILE] [-import_env] [-maxidle N] [-maxpre N]
                      [-maxpost N] [-AlwaysRunPost] [-priority N] [-DumpRescue]
                      [-suppress_notification] [-do_recurse] [-debug N] [-DoRecovery]
                      [-MaxHold N] [-SubmitMethod N] DAGFILE

Several DAG files run as one DAG, named after the first (``check_dags``).
The DAG file is read and checked first (``formats.condor.dag``: JOB,
PARENT ... CHILD, RETRY, VARS, SCRIPT PRE/POST, PRIORITY, ABORT-DAG-ON,
...). Then ``DAGFILE.condor.sub`` is written: a scheduler universe job
that runs ``condor_dagman`` (the DAG's manager, which submits the node jobs
and follows them: the launcher beside this package, ``dagman.executable``,
so that the job's Cmd names it as HTCondor's does) with its output in
``DAGFILE.lib.out`` and ``DAGFILE.lib.err`` and its own messages in
``DAGFILE.dagman.out``; it is submitted like any job (it holds no slot) and
shows in condor_q.

When a rescue DAG (``DAGFILE.rescueNNN``) exists, the newest one is used
and the DAG resumes where it stopped; otherwise files a previous run left
are an error unless ``-f`` is given, which overwrites them and renames
rescue DAGs to ``*.old`` (the manager renames those numbered above the one
-DoRescueFrom names when it starts). Messages and layout follow HTCondor's.

A SUBDAG EXTERNAL node's DAG gets the options HTCondor's condor_submit_dag passes
on to nested DAGs (``DEEP``: -AutoRescue, -DoRescueFrom, -outfile_dir,
-notification, -import_env, -include_env, -insert_env, -suppress_notification,
-do_recurse, -force), not the throttles -maxjobs, -maxidle, -maxpre and -maxpost,
which are the top DAG's own (``sub_options``).
"""

import os
import sys

from gridtools.errors import GridError, InputError, UsageError
from gridtools.formats.safetext import output_is_the_result

USAGE = """\
Usage: {prog} [options] dag_file [dag_file_2 ... dag_file_n]
    Options:
    -help               (print usage info and exit)
    -force / -f         (overwrite files condor_submit_dag uses if they exist)
    -update_submit      (update the submit file if it exists and go on)
    -allowversionmismatch (accepted: the manager is always this gridtools)
    -usedagdir          (the paths of each DAG file are relative to its folder, not to
                         the current one; its nodes run there)
    -no_submit          (DAG is not submitted to HTCondor)
    -maxidle <number>   (maximum number of idle nodes allowed)
    -maxjobs <number>   (maximum number of job clusters submitted at once)
    -maxpre <number>    (maximum number of PRE scripts to run at once)
    -maxpost <number>   (maximum number of POST scripts to run at once)
    -MaxHold <number>   (accepted: maximum number of HOLD scripts to run at once)
    -AlwaysRunPost      (run POST scripts even if PRE script fails)
    -DontAlwaysRunPost  (don't run POST scripts if PRE script fails; the default)
    -priority <priority> (added to the PRIORITY of the DAG's nodes for their JobPrio)
    -suppress_notification (node jobs send no e-mail)
    -dont_suppress_notification (node jobs send e-mail as their submit files say; the default)
    -DumpRescue         (the DAG manager writes a rescue DAG and exits at once)
    -DoRecovery         (the DAG manager starts in recovery mode: what the nodes log
                         says of the nodes' jobs is taken)
    -SubmitMethod <value> (accepted: the manager always submits the node jobs itself)
    -debug <level>      (accepted: the manager's log has the same lines at every level)
    -dagman <path>      (accepted and not used: the manager is always gridtools' condor_dagman)
    -do_recurse         (write the submit files of SUBDAG EXTERNAL DAGs now)
    -no_recurse         (leave them to the manager, when it starts those nodes; the default)
    -DoRescueFrom <number>  (run rescue DAG of given number)
    -AutoRescue 0|1     (whether to automatically run newest rescue DAG;
                         0 = false, 1 = true)
    -load_save <filename> (run the DAG from the progress a save point file holds)
    -batch-name <name>  (set the batch name for the dag)
    -config <filename>  (DAGMan configuration file: its DAGMAN_* settings)
    -outfile_dir <dir>  (directory into which to put the dagman.out file)
    -append <command>   (append submit command to the DAGMan job's submit file)
    -insert_sub_file <filename> (insert submit commands into the DAGMan job's submit file;
                         default: DAGMAN_INSERT_SUB_FILE)
    -import_env         (the DAGMan job gets the whole current environment)
    -include_env <variable[,variable...]> (variables of the current environment
                         the DAGMan job gets)
    -insert_env <key=value[;key=value...]> (variables set in the DAGMan job's
                         environment)
    -notification <value> (Determines how much email you get from HTCondor.
                         See the condor_submit man page for values.)
"""
_RULE = "-" * 71
#: option -> (attribute, takes a value)
_OPTIONS = {"f": ("force", False), "force": ("force", False), "no_submit": ("no_submit", False),
            "maxjobs": ("maxjobs", True), "dorescuefrom": ("rescue_from", True),
            "autorescue": ("auto_rescue", True), "batch-name": ("batch_name", True),
            "notification": ("notification", True), "help": ("help", False),
            "maxidle": ("maxidle", True), "maxpre": ("maxpre", True), "maxpost": ("maxpost", True),
            "verbose": ("verbose", False), "update_submit": ("update_submit", False),
            "allowversionmismatch": ("allow_version_mismatch", False),
            "usedagdir": ("use_dag_dir", False), "load_save": ("load_save", True),
            "config": ("config", True), "outfile_dir": ("outfile_dir", True),
            "append": ("append", True), "insert_sub_file": ("insert_sub_file", True),
            "import_env": ("import_env", False), "include_env": ("include_env", True),
            "insert_env": ("insert_env", True), "alwaysrunpost": ("always_run_post", False),
            "dontalwaysrunpost": ("dont_always_run_post", False), "priority": ("priority", True),
            "suppress_notification": ("suppress_notification", False),
            "dont_suppress_notification": ("dont_suppress_notification", False),
            "dumprescue": ("dump_rescue", False), "dagman": ("dagman", True), "debug": ("debug", True),
            "do_recurse": ("do_recurse", False), "no_recurse": ("no_recurse", False),
            "dorecovery": ("do_recovery", False), "maxhold": ("maxhold", True),
            "submitmethod": ("submit_method", True)}


class Options:
    def __init__(self):
        self.force = self.no_submit = self.help = self.verbose = self.version = False
        self.update_submit = self.allow_version_mismatch = self.use_dag_dir = False
        self.maxjobs = "0"
        self.rescue_from = "0"
        self.auto_rescue = "1"
        self.batch_name = ""
        self.load_save = ""
        self.notification = "never"
        self.maxidle = self.maxpre = self.maxpost = "0"
        self.config = self.outfile_dir = self.insert_sub_file = ""
        self.import_env = False
        self.always_run_post = None     # -AlwaysRunPost / -DontAlwaysRunPost: the last one given
        self.priority = "0"
        self.suppress_notification = None   # -suppress_notification / -dont_...: the last one
        self.dump_rescue = self.do_recurse = self.do_recovery = False
        self.maxhold = "0"              # -MaxHold N: accepted, not passed on (as HTCondor 24's)
        self.submit_method = ""         # -SubmitMethod N: accepted, not used
        self.dagman = ""                # -dagman PATH: accepted, not used (see the man page)
        self.debug = None               # -debug LEVEL, passed to the manager
        self.appends = []               # -append commands, in order
        self.include_env = []           # -include_env names
        self.insert_env = {}            # -insert_env settings
        self.config_path = ""           # the DAG's configuration file (check_options)
        self.dags = []


#: the names HTCondor 24's condor_submit_dag gives its options in its messages
_FULL = {name.lower(): name for name in (
    "-AllowVersionMismatch", "-AlwaysRunPost", "-Append", "-AutoRescue", "-Batch-Name", "-Config", "-DAGMan",
    "-Debug", "-do_recurse", "-dont_suppress_notification", "-DontAlwaysRunPost", "-DoRescueFrom",
    "-DoRecovery", "-DumpRescue", "-Force", "-import_env", "-include_env", "-insert_env", "-insert_sub_file", "-load_save",
    "-MaxHold", "-MaxIdle", "-MaxJobs", "-MaxPost", "-MaxPre", "-no_recurse", "-no_submit", "-Notification",
    "-outfile_dir", "-Priority", "-Remote", "-SubmitMethod", "-suppress_notification", "-update_submit", "-UseDagDir",
    "-Verbose")}
#: the options whose value is a number
_NUMBERS = ("maxjobs", "rescue_from", "auto_rescue", "maxidle", "maxpre", "maxpost", "priority", "debug",
            "maxhold", "submit_method")


def parse_args(argv):
    opts = Options()
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-"):
            opts.dags.append(arg)
            i += 1
            continue
        if opts.dags:                     # (as HTCondor's, on standard output)
            raise UsageError("ERROR: no arguments allowed after DAG file name(s)", 1)
        if "-vers" in arg:                # (-version, as HTCondor finds it: any word holding -vers)
            opts.version = True
            i += 1
            continue
        attr, takes = _OPTIONS.get(arg.lstrip("-").lower(), (None, False))
        if attr is None:
            raise UsageError(f"Error: Unknown flag '{arg.lower()}' provided")
        if takes:
            full = _FULL.get(arg.lower(), _FULL.get("-" + arg.lstrip("-").lower(), arg))
            if i + 1 >= len(argv) or (attr not in _NUMBERS and argv[i + 1].startswith("-")):
                raise UsageError(f"Error: Option {full} ({arg.lower()}) requires an additional argument")
            if attr in _NUMBERS and not argv[i + 1].strip().lstrip("-").isdigit():
                raise UsageError(f"Error: {arg.lower()} ({full}) additional argument required to be a integer")
            if attr == "append":
                opts.appends.append(argv[i + 1])
            elif attr in ("include_env", "insert_env"):
                _add_env(opts, attr, argv[i + 1])
            else:
                setattr(opts, attr, argv[i + 1])
            i += 2
        elif attr == "dont_always_run_post":
            opts.always_run_post = False
            i += 1
        elif attr in ("dont_suppress_notification", "no_recurse"):
            setattr(opts, {"no_recurse": "do_recurse"}.get(attr, "suppress_notification"), False)
            i += 1
        else:
            setattr(opts, attr, True)
            i += 1
    if opts.debug is not None and not opts.debug.strip().isdigit():
        raise UsageError("Error: -debug (-Debug) additional argument required to be a integer")
    for name, flag in (("maxjobs", "MaxJobs"), ("rescue_from", "DoRescueFrom"), ("auto_rescue", "AutoRescue"),
                       ("maxidle", "MaxIdle"), ("maxpre", "MaxPre"), ("maxpost", "MaxPost"),
                       ("maxhold", "MaxHold")):
        if not str(getattr(opts, name)).strip().isdigit():       # (a negative number is none here)
            raise UsageError(f"Error: -{flag.lower()} (-{flag}) additional argument required to be a integer")
        setattr(opts, name, str(getattr(opts, name)).strip())
    opts.priority = opts.priority.strip()
    opts.submit_method = opts.submit_method.strip()
    return opts


#: the options a nested DAG (SUBDAG EXTERNAL) gets from the DAG it is in, as HTCondor's
#: DAGMan's deep options; the others (-maxjobs, -maxidle, -maxpre, -maxpost, -priority,
#: -config, ...) are the DAG's own
DEEP = ("auto_rescue", "rescue_from", "outfile_dir", "notification", "import_env", "include_env",
        "insert_env", "suppress_notification", "do_recurse", "force")


def deep_of(opts):
    """{name: value} of the DEEP options of condor_submit_dag's Options."""
    return {name: getattr(opts, name) for name in DEEP}


def sub_options(deep, priority=0):
    """The Options of a nested DAG's submit file, as HTCondor's DAGMan runs
    ``condor_submit_dag -no_submit -update_submit [-Priority P]`` with its deep options
    on it: ``deep`` (``deep_of``, or the manager's ``inherit``), the node's priority (its
    PRIORITY plus its DAG's: the nested DAG's own priority, added to its nodes'); a nested DAG's paths are relative to
    its own folder."""
    opts = Options()
    opts.use_dag_dir = True
    for name, value in deep.items():
        if name in DEEP and value is not None:
            setattr(opts, name, str(value) if name in ("auto_rescue", "rescue_from") else value)
    opts.priority = str(int(priority or 0))
    return opts


def force_nested(dag, outfile_dir=""):
    """-force on a nested DAG (its first run): the files of a run before this one go
    and its rescue DAGs are renamed to ``*.old``, as condor_submit_dag -force does."""
    from gridtools.formats.condor.dagstate import rescue_base
    files = files_of(dag, outfile_dir)
    for key in ("log", "lib_out", "lib_err"):
        _unlink(files[key])
    _rename_rescues(rescue_base(dag, False))


def _add_env(opts, attr, value):
    """-include_env NAME[,NAME...]; -insert_env KEY=VALUE[;KEY=VALUE...] (a first
    character that cannot start a name is the delimiter instead: ``|a=1|b=2``)."""
    if attr == "include_env":
        opts.include_env += [name.strip() for name in value.split(",") if name.strip()]
        return
    delimiter = ";"
    if value and not (value[0].isalnum() or value[0] == "_"):
        delimiter, value = value[0], value[1:]
    for pair in value.split(delimiter):
        if not pair.strip():
            continue
        key, equals, setting = pair.partition("=")
        if not equals or not key.strip():
            raise InputError(f"ERROR: -insert_env {pair} is not key=value")
        opts.insert_env[key.strip()] = setting


def files_of(dag, outfile_dir=""):
    """The files condor_submit_dag writes for DAG file ``dag`` (its .dagman.out in
    ``outfile_dir`` when given)."""
    from gridtools.cli.condor.dagman import out_file
    return {"sub": dag + ".condor.sub", "out": out_file(dag, outfile_dir), "lib_out": dag + ".lib.out",
            "lib_err": dag + ".lib.err", "log": dag + ".dagman.log"}


def check_options(opts, dag, parsed):
    """Check -outfile_dir, the DAG's configuration file (-config, or the DAG file's CONFIG
    statement: only one may be given) and -insert_sub_file (by default the configuration
    file's DAGMAN_INSERT_SUB_FILE, else the cell's) before anything is written; the
    configuration file's path goes to the manager (``opts.config_path``)."""
    from gridtools.cli.condor.dagman import cell_config, read_config
    if opts.outfile_dir and not os.path.isdir(opts.outfile_dir):
        raise InputError(f"ERROR: -outfile_dir {opts.outfile_dir} is not a directory")
    given = os.path.abspath(opts.config) if opts.config else ""
    base = os.path.dirname(os.path.abspath(dag)) if opts.use_dag_dir else os.getcwd()
    named = os.path.join(base, parsed.config) if parsed.config else ""
    if given and named and os.path.realpath(given) != os.path.realpath(named):
        raise InputError(f"ERROR: Conflicting DAGMan config files specified: {given} and {named}")
    opts.config_path = given or named
    own = read_config(opts.config_path)[0] if opts.config_path else {}
    where = "-insert_sub_file"
    if not opts.insert_sub_file:
        opts.insert_sub_file = own.get("insert_sub_file") or cell_config().get("insert_sub_file", "")
        where = "DAGMAN_INSERT_SUB_FILE"
    if opts.insert_sub_file and not os.path.isfile(opts.insert_sub_file):
        raise InputError(f"ERROR: {where} {opts.insert_sub_file} cannot be read")


def check_dags(paths, use_dag_dir=False):
    """One Dag of the DAG files given together (read as HTCondor's DAGMan reads them:
    the nodes of each join those of the files before it, names unique across them all).
    The relative paths of a DAG file (its nodes' submit files, scripts and folders, the
    files it includes) are relative to the current folder, as HTCondor's are; with
    ``use_dag_dir`` (-usedagdir) to the folder of that DAG file: the nodes of a file in
    another folder than the first one's then run in its folder."""
    dag = None
    first = os.path.dirname(os.path.abspath(paths[0]))
    for path in paths:
        before = set(dag.nodes) if dag is not None else set()
        dag = check_dag(path, into=dag, use_dag_dir=use_dag_dir)
        folder = os.path.dirname(os.path.abspath(path))
        if folder != first and use_dag_dir:
            for name in set(dag.nodes) - before:
                dag.nodes[name].directory = os.path.join(folder, dag.nodes[name].directory)
    return dag


def check_dag(path, into=None, use_dag_dir=True):
    from gridtools.formats.condor.dag import parse_dag, validate

    def read(name):
        base = (os.path.dirname(path) or ".") if use_dag_dir else "."
        with open(os.path.join(base, name), encoding="utf-8") as fh:
            return fh.read()
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise InputError(f"Error reading DAG file: can't open file {path}: {exc.strerror}") from None
    dag = parse_dag(text, source=path, read=read, into=into)
    validate(dag)
    return dag


def rescue_number(dag):
    from gridtools.formats.condor.dagstate import latest_rescue
    folder = os.path.dirname(os.path.abspath(dag))
    return latest_rescue(os.path.basename(dag), own_files(folder, os.listdir(folder)))[1]


def own_files(folder, names):
    """Those of ``names`` in ``folder`` that are regular files of the caller's own (not
    links): the rescue DAGs a run counts and reads. One another user left in a shared
    folder (/tmp) is not the caller's progress: it would mark nodes done that never
    ran."""
    import stat
    uid, found = os.geteuid(), []
    for name in names:
        try:
            info = os.lstat(os.path.join(folder, name))
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_uid == uid:
            found.append(name)
    return found


def prepare(opts, dag, err):
    """Check the files of a run before this one; True when the DAG may be submitted."""
    from gridtools.formats.condor.dagstate import rescue_base
    files = files_of(dag)
    base = rescue_base(dag, len(opts.dags) > 1)
    _unlink(dag + ".halt")              # a halt file of an earlier run would halt this one
    if opts.load_save:
        return _load_save(opts, dag, files, err)
    if int(opts.rescue_from) > 0:
        from gridtools.formats.condor.dagstate import rescue_name
        name = rescue_name(base, int(opts.rescue_from))
        if not os.path.exists(name):
            err.write(f"-dorescuefrom {opts.rescue_from} specified, but rescue DAG file {name} "
                      "does not exist!\n")
            return False
    if opts.force:
        for key in ("sub", "log", "lib_out", "lib_err"):
            _unlink(files[key])
        _rename_rescues(base)
    if opts.auto_rescue != "0" and rescue_number(base) > 0:
        sys.stdout.write(f"Running rescue DAG {rescue_number(base)}\n")
        return True
    if int(opts.rescue_from) > 0:
        return True
    if opts.update_submit:              # the submit file is written again, the rest kept
        _unlink(files["sub"])
        return True
    if opts.force:                      # (what could not be removed: writing it says why)
        return True
    existing = [files[k] for k in ("sub", "lib_out", "lib_err", "log") if os.path.exists(files[k])]
    for name in existing:
        err.write(f'ERROR: "{name}" already exists.\n')
    if existing:
        err.write("\nSome file(s) needed by condor_dagman already exist. Either:\n- Rename them\n"
                  "- Use the \"-f\" option to force them to be overwritten\n"
                  "\tor\n- Use the \"-update_submit\" option to update the submit file and continue.\n")
        return False
    return True


def _load_save(opts, dag, files, err):
    """-load_save: the run starts from the save file's progress (no rescue DAG is read);
    the files of an earlier run are written again."""
    from gridtools.formats.condor.dagstate import load_save_path
    if int(opts.rescue_from) > 0:
        err.write("ERROR: -load_save and -dorescuefrom cannot be used together\n")
        return False
    path = load_save_path(dag, opts.load_save, os.getcwd())
    if not os.path.isfile(path):
        err.write(f"ERROR: save point file {path} (-load_save {opts.load_save}) does not exist\n")
        return False
    opts.load_save = path
    _unlink(files["sub"])
    return True


def _unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _rename_rescues(dag, after=0):
    """Rename the rescue DAGs numbered above ``after`` to ``*.old``."""
    from gridtools.formats.condor.dagstate import rescue_name
    for number in range(after + 1, rescue_number(dag) + 1):
        name = rescue_name(dag, number)
        if os.path.exists(name):
            os.replace(name, name + ".old")


def submit_description(opts, dag, parsed=None):
    """The text of DAGFILE.condor.sub; ``parsed``: the DAG read (its SET_JOB_ATTR
    attributes join the manager's ad, its ENV GET and ENV SET its environment)."""
    from gridtools.cli.condor import dagman
    files = files_of(dag)
    args = dagman.job_arguments(dag, opts)
    get = list(parsed.env_get if parsed else ()) + list(getattr(opts, "include_env", ()))
    set_ = dict(parsed.env_set if parsed else {}, **getattr(opts, "insert_env", {}))
    env = dagman.job_environment(get=get, set_=set_, everything=getattr(opts, "import_env", False))
    lines = [f"# Filename: {files['sub']}",
             f"# Generated by condor_submit_dag {' '.join(getattr(opts, 'dags', None) or [dag])}",
             "universe\t= scheduler", f"executable\t= {dagman.executable()}",
             f"output\t\t= {files['lib_out']}", f"error\t\t= {files['lib_err']}",
             f"log\t\t= {files['log']}", "remove_kill_sig\t= SIGUSR1",
             "+OtherJobRemoveRequirements\t= \"DAGManJobId =?= $(cluster)\"",
             "on_exit_remove\t= (ExitSignal =?= 11 || (ExitCode =!= UNDEFINED && ExitCode >=0 && ExitCode <= 2))",
             f"arguments\t= \"{args}\"", f"environment\t= \"{env}\"",
             f"notification\t= {opts.notification}"]
    if opts.batch_name:
        lines.append(f"+JobBatchName\t= \"{opts.batch_name}\"")
    for name, value in (parsed.job_attrs if parsed else {}).items():
        lines.append(f"+{name}\t= {value}")
    lines += _inserted(opts)
    lines.append("queue")
    return "".join(line + "\n" for line in lines)


def _inserted(opts):
    """The lines of -insert_sub_file, then the -append commands, which HTCondor's
    condor_submit_dag writes into the submit file before its queue statement."""
    lines = []
    if getattr(opts, "insert_sub_file", ""):
        with open(opts.insert_sub_file, encoding="utf-8", errors="replace") as fh:
            lines += [line for line in fh.read().splitlines()
                      if not line.strip().lower().startswith("queue")]
    return lines + list(getattr(opts, "appends", ()))


def write_subdags(dag, parsed, deep, priority="0", seen=(), use_dag_dir=True):
    """-do_recurse: check the DAG of each SUBDAG EXTERNAL node and write its submit file
    (``DAGFILE.condor.sub``), and so on down, before the DAG is submitted; the paths
    written, in order. Each gets the ``deep`` options (``deep_of``) and the top DAG's
    -priority, as HTCondor's. A DAG that names itself again below is left out. The nodes' paths
    are relative to the DAG file's folder, or with ``use_dag_dir`` false (the top DAG of
    a condor_submit_dag without -usedagdir) to the current one."""
    from gridtools.formats.condor.dag import NodeKind
    written = []
    folder = os.path.dirname(os.path.abspath(dag)) if use_dag_dir else os.getcwd()
    for node in parsed.nodes.values():
        if node.kind is not NodeKind.SUBDAG:
            continue
        path = os.path.join(folder, node.directory or "", node.submit_file)
        if os.path.realpath(path) in seen:
            continue
        inner = check_dag(path)
        opts = sub_options(deep, priority)
        check_options(opts, path, inner)
        if opts.force:
            force_nested(path, opts.outfile_dir)
        written += write_subdags(path, inner, deep, priority, tuple(seen) + (os.path.realpath(dag),))
        from gridtools.ownfiles import open_text
        with open_text(files_of(path)["sub"]) as fh:
            fh.write(submit_description(opts, path, inner))
        written.append(files_of(path)["sub"])
    return written


def submit_one(opts, dag, out, err):
    from gridtools.cli.condor import jobsubmit
    parsed = check_dags(opts.dags or [dag], opts.use_dag_dir)
    check_options(opts, dag, parsed)
    from gridtools.cli.condor.dagman import executable
    executable()            # (the manager found before any file of an earlier run is touched)
    if not prepare(opts, dag, err):
        return 1
    if opts.do_recurse:
        write_subdags(dag, parsed, deep_of(opts), opts.priority, use_dag_dir=opts.use_dag_dir)
    files = files_of(dag, opts.outfile_dir)
    text = submit_description(opts, dag, parsed)
    from gridtools.ownfiles import open_text
    try:
        with open_text(files["sub"]) as fh:
            fh.write(text)
    except OSError:
        err.write(f"ERROR: unable to create submit file {files['sub']}\n")
        return 1
    out.write(f"{_RULE}\n")
    for label, key in (("File for submitting this DAG to HTCondor           ", "sub"),
                       ("Log of DAGMan debugging messages                   ", "out"),
                       ("Log of HTCondor library output                     ", "lib_out"),
                       ("Log of HTCondor library error messages             ", "lib_err"),
                       ("Log of the life of condor_dagman itself            ", "log")):
        out.write(f"{label}: {files[key]}\n")
    out.write("\n")
    if opts.no_submit:
        out.write("-no_submit given, not submitting DAG to HTCondor. You can do this with:\n"
                  f"\"condor_submit {files['sub']}\"\n{_RULE}\n")
        return 0
    out.write("Submitting job(s).\n")
    out.flush()
    from gridtools.cli.condor.dagman import default_batch_name
    done = jobsubmit.submit_text(text, os.getcwd(), source=files["sub"], name="condor_dagman",
                                 batch_name=lambda cluster: default_batch_name(dag, cluster))
    out.write(f"{done.procs} job(s) submitted to cluster {done.cluster}.\n{_RULE}\n")
    return 0


def run(argv, out, err):
    opts = parse_args(argv)
    if opts.help:
        output_is_the_result()
        out.write(USAGE.format(prog="condor_submit_dag"))
        return 0
    if opts.version:
        from gridtools.formats.condor.jobad import VERSION_TEXT
        out.write(VERSION_TEXT)
        return 0
    if not opts.dags:
        raise UsageError("ERROR: no dag file specified; aborting.")
    return submit_one(opts, opts.dags[0], out, err)     # several DAG files run as one


def main(argv, prog="condor_submit_dag"):
    try:
        return run(list(argv), sys.stdout, sys.stderr)
    except UsageError as exc:          # (HTCondor's: the reason on stderr, the usage on stdout)
        (sys.stdout if str(exc).startswith("ERROR: no arguments") else sys.stderr).write(f"{exc}\n")
        sys.stdout.flush()
        sys.stdout.write(USAGE.format(prog=prog))
        return 1
    except GridError as exc:
        sys.stdout.flush()
        sys.stderr.write(f"{exc}\n")
        return 1

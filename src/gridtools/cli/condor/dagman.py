"""``condor_dagman`` (also ``gridtools dagman``): the manager of one DAG, run as a
scheduler universe job.

    condor_dagman -p 0 -f -l . -Dag DAGFILE [-AutoRescue 0|1] [-DoRescueFrom N]
                  [-MaxJobs N] [-MaxIdle N] [-MaxPre N] [-MaxPost N] [-AlwaysRunPost]
                  [-Priority N] [-DoRecov] ...

condor_submit_dag submits it: its job's executable is bin/condor_dagman (``executable``),
so its ad's Cmd names condor_dagman, as HTCondor's does. It runs as the DAG's owner in
the DAG file's folder, holding no slot. It takes the DAG's lock (-Lockfile, by default
``DAGFILE.lock``; see ``daglock``) and leaves at once when another manager
runs the DAG. It reads the DAG (and, with -AutoRescue 1, the newest rescue
DAG, or the one -DoRescueFrom names, read as DAG statements over the DAG's
own: the nodes marked DONE there are done, its RETRY lines set the retries)
and the batch name of its own job (giving it ``DAGFILE+cluster`` when it
has none), then until nothing more can run:

- starts every node whose parents are done, best PRIORITY first and at most
  -MaxJobs at once (``formats.condor.dagstate.ready_nodes``), none while
  -MaxIdle of the DAG's procs are idle: its PRE script runs first (a PRE
  script that fails fails the node; with -AlwaysRunPost its POST script
  decides), at most -MaxPre PRE and -MaxPost POST scripts at once
  (``dagscripts``; the settings come from the command line, the DAG's
  CONFIG file, the cell's condor_config, HTCondor's defaults: ``apply_config``;
  DAGMAN_GENERATE_SUBDAG_SUBMITS False: a SUBDAG EXTERNAL node's submit file is
  not written but taken as it is),
  a NOOP node writes its fake job's events (``dagrecover``), then its submit file
  is submitted with the node's VARS as macros and ``DAGManJobId``,
  ``DAGNodeName``, ``DAGParentNodeNames`` and ``JobPrio`` (the node's
  PRIORITY plus -Priority) in its job ads, the DAG's batch name in those that name
  none, the nodes log ``DAGFILE.nodes.log`` (``DAGManNodesLog``: the
  daemon writes each event there and to the node's own ``log =``, if any)
  and ``SubmitEventNotes = "DAG Node: NAME"`` (the note of its submit
  events, as HTCondor's DAGMan gives it);
- follows each node job to its end (``dagwatch``): a node succeeds when its
  jobs exit with 0, or, with a POST script, when the POST script (given
  ``$RETURN``) exits with 0; a failed node runs again while its RETRY count
  allows (not after its UNLESS-EXIT status); an exit status that matches
  ABORT-DAG-ON ends the DAG at once (running node jobs are removed);
- the FINAL node runs last, also after ABORT-DAG-ON and removal, and its
  result is the DAG's;
- while ``DAGFILE.halt`` exists the DAG is halted (``Runner.check_halt``): no node
  starts, no queued PRE script starts and no node job is submitted, running jobs and
  scripts go on; removing the file resumes it; halted with nothing running, it ends
  as below;
- with -DumpRescue it writes the rescue DAG of the DAG as read (its DONE nodes)
  at once and ends (exit status 0), running nothing;
- when it ends with failed nodes (or aborted, halted, or removed with condor_rm /
  qdel: SIGUSR1, its RemoveKillSig) it writes the next rescue DAG,
  ``DAGFILE.rescueNNN``, marking the nodes that are done and giving the RETRY
  of each node that has retries; a later
  condor_submit_dag of the same DAG resumes there.

Held (condor_hold: SIGTERM, its KillSig) it leaves at once, its node jobs
running, no rescue DAG, and keeps the lock file: a manager that takes over
a lock left by one that is gone runs in recovery mode (``Runner.recover``),
restoring the submitted nodes (and the NOOP nodes that ran) from the nodes log.
With -DoRecov (condor_submit_dag -DoRecovery) it starts in recovery mode even
without such a lock: it reads the nodes log from its start. A start not in recovery
mode empties the nodes log first (``_monitor_nodes_log``), as HTCondor's DAGMan
truncates it, so that it holds this run's events only. A PRE or POST script that the manager's own stop (hold or removal) cut short is
recorded nowhere, as with HTCondor's DAGMan (``NodeScripts._reap_scripts``): it
runs again.

Its progress goes to ``DAGFILE.dagman.out`` (the lines workflow tools read in
HTCondor's DAGMan's words), with the warnings of the DAG's files and of the run,
which DAGMAN_USE_STRICT may make fatal (``dagstrict``); with JOBSTATE_LOG every node event also goes to the
job state log, with NODE_STATUS_FILE the node status file follows the DAG, with
DOT the DAG is drawn (``dagfiles``). DAGFILE.dagman.out is appended to, as HTCondor's
DAGMan appends to it; a link or file another user left at its name is removed before
its first line where the DAG's owner may remove it, as those at the names of the lock
and the nodes log are (``Log.take_name``), and said in it. When it still cannot be
opened (such a link or file in a shared folder of another's, as /tmp, is not written
through), its lines go to the manager's standard error, DAGFILE.lib.err, instead
(``Log``). A nodes log that is not
a regular file of the DAG's owner's ends the DAG before anything runs, in HTCondor's
DAGMan's words (``_monitor_nodes_log``). It removes the lock file when it
ends, unless held. Exit status: 0 when every node (or the FINAL node)
succeeded, 1 when some failed, it was removed or halted or another manager
runs the DAG or a warning was fatal, the ABORT-DAG-ON RETURN value (else the
node's status) when aborted, 3 when held.
"""

import os
import signal
import sys
import time

from gridtools.cli.condor import dagstrict
from gridtools.errors import GridError

#: the exit status of a DAG that could not be read
EXIT_FAILED = 1


#: the DAG manager's command (bin/condor_dagman, a link to the launcher)
COMMAND = "condor_dagman"


def executable():
    """The path of the ``condor_dagman`` launcher the DAGMan job runs (its ``executable``,
    so its ad's Cmd, as HTCondor's condor_submit_dag names its condor_dagman): the one
    in the folder of this installation's commands (``binpath.binary_path``, the
    SGE_BINARY_PATH of its jobs). GridError, in HTCondor's words, when there is none
    that can be run."""
    from gridtools.binpath import binary_path, is_launcher
    folder = binary_path()
    path = os.path.join(folder, COMMAND)
    if folder and is_launcher(path):
        return path
    raise GridError(f"ERROR: Failed to locate {COMMAND} executable in {folder or 'PATH'}", 1)


def job_arguments(dag, opts):
    """The DAGMan job's arguments (V2 syntax) for condor_submit_dag's submit file: those
    HTCondor's gives its condor_dagman (DaemonCore's ``-p 0 -f -l .``, then the DAG's)."""
    from gridtools.formats.condor.args import join_v2
    args = ["-p", "0", "-f", "-l", ".",
            "-Lockfile", dag + ".lock", "-AutoRescue", str(opts.auto_rescue), "-DoRescueFrom",
            str(opts.rescue_from), "-MaxJobs", str(opts.maxjobs)]
    for flag, name in (("-MaxIdle", "maxidle"), ("-MaxPre", "maxpre"), ("-MaxPost", "maxpost")):
        if int(getattr(opts, name, 0) or 0):        # 0: not given (the configuration's)
            args += [flag, str(getattr(opts, name))]
    if getattr(opts, "always_run_post", None) is not None:
        args.append("-AlwaysRunPost" if opts.always_run_post else "-DontAlwaysRunPost")
    if int(getattr(opts, "priority", 0) or 0):
        args += ["-Priority", str(opts.priority)]
    for name in getattr(opts, "dags", None) or [dag]:
        args += ["-Dag", name]
    suppress = getattr(opts, "suppress_notification", None)
    if suppress is not None:        # else the configuration's DAGMAN_SUPPRESS_NOTIFICATION
        args.append("-Suppress_notification" if suppress else "-Dont_Suppress_notification")
    if getattr(opts, "dump_rescue", False):
        args.append("-DumpRescue")
    if getattr(opts, "do_recovery", False):
        args.append("-DoRecov")
    if getattr(opts, "use_dag_dir", False):
        args.append("-UseDagDir")
    if getattr(opts, "debug", None) is not None:
        args += ["-Debug", str(opts.debug)]
    if getattr(opts, "load_save", ""):
        args += ["-load_save", opts.load_save]
    if getattr(opts, "config_path", ""):
        args += ["-config", opts.config_path]
    if getattr(opts, "outfile_dir", ""):
        args += ["-outfile_dir", os.path.abspath(opts.outfile_dir)]
    args += _deep_arguments(opts)
    return join_v2(args).replace('"', '""')


def _deep_arguments(opts):
    """The manager's arguments for the options it passes on to nested DAGs (and no
    other use: condor_submit_dag has applied them to this DAG's own submit file)."""
    args = []
    if getattr(opts, "notification", "never") not in ("", "never"):
        args += ["-notification", opts.notification]
    if getattr(opts, "import_env", False):
        args.append("-import_env")
    if getattr(opts, "include_env", None):
        args += ["-include_env", ",".join(opts.include_env)]
    for key, value in (getattr(opts, "insert_env", None) or {}).items():
        args += ["-insert_env", f"{key}={value}"]
    if getattr(opts, "do_recurse", False):
        args.append("-do_recurse")
    if getattr(opts, "force", False):
        args.append("-force")
    return args


#: what the DAGMan job takes of the submitter's environment, as HTCondor's
#: condor_submit_dag's getenv names it, and gridtools' own variables
KEEP_ENV = frozenset({"GRIDTOOLS_ROOT", "GRIDTOOLS_HOST", "GRIDTOOLS_NO_AUTOSTART", "CONDOR_CONFIG",
                      "PATH", "PYTHONPATH", "TZ", "HOME", "USER", "LANG", "LC_ALL", "ASAN_OPTIONS",
                      "LSAN_OPTIONS", "BEARER_TOKEN", "BEARER_TOKEN_FILE"})
KEEP_PREFIXES = ("_CONDOR_", "PERL", "PEGASUS_")


def job_environment(get=(), set_=None, everything=False):
    """The DAGMan job's environment (V2 syntax): what HTCondor's DAGMan job gets of the
    submitter's (its PRE and POST scripts see it; all of it, but for values of several
    lines, with ``everything``: -import_env) and the variables the DAG's ENV GET
    names (when the submitter has them), ENV SET's settings (``set_``) over those, how
    it finds the cell, and gridtools first on the PYTHONPATH."""
    import gridtools
    from gridtools.formats.condor.args import join_v2
    env = {k: v for k, v in os.environ.items()
           if k in KEEP_ENV or k.startswith(KEEP_PREFIXES) or k in get
           or (everything and "\n" not in v)}
    env.update(set_ or {})
    own = os.path.dirname(os.path.dirname(os.path.abspath(gridtools.__file__)))
    env["PYTHONPATH"] = own + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    from gridtools import cell
    env["GRIDTOOLS_ROOT"] = cell.root()
    return join_v2(f"{k}={v}" for k, v in sorted(env.items())).replace('"', '""')


#: DAGMan configuration settings gridtools' manager follows -> its option
CONFIG_KNOBS = {"DAGMAN_MAX_JOBS_SUBMITTED": "maxjobs", "DAGMAN_MAX_RESCUE_NUM": "max_rescue",
                "DAGMAN_MAX_PRE_SCRIPTS": "maxpre", "DAGMAN_MAX_POST_SCRIPTS": "maxpost",
                "DAGMAN_MAX_JOBS_IDLE": "maxidle", "DAGMAN_MAX_JOB_HOLDS": "max_job_holds",
                "DAGMAN_HOLD_CLAIM_TIME": "hold_claim_time", "DAGMAN_MAX_SUBMIT_ATTEMPTS": "max_submit_attempts",
                "DAGMAN_USE_STRICT": "use_strict"}
#: the ones of CONFIG_KNOBS whose value has bounds -> (least, most)
CONFIG_RANGES = {"DAGMAN_USE_STRICT": (dagstrict.LOWEST, dagstrict.HIGHEST)}
#: the boolean ones -> its option
CONFIG_FLAGS = {"DAGMAN_ALWAYS_RUN_POST": "always_run_post",
                "DAGMAN_SUPPRESS_NOTIFICATION": "suppress_notification",
                "DAGMAN_GENERATE_SUBDAG_SUBMITS": "generate_subdag_submits",
                "DAGMAN_DEFAULT_APPEND_VARS": "append_vars",
                "DAGMAN_PROHIBIT_MULTI_JOBS": "prohibit_multi_jobs",
                "DAGMAN_PUT_FAILED_JOBS_ON_HOLD": "hold_failed_jobs",
                "DAGMAN_SUBMIT_DEPTH_FIRST": "depth_first", "DAGMAN_RETRY_NODE_FIRST": "retry_node_first",
                "DAGMAN_RETRY_SUBMIT_FIRST": "retry_submit_first",
                "DAGMAN_RESET_RETRIES_UPON_RESCUE": "reset_retries"}
#: the ones whose value is text (condor_submit_dag's: DAGMAN_INSERT_SUB_FILE is the
#: default of -insert_sub_file) -> its option
CONFIG_TEXTS = {"DAGMAN_INSERT_SUB_FILE": "insert_sub_file", "DAGMAN_NODE_RECORD_INFO": "node_record_info"}
#: the integer ones that may be negative -> its option
CONFIG_INTS = {"DAGMAN_DEFAULT_PRIORITY": "default_priority", "DAGMAN_SUBMIT_DELAY": "submit_delay"}
#: the manager's defaults of the settings the command line may leave unset, as HTCondor's
DEFAULTS = {"maxpre": 20, "maxpost": 20, "maxidle": 1000, "always_run_post": False,
            "suppress_notification": False}
#: the defaults of the settings only a configuration gives, as HTCondor's
CONFIG_DEFAULTS = {"append_vars": False, "prohibit_multi_jobs": False, "hold_failed_jobs": False,
                   "submit_delay": 0, "node_record_info": "", "max_job_holds": 100, "hold_claim_time": 20,
                   "depth_first": False, "retry_node_first": False, "max_submit_attempts": 6,
                   "retry_submit_first": True, "use_strict": dagstrict.DEFAULT, "reset_retries": True}


def _settings(config, source, names=None):
    """{option: value} of the CONFIG_KNOBS and CONFIG_FLAGS a Config sets (of ``names``
    only, when given), and the other DAGMAN_* names it sets."""
    from gridtools.formats.condor_config import ConfigError
    found, ignored = {}, []
    for name in names if names is not None else [d.name.upper() for d in config.definitions()]:
        try:
            value = (config.get(name) or "").strip()
        except ConfigError:
            continue
        if name in CONFIG_RANGES:
            found[CONFIG_KNOBS[name]] = _bounded(name, value, source)
        elif name in CONFIG_KNOBS:
            if not value.isdigit():
                raise GridError(f"ERROR: {source}: {name} must be a non-negative integer, "
                                f"not '{value}'", 1)
            found[CONFIG_KNOBS[name]] = int(value)
        elif name in CONFIG_FLAGS:
            if value.lower() not in ("true", "false"):
                raise GridError(f"ERROR: {source}: {name} must be True or False, not '{value}'", 1)
            found[CONFIG_FLAGS[name]] = value.lower() == "true"
        elif name in CONFIG_TEXTS:
            if value:
                found[CONFIG_TEXTS[name]] = value
        elif name in CONFIG_INTS:
            try:
                found[CONFIG_INTS[name]] = int(value, 10)
            except ValueError:
                raise GridError(f"ERROR: {source}: {name} must be an integer, not '{value}'", 1) from None
        elif name.startswith("DAGMAN_"):
            ignored.append(name)
    return found, ignored


def _bounded(name, value, source):
    """The value of a CONFIG_RANGES setting; one out of its bounds is refused in
    HTCondor's words."""
    low, high = CONFIG_RANGES[name]
    default = CONFIG_DEFAULTS[CONFIG_KNOBS[name]]
    try:
        number = int(value, 10)
    except ValueError:
        raise GridError(f"ERROR: {source}: {name} must be an integer, not '{value}'", 1) from None
    if not low <= number <= high:
        raise GridError(f"ERROR: {source}: {name} in the condor configuration is too "
                        f"{'low' if number < low else 'high'} ({value}).  Please set it to an "
                        f"integer in the range {low} to {high} (default {default}).", 1)
    return number


def read_config(path):
    """(settings, ignored names) of a DAG's configuration file (CONFIG, -config): the
    CONFIG_KNOBS and CONFIG_FLAGS it sets, as {option: value}, and the other DAGMAN_*
    names it sets, which have no effect here. A file that cannot be read or a value of
    the wrong kind raises GridError."""
    from gridtools.formats import condor_config
    config = condor_config.Config(environ={})
    try:
        config.read_file(path)
        return _settings(config, path)
    except condor_config.ConfigError as exc:
        raise GridError(f"ERROR: DAGMan config file {path}: {exc}", 1) from None


def cell_config():
    """{option: value} of the DAGMan settings the cell's condor_config (or _CONDOR_*
    variables) sets; {} when it sets none or cannot be read."""
    from gridtools import cell
    from gridtools.formats import condor_config
    try:
        path = condor_config.locate(cell.etc("condor_config"))
        if path != "ONLY_ENV" and not os.path.exists(path):
            path = "ONLY_ENV"
        config = condor_config.load(path)
        names = [n for n in list(CONFIG_KNOBS) + list(CONFIG_FLAGS) + list(CONFIG_TEXTS) + list(CONFIG_INTS)
                 if n in config]
        return _settings(config, path, names)[0]
    except (GridError, OSError, condor_config.ConfigError):
        return {}


def apply_config(opts, log):
    """The DAGMan settings of the command line, over those of -config FILE (the DAG's
    CONFIG), over those of the cell's condor_config, over HTCondor's defaults: a -MaxJobs,
    -MaxIdle, -MaxPre or -MaxPost of 0 is not given, as condor_submit_dag passes it.
    DAGMAN_GENERATE_SUBDAG_SUBMITS (no option) says whether the manager writes the submit
    file of a SUBDAG EXTERNAL node's DAG when it starts the node (True, the default) or
    submits the one there (written by condor_submit_dag -do_recurse or -no_submit)."""
    found = cell_config()
    if opts.get("config"):
        own, ignored = read_config(opts["config"])
        log(f"Using DAGMan config file {opts['config']}")
        found.update(own)
        for name in ignored:
            log(f"Note: config setting {name}: not supported, ignored")
    for key in ("maxjobs", "maxidle", "maxpre", "maxpost"):
        if not opts.get(key) and found.get(key) is not None:
            opts[key] = found[key]
    if found.get("max_rescue") is not None:
        opts["max_rescue"] = found["max_rescue"]
    opts["generate_subdag_submits"] = found.get("generate_subdag_submits", True)
    for key in ("always_run_post", "suppress_notification"):
        if opts.get(key) is None:
            opts[key] = found.get(key, DEFAULTS[key])
    for key, value in DEFAULTS.items():
        if not opts.get(key) and found.get(key) is None and key not in ("always_run_post",
                                                                        "suppress_notification"):
            opts[key] = value
    log(f"DAGMAN_MAX_JOBS_SUBMITTED setting: {opts['maxjobs']}")
    log(f"DAGMAN_MAX_JOBS_IDLE setting: {opts['maxidle']}")
    log(f"DAGMAN_MAX_PRE_SCRIPTS setting: {opts['maxpre']}")
    log(f"DAGMAN_MAX_POST_SCRIPTS setting: {opts['maxpost']}")
    log(f"DAGMAN_ALWAYS_RUN_POST setting: {bool(opts['always_run_post'])}")
    log(f"DAGMAN_SUPPRESS_NOTIFICATION setting: {bool(opts['suppress_notification'])}")
    log(f"DAGMAN_GENERATE_SUBDAG_SUBMITS setting: {opts['generate_subdag_submits']}")
    for key, value in CONFIG_DEFAULTS.items():
        opts[key] = found.get(key, value)
    opts["submit_delay"] = max(0, opts["submit_delay"])       # (a negative one is 0, as HTCondor's)
    opts["max_submit_attempts"] = min(max(opts["max_submit_attempts"], 1), 16)    # (HTCondor's range)
    if not opts.get("priority") and found.get("default_priority"):
        opts["priority"] = found["default_priority"]            # (-priority wins)
    log(f"DAGMAN_DEFAULT_PRIORITY setting: {found.get('default_priority', 0)}")
    log(f"DAGMAN_SUBMIT_DELAY setting: {opts['submit_delay']}")
    log(f"DAGMAN_PROHIBIT_MULTI_JOBS setting: {opts['prohibit_multi_jobs']}")
    log(f"DAGMAN_DEFAULT_APPEND_VARS setting: {opts['append_vars']}")
    log(f"DAGMAN_PUT_FAILED_JOBS_ON_HOLD setting: {opts['hold_failed_jobs']}")
    log(f"DAGMAN_MAX_JOB_HOLDS setting: {opts['max_job_holds']}")
    log(f"DAGMAN_HOLD_CLAIM_TIME setting: {opts['hold_claim_time']}")
    log(f"DAGMAN_SUBMIT_DEPTH_FIRST setting: {opts['depth_first']}")
    log(f"DAGMAN_RETRY_NODE_FIRST setting: {opts['retry_node_first']}")
    log(f"DAGMAN_MAX_SUBMIT_ATTEMPTS setting: {opts['max_submit_attempts']}")
    log(f"DAGMAN_RETRY_SUBMIT_FIRST setting: {opts['retry_submit_first']}")
    log(f"DAGMAN_USE_STRICT setting: {opts['use_strict']}")
    log(f"DAGMAN_RESET_RETRIES_UPON_RESCUE setting: {opts['reset_retries']}")
    if opts["node_record_info"]:
        log(f"DAGMAN_NODE_RECORD_INFO: {opts['node_record_info']}")


def parse_args(argv):
    opts = {"dag": None, "auto_rescue": 1, "rescue_from": 0, "maxjobs": 0, "lockfile": None,
            "load_save": "", "config": "", "outfile_dir": "", "dags": [], "maxidle": 0,
            "maxpre": 0, "maxpost": 0, "always_run_post": None, "priority": 0,
            "suppress_notification": None, "dump_rescue": False, "debug": None, "do_recovery": False,
            "notification": "never", "import_env": False, "include_env": [], "insert_env": {},
            "do_recurse": False, "force": False}
    names = {"-dag": "dag", "-autorescue": "auto_rescue", "-dorescuefrom": "rescue_from",
             "-maxjobs": "maxjobs", "-lockfile": "lockfile", "-load_save": "load_save",
             "-config": "config", "-outfile_dir": "outfile_dir", "-maxidle": "maxidle",
             "-maxpre": "maxpre", "-maxpost": "maxpost", "-priority": "priority"}
    texts = ("-dag", "-lockfile", "-load_save", "-config", "-outfile_dir", "-notification")
    valued = {"-p", "-l", "-csdversion", "-dagman", "-debug", "-submitmethod", "-maxhold"}
    names["-notification"] = "notification"
    flags = {"-alwaysrunpost": ("always_run_post", True), "-dontalwaysrunpost": ("always_run_post", False),
             "-suppress_notification": ("suppress_notification", True),
             "-dont_suppress_notification": ("suppress_notification", False),
             "-dumprescue": ("dump_rescue", True), "-usedagdir": ("use_dag_dir", True),
             "-dorecov": ("do_recovery", True), "-dorecovery": ("do_recovery", True),
             "-import_env": ("import_env", True), "-do_recurse": ("do_recurse", True),
             "-force": ("force", True)}
    i = 0
    while i < len(argv):
        word = argv[i].lower()
        if word == "-dag" and i + 1 < len(argv):
            opts["dags"].append(argv[i + 1])
        if word in flags:
            opts[flags[word][0]] = flags[word][1]
            i += 1
        elif word in names and i + 1 < len(argv):
            value = argv[i + 1]
            opts[names[word]] = value if word in texts else int(value)
            i += 2
        elif word == "-include_env" and i + 1 < len(argv):
            opts["include_env"] += [n.strip() for n in argv[i + 1].split(",") if n.strip()]
            i += 2
        elif word == "-insert_env" and i + 1 < len(argv):
            key, _, value = argv[i + 1].partition("=")
            opts["insert_env"][key.strip()] = value
            i += 2
        elif word in valued:
            i += 2
        else:
            i += 1
    if not opts["dag"]:
        raise GridError("-Dag DAGFILE is required", 1)
    if opts["load_save"] and opts["do_recovery"]:
        raise GridError("Error: Cannot run DAG from a save file in recovery mode.", 1)
    opts["dag"] = opts["dags"][0]          # several DAG files run as one, named by the first
    opts["lockfile"] = opts["lockfile"] or opts["dag"] + ".lock"
    # what nested DAGs get (as the command line gave it, before any configuration)
    from gridtools.cli.condor.submit_dag import DEEP
    opts["inherit"] = {name: opts[name] for name in DEEP}
    return opts


class Log:
    """DAGFILE.dagman.out: one time-stamped line per event. When the file cannot be
    opened (``ownfiles.open_text`` refuses a link or a file another user left at its
    name, or the folder cannot be written), that line and every later one go to the
    manager's standard error (DAGFILE.lib.err) instead, after one line saying why: the
    manager's messages are never dropped."""

    def __init__(self, path):
        self.path = path
        self.failed = None              # why the file could not be opened, once it could not

    def take_name(self):
        """Before the first line: when the log's name holds what ``ownfiles.open_text``
        refuses and is not the DAG's owner's own (a link or a file another user left
        there), remove it where the owner may (``ownfiles.remove_planted``: a folder of
        the owner's own, sticky or not, or any folder for root), as the manager removes
        one at the name of its lock and of its nodes log; True when it was removed. The
        owner's own file is appended to, as HTCondor's DAGMan appends to it, and the
        owner's own link followed, as before."""
        import errno
        from gridtools.ownfiles import open_text, remove_planted
        try:
            with open_text(self.path, "a"):
                return False
        except OSError as exc:
            if not isinstance(exc, PermissionError) and exc.errno != errno.ELOOP:
                return False
        try:
            if os.lstat(self.path).st_uid == os.geteuid():
                return False
        except OSError:
            return False
        return remove_planted(self.path)

    def __call__(self, text):
        stamp = time.strftime("%m/%d/%y %H:%M:%S")
        line = f"{stamp} {text}\n"
        if self.failed is None:
            from gridtools.ownfiles import open_text
            try:
                with open_text(self.path, "a") as fh:
                    fh.write(line)
                return
            except OSError as exc:
                self.failed = exc.strerror or str(exc)
                self._write(f"{stamp} ERROR: Can't open \"{os.path.abspath(self.path)}\" (the DAGMan log): "
                            f"{self.failed}; its lines go to standard error\n")
        self._write(line)

    def error(self, text):
        """An error the DAG's owner must see: in the DAGMan log and on stderr (DAGFILE.lib.err),
        once when the log already goes there."""
        self(text)
        if self.failed is None:
            self._write(text + "\n")

    @staticmethod
    def _write(line):
        try:
            sys.stderr.write(line)
            sys.stderr.flush()
        except (OSError, ValueError):
            pass                        # (standard error closed: nowhere left to say it)


def out_file(dag_file, outfile_dir=""):
    """The manager's log, DAGFILE.dagman.out: beside the DAG file, or in -outfile_dir."""
    if outfile_dir:
        return os.path.join(outfile_dir, os.path.basename(dag_file) + ".dagman.out")
    return dag_file + ".dagman.out"


def load(dag_file, opts, log):
    """The DAG with the nodes of the chosen rescue DAG marked DONE."""
    from gridtools.cli.condor.submit_dag import check_dags
    from gridtools.formats.condor import dagstate
    dags = opts.get("dags") or [dag_file]
    for name in dags:
        log(f"Parsing {name} ...")
    dag = check_dags(dags, opts.get("use_dag_dir", False))
    base = dagstate.rescue_base(dag_file, len(dags) > 1)
    if opts.get("load_save"):
        name = opts["load_save"]
        dagstate.apply_rescue(dag, _own_text(name), name, _reader(opts))
        log(f"Loading the save point file {name}: its DONE nodes are done; no rescue DAG is read")
        opts["rescue_run"] = True
        return dag
    number = opts["rescue_from"]
    if number:                  # the rescue DAGs numbered above it are renamed, as DAGMan's are
        from gridtools.cli.condor.submit_dag import _rename_rescues
        log(f"Renaming rescue DAGs newer than number {number}")
        _rename_rescues(base, after=number)
    if not number and opts["auto_rescue"]:
        from gridtools.cli.condor.submit_dag import own_files
        folder = _folder(dag_file)
        number = dagstate.latest_rescue(os.path.basename(base), own_files(folder, os.listdir(folder)))[1]
    if number:
        name = dagstate.rescue_name(base, number)
        dagstate.apply_rescue(dag, _own_text(name), name, _reader(opts))
        log(f"Running rescue DAG {number} ({name})")
        opts["rescue_run"], opts["rescue_number"] = True, number
    return dag


def _reader(opts):
    """How a rescue DAG's INCLUDE and SPLICE files are read: relative to the current
    folder, or with -usedagdir to the DAG file's, as the DAG file's own."""
    base = _folder(opts["dag"]) if opts.get("use_dag_dir") else "."

    def read(name):
        with open(os.path.join(base, name), encoding="utf-8") as fh:
            return fh.read()
    return read


def _folder(path):
    return os.path.dirname(os.path.abspath(path))


def _own_text(path):
    """What a rescue DAG or save file the run reads holds: a regular file of the
    manager's own user, reached without a link (``ownfiles.read_trusted``); GridError
    otherwise (one another user put in a shared folder would mark nodes done)."""
    from gridtools.ownfiles import read_trusted
    try:
        return read_trusted(path)
    except OSError as exc:
        raise GridError(f"cannot read {path}: {exc.strerror} (it must be a file of this user's)") from None


def own_job_id():
    """The manager's job id (0 when it runs outside the queue)."""
    return int(os.environ.get("JOB_ID", "0") or 0)


def default_batch_name(dag_file, cluster):
    """The batch name of a DAG submitted without -batch-name: the DAG file's name, ``+``
    and its manager's cluster id (``diamond.dag+10``), as HTCondor's DAGMan names it."""
    return f"{os.path.basename(dag_file)}+{cluster}"


def own_batch_name(dag_file, own_id, log, strict=None):
    """The batch name of this run, which every node job gets: the manager job's
    JobBatchName; a manager job without one (its submit file was submitted by hand)
    is given the default first. A manager run outside the queue names it by the DAG file.
    Failing to read or set the job's ad is a warning of strictness 3 (``strict``); None
    when that is fatal (the manager then exits at once, as HTCondor's before its DAG)."""
    from gridtools.classad.values import quote_string
    from gridtools.cli.ask import outcomes
    from gridtools.cli.condor import queue as Q
    from gridtools.cli.status import load
    if not own_id:
        return dag_file
    name = default_batch_name(dag_file, own_id)
    try:
        mine = Q.procs(load(), clusters={own_id})
    except GridError as exc:
        log(f"WARNING: reading the batch name of job {own_id} failed: {exc}")
        return None if strict is not None and strict.fatal(3) else name
    if mine and mine[0].batch:
        return mine[0].batch
    try:
        outcomes("condor_qedit", {"targets": [{"id": own_id, "tasks": None}],
                                  "attrs": {"JobBatchName": quote_string(name)}})
    except GridError as exc:
        log(f"WARNING: setting the batch name of job {own_id} failed: {exc}")
        if strict is not None and strict.fatal(3):
            return None
    return name


class Removal:
    """The end of the manager's job, which may come at any time. SIGUSR1 (its
    RemoveKillSig: condor_rm, qdel) removes the DAG: the runner removes the node jobs,
    runs the FINAL node and writes a rescue DAG. SIGTERM (its KillSig: condor_hold,
    a vacate), SIGINT or SIGUSR2 stops it: the node jobs run on, the lock file stays,
    and the next start of the manager recovers the DAG from its nodes log. Once the
    runner runs, it is told at once."""

    def __init__(self):
        self.asked = None           # "remove" or "stop"
        self.runner = None

    def install(self):
        signal.signal(signal.SIGUSR1, self.remove)
        for sig in (signal.SIGTERM, signal.SIGUSR2, signal.SIGINT):
            signal.signal(sig, self.stop)

    def remove(self, *_):
        self.asked = "remove"
        if self.runner is not None:
            self.runner.remove_requested()

    def stop(self, *_):
        if self.asked != "remove":
            self.asked = "stop"
        if self.runner is not None:
            self.runner.stop_requested()

    def follow(self, runner):
        self.runner = runner
        if self.asked == "remove":
            runner.remove_requested()
        elif self.asked == "stop":
            runner.stop_requested()


#: the rule around the banner DAGFILE.dagman.out begins with
BANNER_RULE = "*" * 54


def _exec_name():
    """The manager's name in its banner and last line, as HTCondor's names its scheduler
    universe job's executable (``condor_scheduniv_exec.CLUSTER.PROC``)."""
    return f"condor_scheduniv_exec.{own_job_id()}.0"


def exit_line(code):
    """The last line of DAGFILE.dagman.out, in DaemonCore's words (workflow tools such as
    Pegasus look for it)."""
    return f"**** {_exec_name()} (condor_DAGMAN) pid {os.getpid()} EXITING WITH STATUS {code}"


def main(argv, prog="gridtools dagman"):
    removal = Removal()
    removal.install()
    try:
        opts = parse_args(list(argv))
        log = Log(out_file(opts["dag"], opts["outfile_dir"]))
        removed = log.take_name()
        log(BANNER_RULE)
        log(f"** {_exec_name()} (CONDOR_DAGMAN) STARTING UP")
        log(f"** gridtools dagman (DAGMan) for {opts['dag']}")
        from gridtools.formats.condor.jobad import DEFAULT_PLATFORM, DEFAULT_VERSION
        log(f"** {DEFAULT_VERSION}")
        log(f"** {DEFAULT_PLATFORM}")
        log(f"** PID = {os.getpid()}")
        log(BANNER_RULE)
        if removed:                 # (another user's, in a folder of the DAG's owner)
            log(f"WARNING: removed {log.path}, which was not a file of this DAG's owner")
        lock = _lock(opts, log)
    except (GridError, OSError) as exc:
        sys.stderr.write(f"{prog}: {exc}\n")
        return EXIT_FAILED
    if lock is None:
        return EXIT_FAILED
    lock, opts["recover_from"] = lock
    stopped = False
    try:
        code, stopped = _run(opts, log, removal, prog)
    finally:
        if stopped:
            lock.keep()             # the next start recovers the DAG
        else:
            lock.release()
    log(exit_line(code))
    return code


def _lock(opts, log):
    """The DAG's lock (``daglock``), or None when another manager runs the DAG (said in
    the DAG's log and on stderr, which is DAGFILE.lib.err)."""
    from gridtools.cli.condor import daglock
    from gridtools.ownfiles import remove_planted
    for path in (opts["lockfile"], opts["dag"] + ".nodes.log"):
        if remove_planted(path):        # (another user's, in a folder of the DAG's owner)
            log(f"WARNING: removed {path}, which was not a file of this DAG's owner")
    # the run begins at the nodes log's start: a fresh start empties it (``_monitor_nodes_log``)
    # and -DoRecov reads it all (a later takeover reads it from there too)
    try:
        lock, holder = daglock.take(opts["lockfile"], own_job_id(), 0)
    except GridError as exc:
        text = f"ERROR: {exc}; this DAG manager ends without running {opts['dag']}"
        log.error(text)
        log(exit_line(EXIT_FAILED))
        return None
    if lock is not None:
        if holder is not None:
            log(f"Lock file {opts['lockfile']} names manager pid {holder.pid}, which is gone: "
                "taking it over; running in recovery mode")
            return lock, holder.since
        if opts.get("do_recovery"):
            log("Running in recovery mode because -DoRecovery flag was specified")
            return lock, 0
        return lock, None
    if holder is None:
        who = "pid unknown"
    else:
        who = f"pid {holder.pid}" + (f", job {holder.job}" if holder.job else "")
    text = (f"ERROR: another DAG manager ({who}) is running {opts['dag']} (lock file "
            f"{opts['lockfile']}); this one ends without running it")
    log.error(text)
    log(exit_line(EXIT_FAILED))
    return None


def _monitor_nodes_log(path, log, truncate=False):
    """Make the nodes log when it is missing, before anything of the DAG runs (as
    HTCondor's DAGMan monitors it at its start), and with ``truncate`` (a start not in
    recovery mode: a new run, or a rescue DAG's) empty it, as HTCondor's DAGMan does, so
    that a later recovery reads this run's events only: True when it is a regular file
    of the DAG's owner's, reached without a link. Else (a link or a file another user left at its
    name, in a folder where the owner may not remove it; a folder that cannot be written)
    the DAG cannot run: that is said in HTCondor's DAGMan's words, in the DAGMan log and on
    stderr (DAGFILE.lib.err), and False."""
    import errno
    from gridtools.ownfiles import claim
    try:
        claim(path)
        if truncate:
            log(f"MultiLogFiles: truncating log file {path}")
            _truncate_own(path)
        return True
    except OSError as exc:
        why = ""
        if os.path.lexists(path) and (isinstance(exc, PermissionError) or exc.errno == errno.ELOOP):
            why = " (it is not a file of yours: what it says is not taken; a link there is not followed)"
        number = exc.errno if exc.errno is not None else 0
        texts = [f"ERROR: Unable to monitor log file <{path}>",
                 f"Error ({number}, {exc.strerror or exc}) opening file {path} for creation or "
                 f"truncation{why}",
                 'ERROR "Fatal log file monitoring error!"']
    for text in texts:
        log.error(text)
    return False


def _truncate_own(path):
    """Empty ``path``, a regular file of the caller's own reached without a link
    (PermissionError otherwise: nothing of another user's is emptied)."""
    import stat
    fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
            raise PermissionError(13, "Permission denied", path)
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)


def _run(opts, log, removal, prog):
    """(exit status, True when the manager was stopped and the DAG goes on later)."""
    from gridtools.cli.condor.dagrun import Runner
    from gridtools.formats.condor.dag import Effect, check_categories
    try:
        apply_config(opts, log)
        strict = dagstrict.Strictness(opts["use_strict"], log)
        dag = load(opts["dag"], opts, log)
        check_categories(dag)
        effect = strict.notes(dag.notes)
        if effect is Effect.REFUSE:
            log(f"Failed to parse {opts['dag']}")
            return EXIT_FAILED, False
        opts["batch_name"] = own_batch_name(opts["dag"], own_job_id(), log, strict)
    except (GridError, OSError) as exc:
        text = str(exc)             # (a DAG file's error already says ERROR:, in DAGMan's words)
        log(text if text.startswith("ERROR") else f"ERROR: {text}")
        sys.stderr.write(f"{prog}: {exc}\n")
        return EXIT_FAILED, False
    if opts["batch_name"] is None:
        return EXIT_FAILED, False
    log(f"Batch name of the DAG's jobs: {opts['batch_name']}")
    runner = Runner(opts["dag"], dag, opts, log)
    if effect is Effect.STOP:
        runner.fatal_warnings += 1          # (the DAG ends before any node starts)
    if opts.get("dump_rescue"):
        log("Dumping rescue DAG and exiting because of -DumpRescue flag")
        runner.write_rescue()
        return 0, False
    if not _monitor_nodes_log(runner.nodes_log, log, truncate=opts.get("recover_from") is None):
        return EXIT_FAILED, False
    runner.begin()
    if opts.get("recover_from") is not None:
        runner.recover(opts["recover_from"])
    removal.follow(runner)
    code = runner.run()
    return code, runner.stopping

"""The execution plan of one task: everything its shepherd needs, as plain data.

``build(...)`` turns a job description, the task number, the granted queue
instances and the queue's settings into a plan (a dict written to the task's
spool folder as ``plan.yaml``). The shepherd only carries a plan out; it
never reads the job or the configuration itself. Building is pure: the
caller passes in the owner's account data and the cell paths.

Grid Engine conventions kept here: the job environment (JOB_ID, JOB_NAME,
SGE_TASK_*, NSLOTS, NHOSTS, NQUEUES, QUEUE, TMPDIR, SGE_O_*, ...), output
file names (``NAME.oJOBID[.TASKID]``, directories, ``[host:]path`` lists,
pseudo variables ``$HOME $USER $JOB_ID $JOB_NAME $HOSTNAME $TASK_ID``),
``-j y``, shells and ``shell_start_mode``, and path aliasing of the
working directory.
"""

import fnmatch
import os

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LIMITS = ("s_rt", "h_rt", "s_cpu", "h_cpu", "s_fsize", "h_fsize", "s_data", "h_data",
          "s_stack", "h_stack", "s_core", "h_core", "s_rss", "h_rss", "s_vmem", "h_vmem")


#: the pseudo variables of an output path, in the order Grid Engine's expand_path tries them
PSEUDO = ("HOME", "JOB_ID", "TASK_ID", "JOB_NAME", "USER", "HOSTNAME")


def expand_pseudo(path, values):
    """An output path (-o, -e, -i, -S) as Grid Engine's expand_path makes it: a leading
    ``~`` or ``~user`` is the job owner's (``values["HOME"]``) or that user's home, then
    ``$HOME $JOB_ID $TASK_ID $JOB_NAME $USER $HOSTNAME`` are replaced in one pass, left
    to right; ``$TASK_ID`` stays as written in a job that is no array (its TASK_ID in
    ``values`` is "undefined"). A ``~user`` only names a path: the file is still opened
    with the job owner's rights (``jobproc.resolve_streams``)."""
    path = _expand_tilde(path, values["HOME"])
    if "$" not in path:
        return path
    out, i = [], 0
    while True:
        j = path.find("$", i)
        if j < 0:
            break
        out.append(path[i:j])
        for name in PSEUDO:
            value = values.get(name)
            if path.startswith(name, j + 1) and not (name == "TASK_ID" and value in (None, "undefined")):
                out.append(value)
                i = j + 1 + len(name)
                break
        else:
            out.append("$")
            i = j + 1
    out.append(path[i:])
    return "".join(out)


def _expand_tilde(path, home):
    """``path`` with a leading ``~`` (the job owner's ``home``) or ``~user`` (that user's
    home, from the password database) expanded; as written when the user is unknown."""
    if not path.startswith("~"):
        return path
    name, slash, rest = path[1:].partition("/")
    if name:
        import pwd
        try:
            home = pwd.getpwnam(name).pw_dir
        except (KeyError, ValueError):
            return path
    return home.rstrip("/") + "/" + rest if slash or not home.rstrip("/") else home


def _pick_path(path_list, host):
    """The path of a ``[host:]path`` list that applies on ``host`` (None if none given)."""
    fallback = None
    for entry_host, path in path_list or ():
        if entry_host and fnmatch.fnmatchcase(host, entry_host):
            return path
        if not entry_host and fallback is None:
            fallback = path
    return fallback


def default_name(pseudo, stream, task, is_array):
    """Grid Engine's file name for a stream ('o', 'e', or 'po' and 'pe' of the PE
    procedures): ``NAME.oJOBID``, with ``.TASK`` for an array task."""
    return f"{pseudo['JOB_NAME']}.{stream}{pseudo['JOB_ID']}" + (f".{task}" if is_array else "")


def output_path(spec, stream, pseudo, cwd, host, task, is_array, postfix=None):
    """(file, name) for ``stream`` ('o', 'e' or 'i') of a task, as Grid Engine names it;
    ``postfix`` ('po', 'pe') names the file of a PE procedure's stream instead.

    ``name`` is not empty when the path is the user's own choice, which may be a
    directory. Whether it is one is decided by the shepherd with the job owner's
    rights (``jobproc.resolve_streams``), never here: the daemon runs as root and
    must not probe the users' folders. As Grid Engine's shepherd (build_path), only
    an existing directory gets ``name`` inside it (``path/name``: a path written
    with a trailing ``/`` gives ``path//name``); any other path is opened as written,
    so a trailing ``/`` naming no directory fails the job's start (Is a directory).
    A stdin path that is a directory fails it too (its ``name`` only marks it as the
    user's choice)."""
    field = {"o": "stdout", "e": "stderr", "i": "stdin"}[stream]
    chosen = _pick_path(spec.get(field), host)
    name = default_name(pseudo, postfix or stream, task, is_array)
    if stream == "i" and not chosen:
        return "/dev/null", ""
    if not chosen:
        return os.path.join(cwd, name), ""
    chosen = expand_pseudo(chosen, pseudo)
    if not os.path.isabs(chosen):
        chosen = os.path.join(cwd, chosen)
    return chosen, name


def apply_aliases(path, aliases, host):
    """Path aliasing on the execution host: replace leading source paths (sge_aliases(5))."""
    for src, exec_host, dest in aliases or ():
        if exec_host != "*" and not fnmatch.fnmatchcase(host, exec_host):
            continue
        if (path + "/").startswith(src):
            path = (dest + (path + "/")[len(src):]).replace("//", "/")
            if len(path) > 1:
                path = path.rstrip("/")
    return path


def _task_env(spec, task):
    rng = spec.get("tasks")
    if not rng:
        return {"SGE_TASK_ID": "undefined", "SGE_TASK_FIRST": "undefined",
                "SGE_TASK_LAST": "undefined", "SGE_TASK_STEPSIZE": "undefined"}
    return {"SGE_TASK_ID": str(task), "SGE_TASK_FIRST": str(rng[0]),
            "SGE_TASK_LAST": str(rng[1]), "SGE_TASK_STEPSIZE": str(rng[2])}


def default_path(binary_path):
    """PATH of a job that does not export its submitter's: the system folders, then the
    folder of the gridtools commands, so that a job finds qsub, qstat, condor_submit ...
    as it would on a host where the batch system is installed among the system's commands."""
    if binary_path and binary_path not in DEFAULT_PATH.split(":"):
        return DEFAULT_PATH + ":" + binary_path
    return DEFAULT_PATH


def job_environment(spec, task, ctx):
    """The environment a task starts with (ctx: host, queue, slots, paths, account data)."""
    env = {}
    if spec.get("export_all"):
        env.update(spec.get("submit_env") or {})
    else:
        env["PATH"] = default_path(ctx.get("binary_path"))
        env["LANG"] = ctx.get("lang", "C.UTF-8")
        env["TERM"] = ""
    env.update(spec.get("env") or {})
    if not spec.get("condor_ad"):
        # Grid Engine's execd puts the task's TMPDIR first on the PATH
        env["PATH"] = ctx["tmpdir"]["path"] + ":" + (env.get("PATH") or DEFAULT_PATH)
    env.update(grid_variables(spec, task, ctx))
    return env


def grid_variables(spec, task, ctx):
    """The Grid Engine variables of a task, set by the daemon over anything of the same
    name the job asked for (JOB_ID, SGE_TASK_ID, NSLOTS, PE_HOSTFILE, SGE_O_*, ...), and
    GRIDTOOLS_ROOT: the commands a job runs address the job's own cell."""
    env = {"SGE_O_" + key: value for key, value in (spec.get("sge_o") or {}).items()}
    env.update({
        "ARC": ctx["arch"], "SGE_ARCH": ctx["arch"], "ENVIRONMENT": "BATCH",
        "HOME": ctx["home"], "USER": spec["owner"], "LOGNAME": spec["owner"],
        "SHELL": job_shell(spec, ctx), "HOSTNAME": ctx["host"],
        "JOB_ID": str(spec["id"]), "JOB_NAME": spec["name"], "REQNAME": spec["name"],
        "REQUEST": spec["name"], "JOB_SCRIPT": ctx["job_script"],
        "NSLOTS": str(ctx["slots"]), "NHOSTS": str(ctx["nhosts"]), "NQUEUES": str(ctx["nqueues"]),
        "QUEUE": ctx["queue"], "RESTARTED": "1" if ctx.get("restarted") else "0",
        "SGE_ACCOUNT": spec.get("account") or "sge", "SGE_CELL": "default",
        "SGE_ROOT": ctx["root"], "GRIDTOOLS_ROOT": ctx["root"], "SGE_BINARY_PATH": ctx.get("binary_path", ""),
        "SGE_EXECD_PIDFILE": ctx.get("execd_pidfile", ""),
        "SGE_CWD_PATH": ctx["cwd"], "PWD": ctx["cwd"], "SGE_JOB_SPOOL_DIR": ctx["spool_dir"],
        # (with -j y, SGE_STDERR_PATH names the stdout file, as Grid Engine's shepherd sets it)
        "SGE_STDOUT_PATH": ctx["stdout"], "SGE_STDERR_PATH": ctx["stdout" if spec.get("join") else "stderr"],
        "SGE_STDIN_PATH": ctx["stdin"], "TMPDIR": ctx["tmpdir"]["path"], "TMP": ctx["tmpdir"]["path"],
    })
    if spec.get("interactive"):         # (qrsh: its streams are qrsh's own, no files: as Grid Engine's)
        env.update(SGE_STDOUT_PATH="/dev/null", SGE_STDERR_PATH="/dev/null", SGE_STDIN_PATH="/dev/null")
    env.update(_task_env(spec, task))
    if spec.get("pe"):
        env["PE"] = ctx["pe_name"]
        env["PE_HOSTFILE"] = os.path.join(ctx["spool_dir"], "pe_hostfile")
    if spec.get("ckpt"):
        env["SGE_CKPT_ENV"] = spec["ckpt"]
    return env


def procedure_environment(grid):
    """The environment of a procedure that does not run as the job owner (a ``root@``
    prolog, say): a fixed PATH and the task's Grid Engine variables ``grid`` as the
    daemon set them, nothing the job asked for. HOME, SHELL and PWD are the
    procedure's own (see ``exec.procedure.run_procedure``)."""
    env = dict(grid)
    env.update(PATH=DEFAULT_PATH, LANG="C", SHELL="/bin/sh", PWD="/")
    return env


def shell_list(spec):
    """The job's -S list as ``[[host or None, path], ...]`` (a job spooled before -S
    kept its host names held the one path as a string)."""
    shells = spec.get("shell")
    return [[None, shells]] if isinstance(shells, str) else list(shells or ())


def pick_shell(spec, host, pseudo):
    """The -S path for ``host``: the one given for that host, else the one given
    without a host, with the pseudo variables of -o expanded; None when the list names
    neither (the queue's shell is used then)."""
    chosen = _pick_path(shell_list(spec), host)
    return expand_pseudo(chosen, pseudo) if chosen else None


def job_shell(spec, ctx):
    """The shell of a job: its -S for the execution host, else the queue's (what Grid
    Engine sets SHELL to)."""
    return ctx.get("job_shell") or ctx.get("queue_shell") or "/bin/sh"


def command_line(spec, ctx):
    """argv to execute for the job, honouring -b, -S, -shell and shell_start_mode.

    Returns (path to execute, argv list).
    """
    shell = job_shell(spec, ctx)
    mode = ctx.get("shell_start_mode", "posix_compliant")
    # login shells are a posix_compliant matter (sge_conf(5) login_shells)
    login = mode == "posix_compliant" and os.path.basename(shell) in ctx.get("login_shells", ())
    argv0 = ("-" if login else "") + os.path.basename(shell)
    args = list(spec.get("args") or [])
    if spec.get("binary") and spec.get("interactive"):
        return _interactive_command(spec, ctx, [spec["command"]] + args)
    if spec.get("binary"):
        command = spec["command"]
        if not spec.get("shell_wrap", True):
            return command, [command] + args
        text = " ".join([command] + args)
        return shell, [argv0, "-c", text]
    script = ctx["job_script"]
    if mode == "unix_behavior" and ctx.get("has_shebang"):
        return script, [script] + args          # its #! line chooses, whatever -S says
    if mode == "script_from_stdin":
        return shell, [argv0] + args
    return shell, [argv0, script] + args


def _interactive_command(spec, ctx, words):
    """(path, argv) of a qrsh command, as Grid Engine's qrsh_starter runs it: through
    the wrapper the caller named in QRSH_WRAPPER (given the words), else verbatim with
    -noshell, else by the job owner's login shell (``shell -c "words joined by
    blanks"``); the queue's shell and shell_start_mode play no part."""
    wrapper = (spec.get("env") or {}).get("QRSH_WRAPPER")
    if wrapper:
        return wrapper, [os.path.basename(wrapper)] + words
    if not spec.get("shell_wrap", True):
        return words[0], words
    shell = ctx.get("login_shell") or "/bin/sh"
    return shell, [os.path.basename(shell), "-c", " ".join(words)]


def shell_check(spec, ctx, exe):
    """Who is at fault when the shell that runs the job (``exe``) cannot be found, as
    Grid Engine's shepherd looks for it: "job" for the job's own -S (or a command under
    unix_behavior), "queue" for the queue's shell; None when the job is not run by a
    shell the shepherd looks for (unix_behavior with a #! line, -shell n, interactive)."""
    mode = ctx.get("shell_start_mode", "posix_compliant")
    if spec.get("interactive") or spec.get("condor_ad") or exe != job_shell(spec, ctx):
        return None
    if not spec.get("binary") and mode not in ("posix_compliant", "script_from_stdin"):
        return None
    return "job" if ctx.get("job_shell") or mode == "unix_behavior" else "queue"


def with_starter(starter, exe, argv):
    """(path, argv) that run the job through a queue's starter_method: the starter
    gets the job's command line (its program and arguments) as its arguments."""
    words = starter.split()
    return words[0], words + [exe] + list(argv[1:])


def starter_env(shell, mode, login):
    """The variables Grid Engine gives a starter_method about the shell it replaces."""
    return {"SGE_STARTER_SHELL_PATH": shell, "SGE_STARTER_SHELL_START_MODE": mode,
            "SGE_STARTER_USE_LOGIN_SHELL": "true" if login else "false"}


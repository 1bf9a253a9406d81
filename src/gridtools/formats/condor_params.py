"""The defaults of the configuration knobs gridtools acts on, as ``condor_config_val``
prints them for a knob that no configuration file sets (HTCondor prints the default of
its parameter table; ``<Default>`` is where such a value comes from).

Each value is the one the code uses when the knob is not set (``tests/test_condor_config_val``
holds every entry to the module that reads the knob). ``LOCAL_DIR`` (the cell's folder) and
``RELEASE_DIR`` (where gridtools is installed) are found when asked for. Knobs whose
default depends on the host (``NUM_SLOTS``, ``NUM_CPUS``, ``MEMORY``) are not listed; the predefined macros
(``FULL_HOSTNAME`` ...) are the configuration's own (``condor_config.builtin_defaults``).

``MACROS`` are the other defaults of HTCondor's parameter table that configurations
take for granted: no gridtools code reads them, policy expressions and the templates
of ``use`` statements (``formats.condor_metaknobs``) refer to them. Every reading of
a configuration (``condor_config.load``: the daemon's and every command's) sees
``default``'s values, these and the knobs' (``$(ETC)`` ...), in a reference to a name
no file sets.
"""

#: where a default comes from, as ``condor_config_val -verbose`` names it
SOURCE = "<Default>"

DEFAULTS = {
    # user priorities (accounting.userprio)
    "PRIORITY_HALFLIFE": "86400",
    "DEFAULT_PRIO_FACTOR": "1.0",
    "NICE_USER_PRIO_FACTOR": "1000000",
    "REMOTE_PRIO_FACTOR": "10000000",
    # the negotiator (sched.negotiator, sched.groups)
    "PREEMPTION_REQUIREMENTS": "false",
    "PREEMPTION_RANK": "(RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRunTime), 0, "
                       "TotalJobRunTime)",
    "NEGOTIATOR_CONSIDER_PREEMPTION": "true",
    "NEGOTIATOR_INTERVAL": "60",
    "GROUP_ACCEPT_SURPLUS": "false",
    "GROUP_AUTOREGROUP": "false",
    "GROUP_QUOTA_MAX_ALLOCATION_ROUNDS": "3",
    "GROUP_SORT_EXPR": 'ifThenElse(AccountingGroup =?= "<none>", 3.4e+38, '
                       'ifThenElse(GroupQuota > 0, GroupResourcesInUse / GroupQuota, 3.3e+38))',
    "NEGOTIATOR_STRICT_ENFORCE_QUOTA": "true",
    # how many slot-less jobs run at once (sched.local)
    "START_LOCAL_UNIVERSE": "TotalLocalJobsRunning < 200",
    "START_SCHEDULER_UNIVERSE": "TotalSchedulerJobsRunning < 500",
    # the startd policy and its timers (sched.startd, ads)
    "START": "true",
    "SUSPEND": "false",
    "CONTINUE": "true",
    "PREEMPT": "false",
    "KILL": "false",
    "WANT_SUSPEND": "true",
    "WANT_VACATE": "true",
    "MAXJOBRETIREMENTTIME": "0",
    "WANT_HOLD": "false",
    "PERIODIC_CHECKPOINT": "false",
    "RANK": "0.0",
    "MATCH_TIMEOUT": "120",
    "KILLING_TIMEOUT": "30",
    "POLLING_INTERVAL": "5",
    "UPDATE_INTERVAL": "300",
    # the schedule of job policies, and the most holds a periodic release still undoes
    # (daemon.condorpolicy; -1: no limit)
    "PERIODIC_EXPR_INTERVAL": "60",
    "SYSTEM_MAX_RELEASES": "-1",
    # how HTCondor's schedd stretches that schedule when its evaluations take long
    # (gridtools keeps PERIODIC_EXPR_INTERVAL and bounds each evaluation instead)
    "MAX_PERIODIC_EXPR_INTERVAL": "1200",
    "PERIODIC_EXPR_TIMESLICE": "0.01",
    # how a removed or held job is stopped: its soft kill signal first, and the seconds it
    # has before SIGKILL (daemon.condorjob: graceful_removal, vacate_time)
    "GRACEFULLY_REMOVE_JOBS": "true",
    "MACHINEMAXVACATETIME": "$(MaxVacateTime)",
    # how the history and the epoch history rotate (daemon.history)
    "MAX_HISTORY_LOG": "20971520",
    "MAX_HISTORY_ROTATIONS": "2",
    "ENABLE_HISTORY_ROTATION": "true",
    "ROTATE_HISTORY_DAILY": "false",
    "ROTATE_HISTORY_MONTHLY": "false",
    "MAX_EPOCH_HISTORY_LOG": "20971520",
    "MAX_EPOCH_HISTORY_ROTATIONS": "2",
    # the startd cron jobs (daemon.startdcron)
    "STARTD_CRON_MAX_JOB_LOAD": "0.1",
    "STARTD_CRON_LOG_NON_ZERO_EXIT": "false",
    # the ScheddInterval of a deferred job's ad (formats.condor.deferral)
    "SCHEDD_INTERVAL": "300",
    # job mail (daemon.jobmail)
    "MAIL": "/usr/bin/mail",
    # when a starter reports a running job's usage (daemon.condorjob.note_size)
    "STARTER_INITIAL_UPDATE_INTERVAL": "8",
    "STARTER_UPDATE_INTERVAL": "300",
    # the sizes of dynamic slots (daemon.machines.modified_requests)
    "MODIFY_REQUEST_EXPR_REQUESTMEMORY": "quantize(RequestMemory,{128})",
    "MODIFY_REQUEST_EXPR_REQUESTDISK": "quantize(RequestDisk,{1024})",
    # a job's memory held to its slot's, and the words of its hold (daemon.jobside.memory_limit)
    "CGROUP_MEMORY_LIMIT_POLICY": "hard",
    "STARTER_ALWAYS_HOLD_ON_OOM": "true",
    "LOCAL_UNIVERSE_CGROUP_ENFORCEMENT": "false",
    # the jobs' memory cgroups (exec.cgroups)
    "BASE_CGROUP": "htcondor",
    "DISABLE_SWAP_FOR_JOB": "true",
    "USE_CGROUPS_FOR_LOCAL_UNIVERSE": "true",
    # the folders of relative transfer_output_remaps paths made when missing (exec.transfer)
    "ALLOW_TRANSFER_REMAP_TO_MKDIR": "false",
    # who may change the protected job attributes (daemon.condorreq)
    "QUEUE_SUPER_USERS": "root, condor",
    # URL transfers and the pool's transfer plugins (exec.poolplugins)
    "ENABLE_URL_TRANSFERS": "true",
    "ENABLE_MULTIFILE_TRANSFER_PLUGINS": "true",
    "FILETRANSFER_PLUGIN_CLASSAD_TIMEOUT": "20",
    # the most procs of one submission (cli.condor.submit), the most HTCondor jobs running on
    # execute hosts at once (sched.cycle)
    "MAX_JOBS_PER_SUBMISSION": "20000",
    # the most seconds a job's NextJobStartDelay holds back its owner's next start
    # (daemon.condor; 0: no cap). MAX_STARTERS has no default: a host without it runs
    # as many jobs as its slots take (sched.cycle), so it is "Not defined"
    "MAX_NEXT_JOB_START_DELAY": "600",
    # the most procs in the queue, and of one owner (daemon.intake)
    "MAX_JOBS_SUBMITTED": "2147483647",
    "MAX_JOBS_PER_OWNER": "100000",
    # condor_submit: every cluster of more than one proc materialized late, anything after
    # the first queue statement refused (cli.condor.submit)
    # condor_submit -interactive with a description of the user's: the program its jobs run
    # instead of theirs, waiting for their session (cli.condor.submit_more)
    "INTERACTIVE_SUBMIT_CMD_OVERRIDE": "/bin/sh",
    "INTERACTIVE_SUBMIT_ARGS_OVERRIDE": ("\"-c 'd=${_CONDOR_SCRATCH_DIR}/.condor_ssh_to_job_1; i=0; "
                                         "while test $i -lt 180 && ! test -d $d; do /bin/sleep 1; i=$((i+1)); done; "
                                         "while read p t < $d/owner && read s < /proc/$p/stat && set -- ${s##*) } "
                                         "&& test ${20} = $t; do /bin/sleep 3; done 2>/dev/null; rm -rf $d; exit 0'\""),
    "SUBMIT_FACTORY_JOBS_BY_DEFAULT": "false",
    "SUBMIT_PREVENT_MULTI_QUEUE": "false",
    # condor_submit: getenv = true taken (formats.condor.jobattrs)
    "SUBMIT_ALLOW_GETENV": "true",
    "MAX_JOBS_RUNNING": "MIN({$(DETECTED_MEMORY), 10000})",
    # condor_preen (daemon.preen, cli.condor.preen)
    "PREEN_INTERVAL": "86400",
    "PREEN_ADMIN": "$(CONDOR_ADMIN)",
    # DAGMan's settings (cli.condor.dagman: CONFIG_KNOBS, CONFIG_FLAGS, CONFIG_INTS)
    "DAGMAN_MAX_JOBS_SUBMITTED": "0",
    "DAGMAN_MAX_JOBS_IDLE": "1000",
    "DAGMAN_MAX_PRE_SCRIPTS": "20",
    "DAGMAN_MAX_POST_SCRIPTS": "20",
    "DAGMAN_MAX_RESCUE_NUM": "100",
    "DAGMAN_MAX_JOB_HOLDS": "100",
    "DAGMAN_HOLD_CLAIM_TIME": "20",
    "DAGMAN_MAX_SUBMIT_ATTEMPTS": "6",
    "DAGMAN_ALWAYS_RUN_POST": "false",
    "DAGMAN_SUPPRESS_NOTIFICATION": "false",
    "DAGMAN_GENERATE_SUBDAG_SUBMITS": "true",
    "DAGMAN_DEFAULT_APPEND_VARS": "false",
    "DAGMAN_PROHIBIT_MULTI_JOBS": "false",
    "DAGMAN_PUT_FAILED_JOBS_ON_HOLD": "false",
    "DAGMAN_RESET_RETRIES_UPON_RESCUE": "true",
    "DAGMAN_SUBMIT_DEPTH_FIRST": "false",
    "DAGMAN_RETRY_NODE_FIRST": "false",
    "DAGMAN_RETRY_SUBMIT_FIRST": "true",
    "DAGMAN_DEFAULT_PRIORITY": "0",
    "DAGMAN_SUBMIT_DELAY": "0",
    "DAGMAN_USE_STRICT": "1",
    # the master's restarts of a daemon that died, and its obituaries (daemon.master)
    "MASTER_BACKOFF_CONSTANT": "9",
    "MASTER_BACKOFF_FACTOR": "2.0",
    "MASTER_BACKOFF_CEILING": "3600",
    "MASTER_RECOVER_FACTOR": "300",
    "OBITUARY_LOG_LENGTH": "20",
    # condor_config_val -set/-unset and -rset/-runset honoured by the daemon (daemon.confset;
    # PERSISTENT_CONFIG_DIR and the SETTABLE_ATTRS_<LEVEL> lists have no default)
    "ENABLE_PERSISTENT_CONFIG": "false",
    "ENABLE_RUNTIME_CONFIG": "false",
    # domains (daemon.hostfacts, the security levels)
    "UID_DOMAIN": "$(FULL_HOSTNAME)",
    "FILESYSTEM_DOMAIN": "$(FULL_HOSTNAME)",
    # where the cell keeps its files (cell): LOCAL_DIR is the cell's folder (below)
    "ETC": "$(LOCAL_DIR)/etc",
    "SPOOL": "$(LOCAL_DIR)/spool",
    "LOG": "$(SPOOL)",
    # the one daemon logs every subsystem's lines to the cell's messages file
    **{f"{sub}_LOG": "$(LOG)/messages" for sub in ("MASTER", "SCHEDD", "STARTD", "STARTER", "SHADOW",
                                                   "COLLECTOR", "NEGOTIATOR")},
    "HISTORY": "$(SPOOL)/history",
    "JOB_EPOCH_HISTORY": "$(SPOOL)/epoch_history",
    # where gridtools is installed: RELEASE_DIR is the folder above its commands (below)
    "BIN": "$(RELEASE_DIR)/bin",
    # the one daemon of the cell plays every role (daemon.loop); it is reached
    # through the cell's spool, from any host that shares it
    "DAEMON_LIST": "MASTER, COLLECTOR, NEGOTIATOR, SCHEDD, STARTD",
    "CONDOR_HOST": "$(FULL_HOSTNAME)",
    "COLLECTOR_HOST": "$(CONDOR_HOST)",
}

#: macros of HTCondor's parameter table that policy expressions and templates use
MACROS = {
    "MINUTE": "60",
    "HOUR": "3600",
    # how long the keyboard is idle before a desktop policy starts a job, resumes one
    "StartIdleTime": "15 * $(MINUTE)",
    "ContinueIdleTime": "5 * $(MINUTE)",
    # the longest a job stays suspended, or vacating, before it is evicted or killed
    "MaxSuspendTime": "10 * $(MINUTE)",
    "MaxVacateTime": "10 * $(MINUTE)",
    # the load of the machine's owner that leaves it idle, and that makes it busy
    "BackgroundLoad": "0.3",
    "HighLoad": "0.5",
    "SmallJob": "(TARGET.ImageSize < (15 * 1024))",
    "VANILLA": "5",
    "IsVanilla": "(TARGET.JobUniverse == $(VANILLA))",
    # seconds the slot has been in its state, in its activity
    "StateTimer": "(time() - EnteredCurrentState)",
    "ActivityTimer": "(time() - EnteredCurrentActivity)",
    # the program FEATURE : GPUsMonitor runs
    "GPU_MONITOR": "$(LIBEXEC)/condor_gpu_utilization",
}
_MACROS = {name.upper(): value for name, value in MACROS.items()}

#: knobs whose default is found when asked for
COMPUTED = ("LOCAL_DIR", "RELEASE_DIR")


def default(name):
    """The default text of knob ``name`` (any case), or None."""
    key = name.upper()
    if key == "LOCAL_DIR":
        from gridtools import cell
        return cell.root()
    if key == "RELEASE_DIR":
        return release_dir()
    found = DEFAULTS.get(key)
    return macro(key) if found is None else found


#: the addresses HTCondor detects, found when a configuration first asks for one
ADDRESSES = ("IP_ADDRESS", "IPV4_ADDRESS", "IPV6_ADDRESS")
_ADDRESSES = {}


def macro(name):
    """The default text of macro ``name`` of ``MACROS`` (any case), or of one of the
    ``ADDRESSES``, or None."""
    key = name.upper()
    if key in ADDRESSES:
        return addresses()[key]
    return _MACROS.get(key)


def addresses():
    """{IP_ADDRESS, IPV4_ADDRESS, IPV6_ADDRESS}: the addresses this machine's traffic
    to the outside leaves from (asked of the routing table, no packet sent; 127.0.0.1
    and "" without a route), found once."""
    if not _ADDRESSES:
        import socket
        found = {}
        for family, key, probe in ((socket.AF_INET, "IPV4_ADDRESS", "192.0.2.1"),
                                   (socket.AF_INET6, "IPV6_ADDRESS", "2001:db8::1")):
            try:
                with socket.socket(family, socket.SOCK_DGRAM) as sock:
                    sock.connect((probe, 9))
                    found[key] = sock.getsockname()[0]
            except OSError:
                found[key] = "127.0.0.1" if family == socket.AF_INET else ""
        found["IP_ADDRESS"] = found["IPV4_ADDRESS"]
        _ADDRESSES.update(found)
    return _ADDRESSES


def release_dir():
    """The folder whose bin/ holds the gridtools commands (a checkout or an installed
    copy), or "" when none is found."""
    from gridtools.binpath import binary_path
    found = binary_path()
    return found.rpartition("/")[0]

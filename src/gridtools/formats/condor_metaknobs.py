"""HTCondor's configuration templates ("metaknobs"): the text a ``use CATEGORY : NAME``
statement of condor_config reads in its place.

``TEMPLATES`` maps each category (ROLE, FEATURE, POLICY, SECURITY, EXPERIMENTAL,
UPGRADE) to its templates, each a piece of configuration text that may hold ``if``
blocks, ``error`` statements and ``use`` statements of its own. The definitions set
the knobs HTCondor 24's templates of the same name set, to expressions of the same
meaning; those for what a cell does not run (``INERT``) are read and set nothing.
Category and template names are matched in any case.

A statement may name several templates, with arguments in parentheses::

    use ROLE : Submit, Execute
    use FEATURE : PartitionableSlot(2, cpus=50%)

``split`` finds the names and their argument texts; ``substitute`` puts the arguments
into a template before it is read: ``$(0)`` is the whole argument text, ``$(0#)`` how
many arguments there are, ``$(N)`` the Nth (arguments are separated by commas and
trimmed; empty ones do not count), ``$(N+)`` the text from the Nth on, ``$(N?)`` 1
when the Nth is not empty (``$(0?)``: when there are any), else 0, and
``$(N:default)`` / ``$(N+:default)`` the default when there is no such argument.
Other references, ``$(NAME)``, are left to the configuration's expansion.

The module is loaded only when a configuration holds a use statement (or when
condor_config_val is asked about templates).
"""

import re

_POLICY_EXPR_FRAGMENTS = """\
PolicyExprFragments = 1
KeyboardBusy = (KeyboardIdle < $(MINUTE))
ConsoleBusy = (ConsoleIdle < $(MINUTE))
KeyboardNotBusy = ($(KeyboardBusy) == False)
MachineBusy = ($(CPUBusy) || $(KeyboardBusy))
JustCPU = ($(CPUBusy) && ($(KeyboardBusy) == False))
NonCondorLoadAvg = (LoadAvg - CondorLoadAvg)
CpuIdle = ($(NonCondorLoadAvg) <= $(BackgroundLoad))
CpuBusy = ($(NonCondorLoadAvg) >= $(HighLoad))
ActivationTimer = ifThenElse(JobStart =!= UNDEFINED, (time() - JobStart), 0)
LastCkpt = (time() - LastPeriodicCheckpoint)
"""

# the end of every desktop policy: no retirement, one job per keyboard, the owner's when
# START is false
_DESKTOP_END = """\
MaxJobRetirementTime = 0
CLAIM_WORKLIFE =
SLOTS_CONNECTED_TO_KEYBOARD = 1000000
SLOTS_CONNECTED_TO_CONSOLE = 1000000
IS_OWNER = (START =?= False)
"""

# the end of the idle-desktop policies: evict, never suspend
_EVICT_NOT_SUSPEND = """\
WANT_SUSPEND = False
WANT_VACATE = True
SUSPEND = False
CONTINUE = True
KILL = False
""" + _DESKTOP_END

_DESKTOP = """\
if ! defined PolicyExprFragments
  use FEATURE : POLICY_EXPR_FRAGMENTS
endif
STARTD_LATCH_EXPRS = $(STARTD_LATCH_EXPRS) CpuBusy
CpuBusyTimer = IfThenElse(CpuBusyValue is 1, time() - CpuBusyTime, 0)
START = ((KeyboardIdle > $(StartIdleTime)) && ($(CPUIdle) || (State != "Unclaimed" && State != "Owner")))
SUSPEND = ($(KeyboardBusy) || (($(CpuBusyTimer) > 120) && $(ActivationTimer) > 90))
CONTINUE = ($(CPUIdle) && ($(ActivityTimer) > 10) && (KeyboardIdle > $(ContinueIdleTime)))
PREEMPT = (((Activity == "Suspended") && ($(ActivityTimer) > $(MaxSuspendTime))) || (SUSPEND && (WANT_SUSPEND == False)))
WANT_SUSPEND = ($(SmallJob) || $(KeyboardNotBusy) || $(IsVanilla)) && ($(SUSPEND))
WANT_VACATE = $(ActivationTimer) > 600 || $(IsVanilla)
KILL = False
""" + _DESKTOP_END

_POLICY_HOURS_TO_START = """\
WorkdayBeginHour = $(1:8)
WorkdayEndHour = $(2:12+5)
WorkdayBeginMinuteStartJobs = ($(WorkdayBeginHour))*60 - 29.5
WorkdayBeginMinuteStopJobs = ($(WorkdayBeginHour))*60 - 9.5
WorkdayEndMinute = ($(WorkdayEndHour))*60 + 0.5
RunJobsHours = ClockMin < $INT(WorkdayBeginMinuteStartJobs) || ClockMin > $INT(WorkdayEndMinute)
NoJobsHours = ClockMin > $INT(WorkdayBeginMinuteStopJobs) && ClockMin < $INT(WorkdayEndMinute)
if $(3?)
  WorkweekFirstDay = $(3:1)
  WorkweekLastDay = $(4:5)
  IsWeekend = ClockDay < $INT(WorkweekFirstDay) || ClockDay > $INT(WorkWeekLastDay)
  IsWorkday = ClockDay >= $INT(WorkweekFirstDay) && ClockDay <= $INT(WorkWeekLastDay)
  RunJobsHours = $(IsWeekend) || $(RunJobsHours)
  NoJobsHours = $(IsWorkday) && $(NoJobsHours)
endif
RunJobsHours = ($(RunJobsHours))
NoJobsHours = ($(NoJobsHours))
"""

_DESKTOP_IDLE = """\
if $(1?)
  use FEATURE : POLICY_HOURS_TO_START($(1+))
endif
NonCondorLoadAvg = (LoadAvg - CondorLoadAvg)
CpuBusy = ($(NonCondorLoadAvg) >= $(HighLoad))
CpuIdle = ($(NonCondorLoadAvg) <= $(BackgroundLoad))
STARTD_LATCH_EXPRS = $(STARTD_LATCH_EXPRS) CpuBusy
CpuBusyTimer = (CpuBusyValue * (time() - CpuBusyTime))
PreemptKeyboardIdleTime = 60
PreemptCpuBusyTime = 120
PREEMPT = (KeyboardIdle < $(PreemptKeyboardIdleTime)) || ($(CpuBusyTimer) > $(PreemptCpuBusyTime))
if defined NoJobsHours
  PREEMPT = ($(PREEMPT)) && ($(NoJobsHours))
endif
START = (KeyboardIdle > $(StartIdleTime)) && $(CPUIdle)
if defined RunJobsHours
  START = ($(START)) || ($(RunJobsHours))
endif
""" + _EVICT_NOT_SUSPEND

_DESKTOP_HOURS = """\
use FEATURE : POLICY_HOURS_TO_START($(1+))
NonCondorLoadAvg = (LoadAvg - CondorLoadAvg)
CpuBusy = ($(NonCondorLoadAvg) >= $(HighLoad))
STARTD_LATCH_EXPRS = $(STARTD_LATCH_EXPRS) CpuBusy
CpuBusyTimer = (CpuBusyValue * (time() - CpuBusyTime))
PREEMPT = $(NoJobsHours)
START = $(RunJobsHours)
""" + _EVICT_NOT_SUSPEND

_ALWAYS_RUN_JOBS = """\
START = True
SUSPEND = False
CONTINUE = True
PREEMPT = False
KILL = False
WANT_SUSPEND = False
WANT_VACATE = True
PREEMPTION_REQUIREMENTS = False
NEGOTIATOR_CONSIDER_PREEMPTION = False
MaxJobRetirementTime = 2147483647
CLAIM_WORKLIFE = 1200
"""

_UWCS_DESKTOP_POLICY_VALUES = """\
if ! defined PolicyExprFragments
  use FEATURE : POLICY_EXPR_FRAGMENTS
endif
STARTD_LATCH_EXPRS = $(STARTD_LATCH_EXPRS) CpuBusy
CpuBusyTimer = IfThenElse(CpuBusyValue is 1, time() - CpuBusyTime, 0)
UWCS_START = ((KeyboardIdle > $(StartIdleTime)) && ($(CPUIdle) || (State != "Unclaimed" && State != "Owner")))
UWCS_SUSPEND = ($(KeyboardBusy) || (($(CpuBusyTimer) > 2 * $(MINUTE)) && $(ActivationTimer) > 90))
UWCS_CONTINUE = ($(CPUIdle) && ($(ActivityTimer) > 10) && (KeyboardIdle > $(ContinueIdleTime)))
UWCS_PREEMPT = (((Activity == "Suspended") && ($(ActivityTimer) > $(MaxSuspendTime))) || (SUSPEND && (WANT_SUSPEND == False)))
UWCS_WANT_SUSPEND = ($(SmallJob) || $(KeyboardNotBusy) || $(IsVanilla)) && ($(SUSPEND))
UWCS_WANT_VACATE = ($(ActivationTimer) > 10 * $(MINUTE) || $(IsVanilla))
UWCS_KILL = false
UWCS_MaxJobRetirementTime = 0
UWCS_PERIODIC_CHECKPOINT = $(LastCkpt) > (3 * $(HOUR) + $RANDOM_INTEGER(-30,30,1) * $(MINUTE))
UWCS_NEGOTIATOR_PRE_JOB_RANK = (10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory
UWCS_NEGOTIATOR_POST_JOB_RANK = (RemoteOwner =?= UNDEFINED) * (ifThenElse(isUndefined(KFlops), 1000, Kflops) - SlotID - 1.0e10*(Offline =?= True))
UWCS_PREEMPTION_REQUIREMENTS = ((SubmitterGroup =?= RemoteGroup) && ($(StateTimer) > (1 * $(HOUR))) && (RemoteUserPrio > TARGET.SubmitterUserPrio * 1.2)) || (MY.NiceUser == True)
UWCS_PREEMPTION_RANK = (RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRuntime), 0, TotalJobRuntime)
"""

_UWCS_DESKTOP = """\
use FEATURE : UWCS_DESKTOP_POLICY_VALUES
START = $(UWCS_START)
SUSPEND = $(UWCS_SUSPEND)
CONTINUE = $(UWCS_CONTINUE)
PREEMPT = $(UWCS_PREEMPT)
KILL = $(UWCS_KILL)
WANT_SUSPEND = $(UWCS_WANT_SUSPEND)
WANT_VACATE = $(UWCS_WANT_VACATE)
PERIODIC_CHECKPOINT = $(UWCS_PERIODIC_CHECKPOINT)
PREEMPTION_REQUIREMENTS = $(UWCS_PREEMPTION_REQUIREMENTS)
PREEMPTION_RANK = $(UWCS_PREEMPTION_RANK)
NEGOTIATOR_PRE_JOB_RANK = $(UWCS_NEGOTIATOR_PRE_JOB_RANK)
NEGOTIATOR_POST_JOB_RANK = $(UWCS_NEGOTIATOR_POST_JOB_RANK)
MaxJobRetirementTime = $(UWCS_MaxJobRetirementTime)
CLAIM_WORKLIFE = $(UWCS_CLAIM_WORKLIFE)
SLOTS_CONNECTED_TO_KEYBOARD = 1024*1024
IS_OWNER = (START =?= False)
"""

_LIMIT_JOB_RUNTIMES = """\
MAX_JOB_RUNTIME = $(1:24*3600)
MaxJobRetirementTime = $(MAX_JOB_RUNTIME)+120
PREEMPT = (Activity == "Busy") && ((time() - EnteredCurrentActivity) > $(MAX_JOB_RUNTIME))
"""

_PREEMPT_IF_RUNTIME_EXCEEDS = """\
MAX_JOB_RUNTIME = $(1:24*3600)
PREEMPT_RUNTIME_EXCEEDS = (JobState == "Running") && ((time() - JobCurrentStartDate) > $(MAX_JOB_RUNTIME))
use POLICY : PREEMPT_IF(PREEMPT_RUNTIME_EXCEEDS)
"""

_HOLD_IF_RUNTIME_EXCEEDS = """\
MAX_JOB_RUNTIME = $(1:24*3600)
HOLD_RUNTIME_EXCEEDS = (JobState == "Running") && ((time() - JobCurrentStartDate) > $(MAX_JOB_RUNTIME))
HOLD_REASON_RUNTIME_EXCEEDS = runtime exceeded maximum ($(MAX_JOB_RUNTIME) seconds)
use POLICY : WANT_HOLD_IF(HOLD_RUNTIME_EXCEEDS, $(HOLD_SUBCODE_RUNTIME_EXCEEDS:103), $(HOLD_REASON_RUNTIME_EXCEEDS))
"""

_STARTD_PUBLISH_CPUS_USAGE = """\
CpusUsage = ifThenElse(TotalLoadAvg > 0.0 && Activity != "Idle", CondorLoadAvg/TotalLoadAvg*MIN({TotalLoadAvg, $(DETECTED_CORES)}), 0)
STARTD_ATTRS = $(STARTD_ATTRS) CpusUsage
"""

_CPU_EXCEEDED = "CPU_EXCEEDED = (CpusUsage > Cpus + 0.8)\n"
_DISK_EXCEEDED = "DISK_EXCEEDED = (JobUniverse != 13 && DiskUsage =!= UNDEFINED && DiskUsage > Disk)\n"
_MEMORY_EXCEEDED = "MEMORY_EXCEEDED = (JobUniverse != 13 && MemoryUsage =!= UNDEFINED && MemoryUsage > Memory)\n"

_PREEMPT_IF = """\
if ! $(1?)
  error : use POLICY : PREEMPT_IF requires an argument: the name of a configuration variable holding the trigger expression.
endif
if defined PREEMPT
  PREEMPT = $($(1)) || $(PREEMPT)
else
  PREEMPT = $($(1))
endif
MAXJOBRETIREMENTTIME = ifThenElse($($(1)), -1, $(MAXJOBRETIREMENTTIME:0))
if defined WANT_SUSPEND
  WANT_SUSPEND = $($(1)) =!= true && $(WANT_SUSPEND)
else
  WANT_SUSPEND = $($(1)) =!= true
endif
"""

_WANT_HOLD_IF = """\
use POLICY : PREEMPT_IF($(1))
if ! $(3?)
  error : use POLICY : WANT_HOLD_IF requires 3 arguments: policy_variable, subcode, reason_text
endif
if defined WANT_HOLD
  WANT_HOLD = (JobUniverse != 1 && $($(1))) || $(WANT_HOLD)
else
  WANT_HOLD = (JobUniverse != 1 && $($(1)))
endif
WANT_HOLD_SUBCODE = ifThenElse($($(1)), $(2), $(WANT_HOLD_SUBCODE:UNDEFINED))
WANT_HOLD_REASON = ifThenElse($($(1)), "$(3+)", $(WANT_HOLD_REASON:UNDEFINED))
"""


def _cron_hook(mode, arguments, executable_at, period=None):
    """A cron hook template: ``$(1)`` is STARTD_CRON or SCHEDD_CRON, ``$(2)`` the job's
    tag, then the period (when ``period`` is a reference) and the executable, then its
    optional arguments."""
    usage = "STARTD_CRON | SCHEDD_CRON, tag, " + ("period, " if period else "") + "hook_exe [,hook_args]"
    lines = [f"if ! $({executable_at}?)",
             f"  error : use FEATURE : {mode[0]}CronHook requires at least {executable_at} arguments: {usage}",
             "endif",
             "$(1)_JOBLIST = $($(1)_JOBLIST) $(2)",
             f"$(1)_$(2)_MODE = {mode[1]}"]
    lines += [f"$(1)_$(2)_{name} = {value}" for name, value in arguments]
    if period:
        lines.append(f"$(1)_$(2)_PERIOD = {period}")
    lines += [f"$(1)_$(2)_EXECUTABLE = $({executable_at})",
              f"if $({executable_at + 1}?)",
              f"  $(1)_$(2)_ARGS = $({executable_at + 1})",
              "endif"]
    return "\n".join(lines) + "\n"


_SECURITY_RECOMMENDED = """\
SECURITY_MODEL = {model}
use SECURITY : STRONG
SEC_READ_AUTHENTICATION = OPTIONAL
{read_lines}
ALLOW_ADMINISTRATOR = $(1:condor)@* {pool} $(2:root@*) $(3+)
ALLOW_DAEMON = $(1:condor)@* {pool}
ALLOW_NEGOTIATOR = $(1:condor)@* {pool}
ALLOW_WRITE = *
ALLOW_READ = *
"""

#: category -> template name -> configuration text
_TESTINGMODE_POLICY_VALUES = """\
TESTINGMODE_WANT_SUSPEND = False
TESTINGMODE_WANT_VACATE = True
TESTINGMODE_START = True
TESTINGMODE_SUSPEND = False
TESTINGMODE_CONTINUE = True
TESTINGMODE_PREEMPT = False
TESTINGMODE_KILL = False
TESTINGMODE_PERIODIC_CHECKPOINT = False
TESTINGMODE_PREEMPTION_REQUIREMENTS = False
TESTINGMODE_PREEMPTION_RANK = 0
TESTINGMODE_CLAIM_WORKLIFE = 1200
"""

# a machine resource watched by a startd cron job: (resource, mode, period, program, metrics ...)
_MONITOR = """\
if ! $(5?)
  error : use feature : monitor requires five or more arguments
endif
STARTD_CRON_JOBLIST = $(STARTD_CRON_JOBLIST) $(1)_MONITOR
STARTD_CRON_$(1)_MONITOR_MODE = $(2)
STARTD_CRON_$(1)_MONITOR_PERIOD = $(3)
STARTD_CRON_$(1)_MONITOR_EXECUTABLE = $(4)
STARTD_CRON_$(1)_MONITOR_METRICS = $(5+)
"""

# a user map of the schedd's ClassAd functions (usermap()): (map name, map file)
_SCHEDD_USERMAP_FILE = """\
if ! $(2?)
  error : use FEATURE : ScheddUsermapFile requires 2 arguments: map_name, map_file
endif
SCHEDD_CLASSAD_USER_MAP_NAMES = $(SCHEDD_CLASSAD_USER_MAP_NAMES) $(1)
CLASSAD_USER_MAPFILE_$(1) = $(2)
"""

# a job attribute set from a user map of another: (attribute, from, map name [, map file])
_SET_JOB_ATTR_FROM_USERMAP = """\
if ! $(3?)
  error : use FEATURE : SetJobAttrFromUsermap requires at least 3 arguments: dest_attr, src_attr, map_name [,map_file]
endif
if $(4?)
  use FEATURE : ScheddUsermapFile($(3), $(4))
endif
JOB_TRANSFORM_NAMES = $(JOB_TRANSFORM_NAMES) Set$(1)
JOB_TRANSFORM_Set$(1) = EVALSET $(1) usermap("$(3)",$(2),$(1))
SUBMIT_REQUIREMENT_NAMES = $(SUBMIT_REQUIREMENT_NAMES) Require$(1)
SUBMIT_REQUIREMENT_Require$(1) = $(1) isnt undefined
SUBMIT_REQUIREMENT_Require$(1)_REASON = strcat("Submit requirement Require$(1) not met - Could not map '", $(2)?:"undefined", "' to a $(1)")
"""

# the accounting group of each job from a user map of its owner: (map file [, check the group asked for])
_ASSIGN_ACCOUNTING_GROUP = """\
if ! $(1?)
  error : use FEATURE : AssignAccountingGroup requires a map_file argument
endif
use FEATURE : ScheddUsermapFile(AssignAccountingGroup, $(1))
JOB_TRANSFORM_NAMES = $(JOB_TRANSFORM_NAMES) AssignAccountingGroup
JOB_TRANSFORM_AssignAccountingGroup @=end
  COPY Owner = AcctGroupUser
  COPY AcctGroup = RequestedAcctGroup
  EVALSET AcctGroup = usermap("AssignAccountingGroup",AcctGroupUser,AcctGroup)
  EVALSET AccountingGroup = join(".",AcctGroup,AcctGroupUser)
@end
IMMUTABLE_JOB_ATTRS = $(IMMUTABLE_JOB_ATTRS) AcctGroup AcctGroupUser AccountingGroup
if $(2:True)
  SUBMIT_REQUIREMENT_NAMES = $(SUBMIT_REQUIREMENT_NAMES) CheckRequestedGroup
  SUBMIT_REQUIREMENT_CheckRequestedGroup = RequestedAcctGroup is undefined || RequestedAcctGroup == AcctGroup
  SUBMIT_REQUIREMENT_CheckRequestedGroup_REASON = strcat("Permission denied setting accounting_group to ", RequestedAcctGroup)
endif
SUBMIT_REQUIREMENT_NAMES = $(SUBMIT_REQUIREMENT_NAMES) AssignAccountingGroup
SUBMIT_REQUIREMENT_AssignAccountingGroup = AcctGroup isnt undefined && AccountingGroup isnt undefined
SUBMIT_REQUIREMENT_AssignAccountingGroup_REASON = strcat("Submit requirement AssignAccountingGroup not met - Could not map '", Owner, "' to an accounting group ", RequestedAcctGroup)
"""

_REMOTE_RUNTIME_CONFIG = """\
ENABLE_RUNTIME_CONFIG = True
ALLOW_CONFIG = $(ALLOW_ADMINISTRATOR)
if $(0#)
  SETTABLE_ATTRS_CONFIG = $(SETTABLE_ATTRS_CONFIG) $(0)
endif
"""

_CHILD_COLLECTOR = """\
COLLECTOR$(1) = $(COLLECTOR)
if $(2?)
  COLLECTOR$(1)_ARGS = -p $(2)
else
  COLLECTOR$(1)_ARGS = -sock collector$(1)
endif
COLLECTOR$(1).COLLECTOR_NAME = Collector$(1)
COLLECTOR$(1).CONDOR_VIEW_HOST = $(TOP_COLLECTOR_HOST)
COLLECTOR$(1).CCB_RECONNECT_FILE = $(SPOOL)/Collector$(1).ccb_reconnect
DAEMON_LIST = $(DAEMON_LIST) COLLECTOR$(1)
TOP_COLLECTOR_HOST = $(COLLECTOR_HOST)
"""

_IDTOKENS = """\
use SECURITY : recommended
SEC_READ_AUTHENTICATION_METHODS = $(SEC_DEFAULT_AUTHENTICATION_METHODS),ANONYMOUS
SEC_CLIENT_AUTHENTICATION_METHODS = $(SEC_DEFAULT_AUTHENTICATION_METHODS),ANONYMOUS
TRUST_DOMAIN = $(CONDOR_HOST)
"""

#: templates HTCondor has for what a gridtools cell does not run (caches, credential
#: daemons, statistics feeds, collector failover, cloud annexes, checkpoint storage):
#: a use statement reads them, and they set nothing
INERT = {
    "FEATURE": ("PelicanCache", "PelicanRetryPolicy", "LIBRARIAN", "KRB", "OAUTH", "ADSTASH", "GANGLIA",
                "HPC_ANNEX", "DefaultCheckpointDestination"),
    "POLICY": ("OnlyRegisteredCheckpointDestinations",),
    "EXPERIMENTAL": ("CollectorNode", "HAD", "HADSharedPort", "HADFixedPort", "HADReplication"),
    "UPGRADE": ("DISCARD", "DISCARDX", "DISCARDIF", "DISCARDIFX", "DISCARD_VMWARE"),
}

TEMPLATES = {
    "ROLE": {
        "Personal": "CONDOR_HOST = 127.0.0.1\nCOLLECTOR_HOST = $(CONDOR_HOST):0\n"
                    "DAEMON_LIST = MASTER COLLECTOR NEGOTIATOR STARTD SCHEDD\nRunBenchmarks = 0\n",
        "Submit": "DAEMON_LIST = $(DAEMON_LIST) SCHEDD\n",
        "Execute": "DAEMON_LIST = $(DAEMON_LIST) STARTD\n",
        "CentralManager": "DAEMON_LIST = $(DAEMON_LIST) COLLECTOR NEGOTIATOR\n",
        "get_htcondor_central_manager": "use SECURITY : get_htcondor_idtokens\nuse ROLE : CentralManager\n",
        "get_htcondor_submit": "use SECURITY : get_htcondor_idtokens\nuse ROLE : Submit\n",
        "get_htcondor_execute": "use SECURITY : get_htcondor_idtokens\nuse ROLE : Execute\n",
    },
    "FEATURE": {
        "PartitionableSlot": "NUM_SLOTS_TYPE_$(1:1) = 1\nSLOT_TYPE_$(1:1)_PARTITIONABLE = true\n"
                             "SLOT_TYPE_$(1:1) = $(2+:100%)\n",
        "StaticSlots": "NUM_SLOTS_TYPE_$(1:1) = $(2:$(NUM_CPUS:$(DETECTED_CPUS)))\n"
                       "SLOT_TYPE_$(1:1)_PARTITIONABLE = false\n"
                       "SLOT_TYPE_$(1:1) = $(3+:1/$(NUM_SLOTS_TYPE_$(1:1)))\n"
                       "SLOT_TYPE_$(1:1) = $(3+)\n",
        "POLICY_EXPR_FRAGMENTS": _POLICY_EXPR_FRAGMENTS,
        "POLICY_HOURS_TO_START": _POLICY_HOURS_TO_START,
        "UWCS_DESKTOP_POLICY_VALUES": _UWCS_DESKTOP_POLICY_VALUES,
        "OneShotCronHook": _cron_hook(("OneShot", "OneShot"), [("KILL", "true"), ("RECONFIG_RERUN", "true")], 3),
        "PeriodicCronHook": _cron_hook(("Periodic", "Periodic"), [], 4, period="$(3)"),
        "ContinuousCronHook": _cron_hook(("Continuous", "WaitForExit"), [], 3, period="0"),
        "StartdCronPeriodic": "use FEATURE : PeriodicCronHook(STARTD_CRON, $(0))\n",
        "StartdCronOneShot": "use FEATURE : OneShotCronHook(STARTD_CRON, $(0))\n",
        "StartdCronContinuous": "use FEATURE : ContinuousCronHook(STARTD_CRON, $(0))\n",
        "ScheddCronPeriodic": "use FEATURE : PeriodicCronHook(SCHEDD_CRON, $(0))\n",
        "ScheddCronOneShot": "use FEATURE : OneShotCronHook(SCHEDD_CRON, $(0))\n",
        "ScheddCronContinuous": "use FEATURE : ContinuousCronHook(SCHEDD_CRON, $(0))\n",
        "TESTINGMODE_POLICY_VALUES": _TESTINGMODE_POLICY_VALUES,
        "Monitor": _MONITOR,
        "GPUsMonitor": "use FEATURE : Monitor(GPUs, WaitForExit, 300, $(GPU_MONITOR), SUM:GPUs, PEAK:GPUsMemory)\n"
                       "STARTD_CRON_GPUs_MONITOR_CONDITION = TotalGPUs > 0 && OpSys =!= \"WINDOWS\"\n"
                       "STARTD_JOB_ATTRS = $(STARTD_JOB_ATTRS) GPUsUsage GPUsMemoryUsage\n",
        "GPUs": "MACHINE_RESOURCE_INVENTORY_GPUs = $(LIBEXEC)/condor_gpu_discovery $(1) -properties "
                "$(GPU_DISCOVERY_EXTRA)\n"
                "ENVIRONMENT_FOR_AssignedGPUs = GPU_DEVICE_ORDINAL=/(CUDA|OCL)//  CUDA_VISIBLE_DEVICES=/CUDA//\n"
                "ENVIRONMENT_VALUE_FOR_UnAssignedGPUs = 10000\n"
                "use FEATURE : GPUsMonitor\n",
        "ScheddUsermapFile": _SCHEDD_USERMAP_FILE,
        "SetJobAttrFromUsermap": _SET_JOB_ATTR_FROM_USERMAP,
        "AssignProjectName": "if ! $(1?)\n  error : use FEATURE : AssignProjectName requires a map_name argument\n"
                             "endif\nuse FEATURE : SetJobAttrFromUsermap(ProjectName, Owner, $(1+))\n",
        "AssignAccountingGroup": _ASSIGN_ACCOUNTING_GROUP,
        "REMOTE_RUNTIME_CONFIG": _REMOTE_RUNTIME_CONFIG,
        "REMOTE_CONFIG": "ENABLE_PERSISTENT_CONFIG = True\nPERSISTENT_CONFIG_DIR = $(SPOOL)\n"
                         "use FEATURE : REMOTE_RUNTIME_CONFIG($(0))\n",
        "JobsHaveInstanceIDs": "SYSTEM_JOB_MACHINE_ATTRS = $(SYSTEM_JOB_MACHINE_ATTRS) CloudInstanceID\n",
        "CommonCloudAttributesGoogle": "use FEATURE : StartdCronOneShot(cloud, "
                                       "$(LIBEXEC)/common-cloud-attributes-google.py, $(0))\n"
                                       "STARTD_CRON_cloud_PREFIX = Cloud\n",
        "CommonCloudAttributesAWS": "use FEATURE : StartdCronOneShot(cloud, $(LIBEXEC)/common-cloud-attributes-aws.py, "
                                    "$(0))\nSTARTD_CRON_cloud_PREFIX = Cloud\n",
        "ChildCollector": _CHILD_COLLECTOR,
    },
    "POLICY": {
        "ALWAYS_RUN_JOBS": _ALWAYS_RUN_JOBS,
        "DESKTOP": _DESKTOP,
        "DESKTOP_IDLE": _DESKTOP_IDLE,
        "DESKTOP_HOURS": _DESKTOP_HOURS,
        "UWCS_DESKTOP": _UWCS_DESKTOP,
        "LIMIT_JOB_RUNTIMES": _LIMIT_JOB_RUNTIMES,
        "PREEMPT_IF_RUNTIME_EXCEEDS": _PREEMPT_IF_RUNTIME_EXCEEDS,
        "HOLD_IF_RUNTIME_EXCEEDS": _HOLD_IF_RUNTIME_EXCEEDS,
        "STARTD_PUBLISH_CpusUsage": _STARTD_PUBLISH_CPUS_USAGE,
        "PREEMPT_IF_CPUS_EXCEEDED": "use POLICY : STARTD_PUBLISH_CpusUsage\n" + _CPU_EXCEEDED
                                    + "use POLICY : PREEMPT_IF(CPU_EXCEEDED)\n",
        "HOLD_IF_CPUS_EXCEEDED": "use POLICY : STARTD_PUBLISH_CpusUsage\n" + _CPU_EXCEEDED
                                 + "HOLD_REASON_CPU_EXCEEDED = CPU usage exceeded request_cpus\n"
                                 "use POLICY : WANT_HOLD_IF(CPU_EXCEEDED, $(HOLD_SUBCODE_CPU_EXCEEDED:101), "
                                 "$(HOLD_REASON_CPU_EXCEEDED))\n",
        "PREEMPT_IF_DISK_EXCEEDED": _DISK_EXCEEDED + "use POLICY : PREEMPT_IF(DISK_EXCEEDED)\n",
        "HOLD_IF_DISK_EXCEEDED": _DISK_EXCEEDED
                                 + "HOLD_REASON_DISK_EXCEEDED = disk usage exceeded allocated disk\n"
                                 "use POLICY : WANT_HOLD_IF(DISK_EXCEEDED, $(HOLD_SUBCODE_DISK_EXCEEDED:104), "
                                 "$(HOLD_REASON_DISK_EXCEEDED))\n",
        "PREEMPT_IF_MEMORY_EXCEEDED": _MEMORY_EXCEEDED + "use POLICY : PREEMPT_IF(MEMORY_EXCEEDED)\n",
        "HOLD_IF_MEMORY_EXCEEDED": _MEMORY_EXCEEDED
                                   + "HOLD_REASON_MEMORY_EXCEEDED = memory usage exceeded request_memory\n"
                                   "use POLICY : WANT_HOLD_IF(MEMORY_EXCEEDED, $(HOLD_SUBCODE_MEMORY_EXCEEDED:102), "
                                   "$(HOLD_REASON_MEMORY_EXCEEDED))\n",
        "PREEMPT_IF": _PREEMPT_IF,
        "WANT_HOLD_IF": _WANT_HOLD_IF,
    },
    "SECURITY": {
        "HOST_BASED": "ALLOW_ADMINISTRATOR = $(CONDOR_HOST)\nALLOW_READ = *\n"
                      "ALLOW_WRITE = $(FULL_HOSTNAME) $(IPV4_ADDRESS) $(IPV6_ADDRESS)\n"
                      "ALLOW_DAEMON = $(FULL_HOSTNAME) $(IPV4_ADDRESS) $(IPV6_ADDRESS)\n"
                      "ALLOW_NEGOTIATOR = $(CONDOR_HOST)\n"
                      "ALLOW_NEGOTIATOR_SCHEDD = $(ALLOW_NEGOTIATOR) $(FLOCK_NEGOTIATOR_HOSTS)\n"
                      "ALLOW_WRITE_COLLECTOR = $(ALLOW_WRITE) $(FLOCK_FROM)\n"
                      "ALLOW_WRITE_STARTD = $(ALLOW_WRITE) $(FLOCK_FROM)\n"
                      "ALLOW_READ_COLLECTOR = $(ALLOW_READ) $(FLOCK_FROM)\n"
                      "ALLOW_READ_STARTD = $(ALLOW_READ) $(FLOCK_FROM)\n"
                      "LEGACY_ALLOW_SEMANTICS = TRUE\n",
        "USER_BASED": "if $(CondorIsAdmin)\n  authuser = condor\nelse\n  authuser = $(USERNAME)\nendif\n"
                      "use SECURITY : recommended($(authuser))\n"
                      "if ! $(CondorIsAdmin)\n  ALLOW_WRITE = $(authuser)@$(UID_DOMAIN)\nendif\n",
        "WITH_AUTHENTICATION": "SEC_DEFAULT_AUTHENTICATION = required\nSEC_DEFAULT_INTEGRITY = required\n",
        "STRONG": "SEC_DEFAULT_AUTHENTICATION = required\nSEC_DEFAULT_INTEGRITY = required\n"
                  "SEC_DEFAULT_ENCRYPTION = required\n",
        "recommended_v9_0": _SECURITY_RECOMMENDED.format(
            model="9.0", pool="condor_pool@*",
            read_lines="SEC_READ_ENCRYPTION = OPTIONAL\nSEC_READ_INTEGRITY = OPTIONAL"),
        "recommended_v24_0": _SECURITY_RECOMMENDED.format(
            model="24.0", pool="condor@password", read_lines="SEC_CLIENT_AUTHENTICATION = OPTIONAL"),
        "recommended": "use SECURITY : recommended_v24_0($(1+))\n",
        "FIPS": "FIPS = True\nuse SECURITY : STRONG\nSEC_DEFAULT_CRYPTO_METHODS = AES,3DES\n",
        "get_htcondor_idtokens": _IDTOKENS,
    },
}
for _category, _names in INERT.items():
    TEMPLATES.setdefault(_category, {}).update(dict.fromkeys(_names, ""))


def category(name):
    """(the category's own name, its templates) for ``name`` in any case, or None."""
    key = name.strip().upper()
    found = TEMPLATES.get(key)
    return (key, found) if found is not None else None


def find(category_name, name):
    """(category, template name, text) of template ``name`` of ``category_name`` (any
    case), or None when there is no such template."""
    found = category(category_name)
    if found is None:
        return None
    wanted = name.strip().lower()
    for key, text in found[1].items():
        if key.lower() == wanted:
            return found[0], key, text
    return None


def names(category_name):
    """The template names of a category in HTCondor's order (by name, in any case), or
    None when there is no such category."""
    found = category(category_name)
    return None if found is None else sorted(found[1], key=str.lower)


# ------------------------------------------------------------- statements

def split(text):
    """[(template name, argument text)] of the right-hand side of a use statement:
    names separated by commas or blanks, each optionally followed by its arguments
    in parentheses (which may hold commas and nested parentheses or brackets)."""
    found, pos, size = [], 0, len(text)
    while True:
        while pos < size and (text[pos].isspace() or text[pos] == ","):
            pos += 1
        end = pos
        while end < size and not text[end].isspace() and text[end] not in ",(":
            end += 1
        if end == pos:
            return found
        name, args, pos = text[pos:end], "", end
        while pos < size and text[pos].isspace():
            pos += 1
        if pos < size and text[pos] == "(":
            close = _closing(text, pos)
            if close is not None:
                args, pos = text[pos + 1:close], close
            pos += 1
        found.append((name, args))


def _closing(text, at):
    """Index of the bracket closing the one at ``at`` (``()`` and ``[]`` nest), or None."""
    stack = []
    for i in range(at, len(text)):
        ch = text[i]
        if ch in "([":
            stack.append(")" if ch == "(" else "]")
        elif ch in ")]":
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return i
    return None


# ------------------------------------------------------------- arguments

_ARGUMENT = re.compile(r"\$\((\d+)([?#+]?)([:)])")


def substitute(text, args):
    """``text`` with its argument references ``$(N...)`` replaced from ``args`` (the
    text between a template name's parentheses); see the module's description. A
    default may itself hold argument references; arguments are put in as written."""
    pos = 0
    while True:
        found = _next_reference(text, pos)
        if found is None:
            return text
        start, end, m, default = found
        value, defaulted = _argument(args, int(m.group(1)), m.group(2), default)
        text = text[:start] + value + text[end:]
        pos = start if defaulted else start + len(value)


def _next_reference(text, pos):
    """(start, end, match, default or None) of the first argument reference at or after
    ``pos``, or None."""
    while True:
        start = text.find("$(", pos)
        if start < 0:
            return None
        pos = start + 2
        m = _ARGUMENT.match(text, start)
        if m is None or text[start - 1:start] == "$":     # ($$(...) is no argument)
            continue
        if m.group(3) == ")":
            return start, m.end(), m, None
        close = _closing(text, start + 1)
        if close is not None:
            return start, close + 1, m, text[m.end():close]


def _argument(args, index, suffix, default):
    """(value, whether it is ``default``) of argument reference ``$(<index><suffix>)``."""
    if index == 0:
        value = str(len(_arguments(args))) if suffix in ("#", "+") else args
    elif suffix in ("#", "+"):
        value = _from(args, index)
    else:
        found = _arguments(args)
        value = found[index - 1] if index <= len(found) else None
    defaulted = not value if suffix in ("#", "+") else value is None
    if defaulted and default is not None:
        value = default
    value = (value or "").strip()
    if suffix == "?":
        return ("1" if value else "0"), False
    return value, defaulted and default is not None


def _arguments(args):
    """The arguments of an argument text: separated by commas, trimmed, empty ones
    left out."""
    return [part.strip() for part in args.split(",") if part.strip()]


def _from(args, index):
    """The argument text from argument ``index`` (1 for the first) on, None when there
    are fewer arguments."""
    pos, size = 0, len(args)
    for _ in range(index - 1):
        while pos < size and (args[pos] == "," or args[pos].isspace()):
            pos += 1
        if pos >= size:
            return None
        while pos < size and args[pos] != ",":
            pos += 1
    if pos >= size:
        return None
    return args[pos + 1:] if args[pos] == "," else args[pos:]

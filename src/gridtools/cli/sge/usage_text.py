"""The usage texts of qstat, qhost, qsub and qrsh, as Grid Engine 8.1.9 prints them.

``-help`` prints the text on stdout (exit 0); a bad option of qstat or qhost
prints it on stderr followed by the error line (exit 1). Options gridtools
adds (qstat -json, qhost -st) are described in the manual pages, not here,
so the text stays the one scripts and users of Grid Engine know. qsub's and
qrsh's option lines are built from ``SUBMIT_OPTIONS`` for the options each
command accepts, in Grid Engine's layout.
"""

VERSION_LINE = "SGE 8.1.9"

QSTAT = "\n".join((
    'usage: qstat [options]',
    '        [-ext]                            view additional attributes',
    '        [-explain a|c|A|E]                show reason for queue c(onfiguration ambiguous), a(larm), suspend A(larm), E(rror) state',
    '        [-f]                              full output',
    '        [-F [resource_attributes]]        full output and show (selected) resources of queue(s)',
    '        [-g c]                            display cluster queue summary',
    '        [-g d]                            display all job-array tasks (do not group)',
    '        [-g t]                            display all parallel job tasks (do not group)',
    '        [-help]                           print this help',
    '        [-j [job_identifier_list]]        show scheduler job information',
    '        [-l resource_list]                request the given resources',
    '        [-ne]                             hide empty queues',
    '        [-ncb]                            suppress additional binding specific parameters',
    '        [-pe pe_list]                     select only queues with one of these parallel environments',
    '        [-q wc_queue_list]                print information on given queue',
    '        [-qs {a|c|d|o|s|u|A|C|D|E|S}]     selects queues which are in the given state(s)',
    '        [-r]                              show requested resources of job(s)',
    '        [-s {p|r|s|z|hu|ho|hs|hd|hj|ha|h|a}] show pending, running, suspended, zombie jobs,',
    '                                          jobs with a user/operator/system/array-dependency hold, ',
    '                                          jobs with a start time in future or any combination only.',
    '                                          h is an abbreviation for huhohshdhjha',
    '                                          a is an abbreviation for prsh',
    '        [-t]                              show task information (implicitly -g t)',
    '        [-u user_list]                    view jobs of this user list',
    '        [-U user_list]                    select only queues where these users have access',
    '        [-urg]                            display job urgency information',
    '        [-pri]                            display job priority information',
    '        [-xml]                            display the information in XML format',
    '',
    'pe_list                  pe[,pe,...]',
    'job_identifier_list      [job_id|job_name|pattern]{, [job_id|job_name|pattern]}',
    'resource_list            resource[=value][,resource[=value],...]',
    'user_list                user|*|@group[,user|*|@group],...]',
    'resource_attributes      resource,resource,...',
    'wc_cqueue                wildcard expression matching a cluster queue',
    'wc_host                  wildcard expression matching a host',
    'wc_hostgroup             wildcard expression matching a hostgroup',
    'wc_qinstance             wc_cqueue@wc_host',
    'wc_qdomain               wc_cqueue@wc_hostgroup',
    'wc_queue_list            wc_cqueue|wc_qdomain|wc_qinstance',
    'wc_queue_list            wc_queue[,wc_queue,...]',
)) + "\n"

QHOST = "\n".join((
    'usage: qhost [options]',
    '  [-F [resource_attribute]]  show (selected) resources',
    '  [-h hostlist]              display only selected hosts',
    '  [-help]                    print this help',
    '  [-j]                       display jobs hosted by host',
    '  [-l attr=val,...]          request the given resources',
    '  [-ncb]                     suppress host topology based information',
    '  [-q]                       display queues hosted by host',
    '  [-u user[,user,...]]       show only jobs for user',
    '  [-xml]                     display the information in XML format',
)) + "\n"

#: the option lines of qsub -help and qrsh -help: option -> (synopsis, description).
#: The lines Grid Engine 8.1.9 prints keep its words; options it leaves out of its
#: list (-ar, -ckpt, -clear, -dl, -R, -tc, -terse, -w) are added in the same layout,
#: and the qconf options its list shows by mistake (-Ap, -mattr, ...) are left out.
SUBMIT_OPTIONS = {
    "-a": ("[-a date_time]", "request a start time"),
    "-ac": ("[-ac context_list]", "add context variable(s)"),
    "-A": ("[-A account_string]", "account string in accounting record"),
    "-ar": ("[-ar ar_id]", "run the job in this advance reservation"),
    "-b": ("[-b y[es]|n[o]]", "handle command as binary"),
    "-binding": ("[-binding [env|pe|set] exp|lin|str]", "binds job to processor cores"),
    "-c": ("[-c ckpt_selector]", "define type of checkpointing for job"),
    "-ckpt": ("[-ckpt ckpt_name]", "use this checkpointing environment"),
    "-clear": ("[-clear]", "drop the options given before this one"),
    "-cwd": ("[-cwd]", "use current working directory"),
    "-C": ("[-C directive_prefix]", "define command prefix for job script"),
    "-dc": ("[-dc simple_context_list]", "delete context variable(s)"),
    "-display": ("[-display display]", "set display to display interactive job"),
    "-dl": ("[-dl date_time]", "the job's deadline (initiation time)"),
    "-e": ("[-e path_list]", "specify standard error stream path(s)"),
    "-h": ("[-h]", "place user hold on job"),
    "-hard": ("[-hard]", 'consider following requests "hard"'),
    "-he": ("[-he  y[es]|n[o]]", "enable/disable hard error handling"),
    "-help": ("[-help]", "print this help"),
    "-hold_jid": ("[-hold_jid job_identifier_list]", "define jobnet interdependencies"),
    "-hold_jid_ad": ("[-hold_jid_ad job_identifier_list]", "define jobnet array interdependencies"),
    "-i": ("[-i file_list]", "specify standard input stream file(s)"),
    "-inherit": ("[-inherit]", "inherit an existing job environment"),
    "-j": ("[-j y[es]|n[o]]", "merge stdout and stderr stream of job"),
    "-js": ("[-js job_share]", "share tree or functional job share"),
    "-jsv": ("[-jsv jsv_url]", "job submission verification script to be used"),
    "-l": ("[-l resource_list]", "request the given resources"),
    "-M": ("[-M mail_list]", "notify these e-mail addresses"),
    "-m": ("[-m mail_options]", "define mail notification events"),
    "-masterq": ("[-masterq wc_queue_list]", "bind master task to queue(s)"),
    "-N": ("[-N name]", "specify job name"),
    "-noshell": ("[-noshell]", "do not start command with login shell"),
    "-nostdin": ("[-nostdin]", "suppress stdin for the remote command"),
    "-notify": ("[-notify]", "notify job before killing/suspending it"),
    "-now": ("[-now y[es]|n[o]]", "start job immediately or not at all"),
    "-o": ("[-o path_list]", "specify standard output stream path(s)"),
    "-P": ("[-P project_name]", "set job's project"),
    "-p": ("[-p priority]", "define job's relative priority"),
    "-pe": ("[-pe wc_pe_name slot_range]", "request slot range for parallel jobs"),
    "-pty": ("[-pty y[es]|n[o]]", "start job in a pty"),
    "-q": ("[-q wc_queue_list]", "bind job to queue(s)"),
    "-R": ("[-R y[es]|n[o]]", "reserve resources for the job while it waits"),
    "-r": ("[-r y[es]|n[o]]", "define job as (not) restartable"),
    "-sc": ("[-sc context_list]", "set job context (replaces old context)"),
    "-shell": ("[-shell y[es]|n[o]]", "start command with or without wrapping <loginshell> -c"),
    "-soft": ("[-soft]", "consider following requests as soft"),
    "-sync": ("[-sync y[es]|n[o]]", "wait for job to end and return exit code"),
    "-S": ("[-S path_list]", "command interpreter to be used"),
    "-t": ("[-t task_id_range]", "create a job-array with these tasks"),
    "-tc": ("[-tc max_running_tasks]", "run at most this many tasks of the array at once"),
    "-terse": ("[-terse]", "print only the job id when the job is submitted"),
    "-v": ("[-v variable_list]", "export these environment variables"),
    "-verbose": ("[-verbose]", "verbose information output"),
    "-verify": ("[-verify]", "do not submit, just verify"),
    "-V": ("[-V]", "export all environment variables"),
    "-w": ("[-w e|w|n|v|p]", "verify mode (error|warning|none|just verify|poke) for jobs"),
    "-wd": ("[-wd working_directory]", "use working_directory"),
    "-@": ("[-@ file]", "read commandline input from file"),
}

#: the argument syntax lines under the option list
SUBMIT_SYNTAX = (
    "account_string          account_name",
    "context_list            variable[=value][,variable[=value],...]",
    "ckpt_selector           `n' `s' `m' `x' `r' <interval>",
    "date_time               [[CC]YY]MMDDhhmm[.SS]",
    "job_identifier_list     {job_id|job_name|reg_exp}[,{job_id|job_name|reg_exp},...]",
    "jsv_url                 [script:][username@]path",
    "mail_address            username[@host]",
    "mail_list               mail_address[,mail_address,...]",
    "mail_options            `e' `b' `a' `n' `s'",
    "working_directory       path",
    "path_list               [host:]path[,[host:]path,...]",
    "priority                -1023 - 1024",
    "resource_list           resource[=value][,resource[=value],...]",
    "simple_context_list     variable[,variable,...]",
    "slot_range              [n[-m]|[-]m] - n,m > 0",
    "task_id_range           task_id['-'task_id[':'step]]",
    "variable_list           variable[=value][,variable[=value],...]",
    "wc_cqueue               wildcard expression matching a cluster queue",
    "wc_host                 wildcard expression matching a host",
    "wc_hostgroup            wildcard expression matching a hostgroup",
    "wc_qinstance            wc_cqueue@wc_host",
    "wc_qdomain              wc_cqueue@wc_hostgroup",
    "wc_queue                wc_cqueue|wc_qdomain|wc_qinstance",
    "wc_queue_list           wc_queue[,wc_queue,...]",
    "exp                     explicit:<socket>,<core>[:...]",
    "lin                     linear[:<amount>[:<socket>,<core>]]",
    "str                     striding:<amount>:<stepsize>[:<socket>,<core>]",
)


def submit_usage(prog, names, tail):
    """The -help text of qsub or qrsh: the lines of the options ``names`` (in the
    order of ``SUBMIT_OPTIONS``), the command ``tail`` and the syntax lines."""
    lines = [VERSION_LINE, f"usage: {prog} [options]"]
    for option, (synopsis, text) in SUBMIT_OPTIONS.items():
        if option in names:
            lines.append(f"   {synopsis:<40} {text}")
    lines.append(f"   {tail}")
    lines.append("")
    lines.extend(SUBMIT_SYNTAX)
    return "\n".join(lines) + "\n"

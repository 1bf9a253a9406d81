"""The usage texts of qstat and qhost, as Grid Engine 8.1.9 prints them.

``-help`` prints the text on stdout (exit 0); a bad option prints it on
stderr followed by the error line (exit 1). Options gridtools adds (qstat
-json, qhost -st) are described in the manual pages, not here, so the text
stays the one scripts and users of Grid Engine know.
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

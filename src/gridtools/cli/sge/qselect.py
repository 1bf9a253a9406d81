"""qselect: the names of the queue instances that meet a selection, one per line.

The selection is qstat's (``cli.sge.qstat_select``): ``-q`` queues,
``-qs`` states, ``-pe`` parallel environments, ``-U`` users with access and
``-l`` resources; a queue instance is named when it meets all of them. The
names come in qstat's queue order (cluster queue, then host), ready for
``qmod -d $(qselect -q all.q)``. Nothing selected exits 1 with nothing
printed, as Grid Engine's qselect does; so does a ``-q`` list that matches no
queue, and a ``-pe`` list none of whose names is a parallel environment exits
1 with "error: no such parallel environment".
"""

import sys

from gridtools.cli.sge import qstatus
from gridtools.cli.sge.qstat import Options, parsed_or_usage, take_value
from gridtools.cli.sge.tokens import list_words
from gridtools.errors import GridError, UsageError

#: options that take an argument (qstat's queue selection)
_WITH_ARG = ("-l", "-pe", "-q", "-qs", "-U")

USAGE = "\n".join((
    'usage: qselect [options]',
    '        [-help]                           print this help',
    '        [-l resource_list]                request the given resources',
    '        [-pe pe_list]                     select only queues with one of these parallel environments',
    '        [-q wc_queue_list]                print information on given queue',
    '        [-qs {a|c|d|o|s|u|A|C|D|E|S}]     selects queues which are in the given state(s)',
    '        [-U user_list]                    select only queues where these users have access',
    '',
    'pe_list                  pe[,pe,...]',
    'resource_list            resource[=value][,resource[=value],...]',
    'user_list                user|@group[,user|@group],...]',
    'wc_cqueue                wildcard expression matching a cluster queue',
    'wc_host                  wildcard expression matching a host',
    'wc_hostgroup             wildcard expression matching a hostgroup',
    'wc_qinstance             wc_cqueue@wc_host',
    'wc_qdomain               wc_cqueue@wc_hostgroup',
    'wc_queue                 wc_cqueue|wc_qdomain|wc_qinstance',
    'wc_queue_list            wc_queue[,wc_queue,...]',
)) + "\n"


def parse_args(argv):
    """Options of a qselect command line (qstat's Options, queue selection only)."""
    opts = Options()
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in _WITH_ARG and i + 1 < len(argv):
            # a list: the next word, then every further word up to the next option (state
            # letters run on, the other lists are comma- or blank-separated)
            first = argv[i + 1]
            more, after = list_words(argv, i + 1)
            value = ("" if word == "-qs" else ",").join([first] + (more or []))
            take_value(opts, [word, value], 0)
            i = after
        elif word in _WITH_ARG:
            i = take_value(opts, argv, i)
        elif word == "-help":
            opts.help = True
            i += 1
        elif word == "-ncb":
            i += 1
        else:
            raise UsageError(f'invalid option argument "{word}"')
    return opts


def usage(stream):
    from gridtools.cli.sge import usage_text
    stream.write(usage_text.VERSION_LINE + "\n" + USAGE)


def main(argv, prog="qselect"):
    opts, code = parsed_or_usage(parse_args, list(argv), usage)
    if opts is None:
        return code
    try:
        snap = qstatus.load()
        from gridtools.cli.sge.loadvalues import check_requests
        from gridtools.cli.sge.qstat_select import check_names, selected_queues
        opts.requests = check_requests(opts.requests, snap.get("complexes"))
        for line in qstatus.warnings(snap):
            sys.stderr.write(line + "\n")
        check_names(snap, opts)
        names = [row["name"] for row in selected_queues(snap, opts)]
    except GridError as exc:
        if str(exc):                # (an unknown -q list: exit 1 without a word)
            sys.stderr.write(f"{exc}\n")
        return exc.exit_code
    sys.stdout.write("".join(name + "\n" for name in names))
    return 0 if names else 1

"""qconf: show, add, modify and delete the Grid Engine configuration of a cell.

Options are taken in order, each with its arguments, from the table
``OPTIONS`` (option -> handler and how many argument words it takes); the
first option that fails ends the command with its exit code. Showing reads
etc/ directly (``qconf_show``); every change is a request to the daemon
(``qconf_change``, ``qconf_attr``), which checks rights and references and
answers with Grid Engine's messages.
"""

import sys

from gridtools.cli.sge import qconf_attr as A
from gridtools.cli.sge import qconf_change as C
from gridtools.cli.sge import qconf_show as S
from gridtools.cli.sge.qconf_usage import USAGE, VERSION_LINE
from gridtools.errors import UsageError

def partial(func, *bound, **keywords):
    """``func`` with its first arguments bound (functools costs a start-up import)."""
    def call(words):
        return func(*bound, words, **keywords)
    return call


#: argument counts: a number of required words, OPT (one optional word), or
#: ONE_OPT (one required word and one optional word)
OPT, ONE_OPT = "?", "1?"


def _help(_words=()):
    sys.stdout.write(f"{VERSION_LINE}\n{USAGE}")
    return 0


#: the object kinds with the usual family of options: kind -> (suffix, its -a… form takes)
_FAMILIES = {
    "queue": ("q", OPT), "exechost": ("e", OPT), "hostgroup": ("hgrp", 1), "pe": ("p", 1),
    "ckpt": ("ckpt", 1), "calendar": ("cal", 1), "user": ("user", 0), "project": ("prj", 0),
}


def _family_options():
    table = {}
    for kind, (suffix, add_args) in _FAMILIES.items():
        table[f"-a{suffix}"] = (partial(C.add_edit, kind), add_args)
        table[f"-A{suffix}"] = (partial(C.add_file, kind), 1)
        table[f"-m{suffix}"] = (partial(C.modify_edit, kind), 1)
        table[f"-M{suffix}"] = (partial(C.modify_file, kind), 1)
        table[f"-d{suffix}"] = (partial(C.delete, kind), 1)
        table[f"-s{suffix}"] = (partial(S.show_named, kind), 1)
        table[f"-s{suffix}l"] = (partial(S.show_names, kind), 0)
    return table


OPTIONS = {
    **_family_options(),
    "-help": (_help, 0),
    # queues, hosts and host groups beyond the family
    "-sq": (S.show_queues, OPT), "-se": (S.show_exechosts, 1), "-sel": (partial(S.show_names, "exechost"), 0),
    "-sds": (S.show_detached, 0), "-cq": (A.clean_queues, 1),
    "-shgrp_tree": (S.show_hostgroup_tree, 1),
    "-shgrp_resolved": (partial(S.show_hostgroup_tree, resolved=True), 1),
    "-ah": (partial(C.names_change, "adminhosts", True), 1),
    "-dh": (partial(C.names_change, "adminhosts", False), 1),
    "-sh": (partial(S.show_list, "adminhosts"), 0),
    "-as": (partial(C.names_change, "submithosts", True), 1),
    "-ds": (partial(C.names_change, "submithosts", False), 1),
    "-ss": (partial(S.show_list, "submithosts"), 0),
    # managers and operators
    "-am": (partial(C.names_change, "managers", True), 1),
    "-dm": (partial(C.names_change, "managers", False), 1),
    "-sm": (partial(S.show_list, "managers"), 0),
    "-ao": (partial(C.names_change, "operators", True), 1),
    "-do": (partial(C.names_change, "operators", False), 1),
    "-so": (partial(S.show_list, "operators"), 0),
    # access lists
    "-au": (partial(C.acl_change, True), 2), "-du": (partial(C.acl_change, False), 2),
    "-Au": (partial(C.add_file, "userset"), 1), "-Mu": (partial(C.modify_file, "userset"), 1),
    "-mu": (partial(C.modify_edit, "userset"), 1), "-dul": (partial(C.delete, "userset"), 1),
    "-su": (partial(S.show_named, "userset"), 1), "-sul": (partial(S.show_names, "userset"), 0),
    "-suser": (partial(S.show_named, "user"), 1), "-suserl": (partial(S.show_names, "user"), 0),
    "-sprj": (partial(S.show_named, "project"), 1), "-sprjl": (partial(S.show_names, "project"), 0),
    "-scall": (partial(S.show_names, "calendar"), 0),
    # cluster and scheduler configuration, complex
    "-sconf": (S.show_conf, OPT), "-sconfl": (partial(S.show_names, "conf"), 0),
    "-mconf": (C.modify_conf_edit, OPT), "-Mconf": (partial(C.conf_files, "modify"), 1),
    "-aconf": (C.add_conf_edit, 1), "-Aconf": (partial(C.conf_files, "add"), 1),
    "-dconf": (partial(C.delete, "conf"), 1),
    "-ssconf": (partial(S.show_single, "sched", "no scheduler configuration"), 0),
    "-msconf": (partial(C.modify_single_edit, "sched", "no scheduler configuration"), 0),
    "-Msconf": (partial(C.modify_file, "sched"), 1),
    "-sc": (partial(S.show_single, "complex", "no complex attributes defined"), 0),
    "-mc": (partial(C.modify_single_edit, "complex", "no complex attributes defined"), 0),
    "-Mc": (partial(C.modify_file, "complex"), 1),
    # resource quota sets
    "-arqs": (partial(C.add_edit, "rqs"), OPT), "-Arqs": (partial(C.add_file, "rqs"), 1),
    "-mrqs": (C.modify_rqs_edit, OPT), "-Mrqs": (C.modify_rqs_file, ONE_OPT),
    "-drqs": (partial(C.delete, "rqs"), 1), "-srqs": (S.show_rqs, OPT),
    "-srqsl": (partial(S.show_names, "rqs"), 0),
    # share tree
    "-astree": (partial(C.modify_single_edit, "sharetree", "no sharetree element"), 0),
    "-mstree": (partial(C.modify_single_edit, "sharetree", "no sharetree element"), 0),
    "-Astree": (partial(C.add_file, "sharetree"), 1), "-Mstree": (partial(C.modify_file, "sharetree"), 1),
    "-dstree": (C.delete_sharetree, 0),
    "-sstree": (partial(S.show_single, "sharetree", "no sharetree element"), 0),
    "-sst": (S.show_tree, 0), "-sstnode": (S.show_nodes, 1),
    "-rsstnode": (partial(S.show_nodes, recursive=True), 1),
    "-astnode": (partial(A.stnode, "add"), 1), "-mstnode": (partial(A.stnode, "modify"), 1),
    "-dstnode": (partial(A.stnode, "delete"), 1),
    # attributes
    "-aattr": (partial(A.attr_change, "add", False), 4), "-Aattr": (partial(A.attr_change, "add", True), 3),
    "-dattr": (partial(A.attr_change, "delete", False), 4),
    "-Dattr": (partial(A.attr_change, "delete", True), 3),
    "-mattr": (partial(A.attr_change, "modify", False), 4),
    "-Mattr": (partial(A.attr_change, "modify", True), 3),
    "-rattr": (partial(A.attr_change, "replace", False), 4),
    "-Rattr": (partial(A.attr_change, "replace", True), 3),
    "-purge": (A.purge, 3), "-sobjl": (A.show_objects, 3),
    # daemons
    "-km": (A.kill_master, 0), "-ks": (A.kill_scheduler, 0),
    "-ke": (partial(A.kill_execds, False), 1), "-kej": (partial(A.kill_execds, True), 1),
    "-kt": (A.kill_thread, 1), "-at": (A.start_thread, 1), "-tsm": (A.trigger_monitoring, 0),
    "-clearusage": (A.clear_usage, 0),
    "-secl": (S.show_event_clients, 0),
}


#: options whose last argument, the object list, may be several words
_OBJECT_LISTS = frozenset(("-aattr", "-Aattr", "-dattr", "-Dattr", "-mattr", "-Mattr",
                           "-rattr", "-Rattr"))


class ArgumentError(UsageError):
    """A word that is not an option, or an option without its argument."""


class EmptyArgument(ArgumentError):
    """An option argument that is the empty string: one line, no usage text."""


def _take(argv, i, option, count):
    """The argument words of ``option`` starting at ``argv[i]`` and the next index."""
    def free(j):
        return j < len(argv) and not argv[j].startswith("-")

    if count == OPT:
        return (argv[i:i + 1], i + 1) if free(i) else ([], i)
    if count == ONE_OPT:
        if not free(i):
            raise ArgumentError(f'error: no option argument provided to "{option}"')
        return (argv[i:i + 2], i + 2) if free(i + 1) else (argv[i:i + 1], i + 1)
    if i + count > len(argv) or any(w.startswith("-") and w != "-" for w in argv[i:i + count][:1]):
        raise ArgumentError(f'error: no option argument provided to "{option}"')
    return argv[i:i + count], i + count


def parse(argv):
    """``[(handler, words), ...]`` for the command line; raises ArgumentError."""
    steps, i = [], 0
    while i < len(argv):
        option = argv[i]
        entry = OPTIONS.get(option)
        if entry is None:
            raise ArgumentError(f'error: invalid option argument "{option}"')
        words, i = _take(argv, i + 1, option, entry[1])
        if option in _OBJECT_LISTS:
            # the object list runs on over every further word up to the next option
            while i < len(argv) and not argv[i].startswith("-"):
                words.append(argv[i])
                i += 1
        if "" in words:
            raise EmptyArgument(f'error: empty option argument given to "{option}"')
        steps.append((entry[0], words))
    return steps


def _answers_in_order():
    """Standard output written line by line, so that with standard error on the same
    pipe the answers come out in the order qconf gives them."""
    try:
        sys.stdout.reconfigure(line_buffering=True)
    except (AttributeError, ValueError, OSError):
        pass


def main(argv, prog="qconf"):
    _answers_in_order()
    try:
        steps = parse(list(argv))
    except EmptyArgument as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    except ArgumentError as exc:
        sys.stderr.write(f"{exc}\n{VERSION_LINE}\n{USAGE}")
        return 1
    if not steps:
        sys.stderr.write(f"{VERSION_LINE}\n{USAGE}error: no option argument\n")
        return 1
    from gridtools.cli import cellinit
    from gridtools.errors import GridError
    try:
        cellinit.ensure_cell()
    except GridError as exc:
        if steps != [(_help, [])]:
            sys.stderr.write(f"{exc}\n")
            return exc.exit_code
    _warn_quarantined()
    for handler, words in steps:
        try:
            code = handler(words)
        except GridError as exc:
            sys.stderr.write(f"{exc}\n")
            return exc.exit_code
        if code:
            return code
    return 0


def _warn_quarantined():
    """Configuration files the daemon set aside or cannot read, on stderr."""
    from gridtools.cli.sge import qstatus
    from gridtools.spool import status
    for line in qstatus.warnings(status.read() or {}, etc_only=True):
        sys.stderr.write(line + "\n")

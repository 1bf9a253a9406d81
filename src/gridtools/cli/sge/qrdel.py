"""qrdel: delete advance reservations (Grid Engine dialect).

Reservations are named by id or name (wildcards allowed), or by owner with
``-u``. The daemon checks who may delete what and answers line by line;
the jobs of a deleted reservation are deleted with it (``-f``: running ones
are ended at once).
"""

import sys

from gridtools.cli.sge.tokens import split_list
from gridtools.errors import GridError, UsageError, one_line

HELP = """SGE 8.1.9
usage: qrdel [options] ar_id_list
   [-f]                                     force action
   [-help]                                  print this help
   [-u user_list]                           all advance reservations of users specified in list
   ar_id_list                               delete all advance reservations given in list

ar_id_list              ar_id[,ar_id,...]
user_list               user[,user,...]
"""


def parse_args(argv):
    force, users, targets = False, None, []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "-f":
            force = True
        elif word == "-u":
            if i + 1 >= len(argv):
                raise UsageError('option "-u" requires an argument')
            i += 1
            users = (users or []) + split_list(argv[i])
        elif word.startswith("-"):
            raise UsageError(f'invalid option argument "{word}"')
        else:
            targets += split_list(word)
        i += 1
    if not targets and users is None:
        raise UsageError("no option argument")
    return force, users, targets


#: the longest name a reservation (or its id) may have in a request
MAX_NAME = 4096


def main(argv, prog="qrdel"):
    if "-help" in argv:
        sys.stdout.write(HELP)
        return 0
    try:
        force, users, targets = parse_args(argv)
        # a name no reservation can have is answered here, as the daemon answers a
        # name it does not know (it would refuse the whole request)
        impossible = [t for t in targets if len(t) > MAX_NAME or not t.isprintable()]
        for name in impossible:
            sys.stdout.write(f'denied: advance_reservation "{one_line(name)}" does not exist\n')
        targets = [t for t in targets if t not in impossible]
        if impossible and not targets and users is None:
            return 1
        from gridtools.cli.ask import ask
        code = ask("ar_delete", {"targets": targets, "users": users, "force": force})
        return code or (1 if impossible else 0)
    except UsageError as exc:
        # as Grid Engine's qrdel: the usage, then what is wrong, status 1
        sys.stderr.write(f"{HELP}error: {exc}\n")
        return 1
    except GridError as exc:
        sys.stderr.write(f"{exc}\n")
        return exc.exit_code

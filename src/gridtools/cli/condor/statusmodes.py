"""condor_status's query modes and display styles given together, judged as HTCondor's
condor_status judges them (loaded only when more than one is given).

The first of the query modes (-slots, -avail, -claimed, -run, -gpus, -startd,
-schedd, -submitters, -master, -any) sets the mode; a later one may only turn it
into a kindred mode (-gpus and -startd in either order make the startds' GPUs,
-schedd after -claimed and -run after -slots, -claimed or -schedd) or repeat it
exactly as typed: any other is refused, ``Error:  Arg N (...) contradicts arg M (...)``,
exit 1. Each mode and -server, -state, -af, -format, -print-format, -long,
-json and -xml also set a display style, ranked; a style below the one set
before is reported on standard error in the same words (``arg`` in lower case)
and left out, and after a custom form or an ad form only another of those
counts. The arguments are counted from 1, as HTCondor counts them.

-compact rolls up slots only: with a mode that queries other ads (-startd, -any,
-schedd, -submitters, -master) it is refused, ``Error:  arg (-compact)
contradicts arg M (...)`` naming the option that set the display style, with
-startd's advice to remove it or use -slot instead; exit 1 (``refuse_compact``).
"""

import sys

from gridtools.errors import GridError

#: the ranks of HTCondor's display styles
STYLES = {"slots": 1, "avail": 1, "server": 2, "state": 3, "claimed": 4, "slots_gpus": 6, "startd": 10,
          "startd_gpus": 11, "schedd": 16, "schedd_run": 18, "submitters": 19, "master": 21, "collector": 22,
          "negotiator": 26,
          "any": 28, "other": 28, "custom": 33, "long": 35}

#: the options that set a display style only
_STYLE_ONLY = {"server": "server", "state": "state", "custom": "custom", "long": "long", "json": "long",
               "xml": "long"}


class _Judge:
    def __init__(self, quiet=False):
        self.mode, self.mode_by = None, None
        self.rank, self.rank_by = 0, None
        self.quiet = quiet

    def mode_option(self, number, arg, word):
        mode = self.mode
        to, reset = word, False
        if word == "run":
            to, reset = ("claimed", True) if mode in ("slots", "claimed") else ("schedd_run", mode == "schedd")
        elif word == "gpus":
            to, reset = ("startd_gpus", True) if mode == "startd" else ("slots_gpus", False)
        elif word == "startd" and mode == "slots_gpus":
            to, reset = "startd_gpus", True
        elif word == "schedd" and mode == "claimed":
            to, reset = "schedd_run", True
        elif word == "schedd" and mode in ("schedd", "schedd_run"):
            return
        if mode is not None and not reset:
            if arg != self.mode_by[1]:
                raise GridError(f"Error:  Arg {number} ({arg}) contradicts arg {self.mode_by[0]} "
                                f"({self.mode_by[1]})", 1)
            return
        self.mode, self.mode_by = to, (number, arg)
        self.style(STYLES[to], number, arg)

    def style(self, rank, number, arg):
        """True when the option sets the style."""
        if self.rank >= STYLES["custom"] and rank < STYLES["custom"]:
            return False
        if rank >= STYLES["long"] or self.rank_by is None or self.rank <= rank:
            self.rank, self.rank_by = rank, (number, arg)
            return True
        if not self.quiet:
            sys.stderr.write(f"Error:  arg {number} ({arg}) contradicts arg {self.rank_by[0]} "
                             f"({self.rank_by[1]})\n")
        return False


def check(opts):
    """Judge ``opts.picked`` (number, option as typed, its name in full) in order: raise
    GridError for a contradicting mode; the style HTCondor keeps of -state and -server
    becomes ``opts.style``."""
    judge = _Judge()
    style = None
    for number, arg, word in opts.picked:
        if word in _STYLE_ONLY:
            if judge.style(STYLES[_STYLE_ONLY[word]], number, arg) and word in ("state", "server"):
                style = word
        else:
            judge.mode_option(number, arg, word)
    opts.style = style


def refuse_compact(opts):
    """-compact with a query mode that is not of slots: HTCondor's refusal (GridError)."""
    judge = _Judge(quiet=True)
    for number, arg, word in opts.picked:
        if word in _STYLE_ONLY:
            judge.style(STYLES[_STYLE_ONLY[word]], number, arg)
        else:
            judge.mode_option(number, arg, word)
    number, arg = judge.rank_by or (0, "DEFAULT")
    more = "remove -startd from command or use -slot instead" if opts.mode == "startd" else ""
    raise GridError(f"Error:  arg (-compact) contradicts arg {number} ({arg}) {more}", 1)

"""The ``gridtools`` administration command: init, daemon, execd, host, classad.

Also serves ``llctl`` (LoadLeveler's spelling of host drain/flush/suspend/resume).
"""

import sys

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli():
    """gridtools cell administration."""


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                               "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def classad(args):
    """Evaluate ClassAd expressions and match ads (see gridtools-classad(1))."""
    from gridtools.cli.classad_cmd import main as classad_main
    sys.exit(classad_main(list(args), prog="gridtools classad"))


def main(argv, prog="gridtools"):
    """Entry point used by the launchers."""
    try:
        cli.main(args=list(argv), prog_name=prog, standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Abort:
        return 1
    return 0

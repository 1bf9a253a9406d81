"""condor_version: the HTCondor version and platform this installation answers as.

    condor_version [-arch] [-opsys] [-help]

Without options, the two lines every HTCondor tool's -version prints
(``$CondorVersion: ... $`` and ``$CondorPlatform: ... $``); -opsys and -arch
print the platform's operating system and architecture instead, a line each,
in the order given (as HTCondor's, an option is read by its first letter). A
word that is no option is refused with the usage on standard error, exit 1;
-help prints the usage there too, exit 0.
"""

import sys

USAGE = """\
Usage: {prog} [options]
   If no options are specified, print the version and platform strings
   where the tool was built.  Valid options are:
   -help\t(this message)
   -arch\t(print the ARCH string)
   -opsys\t(print the OPSYS string)
"""

#: the platform's parts -arch and -opsys print
ARCH, OPSYS = "X86_64", "LINUX"


def main(argv, prog="condor_version"):
    shown = []
    for arg in argv:
        letter = arg[1:2] if arg.startswith("-") else ""
        if not arg.startswith("-"):
            sys.stderr.write(f"ERROR: invalid argument: '{arg}'\n" + USAGE.format(prog=prog))
            return 1
        if letter == "h":
            sys.stderr.write(USAGE.format(prog=prog))
            return 0
        if letter not in ("a", "o"):
            sys.stderr.write(f"ERROR: unrecognized argument: '{arg}'\n" + USAGE.format(prog=prog))
            return 1
        part = ARCH if letter == "a" else OPSYS
        if part not in shown:
            shown.append(part)
    if shown:
        sys.stdout.write("".join(line + "\n" for line in shown))
        return 0
    from gridtools.formats.condor.jobad import VERSION_TEXT
    sys.stdout.write(VERSION_TEXT)
    return 0

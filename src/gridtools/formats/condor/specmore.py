"""What only some clusters' specs need (``spec``, which imports this module where it
is used): a java universe job's command, the folders the inputs of
preserve_relative_paths keep, the exits that end a checkpoint, and what a later proc's
ad changes. A plain submission does not read it.
"""

from gridtools import ospaths
from gridtools.formats.condor.spec import _path, _text, arguments

#: attributes that never differ between the procs' stored texts (set when the ad is built)
_PER_PROC = ("ProcId",)


def java_command(ad, iwd):
    """(program, arguments) of a java universe job: the machine's ``java`` with the
    job's JavaVMArguments (or JavaVMArgs), a class path of its folder (where it runs),
    its initial directory and its jar_files, and its arguments (the main class first),
    as HTCondor's starter runs it (without its wrapper class)."""
    import shutil
    jars = [_path(iwd, name) for name in _text(ad, "JarFiles").replace(",", " ").split()]
    path = ":".join([".", iwd] + jars)
    return shutil.which("java") or "/usr/bin/java", \
        arguments(ad, "JavaVMArguments", "JavaVMArgs") + ["-classpath", path] + arguments(ad)


def input_places(names):
    """The folder each input name keeps under the scratch folder with
    preserve_relative_paths: that of a relative name (``dirA/file1``: ``dirA``; a
    folder's contents, ``dirA/sub/``: ``dirA/sub``), "" for an absolute one, a URL, or
    one that climbs out (``..``)."""
    places = []
    for name in names:
        where = name.rstrip("/") if name.endswith("/") else ospaths.dirname(name)
        bad = name.startswith("/") or "://" in name or ".." in where.split("/")
        places.append("" if bad else where)
    return places


def exit_of(ad, prefix):
    """[by a signal, its number or the exit code] an ad's ``<prefix>ExitBySignal``,
    ``<prefix>ExitSignal`` and ``<prefix>ExitCode`` describe (False, 0 when unset)."""
    by_signal = ad.eval(prefix + "ExitBySignal") is True
    value = ad.eval(prefix + ("ExitSignal" if by_signal else "ExitCode"))
    return [by_signal, value if type(value) is int else 0]


def diff(base, ad):
    """The long-form text of the attributes of ``ad`` that differ from ``base``."""
    lines = []
    for name in ad:
        if name in _PER_PROC:
            continue
        mine = ad.lookup(name)
        theirs = base.lookup(name)
        if theirs is None or theirs.unparse(True) != mine.unparse(True):
            lines.append(f"{name} = {mine.unparse(True)}\n")
    return "".join(lines)

"""The statements of a submit description that are not commands nor queue statements,
as HTCondor's condor_submit reads them (its configuration reader, Parse_macros):

- ``if`` / ``elif`` / ``else`` / ``endif`` blocks, with the conditions of the
  configuration language (``condor_conditions``): ``defined NAME``, ``version >= X.Y``,
  booleans and numbers, ``$(NAME)`` expanded first, ``!`` to negate; a name is defined
  by the commands above the condition, or before the text (condor_submit's NAME=value
  arguments, a DAG node's VARS);
- ``include : FILE`` (relative to the folder of the submission: the current one, or a
  DAG node's DIR), ``include : COMMAND |`` and ``include command : COMMAND`` (its
  output; run in that folder), ``include ifexist : FILE`` (none when it does not
  exist): the statements of that text, in place (a queue statement there is an
  error, as in HTCondor);
- ``error [CODE] : TEXT`` (stops: ``Error "FILE", Line N: TEXT``) and
  ``warning : TEXT`` (printed, reading goes on), TEXT macro-expanded;
- ``NAME @=TAG`` then lines up to ``@TAG``: a value of several lines.

``submit.parse_submit`` reads a description with none of these itself, and this
module's ``parse`` reads one that has any (loaded then only).
"""

import os
import subprocess
import sys

from gridtools.errors import InputError
from gridtools.formats.condor import submit as S

#: the most files a description may include inside one another (HTCondor's limit)
MAX_DEPTH = 20
CONDITIONS = ("if", "elif", "else", "endif")


def is_special(stripped):
    """True when a line (stripped) that is no command nor queue statement is one of the
    statements this module reads."""
    word = stripped.split(None, 1)[0].lower() if stripped else ""
    if word in CONDITIONS or _keyword(stripped):
        return True
    name, at, _tag = stripped.partition("@=")
    return bool(at) and not name.startswith("-") and S.assignment(name.strip() + " =") is not None


def _keyword(stripped):
    """``include``, ``error`` or ``warning`` for a line ``KEYWORD [words] : text``, else ""."""
    head, colon, _text = stripped.partition(":")
    words = head.split(None, 1) if colon else ()
    found = words[0].lstrip("@").lower() if words else ""
    return found if found in ("include", "error", "warning") else ""


class _Macros:
    """What a condition sees: the macros defined before the text (``variables``: NAME ->
    value; an attribute's ``+NAME`` or ``MY.NAME`` is none) and the commands read so far
    (``condor_conditions`` asks for ``raw`` values and ``expand``s text); ``cwd``: the
    folder includes are read and run in (None: the current one)."""

    def __init__(self, variables=None, cwd=None):
        self.values = {name.lower(): value for name, value in (variables or {}).items()
                       if name[:1] != "+" and name[:3].lower() != "my."}
        self.cwd = cwd

    def assign(self, name, value):
        """Define ``name`` as ``value``, its references to ``name`` being to the earlier
        value (see ``macros.expand_self``)."""
        key = name.lower()
        if "$" in value:
            from gridtools.formats.condor.macros import expand_self
            value = expand_self(value, key, self.values.get(key))
        self.values[key] = value

    def raw(self, name):
        return self.values.get(name.lower())

    def expand(self, text):
        from gridtools.formats.condor.macros import Expander
        return Expander(lambda name: self.values.get(name.lower())).expand(text)


def parse(text, *, append=(), queue_override=None, source="submit file", variables=None, cwd=None):
    """A SubmitDescription of ``text`` (see ``submit.parse_submit``)."""
    from gridtools.formats.condor_conditions import Blocks
    from gridtools.formats.condor_config import ConfigSyntaxError
    desc, macros = S.SubmitDescription(source=source), _Macros(variables, cwd)
    blocks = Blocks(macros, source)
    try:
        _read(desc, macros, blocks, text, source, 0)
        blocks.close()
    except ConfigSyntaxError as exc:
        raise S.error_at(exc.line, exc.reason, exc.source or source) from None
    return S.finish(desc, append, queue_override, source)


def _read(desc, macros, blocks, text, source, depth):
    lines = iter(S.logical_lines(text))
    for number, line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        word, _blank, rest = stripped.partition(" ")
        word = word.lower()
        assigns = S.assignment(stripped) is not None
        if word in CONDITIONS and not assigns:
            blocks.step(word, rest.strip() if word in ("if", "elif") else "", number)
            continue
        if not blocks.reading:
            continue
        keyword = "" if assigns else _keyword(stripped)
        head, _colon, target = stripped.partition(":")
        if keyword == "include":
            _include(desc, macros, blocks, head, target.strip(), number, source, depth)
            continue
        if keyword:
            said = macros.expand(target.strip())
            if keyword == "warning":
                sys.stderr.write(f'Warning "{source}", Line {number}: {said}\n')
                continue
            raise InputError(f'Error "{source}", Line {number}: {said}')
        name, at, tag = stripped.partition("@=")
        here = S.assignment(name.strip() + " =") if at and not name.startswith("-") else None
        if here is not None:
            value = _here_text(lines, tag.strip(), number, source)
            kind, found, _value = here
            desc.statements.append(S.Assignment(found, value, kind, number))
            macros.assign(found, value)
            continue
        if depth and S.queue_statement_arguments(stripped) is not None:
            raise S.error_at(number, "Queue statement not allowed in include file or command", source)
        statement = S.statement(number, line, lines, source)
        if statement is None:
            continue
        desc.statements.append(statement)
        if isinstance(statement, S.Assignment) and statement.kind == S.COMMAND:
            macros.assign(statement.name, statement.value)


def _here_text(lines, tag, number, source):
    """The lines up to ``@TAG``, as one value."""
    found = []
    for _n, line in lines:
        if line.strip() == "@" + tag:
            return "\n".join(found)
        found.append(line)
    raise S.error_at(number, f"@={tag} has no matching @{tag}", source)


def _include(desc, macros, blocks, head, target, number, source, depth):
    """``include [ifexist] [command|output] : TARGET [|]``: the statements of the file or
    of the command's output, in place."""
    options = [w.lower() for w in head.split()[1:]]
    command = target.endswith("|") or any(w in ("command", "output") for w in options)
    target = macros.expand(target[:-1].rstrip() if target.endswith("|") else target)
    if any(w not in ("ifexist", "ifexists", "command", "output") for w in options):
        raise InputError(f"Error \"{source}\", Line {number}: unexpected keyword(s) "
                         f"'{' '.join(options)}' after include")
    if depth >= MAX_DEPTH:
        raise S.error_at(number, "includes nested too deeply", source)
    if command:
        try:
            done = subprocess.run(target, shell=True, capture_output=True, text=True, errors="replace",
                                  cwd=macros.cwd)
        except OSError as exc:
            raise S.error_at(number, f"failed to run include command {target}: {exc.strerror}", source) from None
        if done.returncode:
            raise S.error_at(number, f"include command {target} exited with status {done.returncode}", source)
        text, named = done.stdout, target
    else:
        path = target if os.path.isabs(target) else os.path.join(macros.cwd or os.getcwd(), target)
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError as exc:
            if "ifexist" in options or "ifexists" in options:
                return
            raise S.error_at(number, f"Can't open include file {target}: {exc.strerror}", source) from None
        named = target
    _read(desc, macros, blocks, text, named, depth + 1)

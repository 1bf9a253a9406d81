"""The conditionals of the HTCondor configuration language (``condor_config``):
``if`` / ``elif`` / ``else`` / ``endif`` blocks, as HTCondor 24 reads them.

A condition is macro-expanded first when it holds ``$`` (a text that expands to
nothing is false); a leading ``!`` negates it; then it is a number (true unless
0), ``true``/``false``/``yes``/``no``/``t``/``f`` in any case, ``version OP
X.Y[.Z]`` (the version gridtools gives as HTCondor's, ``formats.condor.VERSION``;
OP one of ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``), ``defined NAME`` (a macro
with a value that is not empty), ``defined`` a number or boolean (true), or
``defined use CATEGORY[:TEMPLATE]`` (a metaknob that exists). Anything else is
an error naming the file and line, as are an ``elif`` or ``else`` without
``if``, one after ``else``, an ``endif`` without ``if`` and an ``if`` never
closed. Statements inside a branch not taken are passed over, conditions
included. Loaded by ``condor_config.Config.read_text`` at a text's first
``if``.
"""

import re

from gridtools.formats.condor_config import ConfigSyntaxError

#: the most blocks open at once (HTCondor's limit)
MAX_IF_DEPTH = 63


class _Branch:
    """One open ``if`` block: its line, whether the branch at hand is read, whether
    one of its branches was (or the block lies in one that is not), past ``else``."""

    __slots__ = ("line", "reading", "taken", "past_else")

    def __init__(self, line, reading, taken):
        self.line, self.reading, self.taken, self.past_else = line, reading, taken, False


class Blocks:
    """The blocks around the lines of one text (HTCondor's ConfigIfStack): ``reading``
    says whether the line at hand is read. A condition is tested only where its
    branch could be taken."""

    def __init__(self, config, source):
        self.config, self.source = config, source
        self.open = []
        self.reading = True

    def step(self, word, condition, line):
        getattr(self, "_" + word)(condition, line)
        self.reading = self.open[-1].reading if self.open else True

    def close(self):
        if self.open:
            raise ConfigSyntaxError("endif(s) not found before end-of-file", self.source, self.open[-1].line)

    def _if(self, condition, line):
        if len(self.open) >= MAX_IF_DEPTH:
            raise ConfigSyntaxError("if nesting too deep!", self.source, line)
        reading = self.reading and self._test("if", condition, line)
        self.open.append(_Branch(line, reading, reading or not self.reading))

    def _elif(self, condition, line):
        branch = self._inner("elif", line)
        branch.reading = not branch.taken and self._test("elif", condition, line)
        branch.taken = branch.taken or branch.reading

    def _else(self, _condition, line):
        branch = self._inner("else", line)
        branch.reading, branch.taken, branch.past_else = not branch.taken, True, True

    def _endif(self, _condition, line):
        if not self.open:
            raise ConfigSyntaxError("endif without matching if", self.source, line)
        self.open.pop()

    def _inner(self, word, line):
        """The innermost open block, which an ``elif`` or ``else`` continues."""
        if not self.open:
            raise ConfigSyntaxError(f"{word} without matching if", self.source, line)
        if self.open[-1].past_else:
            raise ConfigSyntaxError(f"{word} is not allowed after else", self.source, line)
        return self.open[-1]

    def _test(self, word, condition, line):
        try:
            return condition_value(self.config, condition)
        except _NotACondition as exc:
            raise ConfigSyntaxError(f"{condition} is not a valid {word} condition because {exc}",
                                    self.source, line) from None


class _NotACondition(Exception):
    """Why the text of an if or elif is not one of the conditions HTCondor reads."""


_NUMBER = re.compile(r"-?(?=\.?[0-9])[0-9.]*([eE][-+]?[0-9]+)?$")
_LEADING_NUMBER = re.compile(r"-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")
_IDENTIFIER = re.compile(r"[A-Za-z0-9_./]+$")
_KEYWORD = re.compile(r"(version|defined)(?![A-Za-z0-9])\s*(.*)$", re.IGNORECASE | re.DOTALL)
_COMPARISON = re.compile(r"(!?)([<=>]?)(=?)\s*(.*)$", re.DOTALL)
_VERSION_LITERAL = re.compile(r"[vV]?([0-9]+)\.([0-9]+)(?:\.([0-9]+))?")
_BOOLEANS = {"true": True, "false": False, "yes": True, "no": False, "t": True, "f": False}


def condition_value(config, text):
    """The truth of an if or elif condition of ``config``'s text (see the module's
    description); raises _NotACondition for any other text."""
    expanded = "$" in text
    if expanded:
        text = config.expand(text)
    text = text.strip()
    negated = text.startswith("!")
    if negated:
        text = text[1:].lstrip()
    value = False if expanded and not text else _truth(config, text)
    return value != negated


def _truth(config, text):
    if _NUMBER.match(text):
        return float(_LEADING_NUMBER.match(text).group(0)) != 0
    if text.lower() in _BOOLEANS:
        return _BOOLEANS[text.lower()]
    keyword = _KEYWORD.match(text)
    if keyword and keyword.group(1).lower() == "defined":
        return _defined(config, keyword.group(2).strip())
    if keyword and _COMPARISON.match(keyword.group(2)).group(2):
        return _version_test(keyword.group(2))
    if not text or _IDENTIFIER.match(text):
        raise _NotACondition("expression is not a conditional")
    raise _NotACondition("complex conditionals are not supported")


def _defined(config, name):
    """``defined NAME``: a macro with a value that is not empty, a number or a boolean, or
    ``use CATEGORY[:TEMPLATE]``: a template category or template that exists."""
    if not name:
        return False
    if _IDENTIFIER.match(name):
        if _NUMBER.match(name):
            return True
        raw = config.raw(name)
        return bool(raw) or (raw is None and name.lower() in _BOOLEANS)
    if re.match(r"use\s", name, re.IGNORECASE):
        wanted = name[4:].strip()
        if any(ch.isspace() for ch in wanted):
            raise _NotACondition("defined use meta argument with internal spaces will never match")
        from gridtools.formats import condor_metaknobs
        category, _colon, template = wanted.partition(":")
        if not template:
            return condor_metaknobs.category(category) is not None
        return condor_metaknobs.find(category, template) is not None
    raise _NotACondition("defined argument must be param name, boolean, or number")


def _version_test(text):
    """``version OP X.Y[.Z]`` (``text`` from OP on) against the version gridtools gives
    as HTCondor's; a missing Z is its own."""
    negated, op, or_equal, literal = _COMPARISON.match(text).groups()
    m = _VERSION_LITERAL.match(literal)
    if not m or int(m.group(1)) < 6:
        raise _NotACondition("the version literal is invalid")
    ours = condor_version()
    theirs = (int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else ours[2])
    diff = (ours > theirs) - (ours < theirs)
    result = diff == "<=>".index(op) - 1 or (bool(or_equal) and diff == 0)
    return result != bool(negated)


def condor_version():
    """(major, minor, patch) of the HTCondor version gridtools gives (``VERSION``)."""
    from gridtools.formats.condor import VERSION
    found = re.search(r"([0-9]+)\.([0-9]+)\.([0-9]+)", VERSION)
    return tuple(int(part) for part in found.groups())

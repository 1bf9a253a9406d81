"""Shell-style wildcard patterns (``*``, ``?``, ``[...]``) as ``fnmatch.fnmatchcase``
matches them, with ``*`` and patterns without wildcards decided here: ``fnmatch``
imports ``re``, which costs a command more than its own work, so it is imported only
for a pattern that needs it.
"""

#: the characters that make a pattern a wildcard pattern
WILDCARDS = frozenset("*?[")


def match(name, pattern, fold=False):
    """True when ``name`` matches ``pattern`` (``fold``: case ignored)."""
    if pattern == "*":
        return True
    if fold:
        name, pattern = name.lower(), pattern.lower()
    if WILDCARDS.isdisjoint(pattern):
        return name == pattern
    import fnmatch
    return fnmatch.fnmatchcase(name, pattern)

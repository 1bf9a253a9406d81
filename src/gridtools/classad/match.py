"""Matchmaking: whether two ads accept each other, and how much each likes
the other.

An ad accepts another when its ``Requirements`` evaluates to true (a true
boolean or a non-zero number) with the other ad as TARGET; UNDEFINED, ERROR,
a missing Requirements or any other value means no. ``Rank`` says how much
an ad prefers the other; anything that is not a number counts as 0.0.
"""

from gridtools.classad.values import truth


def accepts(ad, other):
    """True when ``ad``'s Requirements holds with ``other`` as TARGET."""
    return truth(ad.eval("Requirements", other)) is True


def symmetric_match(a, b):
    """True when each ad's Requirements holds against the other."""
    return accepts(a, b) and accepts(b, a)


def rank(ad, other):
    """``ad``'s Rank with ``other`` as TARGET, as a float (0.0 unless a number)."""
    value = ad.eval("Rank", other)
    if type(value) in (int, float, bool):
        return float(value)
    return 0.0

"""The spooled form of a job's ``-pe`` request, read the same way everywhere.

A job description stores its parallel environment request as
``[name, low, high]`` (one range; ``high`` 0 or None leaves it open: ``4-``)
or, for a slot list such as ``-pe mpi 1,2,4,8``, as
``[name, [[low, high], ...]]``. These helpers read either form.
"""


def ranges(pe):
    """((low, high or None), ...) of a spooled PE request, ascending by low."""
    rest = pe[1:]
    if len(rest) == 1 and isinstance(rest[0], (list, tuple)):
        pairs = [(int(lo), _high(hi)) for lo, hi in rest[0]]
    else:
        low = int(rest[0])
        pairs = [(low, _high(rest[1] if len(rest) > 1 else low))]
    return tuple(sorted(pairs, key=lambda r: r[0]))


def _high(value):
    return None if value is None or int(value) == 0 else int(value)


def low(pe):
    """The fewest slots the request accepts (what a pending job shows as its slots)."""
    return max(1, ranges(pe)[0][0])


def high(pe):
    """The most slots the request accepts (None: no upper bound)."""
    highs = [hi for _lo, hi in ranges(pe)]
    return None if None in highs else max(highs)


def range_text(low_, high_):
    if high_ == low_:
        return str(low_)
    return f"{low_}-{high_}" if high_ else f"{low_}-"


def text(pe):
    """The slot part as Grid Engine prints it: ``2``, ``2-4``, ``2-``, ``1,2,4,8``."""
    return ",".join(range_text(lo, hi) for lo, hi in ranges(pe))

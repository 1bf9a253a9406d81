"""Sets of task numbers kept as ranges, and the holds of pending tasks kept per job.

An array job of a million tasks must cost next to nothing while its tasks
wait: its pending tasks are the job's range minus the few tasks that left
the pending state, kept as runs ``(first, last, step)``. ``TaskRanges``
behaves as the sorted sequence of those numbers (iteration, ``len``, ``in``,
truth) without ever listing them. ``TaskHolds`` answers "which hold letters
apply to task n" from the job-level letters and the few tasks with letters
of their own. ``RangeBuilder`` writes numbers or runs as the compact
``[[first, last, step], ...]`` lists qstat shows (``1-1000000:1``). ``select``
picks the numbers of a sequence that a list of ranges names.
"""

import bisect


def select(numbers, ranges):
    """The numbers of ``numbers`` (ascending) that one of ``ranges`` ((first, last, step)
    each, as a command's ``-t`` gives them) names, in order. Its cost grows with the
    numbers and the ranges added, not with their product (a request may name a
    thousand ranges for a cluster of thousands of procs): each range of step 1 marks the
    ends of its stretch of ``numbers`` (found by bisection) and one pass adds them up;
    stepped ranges of the same step and the same numbers modulo it are merged first,
    and each merged one is looked at through its numbers or through the tasks within its
    stretch, whichever are fewer (``-t 2-2000000000:2`` on a job of two tasks looks at
    two)."""
    made = numbers if isinstance(numbers, list) else list(numbers)
    if not made:
        return []
    marks = [0] * (len(made) + 1)
    classes = {}
    for first, last, step in ranges:
        if step == 1:
            i, j = bisect.bisect_left(made, first), bisect.bisect_right(made, last)
            if i < j:
                marks[i] += 1
                marks[j] -= 1
        elif first <= last:
            classes.setdefault((step, first % step), []).append((first, last))
    chosen = set()
    if classes:
        present, low, high = set(made), made[0], made[-1]
        for (step, residue), spans in classes.items():
            spans.sort()
            end = None
            for first, last in spans:
                if end is not None and first <= end:    # (from the member after the part looked at)
                    first = end + 1 + (residue - end - 1) % step
                if first > last:
                    continue
                end = max(end, last) if end is not None else last
                if last < low or first > high:
                    continue
                if first < low:
                    first += (low - first + step - 1) // step * step
                last = min(last, high)
                i, j = bisect.bisect_left(made, first), bisect.bisect_right(made, last)
                if j - i < (last - first) // step + 1:     # (fewer tasks there than the range's numbers)
                    chosen.update(n for n in made[i:j] if (n - first) % step == 0)
                else:
                    chosen.update(n for n in range(first, last + 1, step) if n in present)
    found, depth = [], 0
    for k, number in enumerate(made):
        depth += marks[k]
        if depth > 0 or number in chosen:
            found.append(number)
    return found


#: whole ranges made so far, shared (at most _WHOLE_KEPT remembered)
_WHOLE = {}
_WHOLE_KEPT = 4096


class TaskRanges:
    """An immutable, sorted set of task numbers held as disjoint runs."""

    __slots__ = ("runs", "_starts", "_count")

    def __init__(self, runs=()):
        self.runs = tuple(runs)               # ((first, last, step), ...), ascending, disjoint
        self._starts = tuple(r[0] for r in self.runs)
        self._count = sum((last - first) // step + 1 for first, last, step in self.runs)

    @classmethod
    def of_range(cls, first, last, step, excluded=()):
        """The numbers first, first+step, ... last without those in ``excluded`` (a whole
        range is one shared object: thousands of waiting jobs hold the same few)."""
        if not excluded:
            key = (first, last, step)
            found = _WHOLE.get(key)
            if found is None:
                if len(_WHOLE) >= _WHOLE_KEPT:
                    _WHOLE.clear()
                found = _WHOLE[key] = cls(((first, last, step),) if first <= last else ())
            return found
        runs = []
        start = first
        for n in sorted(n for n in excluded if first <= n <= last and (n - first) % step == 0):
            if n > start:
                runs.append((start, n - step, step))
            start = n + step
        if start <= last:
            runs.append((start, last, step))
        return cls(runs)

    def __iter__(self):
        for first, last, step in self.runs:
            yield from range(first, last + 1, step)

    def __len__(self):
        return self._count

    def __bool__(self):
        return self._count > 0

    def __contains__(self, number):
        i = bisect.bisect_right(self._starts, number) - 1
        if i < 0:
            return False
        first, last, step = self.runs[i]
        return number <= last and (number - first) % step == 0

    def __eq__(self, other):
        if isinstance(other, TaskRanges):
            return self.runs == other.runs
        try:
            return list(self) == list(other)
        except TypeError:
            return NotImplemented

    def __repr__(self):
        return f"TaskRanges({list(self.runs)})"

    def first(self):
        return self.runs[0][0] if self.runs else None


class TaskHolds:
    """Hold letters of a job's pending tasks: the job-level letters (``common``) for every
    task, plus the letters of the tasks that have their own (``own``: number -> letters)."""

    __slots__ = ("common", "own")

    def __init__(self, common="", own=None):
        self.common = common
        self.own = own or {}

    def get(self, number, default=""):
        own = self.own.get(number)
        if own:
            return "".join(sorted(set(self.common + own)))
        return self.common or default

    def values(self):
        """The distinct letter sets in use (enough for ``any(holds.values())``)."""
        found = [self.common] if self.common else []
        return found + [self.get(n) for n in self.own]


class RangeBuilder:
    """Collects ascending task numbers into ``[[first, last, step], ...]``: a number that
    continues the last range's step extends it; a lone number takes the step to the next."""

    def __init__(self):
        self.out = []

    def add(self, n):
        out = self.out
        if out:
            first, last, step = out[-1]
            if first == last and n > last:
                out[-1] = [first, n, n - first]
                return
            if n - last == step:
                out[-1][1] = n
                return
        out.append([n, n, 1])

    def add_run(self, first, last, step):
        """Add first, first+step, ..., last (at most three numbers one by one)."""
        n = first
        while n <= last:
            self.add(n)
            tail = self.out[-1]
            if tail[1] == n and tail[2] == step and tail[0] != tail[1]:
                tail[1] = last
                return
            n += step

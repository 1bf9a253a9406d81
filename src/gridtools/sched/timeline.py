"""Future availability: how much of each resource is in use over time.

A ``Profile`` is the use of one resource as a step function of time: sorted
change times and the amount in use from each until the next (the last
amount lasts for ever). Adding a use over ``[start, end)`` splits the steps
at both ends and merges neighbours that became equal, as Slurm's backfill
map does. A ``Timeline`` holds one profile and one capacity per resource
key (a queue instance's slots, a consumable at the global host, a host or a
queue instance, a PE's slots, a resource quota counter); it answers whether
a set of demands fits over a window and the earliest time from which it
does for a whole duration. Pure and self-contained: keys are any hashable
values, times any numbers (``INFINITY`` for "never ends").
"""

from bisect import bisect_left, bisect_right

INFINITY = float("inf")
#: amounts closer than this count as equal (consumables are floats)
EPSILON = 1e-9


class Profile:
    """The use of one resource over time."""

    __slots__ = ("times", "used")

    def __init__(self):
        self.times = [-INFINITY]
        self.used = [0.0]

    def _split(self, at):
        """Index of the step starting at ``at``, splitting the step that holds it."""
        times = self.times
        i = bisect_left(times, at)
        if i < len(times) and times[i] == at:
            return i
        times.insert(i, at)
        self.used.insert(i, self.used[i - 1])
        return i

    def add(self, start, end, amount):
        """Use ``amount`` more over ``[start, end)``."""
        if end <= start or not amount:
            return
        first = self._split(start)
        last = self._split(end) if end != INFINITY else len(self.times)
        used = self.used
        for i in range(first, last):
            used[i] += amount
        self._merge(max(1, first), min(last + 1, len(self.times)))

    def _merge(self, low, high):
        times, used = self.times, self.used
        i = high - 1
        while i >= low:
            if i < len(times) and abs(used[i] - used[i - 1]) <= EPSILON:
                del times[i]
                del used[i]
            i -= 1

    def at(self, when):
        return self.used[bisect_right(self.times, when) - 1]

    def peak(self, start, end):
        """The most in use at any time of ``[start, end)``."""
        times, used = self.times, self.used
        i = bisect_right(times, start) - 1
        most = used[i]
        i += 1
        while i < len(times) and times[i] < end:
            if used[i] > most:
                most = used[i]
            i += 1
        return most

    def first_at_most(self, after, limit):
        """The first time from ``after`` on at which the use is at most ``limit``."""
        times, used = self.times, self.used
        i = bisect_right(times, after) - 1
        while i < len(times):
            if used[i] <= limit + EPSILON:
                return max(after, times[i])
            i += 1
        return INFINITY

    def blocked_until(self, start, end, limit):
        """None when the use stays at most ``limit`` over ``[start, end)``; else the end of
        the last step in the window above it (no window starting before that fits)."""
        times, used = self.times, self.used
        count = len(times)
        i = bisect_right(times, start) - 1
        found = None
        while True:
            if used[i] > limit + EPSILON:
                found = times[i + 1] if i + 1 < count else INFINITY
            i += 1
            if i >= count or times[i] >= end:
                return found


class Timeline:
    """Profiles and capacities of many resources."""

    __slots__ = ("profiles", "caps")

    def __init__(self):
        self.profiles = {}
        self.caps = {}

    def set_cap(self, key, cap):
        self.caps[key] = cap

    def has(self, key):
        return key in self.caps

    def add(self, key, start, end, amount):
        profile = self.profiles.get(key)
        if profile is None:
            profile = self.profiles[key] = Profile()
        profile.add(start, end, amount)

    def first_free(self, key, amount, after):
        """The first time from ``after`` on at which ``amount`` of a resource is free (for
        at least a moment): a lower bound of ``earliest`` for any duration."""
        cap = self.caps.get(key)
        profile = self.profiles.get(key)
        if cap is None or profile is None:
            return after if cap is None or amount <= cap + EPSILON else INFINITY
        return profile.first_at_most(after, cap - amount)

    def free(self, key, start, end):
        """What stays free of a resource over the whole of ``[start, end)``."""
        cap = self.caps.get(key)
        if cap is None:
            return INFINITY
        profile = self.profiles.get(key)
        return cap - (profile.peak(start, end) if profile is not None else 0.0)

    def conflict(self, demands, start, end):
        """The first (key, free) of ``demands`` ((key, amount), ...) that does not fit
        over ``[start, end)``, or None."""
        for key, amount in demands:
            free = self.free(key, start, end)
            if amount > free + EPSILON:
                return key, free
        return None

    def changes(self, keys, after):
        """The times after ``after`` at which the use of any of ``keys`` changes, sorted."""
        found = set()
        for key in keys:
            profile = self.profiles.get(key)
            if profile is not None:
                found.update(profile.times[bisect_right(profile.times, after):])
        return sorted(found)

    def _blocked_until(self, demands, start, end):
        latest = None
        for key, amount in demands:
            cap = self.caps.get(key)
            profile = self.profiles.get(key)
            if cap is None:
                continue
            if amount > cap + EPSILON:
                return INFINITY
            if profile is None:
                continue
            until = profile.blocked_until(start, end, cap - amount)
            if until is not None and (latest is None or until > latest):
                latest = until
        return latest

    def earliest(self, demands, duration, after):
        """The earliest time from ``after`` on at which ``demands`` fit for ``duration``
        seconds (INFINITY: never)."""
        start = after
        while start < INFINITY:
            until = self._blocked_until(demands, start, start + duration)
            if until is None:
                return start
            start = until
        return INFINITY

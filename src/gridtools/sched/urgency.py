"""Grid Engine's urgency of a job (sge_priority(5)): what its needs make it worth.

    urg     = rrcontr + wtcontr + dlcontr
    rrcontr = urgency(slots) * slots + the sum over hard requests of
              urgency(complex) * amount * slots    numeric, per-slot amount
              urgency(complex) * amount            numeric, per-job amount
              urgency(complex)                     string-valued complexes
    wtcontr = weight_waiting_time * seconds since submission (whole seconds,
              as Grid Engine keeps times: jobs submitted within the same second
              have waited equally long)
    dlcontr = weight_deadline / max(1, seconds left until the deadline)
              (only jobs with a deadline whose owner is in deadlineusers)

``slots`` is the number of slots the job is assumed to get: 1 for a serial
job, the PE request for a fixed one, and for a slot range what the PE's
``urgency_slots`` says (``urgency_slots``). Requests of complexes without
an urgency, or not known, add nothing.
"""

from dataclasses import dataclass
from typing import NamedTuple

#: name of the complex whose urgency every slot adds
SLOTS = "slots"


@dataclass(frozen=True, slots=True)
class ComplexUrgency:
    """A complex's urgency value (complex(5) ``urgency`` column)."""
    name: str
    urgency: float
    numeric: bool = True      # False for STRING, CSTRING, RESTRING and HOST complexes


class Urgency(NamedTuple):
    """A job's urgency and its three contributions."""
    rrcontr: float = 0.0      # resource requests
    wtcontr: float = 0.0      # waiting time
    dlcontr: float = 0.0      # deadline

    @property
    def total(self):
        return self.rrcontr + self.wtcontr + self.dlcontr


def urgency_slots(setting, ranges, pe_slots):
    """Slots assumed for a PE slot request of ``ranges`` ((low, high or None: no upper
    bound), ...; a list such as ``1,2,4,8`` is several).

    ``setting`` is the PE's urgency_slots: ``min``, ``max``, ``avg`` (of every
    number the request names, at most ``pe_slots``, the whole part, as Grid
    Engine's: 1,2,4,8 is 3) or a number; without an upper bound the PE's
    ``slots`` stands in for it.
    """
    word = str(setting).strip().lower()
    low = ranges[0][0]
    if word == "min":
        return low
    if word == "max":
        highs = [high for _low, high in ranges]
        return pe_slots if None in highs else max(highs)
    if word == "avg":
        total = count = 0
        for first, high in ranges:
            top = pe_slots if high is None else (min(high, pe_slots) if pe_slots else high)
            last = max(first, top)
            total += (first + last) * (last - first + 1) // 2
            count += last - first + 1
        return total // count
    if word.isdigit():
        return int(word)
    raise ValueError(f"urgency_slots: {setting!r} is not min, max, avg or a number")


#: Grid Engine's refusal of a slot range whose wildcard PE matches PEs that would assume
#: different slot counts for urgency ("job" or "advance_reservation")
AMBIGUOUS = ('"{}" rejected: PEs matching wildcard and jobs slot range would cause ambiguous '
             "urgency slot amount")


def slot_ranges(pe):
    """The ((low, high or None), ...) of a spooled -pe request ([name, low, high] or
    [name, [[low, high], ...]]; a high of 0 or None: no upper bound), ascending."""
    rest = pe[1:]
    pairs = rest[0] if len(rest) == 1 and isinstance(rest[0], (list, tuple)) else \
        [(rest[0], rest[1] if len(rest) > 1 else rest[0])]
    return tuple(sorted({(int(lo), int(hi) if hi else None) for lo, hi in pairs}))


def ambiguous(pe, objects):
    """True when a -pe request (spooled form) names more than one slot count and the PEs
    its name matches among ``objects`` ({name: {"urgency_slots": .., "slots": ..}}) would
    assume different slot counts for its urgency, which Grid Engine refuses at submit
    (``AMBIGUOUS``)."""
    import fnmatch
    ranges = slot_ranges(pe)
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return False
    found = set()
    for name in sorted(objects):
        if fnmatch.fnmatchcase(name, str(pe[0])):
            obj = objects[name] or {}
            try:
                found.add(urgency_slots(obj.get("urgency_slots", "min"), ranges, int(obj.get("slots") or 0)))
            except ValueError:
                found.add(1)
    return len(found) > 1


def resource_contribution(slots, requests, complexes):
    """rrcontr of a job assumed to get ``slots`` with hard ``requests`` (Requests)."""
    total = 0.0
    slots_cx = complexes.get(SLOTS)
    if slots_cx is not None:
        total += slots_cx.urgency * slots
    for request in requests:
        cx = complexes.get(request.name)
        if cx is None or request.name == SLOTS or not cx.urgency:
            continue
        if not cx.numeric:
            total += cx.urgency
        else:
            # (every numeric request times the slots, a per-job consumable's too, as
            # Grid Engine's centry_urgency_contribution counts it)
            total += cx.urgency * request.amount * slots
    return total


def waited(job, now):
    """Whole seconds job waited since its submission (Grid Engine's times are whole seconds)."""
    return max(0, int(now) - int(job.submit_time))


def waiting_contribution(job, config, now):
    return config.weight_waiting_time * waited(job, now)


def deadline_contribution(job, config, now):
    if job.deadline is None or not job.deadline_user:
        return 0.0
    # (whole seconds left, at least one, as Grid Engine's sge_urgency counts them)
    return config.weight_deadline / max(1, int(job.deadline) - int(now))


def urgency(job, complexes, config, now):
    """The Urgency of a PolicyJob; ``complexes`` maps names to ComplexUrgency."""
    return Urgency(resource_contribution(job.slots, job.requests, complexes),
                   waiting_contribution(job, config, now),
                   deadline_contribution(job, config, now))


def urgencies(jobs, complexes, config, now):
    """job id -> Urgency; jobs with the same requests share one resource sum."""
    cache = {}
    result = {}
    weight_wait = config.weight_waiting_time
    for job in jobs:
        key = (job.slots, job.requests)
        rr = cache.get(key)
        if rr is None:
            rr = cache[key] = resource_contribution(job.slots, job.requests, complexes)
        wt = weight_wait * waited(job, now) if weight_wait else 0.0
        dl = deadline_contribution(job, config, now) if job.deadline is not None else 0.0
        result[job.id] = Urgency(rr, wt, dl)
    return result

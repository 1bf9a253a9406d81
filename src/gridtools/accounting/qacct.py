"""What qacct computes: which records an invocation selects, and their sums.

Pure functions over accounting records (the dicts of
``gridtools.formats.accounting``): ``Selection`` holds every filter of the
command line and ``Selection.matches`` applies them; ``time_window``,
``parse_date_time``, ``parse_task_ranges``, ``queue_pattern`` and
``resolve_queue_refs`` (a queue domain, from the cell's queues and host
groups) turn option values into filters, ``scan_unsigned`` reads a number
as sscanf("%u") does; ``summarize`` adds up usage per group for the summary
tables. The text layout of the output lives in ``report``. Nothing here
reads the clock or the file system: callers pass ``now``.
"""

import time

from gridtools.errors import InputError

DAY = 24 * 3600

# Grouping keys of the summary tables, in the order of their columns and of
# their sort; each maps to the record field it groups by.
GROUP_FIELDS = {
    "host": "hostname", "queue": "qname", "group": "group", "owner": "owner",
    "project": "project", "department": "department", "pe": "granted_pe",
    "slots": "slots", "ar": "arid", "account": "account",
}
GROUP_KEYS = tuple(GROUP_FIELDS)

# The usage columns of a summary, as record fields.
USAGE_FIELDS = ("ru_wallclock", "ru_utime", "ru_stime", "cpu", "mem", "io", "iow")


class Selection:
    """The filters of one qacct invocation; None / 0 / empty means "any".

    owner, group, host, project, department, pe, account: exact values
    (host compared without regard to case); queues: fnmatch patterns on
    ``queue@host``; slots, ar: exact numbers; job_id and job_name: the job
    (a name may be an fnmatch pattern); tasks: [(first, last, step), ...];
    begin, end: inclusive epoch seconds of the start time, or of the end time
    when by_end_time; resources: -l requests, name -> value or None;
    master_only: skip the records of PE slave tasks.
    """

    __slots__ = ("owner", "group", "host", "queues", "project", "department",
                 "pe", "account", "slots", "ar", "job_id", "job_name", "tasks",
                 "begin", "end", "by_end_time", "resources", "master_only")

    def __init__(self, **filters):
        for name in self.__slots__:
            setattr(self, name, None)
        self.queues = []
        self.slots = self.ar = 0
        self.by_end_time = self.master_only = False
        for name, value in filters.items():
            setattr(self, name, value)

    def active(self):
        """True when any filter is set (else every record matches)."""
        return any(_is_set(getattr(self, name)) for name in self.__slots__)

    def matches(self, r):
        """True when record ``r`` passes every filter."""
        return (self._matches_who(r) and self._matches_where(r)
                and self._matches_job(r) and self._matches_time(r)
                and self._matches_requests(r))

    def _matches_who(self, r):
        return ((self.owner is None or r["owner"] == self.owner)
                and (self.group is None or r["group"] == self.group)
                and (self.project is None or r["project"] == self.project)
                and (self.department is None or r["department"] == self.department)
                and (self.account is None or r["account"] == self.account))

    def _matches_where(self, r):
        if self.host is not None and r["hostname"].lower() != self.host.lower():
            return False
        if self.queues and not _any_queue(self.queues, f"{r['qname']}@{r['hostname']}"):
            return False
        if self.pe is not None and r["granted_pe"] != self.pe:
            return False
        if self.slots and r["slots"] != self.slots:
            return False
        if self.master_only and r["pe_taskid"] != "NONE":
            return False
        return not self.ar or r["arid"] == self.ar

    def _matches_job(self, r):
        if self.job_id is not None or self.job_name is not None:
            if r["job_number"] != self.job_id and not _name_matches(self.job_name, r["job_name"]):
                return False
        return not self.tasks or task_in_ranges(r["task_number"], self.tasks)

    def _matches_time(self, r):
        if self.begin is None and self.end is None:
            return True
        when = r["end_time"] if self.by_end_time else r["start_time"]
        if self.begin is not None and when < self.begin:
            return False
        return self.end is None or when <= self.end

    def _matches_requests(self, r):
        if self.resources is None:
            return True
        if not r["start_time"]:
            return False
        return requests_match(self.resources, requested_resources(r["category"]))

    def fields(self):
        """The record fields the active filters read."""
        needed = set()
        for attr, names in _FILTER_FIELDS:
            if _is_set(getattr(self, attr)):
                needed.update(names)
        if self.job_id is not None:
            needed.update(("job_number", "job_name"))
        if self.begin is not None or self.end is not None:
            needed.add("end_time" if self.by_end_time else "start_time")
        if self.resources is not None:
            needed.update(("start_time", "category"))
        return needed

    def prefilter(self):
        """A cheap test on a line's raw fields, or None; see formats.accounting.read."""
        if self.job_id is not None and self.job_name is None:
            wanted = str(self.job_id)
            return lambda parts: len(parts) > 5 and parts[5] == wanted
        if self.owner is not None:
            owner = self.owner
            return lambda parts: len(parts) > 3 and parts[3] == owner
        return None


def _is_set(value):
    return value is not None and value is not False and value != 0 and value != []


# Selection attribute -> the record fields its filter reads (when it is set).
_FILTER_FIELDS = (
    ("owner", ("owner",)), ("group", ("group",)), ("project", ("project",)),
    ("department", ("department",)), ("account", ("account",)),
    ("host", ("hostname",)), ("queues", ("qname", "hostname")),
    ("pe", ("granted_pe",)), ("slots", ("slots",)),
    ("master_only", ("pe_taskid",)), ("ar", ("arid",)),
    ("job_name", ("job_number", "job_name")), ("tasks", ("task_number",)),
)


def _any_queue(patterns, name):
    from fnmatch import fnmatchcase
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def _name_matches(pattern, name):
    if pattern is None:
        return False
    from gridtools import wildcards
    return wildcards.match(name, pattern)


def queue_pattern(text):
    """The ``queue@host`` pattern for a -q argument (``all.q`` -> ``all.q@*``)."""
    if "@" not in text:
        return text + "@*"
    if text.endswith("@"):
        return text + "*"
    return text


def is_queue_domain(text):
    """True for a -q argument that names a queue domain (``queue@@hostgroup``)."""
    queue, at, rest = text.partition("@")
    return bool(at) and rest.startswith("@") and len(rest) > 1


def resolve_queue_refs(texts, cqueues, groups):
    """The queue instances (``queue@host``) the -q arguments ``texts`` name, as Grid
    Engine's qref_list_resolve finds them: ``cqueues`` maps each cluster queue to its
    hosts, ``groups`` each host group (``@name``) to its hosts, nested groups
    resolved. A queue part and a host group part are fnmatch patterns; a host
    part one compared without regard to case. Empty when nothing is named."""
    from fnmatch import fnmatchcase
    found = []
    for text in texts:
        queue, _, where = text.partition("@")
        for name in sorted(q for q in cqueues if fnmatchcase(q, queue)):
            hosts = cqueues[name]
            if where.startswith("@"):
                members = {h.lower() for g, listed in groups.items()
                           if fnmatchcase(g.lower(), where.lower()) for h in listed}
                hosts = [h for h in hosts if h.lower() in members]
            elif where:
                hosts = [h for h in hosts if fnmatchcase(h.lower(), where.lower())]
            found += [f"{name}@{host}" for host in hosts]
    return found


# -- task ranges ---------------------------------------------------------

def parse_task_ranges(text):
    """``1-10:2,15`` -> [(1, 10, 2), (15, 15, 1)]; raises InputError."""
    ranges = []
    for item in text.split(","):
        span, _, step = item.partition(":")
        first, dash, last = span.partition("-")
        try:
            low = int(first)
            high = int(last) if dash else low
            inc = int(step) if step else 1
        except ValueError:
            raise InputError(f"invalid list of task id ranges: {text}") from None
        if low < 1 or high < low or inc < 1:
            raise InputError(f"invalid list of task id ranges: {text}")
        ranges.append((low, high, inc))
    return ranges


def task_in_ranges(task, ranges):
    """True when task number ``task`` lies in one of ``ranges``."""
    return any(low <= task <= high and (task - low) % inc == 0
               for low, high, inc in ranges)


# -- times ---------------------------------------------------------------

# Grid Engine's words for each fault of a -b/-e date (ulong_parse_date_time_from_string).
DATE_ERRORS = {
    "empty": "no date specified",
    "seconds_format": "Invalid format of seconds field.",
    "format": "Invalid format of date/hour-minute field.",
    "month": "Invalid month specification.",
    "day": "Invalid day specification.",
    "hour": "Invalid hour specification.",
    "minute": "Invalid minute specification.",
    "second": "Invalid seconds specification.",
    "before_1970": "Couldn't generate date from input. Perhaps a date before 1970 was specified.",
}


def c_atoi(raw):
    """What C's atoi makes of ``raw`` (bytes): leading blanks, a sign, ASCII digits."""
    text = raw.lstrip(b" \t\n\v\f\r")
    sign = -1 if text[:1] == b"-" else 1
    if text[:1] in (b"-", b"+"):
        text = text[1:]
    digits = len(text) - len(text.lstrip(b"0123456789"))
    return sign * int(text[:digits]) if digits else 0


def scan_unsigned(text):
    """What sscanf(text, "%u") reads: the number before anything else ("2x" -> 2), the
    value modulo 2**32 as C stores it, or None when there is no ASCII digit to read."""
    raw = text.encode("utf-8", "surrogateescape").lstrip(b" \t\n\v\f\r")
    rest = raw[1:] if raw[:1] in (b"-", b"+") else raw
    if not rest[:1].isdigit():
        return None
    return c_atoi(raw) % (1 << 32)


def _date_error(key):
    return InputError(DATE_ERRORS[key])


def parse_date_time(text, now):
    """Epoch seconds for Grid Engine's ``[[CC]YY]MMDDhhmm[.SS]`` in local time.

    Without CC, YY below 70 means 20YY; without YY the year of ``now``. Read as
    Grid Engine reads it (field lengths in bytes, each field with atoi); raises
    InputError with Grid Engine's words (``DATE_ERRORS``) for anything else.
    """
    raw = text.encode("utf-8", "surrogateescape")
    pieces = [piece for piece in raw.split(b".") if piece]
    if not pieces:
        raise _date_error("empty" if not raw else "format")
    stamp, seconds = pieces[0], pieces[1] if len(pieces) > 1 else b""
    if len(seconds) not in (0, 2):
        raise _date_error("seconds_format")
    if len(stamp) not in (8, 10, 12):
        raise _date_error("format")
    year = time.localtime(now).tm_year
    if len(stamp) > 8:
        width = 4 if len(stamp) == 12 else 2
        year, stamp = c_atoi(stamp[:width]), stamp[width:]
        if width == 2:
            year += 2000 if year < 70 else 1900
    fields = [c_atoi(stamp[i:i + 2]) for i in range(0, 8, 2)] + [c_atoi(seconds)]
    for key, value, low, high in zip(("month", "day", "hour", "minute", "second"), fields,
                                     (1, 1, 0, 0, -(1 << 31)), (12, 31, 23, 59, 59)):
        if not low <= value <= high:
            raise _date_error(key)
    month, day, hour, minute, sec = fields
    try:
        stamp = int(time.mktime((year, month, day, hour, minute, sec, 0, 0, -1)))
    except (OverflowError, ValueError):
        stamp = -1
    if stamp < 0:
        raise _date_error("before_1970")
    return stamp


def time_window(begin, end, days, now):
    """The (begin, end) pair that -b, -e and -d select; None is unbounded.

    -d alone counts back from ``now``; with -b it counts forward from the
    begin time, with -e back from the end time; with both it is ignored.
    """
    if days is not None:
        span = days * DAY
        if begin is not None and end is None:
            end = begin + span
        elif end is not None and begin is None:
            begin = end - span
        elif begin is None:
            begin = now - span
    return begin, end


# -- resource requests (-l) --------------------------------------------------

def parse_resource_list(text):
    """``h_rt=600,arch`` -> {"h_rt": "600", "arch": None}; raises InputError."""
    wanted = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        if not name.strip() or (sep and not value.strip()):
            raise InputError(f'invalid resource request "{text}"')
        wanted[name.strip()] = value.strip() if sep else None
    return wanted


def requested_resources(category):
    """The hard ``-l`` requests recorded in a category string, as a dict."""
    tokens = category.split()
    found = {}
    for i, token in enumerate(tokens[:-1]):
        if token == "-l" and (i == 0 or tokens[i - 1] != "-soft"):
            for item in tokens[i + 1].split(","):
                name, _, value = item.partition("=")
                found[name] = value
    return found


def _same_value(wanted, have):
    if wanted.lower() == have.lower():
        return True
    if any(c in wanted for c in "*?["):
        from fnmatch import fnmatchcase
        return fnmatchcase(have, wanted)
    from gridtools.formats.values import parse_memory, parse_time
    for parse in (parse_memory, parse_time):
        try:
            return parse(wanted) == parse(have)
        except InputError:
            continue
    return False


def requests_match(wanted, have):
    """True when every wanted resource was requested (with an equal value)."""
    for name, value in wanted.items():
        if name not in have:
            return False
        if value is not None and not _same_value(value, have[name]):
            return False
    return True


# -- sums ----------------------------------------------------------------------

class Usage:
    """Summed usage of a set of records (the columns of a summary row)."""

    __slots__ = USAGE_FIELDS

    def __init__(self):
        for name in USAGE_FIELDS:
            setattr(self, name, 0.0)

    def add(self, r):
        self.ru_wallclock += r["ru_wallclock"]
        self.ru_utime += r["ru_utime"]
        self.ru_stime += r["ru_stime"]
        self.cpu += r["cpu"]
        self.mem += r["mem"]
        self.io += r["io"]
        self.iow += r["iow"]

    def values(self):
        return tuple(getattr(self, name) for name in USAGE_FIELDS)


class Summary:
    """Totals of the selected records and, per group, their sums."""

    def __init__(self, group_by=()):
        unknown = set(group_by) - set(GROUP_FIELDS)
        if unknown:
            raise ValueError(f"unknown grouping {sorted(unknown)}")
        self.group_by = tuple(k for k in GROUP_KEYS if k in group_by)
        self.groups = {}
        self.labels = {}        # group key -> its values as first met (host names keep their case)
        self._total = Usage()
        if self.group_by:
            from operator import itemgetter
            self._key = itemgetter(*(GROUP_FIELDS[k] for k in self.group_by))
            self.add = self._add_to_group
            if "host" in self.group_by:
                # Grid Engine compares host names without regard to case (sge_hostcmp)
                self._label, self._key = self._key, self._host_key(self._key)
        else:
            self.add = self._total.add

    def add(self, r):
        """Count record ``r`` (replaced per instance by the right adder)."""
        self._total.add(r)

    def _host_key(self, values):
        where = self.group_by.index("host")
        if len(self.group_by) == 1:
            return lambda r: values(r).lower()

        def key(r):
            found = values(r)
            return found[:where] + (found[where].lower(),) + found[where + 1:]
        return key

    def _add_to_group(self, r):
        key = self._key(r)
        usage = self.groups.get(key)
        if usage is None:
            usage = self.groups[key] = Usage()
            if "host" in self.group_by:
                self.labels[key] = self._label(r)
        usage.add(r)

    @property
    def total(self):
        """The Usage of all records counted."""
        if not self.group_by:
            return self._total
        total = Usage()
        for usage in self.groups.values():
            for name in USAGE_FIELDS:
                setattr(total, name, getattr(total, name) + getattr(usage, name))
        return total

    def fields(self):
        """The record fields adding a record reads."""
        return set(USAGE_FIELDS) | {GROUP_FIELDS[k] for k in self.group_by}

    def rows(self):
        """[(dict key -> value, Usage)] sorted as Grid Engine sorts them."""
        single = len(self.group_by) == 1
        label = self.labels.get
        items = [((label(key, key),) if single else label(key, key), usage)
                 for key, usage in self.groups.items()]

        def order(item):
            return tuple(v.lower() if k == "host" else v
                         for k, v in zip(self.group_by, item[0]))
        return [(dict(zip(self.group_by, key)), usage)
                for key, usage in sorted(items, key=order)]


def summarize(records, group_by=()):
    """A Summary of ``records`` grouped by the keys in ``group_by``."""
    summary = Summary(group_by)
    for r in records:
        summary.add(r)
    return summary

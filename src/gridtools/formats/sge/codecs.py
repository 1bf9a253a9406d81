"""Value codecs: how one attribute value is read from text and written back.

A codec has ``parse(text) -> value`` (raising ``ValueProblem`` with a short
reason) and ``render(value) -> text``. ``check(value)`` verifies a value built
in code by rendering and re-reading it. The typed values are plain Python
values (``int``, ``float``, ``bool``, ``str``, ``None`` for NONE, ``list``,
``dict``) plus four small classes defined here:

``TimeSpec`` / ``MemorySpec``
    ``str`` subclasses that keep the text exactly as written (Grid Engine
    shows ``00:00:60`` as it was entered) and offer ``.seconds`` / ``.bytes``.
``PerHost``
    a queue attribute value with per-host and per-host-group overrides
    (``1,[node1=4],[@big=8]``): ``.default``, ``.overrides`` and
    ``.for_host(host, hostgroup_members)``.

Only the standard library core is imported here: command start-up time
matters.
"""

from gridtools.errors import InputError
from gridtools.formats.values import INFINITY, parse_bool, parse_memory, parse_number, parse_time


#: the largest whole number a Grid Engine object keeps in 32 unsigned bits
U_LONG32 = 4294967295


class ValueProblem(ValueError):
    """A value text that a codec refuses; ``str()`` is the reason."""


def is_none_word(text):
    """True for NONE in any letter case."""
    return text.lower() == "none"


def split_words(text):
    """Names separated by commas and/or white space."""
    return text.replace(",", " ").split()


class TimeSpec(str):
    """A time specifier as written (``00:05:00``, ``INFINITY``)."""

    __slots__ = ()

    @property
    def seconds(self):
        """Seconds (int or float), ``INFINITY`` for infinity."""
        return parse_time(self)


class MemorySpec(str):
    """A memory specifier as written (``2G``, ``512m``, ``INFINITY``)."""

    __slots__ = ()

    @property
    def bytes(self):
        """Bytes (int or float), ``INFINITY`` for infinity."""
        return parse_memory(self)


class Codec:
    """Base class: subclasses define ``parse`` and ``render``."""

    #: short phrase used in error messages ("expected ...")
    expected = "a value"

    def parse(self, text):
        raise NotImplementedError

    def render(self, value):
        raise NotImplementedError

    def check(self, value):
        """Raise ValueProblem unless ``value`` renders to text this codec reads."""
        try:
            text = self.render(value)
        except (TypeError, ValueError, AttributeError, KeyError) as err:
            raise ValueProblem(f"expected {self.expected}") from err
        self.parse(text)
        return text


class Text(Codec):
    """A mandatory string; one word unless ``spaces`` is true."""

    def __init__(self, spaces=False):
        self.spaces = spaces
        self.expected = "a string" if spaces else "a single word"

    def parse(self, text):
        if not text or (not self.spaces and len(text.split()) != 1):
            raise ValueProblem(f"expected {self.expected}")
        if any(c in text for c in "\n\r\0"):
            raise ValueProblem(f"expected {self.expected} on one line")
        return text

    def render(self, value):
        if not isinstance(value, str):
            raise TypeError(value)
        return value


class OptText(Text):
    """A string or None, written as ``token`` (``NONE`` or ``none``)."""

    def __init__(self, token="NONE", spaces=False):
        super().__init__(spaces)
        self.token = token

    def parse(self, text):
        if is_none_word(text):
            return None
        return super().parse(text)

    def render(self, value):
        return self.token if value is None else super().render(value)


class Integer(Codec):
    """A decimal integer within [lo, hi]; without ``hi``, at most ``U_LONG32`` (Grid
    Engine keeps such numbers in 32 unsigned bits)."""

    def __init__(self, lo=0, hi=None):
        self.lo, self.hi = lo, hi
        self.expected = "a non-negative integer" if lo == 0 and hi is None else (
            f"an integer from {lo} to {hi}" if hi is not None else f"an integer of at least {lo}")

    def parse(self, text):
        body = text[1:] if text[:1] in ("-", "+") else text
        if not body or any(c not in "0123456789" for c in body):
            raise ValueProblem(f"expected {self.expected}")
        top = U_LONG32 if self.hi is None else self.hi
        if len(body.lstrip("0")) > len(str(abs(top))) + 1:
            raise ValueProblem(f"expected {self.expected} of at most {top}")
        value = int(text)
        if self.lo is not None and value < self.lo:
            raise ValueProblem(f"expected {self.expected}")
        if value > top:
            raise ValueProblem(f"expected {self.expected}" if self.hi is not None
                               else f"expected {self.expected} of at most {top}")
        return value

    def render(self, value):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(value)
        return str(value)


class Real(Codec):
    """A non-negative floating point number, written with six decimals (``%f``)."""

    expected = "a non-negative number"

    def parse(self, text):
        try:
            value = float(parse_number(text))
        except InputError:
            raise ValueProblem(f"expected {self.expected}") from None
        if not value >= 0 or value == INFINITY:
            raise ValueProblem(f"expected {self.expected}")
        return value

    def render(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(value)
        return "%f" % value


class Boolean(Codec):
    """TRUE/FALSE (``upper``) or true/false; reads any usual spelling."""

    expected = "TRUE or FALSE"

    def __init__(self, upper=True):
        self.words = ("TRUE", "FALSE") if upper else ("true", "false")

    def parse(self, text):
        try:
            return parse_bool(text)
        except InputError:
            raise ValueProblem(f"expected {self.expected}") from None

    def render(self, value):
        if not isinstance(value, bool):
            raise TypeError(value)
        return self.words[0] if value else self.words[1]


class Time(Codec):
    """A time specifier kept as written (``TimeSpec``); ints render as H:MM:SS."""

    expected = "a time value (h:m:s, seconds or INFINITY)"

    def parse(self, text):
        try:
            parse_time(text)
        except InputError:
            raise ValueProblem(f"expected {self.expected}") from None
        return TimeSpec(text)

    def render(self, value):
        if isinstance(value, bool):
            raise TypeError(value)
        if isinstance(value, (int, float)):
            if value == INFINITY:
                return "INFINITY"
            if value < 0:
                raise ValueError(value)
            h, rest = divmod(int(value), 3600)
            return "%02d:%02d:%02d" % (h, rest // 60, rest % 60)
        if not isinstance(value, str):
            raise TypeError(value)
        return value


class Memory(Codec):
    """A memory specifier kept as written (``MemorySpec``); ints render as bytes."""

    expected = "a memory value (number with optional k/m/g/t or K/M/G/T, or INFINITY)"

    def parse(self, text):
        try:
            parse_memory(text)
        except InputError:
            raise ValueProblem(f"expected {self.expected}") from None
        return MemorySpec(text)

    def render(self, value):
        if isinstance(value, bool):
            raise TypeError(value)
        if isinstance(value, (int, float)):
            return "INFINITY" if value == INFINITY else str(value)
        if not isinstance(value, str):
            raise TypeError(value)
        return value


class Choice(Codec):
    """One word out of a closed set, read in any letter case, written canonically."""

    def __init__(self, choices):
        self.choices = tuple(choices)
        self.by_lower = {c.lower(): c for c in self.choices}
        self.expected = "one of " + ", ".join(self.choices)

    def parse(self, text):
        try:
            return self.by_lower[text.lower()]
        except KeyError:
            raise ValueProblem(f"expected {self.expected}") from None

    def render(self, value):
        if not isinstance(value, str):
            raise TypeError(value)
        return value


class IntOrChoice(Choice):
    """A non-negative integer or one word of a closed set (``$pe_slots``, ``min``)."""

    def __init__(self, choices, lo=0):
        super().__init__(choices)
        self.number = Integer(lo)
        self.expected = f"{self.number.expected} or one of " + ", ".join(self.choices)

    def parse(self, text):
        if text.isdigit():
            try:
                return self.number.parse(text)
            except ValueProblem:
                raise ValueProblem(f"expected {self.expected}") from None
        return super().parse(text)

    def render(self, value):
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return super().render(value)


class NameList(Codec):
    """A list of names; NONE is the empty list. Written joined by ``sep``."""

    expected = "a list of names or NONE"

    def __init__(self, sep=" ", token="NONE"):
        self.sep, self.token = sep, token

    def parse(self, text):
        words = split_words(text)
        if len(words) == 1 and is_none_word(words[0]):
            return []
        if not words or any(is_none_word(w) for w in words):
            raise ValueProblem(f"expected {self.expected}")
        return words

    def render(self, value):
        if isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise TypeError(value)
        return self.sep.join(value) if value else self.token


class KeyValues(Codec):
    """``name=value`` pairs separated by commas; NONE is the empty dict.

    Values stay text (their meaning depends on the complex attribute) unless
    ``real`` is set, in which case they are floats written with ``%f``.
    """

    expected = "a list of name=value pairs or NONE"

    def __init__(self, real=False, token="NONE"):
        self.real, self.token = real, token

    def parse(self, text):
        if is_none_word(text.strip()):
            return {}
        result = {}
        for item in split_words(text):
            name, eq, value = item.partition("=")
            if not name or not eq or not value or name in result or "[" in name or "]" in name:
                raise ValueProblem(f"expected {self.expected}")
            result[name] = Real().parse(value) if self.real else value
        if not result:
            raise ValueProblem(f"expected {self.expected}")
        return result

    def render(self, value):
        if not value:
            return self.token
        items = []
        for name, val in value.items():
            text = Real().render(val) if self.real else str(val)
            items.append(f"{name}={text}")
        return ",".join(items)


class PerHost:
    """A queue attribute value with per-host and per-host-group overrides.

    ``default`` applies everywhere not overridden; ``overrides`` maps a host
    name or ``@hostgroup`` to its value, in the order written.
    """

    __slots__ = ("default", "overrides")

    def __init__(self, default, overrides=None):
        self.default = default
        self.overrides = dict(overrides or {})

    def for_host(self, host, hostgroup_members=None):
        """The value on ``host``: its own override, else that of the one host
        group holding it (``hostgroup_members``: ``@group`` -> resolved host
        names), else the default. A host in several overriding groups gets the
        default, as Grid Engine treats that as ambiguous."""
        wanted = host.lower()
        for key, value in self.overrides.items():
            if not key.startswith("@") and key.lower() == wanted:
                return value
        members = hostgroup_members or {}
        found = [value for key, value in self.overrides.items()
                 if key.startswith("@") and wanted in {h.lower() for h in members.get(key, ())}]
        return found[0] if len(found) == 1 else self.default

    def values(self):
        """The default followed by every override value."""
        return [self.default, *self.overrides.values()]

    def __eq__(self, other):
        if not isinstance(other, PerHost):
            return NotImplemented
        return self.default == other.default and list(self.overrides.items()) == list(other.overrides.items())

    def __repr__(self):
        return f"PerHost({self.default!r}, {self.overrides!r})"


def split_per_host(text):
    """``(default text or None, [(host or @group, value text), ...])`` of a value with
    host entries, ``default,[host=value],[@group=value]``; the default may be left
    out (``[host=value]``) and a value without ``[`` is all default."""
    text = text.strip()
    if "[" not in text:
        return text, []
    head, _, tail = text.partition("[")
    head = head.rstrip()
    default_text = None
    if head:
        if not head.endswith(","):
            raise ValueProblem("expected ',' before '['")
        default_text = head[:-1].strip()
        if not default_text:
            raise ValueProblem("missing default value before the first '['")
    return default_text, _entries("[" + tail)


def _entries(rest):
    entries, seen = [], set()
    while rest:
        end = rest.find("]")
        if not rest.startswith("[") or end < 0:
            raise ValueProblem("expected [host=value] or [@group=value]")
        key, eq, value = rest[1:end].partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value or key in seen or len(key.split()) != 1:
            raise ValueProblem("expected [host=value] or [@group=value]")
        entries.append((key, value))
        seen.add(key)
        rest = rest[end + 1:].lstrip()
        if rest:
            if not rest.startswith(","):
                raise ValueProblem("expected ',' between overrides")
            rest = rest[1:].lstrip()
    return entries


class PerHostCodec(Codec):
    """``default,[host=value],[@group=value]`` around an inner codec."""

    def __init__(self, inner):
        self.inner = inner
        self.expected = inner.expected

    def parse(self, text):
        default_text, entries = split_per_host(text)
        if default_text is None:
            raise ValueProblem("missing default value before the first '['")
        return PerHost(self.inner.parse(default_text),
                       {key: self.inner.parse(value) for key, value in entries})

    def render(self, value):
        if not isinstance(value, PerHost):
            return self.inner.render(value)
        parts = [self.inner.render(value.default)]
        groups = [k for k in value.overrides if k.startswith("@")]
        hosts = [k for k in value.overrides if not k.startswith("@")]
        for key in groups + hosts:
            parts.append(f"[{key}={self.inner.render(value.overrides[key])}]")
        return ",".join(parts)

    def check(self, value):
        values = value.values() if isinstance(value, PerHost) else [value]
        for item in values:
            self.inner.check(item)
        return self.render(value)

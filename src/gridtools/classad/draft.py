"""A job ad while it is being built, made a ClassAd only when one is needed.

condor_submit builds each job's ad attribute by attribute. Nearly all the
values are plain (numbers, strings, booleans), and the expressions HTCondor
adds itself (the default Requirements, RequestMemory and RequestDisk) are
texts known in advance. A ``DraftAd`` keeps a plain value as it is, such an
expression as its texts (``Text``), and what the user wrote as the
expression the parser made of it. It reads plain values and prints the long
form without the expression modules (nodes, operators, parser), so that
submitting a plain job does not load them; ``classad()`` makes the ClassAd
(each ``Text`` parsed) for whatever needs one, and ``eval`` of an
expression goes through it.

The texts of a ``Text`` are what ``parse(new)`` prints: ``new`` in the
canonical spelling, ``old`` in the long form's (a test holds every ``Text``
condor_submit makes to that).
"""

from gridtools.classad.values import INT64_MIN, RESERVED_WORDS, UNDEFINED, Special, quote_string, unparse_value, wrap64

#: the types of the values a DraftAd keeps as they are
PLAIN = (bool, int, float, str, Special)
_INT64_MAX = ~INT64_MIN


class Text:
    """An expression known by its texts: ``new`` (canonical) and ``old`` (the long
    form's spelling; the same when not given)."""

    __slots__ = ("new", "old")

    def __init__(self, new, old=None):
        self.new = new
        self.old = new if old is None else old

    def unparse(self, old=False):
        return self.old if old else self.new

    def expr(self):
        """The expression itself, parsed."""
        from gridtools.classad.parser import parse
        return parse(self.new)

    def __repr__(self):
        return f"Text({self.new!r})"


class DraftAd:
    """Names (case-insensitive, spelled as last set) to plain values, ``Text``s or
    parsed expressions, in the order first set. Offers what a ClassAd offers a
    reader of a job ad: ``in``, iteration over the names, ``lookup``, ``eval``
    and the long form (``str``). ``eval`` of an expression evaluates it in the
    ClassAd the draft makes, made once until the draft changes."""

    __slots__ = ("_values", "_names", "_made")

    def __init__(self):
        self._values = {}
        self._names = {}
        self._made = None

    def __setitem__(self, name, value):
        key = name.lower()
        if value.__class__ is int:
            if not INT64_MIN <= value <= _INT64_MAX:
                value = wrap64(value)
        elif value is None:
            value = UNDEFINED
        self._values[key] = value
        self._names[key] = name
        self._made = None

    def update(self, pairs):
        """Set each (name, plain value) of ``pairs``, in order: a value set in one call
        (the attributes every job ad starts with)."""
        values, names = self._values, self._names
        self._made = None
        for name, value in pairs:
            if value.__class__ is int and not INT64_MIN <= value <= _INT64_MAX:
                value = wrap64(value)
            key = name.lower()
            values[key] = value
            names[key] = name

    def inherit(self, base):
        """Take from ``base`` what this draft does not set (after the rest): as a proc ad
        of HTCondor's chains to its cluster's ad, proc 0's."""
        values, names = self._values, self._names
        self._made = None
        for key, value in base._values.items():
            if key not in values:
                values[key] = value
                names[key] = base._names[key]

    def __contains__(self, name):
        return name.lower() in self._values

    def __iter__(self):
        return iter(list(self._names.values()))

    def __len__(self):
        return len(self._values)

    def lookup(self, name):
        """What ``name`` is bound to, as an expression (``unparse`` prints it), or None."""
        value = self._values.get(name.lower())
        if value is None:
            return None
        if value.__class__ in PLAIN:
            return Text(unparse_value(value), unparse_value(value, True))
        return value

    def plain(self, name):
        """True when ``name`` is missing or a plain value: what ``eval`` reads without
        evaluating anything."""
        return self._values.get(name.lower(), UNDEFINED).__class__ in PLAIN

    def eval(self, name, target=None):
        """The value of ``name`` (UNDEFINED when missing); an expression is evaluated
        in the ClassAd this draft makes."""
        value = self._values.get(name.lower(), UNDEFINED)
        if value.__class__ in PLAIN and target is None:
            return value
        made = self._made
        if made is None:
            made = self._made = self.classad()
        return made.eval(name, target)

    def classad(self):
        """The ClassAd of this draft (each ``Text`` parsed)."""
        from gridtools.classad.ad import ClassAd
        ad = ClassAd()
        for key, value in self._values.items():
            ad[self._names[key]] = value.expr() if value.__class__ is Text else value
        return ad

    def __str__(self):
        """The long form, as ``str`` of the ClassAd prints it."""
        names, lines = self._names, []
        for key, value in self._values.items():
            name = names[key]           # quoted as values.quote_name quotes, seen here at once
            if not (name.isascii() and name.isidentifier()) or key in RESERVED_WORDS:
                name = quote_string(name, "'")
            kind = value.__class__
            if kind is int:                 # (the commonest values, spelled here without a call)
                text = str(value)
            elif kind is str:
                text = '"' + value.replace('"', '\\"') + '"'
            elif kind in PLAIN:
                text = unparse_value(value, True)
            else:
                text = value.unparse(True)
            lines.append(f"{name} = {text}\n")
        return "".join(lines)

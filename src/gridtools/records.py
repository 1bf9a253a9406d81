"""Plain records declared like dataclasses, and closed sets declared like enums, for
modules on a command's start-up path.

``dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``,
``tokenize``) and writes each class's methods with ``exec``: about 15 ms
before condor_submit has read a line. A class decorated with ``record``
declares its fields the same way (annotations, defaults,
``Factory(list)`` for a fresh mutable default) and gets an ``__init__``
taking them by position or name, ``__eq__`` (same class, equal fields),
``__repr__``, and with ``frozen=True`` no assignment after ``__init__`` and
a ``__hash__`` of its fields.

``enum`` imports ``functools``, ``collections``, ``operator`` and ``types``:
more than qsub's whole work after the interpreter started. A subclass of
``ClosedSet`` declares its members as an enum does (its upper-case class
attributes, ``COMMAND = "command"``) and they behave as an enum's: one
object per member with ``name`` and ``value``, found by value
(``Kind("command")``, ValueError when none) and by name
(``Kind["COMMAND"]``, KeyError), listed in order by iterating the class,
compared by identity and kept by copies and pickles. A closed set over a
data type (``class Universe(int, ClosedSet)``) has members that are also of
that type, as an ``IntEnum``'s are. Standard library only.
"""


class Factory:
    """A default made fresh for every record: ``Factory(list)``."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


_MISSING = object()


def record(cls=None, *, frozen=False):
    """Make ``cls`` a record (see the module docstring)."""
    if cls is None:
        return lambda c: record(c, frozen=frozen)
    names = tuple(cls.__dict__.get("__annotations__", {}))
    defaults = {n: cls.__dict__[n] for n in names if n in cls.__dict__}
    for name in defaults:
        delattr(cls, name)
    cls._fields = names
    cls._defaults = defaults
    cls.__init__ = _init
    cls.__eq__ = _eq
    cls.__repr__ = _repr
    if frozen:
        cls.__setattr__ = _frozen_set
        cls.__delattr__ = _frozen_set
        cls.__hash__ = _hash
    else:
        cls.__hash__ = None
    return cls


def _init(self, *args, **kwargs):
    names = self._fields
    if len(args) > len(names):
        raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments, {len(args)} given")
    values = dict(zip(names, args))
    for name, value in kwargs.items():
        if name not in names or name in values:
            raise TypeError(f"{type(self).__name__}() got an unexpected or repeated argument {name!r}")
        values[name] = value
    for name in names:
        value = values.get(name, _MISSING)
        if value is _MISSING:
            value = self._defaults.get(name, _MISSING)
            if value is _MISSING:
                raise TypeError(f"{type(self).__name__}() is missing the argument {name!r}")
            if value.__class__ is Factory:
                value = value.make()
        object.__setattr__(self, name, value)


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    return all(getattr(self, n) == getattr(other, n) for n in self._fields)


def _repr(self):
    inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
    return f"{type(self).__name__}({inner})"


def _hash(self):
    return hash(tuple(getattr(self, n) for n in self._fields))


def _frozen_set(self, name, *value):
    raise AttributeError(f"cannot change field {name!r} of a frozen {type(self).__name__}")


class _ClosedSetType(type):
    """The type of closed sets: their members by value, by name and in order."""

    def __call__(cls, value):
        try:
            return cls._by_value[value]
        except (KeyError, TypeError):
            raise ValueError(f"{value!r} is not a valid {cls.__name__}") from None

    def __getitem__(cls, name):
        return cls._members[name]

    def __iter__(cls):
        return iter(cls._members.values())

    def __len__(cls):
        return len(cls._members)

    @property
    def __members__(cls):
        return dict(cls._members)


class ClosedSet(metaclass=_ClosedSetType):
    """A closed set declared like an enum (see the module docstring)."""

    _members, _by_value = {}, {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        data = next((b for b in cls.__mro__[1:] if not issubclass(b, ClosedSet)), object)
        cls._members, cls._by_value = {}, {}
        for name, value in list(cls.__dict__.items()):
            if name.isupper() and not name.startswith("_"):
                member = object.__new__(cls) if data is object else data.__new__(cls, value)
                member._name_, member._value_ = name, value
                cls._members[name] = member
                cls._by_value.setdefault(value, member)
                setattr(cls, name, member)
        if data is not object:
            cls.__repr__ = ClosedSet.__repr__
            cls.__str__, cls.__format__ = data.__repr__, data.__format__

    @property
    def name(self):
        return self._name_

    @property
    def value(self):
        return self._value_

    def __repr__(self):
        return f"<{type(self).__name__}.{self._name_}: {self._value_!r}>"

    def __str__(self):
        return f"{type(self).__name__}.{self._name_}"

    def __reduce_ex__(self, protocol):
        return type(self), (self._value_,)

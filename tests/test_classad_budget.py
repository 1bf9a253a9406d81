"""The cost of one evaluation is bounded (man classad(5), COST): expressions that
would take exponential time or memory are ERROR, quickly; ordinary ones are not
touched, and an attribute read many times is evaluated once."""

import signal
import threading
import time

import pytest

from gridtools.classad import ERROR, ClassAd, parse
from gridtools.classad.budget import MAX_STRING

#: what "quickly" means here: each of these ends in a fraction of a second on an idle
#: machine (the steps take about 0.2 s, matching 0.2 s, the clock stops any evaluation
#: after 1 s); two seconds leave room for a loaded one (without the bounds they take
#: hours, or all memory)
QUICK = 2.0

REDOS = 'regexp("^(a|aa)*$", "' + "a" * 100 + 'b")'


def timed(fn):
    began = time.monotonic()
    value = fn()
    return value, time.monotonic() - began


def doubling(first, step, count=40):
    """An ad of A0 = first, Ak = step(A(k-1))."""
    ad = ClassAd({"A0": parse(first) if isinstance(first, str) else first})
    for k in range(1, count + 1):
        ad[f"A{k}"] = parse(step.format(prev=f"A{k - 1}"))
    return ad


def test_doubling_attributes_are_evaluated_once_each():
    ad = doubling("1", "{prev} + {prev}")
    ad["Requirements"] = parse("A40 > 0")
    value, took = timed(lambda: ad.eval("A40"))
    assert value == 2 ** 40 and took < QUICK
    assert ad.eval("Requirements") is True


def test_doubling_that_cannot_be_remembered_is_error_quickly():
    # A0 meets a cycle (B reads A40, which is being evaluated), so no Ak may be kept
    ad = doubling("isUndefined(B) ? 1 : 1", "{prev} + {prev}")
    ad["B"] = parse("A40")
    value, took = timed(lambda: ad.eval("A40"))
    assert value is ERROR and took < QUICK
    # random() is not remembered either: each read is a new number
    ad = doubling("random(2) + 1", "{prev} + {prev}")
    value, took = timed(lambda: ad.eval("A40"))
    assert value is ERROR and took < QUICK


def long(text):
    """``text`` in an evaluation that has taken its first chunk of steps (walking a list
    of 2000 ads) before: from then on attribute values are remembered."""
    ads = "{" + ",".join(["[]"] * 2000) + "}"
    return f"size(evalInEachContext(1, {ads})) == 2000 ? ({text}) : error"


def test_remembered_values_keep_what_depends_on_a_cycle_apart():
    # B evaluated on its own reads A, which reads B back (a cycle): UNDEFINED + 1; but
    # A evaluated on its own is B's value, 'A + 1' with A cycling: not remembered as such
    ad = ClassAd({"A": parse("B"), "B": parse("A + 1"), "C": parse("B + B"), "N": parse("isUndefined(A)")})
    for text, expected in (("isUndefined(B)", True), ("isUndefined(C)", True), ("N", True),
                           ("isUndefined(A) && isUndefined(B) && N", True)):
        assert parse(text).eval(ad) is expected
        assert parse(long(text)).eval(ad) is expected, text
    # read inside A, B meets the cycle (UNDEFINED); read on its own it is A's value, 1
    ad = ClassAd({"A": parse("isUndefined(B) ? 1 : 2"), "B": parse("A")})
    assert parse("A + B").eval(ad) == 2 and parse(long("A + B")).eval(ad) == 2
    # nested ads made twice are two ads: each its own values
    assert parse(long("[a = 1].a + [a = 2].a")).eval() == 3
    assert parse(long("{[a = 1], [a = 2], [a = 3]}.a")).eval() == [1, 2, 3]
    assert parse(long("[a = x; x = 1].a + [a = x; x = 2].a")).eval() == 3


def test_remembered_values_follow_the_ad_and_the_target():
    job = ClassAd({"Want": parse("TARGET.Memory * 2"), "Requirements": parse("Want > 100 && Want < 1000")})
    assert job.eval("Requirements", {"Memory": 100}) is True
    assert job.eval("Requirements", {"Memory": 10}) is False
    # Want of each ad, each against the other, in one evaluation
    a = ClassAd({"Memory": 1, "Want": parse("TARGET.Memory * 2")})
    b = ClassAd({"Memory": 10, "Want": parse("TARGET.Memory * 3")})
    for text in ("Want + TARGET.Want + Want + TARGET.Want", long("Want + TARGET.Want + Want + TARGET.Want")):
        assert parse(text).eval(a, b) == 2 * (20 + 3)
    # random() is drawn again at each read
    ad = ClassAd({"R": parse("random(1000000)")})
    assert parse(long("R != R || R != R || R != R")).eval(ad) is True


def test_strcat_doubling_is_error_and_small_strings_are_not():
    ad = doubling('"' + "x" * 1024 + '"', "strcat({prev}, {prev})")
    ad["Requirements"] = parse("size(A40) > 0")
    value, took = timed(lambda: ad.eval("Requirements"))
    assert value is ERROR and took < QUICK
    assert parse("size(A11)").eval(ad) == 1024 * 2 ** 11         # 2 Mi: the longest
    assert parse("size(A12)").eval(ad) is ERROR
    assert parse("isError(A12)").eval(ad) is True                  # (that call only)


@pytest.mark.parametrize("text", [
    "join(A11, {A11, A11})", 'join("", A11, "x")', "string({[a = A11], [a = A11]}.a)",
    'replaceAll("x", A11, "yy")', 'replace("x", A11, A11)', 'regexps("(x+)", A11, "\\\\1\\\\1", "g")',
    "listToArgs({A11, A11})", 'mergeEnvironment(strcat("A=", A10), strcat("B=", A10), strcat("C=", A10))',
])
def test_strings_longer_than_the_limit_are_error(text):
    ad = doubling('"' + "x" * 1024 + '"', "strcat({prev}, {prev})", count=11)
    assert len(ad.eval("A11")) == MAX_STRING
    value, took = timed(lambda: parse(text).eval(ad))
    assert value is ERROR and took < QUICK
    small = parse(text.replace("A11", "A5").replace("A10", "A4")).eval(ad)   # (the same, shorter)
    assert type(small) is str and len(small) >= 3 * 2 ** 10


def test_lists_holding_themselves_many_times_are_error_when_walked():
    ad = doubling("{1, 2}", "{{{prev}, {prev}, {prev}, {prev}}}", count=30)
    for text in ("size(string(A30.x))", "size(A30.x)", "A30 =?= A30", "size(join(A30.x))"):
        value, took = timed(lambda: parse(text).eval(ad))
        assert value is ERROR and took < QUICK, text
    assert parse("size(A30)").eval(ad) == 4        # what does not walk it is no cost


@pytest.mark.parametrize("text", [
    REDOS,
    'regexps("^(a|aa)*$", "' + "a" * 100 + 'b", "x")',
    'replace("(a|aa)*c", "' + "a" * 60 + '", "x")',
    'replaceAll("(a|aa)*c", "' + "a" * 60 + '", "x")',
    'regexpMember("^(a|aa)*$", {"' + "a" * 100 + 'b"})',
    'stringList_regexpMember("^(a|aa)*$", "b, ' + "a" * 100 + 'b")',
    "ifThenElse(" + REDOS + ", 1, 2)",
    "isError(" + REDOS + ")",               # the evaluation is over its budget: ERROR
    "size(evalInEachContext(" + REDOS + ", {[], [], [], [], []}))",
])
def test_backtracking_patterns_are_error_quickly(text):
    value, took = timed(lambda: parse(text).eval())
    assert value is ERROR and took < QUICK


def test_timed_matching_gives_back_an_armed_timer_and_the_handler():
    fired = []
    old = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 1.5)
        assert parse(REDOS).eval() is ERROR
        assert parse('regexp("^slot[0-9]+@", "slot12@host")').eval() is True
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert fired == [] and 0 < left < 1.5
        deadline = time.monotonic() + 5
        while not fired and time.monotonic() < deadline:
            signal.pause() if hasattr(signal, "pause") else time.sleep(0.01)
        assert fired == [1]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_ordinary_patterns_keep_working_on_long_targets():
    ad = ClassAd({"Long": "slot1@host," * 50000})
    cases = {
        'regexp("^slot[0-9]+@", Long)': True,
        'regexp("host,$", Long)': True,
        'regexp("nothere", Long)': False,
        'size(replaceAll("slot", Long, "s"))': len("s1@host,") * 50000,
        'regexps("^(slot)([0-9]+)@", Long, "\\\\2-\\\\1")': "1-slot",
        'stringList_regexpMember("^slot1@", Long)': True,
    }
    for text, expected in cases.items():
        value, took = timed(lambda: parse(text).eval(ad))
        assert value == expected and took < QUICK, text


def test_matching_outside_the_main_thread_is_not_timed_but_works():
    out = []
    thread = threading.Thread(target=lambda: out.append(parse('regexp("b+", "abbbc")').eval()))
    thread.start()
    thread.join()
    assert out == [True]


def test_many_steps_are_error_and_a_budget_is_per_evaluation():
    # 3 nested loops of 100 elements each: a million evaluations of the innermost
    ad = ClassAd({"L": parse("{" + ",".join(["[]"] * 100) + "}")})
    text = "size(evalInEachContext(evalInEachContext(evalInEachContext(1, L), L), L))"
    value, took = timed(lambda: parse(text).eval(ad))
    assert value is ERROR and took < QUICK
    two = "size(evalInEachContext(evalInEachContext(1, L), L))"
    for _ in range(3):                     # each evaluation has its own budget
        assert parse(two).eval(ad) == 100


def test_ordinary_evaluation_is_not_slowed():
    job = ClassAd({"RequestMemory": 1024, "Requirements": parse(
        'TARGET.Memory >= RequestMemory && regexp("^slot", TARGET.Name) && TARGET.Cpus > 0')})
    machine = ClassAd({"Name": "slot1@h", "Memory": 4096, "Cpus": 4})
    began = time.monotonic()
    for _ in range(2000):
        assert job.eval("Requirements", machine) is True
    assert time.monotonic() - began < 2.0      # about 20 ms; 2 s only on a very busy machine


def test_evaluations_over_the_budget_are_counted_apart_from_other_errors():
    from gridtools.classad.budget import over_budget
    before = over_budget()
    assert parse("1/0").eval() is ERROR and parse("size(1)").eval() is ERROR
    assert over_budget() == before
    assert ClassAd({"R": parse(REDOS)}).eval("R") is ERROR
    assert parse(REDOS).eval() is ERROR
    assert over_budget() == before + 2


def test_long_patterns_cost_steps_to_compile():
    ad = doubling('"(a|b)"', "strcat({prev}, {prev})", count=19)      # a pattern of 2.6 Mi characters
    value, took = timed(lambda: parse("regexp(A19, A0)").eval(ad))
    assert value is ERROR and took < QUICK
    assert parse(f'regexp(A6, "{"ab" * 32}")').eval(ad) is True                # 64 groups
    assert parse("regexp(A6, strcat(A0, A0))").eval(ad) is False
    assert parse('regexp(A3, "abababab")').eval(ad) is True


def test_eval_of_a_built_text_is_charged_before_it_is_parsed_and_not_kept():
    """eval() of a megabyte text an expression built is ERROR at once (parsing it would
    take seconds and hundreds of megabytes); a modest one is parsed, and a long text is
    not kept in the parser's cache."""
    from gridtools.classad import parser
    ad = doubling('"' + "1," * 500 + '"', "strcat({prev}, {prev})", count=10)     # A10: 1 MiB
    value, took = timed(lambda: parse('size(eval(strcat("{", A10, "1}")))').eval(ad))
    assert value is ERROR and took < QUICK
    assert parse('size(eval(strcat("{", A3, "1}")))').eval(ad) == 4001
    assert not any(len(text) > parser.KEPT_CHARS for text in parser._PARSED)
    assert parse('size(eval(strcat("{", A5, "2}")))').eval(ad) == 16001       # 32 KiB: kept
    assert any(len(text) > 32000 for text in parser._PARSED)


def test_format_time_builds_no_string_beyond_the_limit():
    ad = doubling('"' + "%c" * 512 + '"', "strcat({prev}, {prev})", count=10)
    value, took = timed(lambda: parse("formatTime(0, A10)").eval(ad))
    assert value is ERROR and took < QUICK
    assert parse('size(formatTime(0, "%Y"))').eval(ad) == 4

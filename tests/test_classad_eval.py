"""Expression evaluation: literals, every operator with HTCondor's
precedence, associativity and three-valued logic, UNDEFINED and ERROR in
every operand position, real printing and string case rules.

Each case is (expression, expected value in canonical spelling), so the
expected type is checked too: "1" is an integer, "1.0" a real, "true" a
boolean.
"""

import pytest

from gridtools.classad import ERROR, UNDEFINED, ClassAd, parse, unparse


def value_of(text, my=None, target=None):
    return unparse(parse(text).eval(my, target))


def check(cases):
    return pytest.mark.parametrize("text,expected", cases, ids=[c[0] for c in cases])


# ------------------------------------------------------------------ literals

LITERALS = [
    ("0", "0"), ("42", "42"), 
    ("3.25", '3.250000000000000E+00'), (".5", '5.000000000000000E-01'), ("1e3", '1.000000000000000E+03'), ("1E3", '1.000000000000000E+03'), ("2.5e-3", '2.500000000000000E-03'),
    ("1.5e10", '1.500000000000000E+10'), ("1e20", '1.000000000000000E+20'), ("1.5E+20", '1.500000000000000E+20'), ("1.5e-7", '1.500000000000000E-07'),
    ("123456789012345678.0", "1.234567890123457E+17"), ("1e15", '1.000000000000000E+15'),
    ("1e16", '1.000000000000000E+16'), ("0.0", "0.0"), ("1.0", '1.000000000000000E+00'), ("100.0", '1.000000000000000E+02'),
    ("true", "true"), ("TRUE", "true"), ("False", "false"), ("undefined", "undefined"),
    ("UNDEFINED", "undefined"), ("error", "error"), ("Error", "error"),
    ('"abc"', '"abc"'), ('""', '""'), (r'"a\"b"', r'"a\"b"'), (r'"tab\there"', r'"tab\there"'),
    (r'"new\nline"', r'"new\nline"'), (r'"back\\slash"', r'"back\\slash"'), (r'"\101\102"', '"AB"'),
    (r'"it\'s"', '"it\'s"'), ('"con" "cat"', '"concat"'), ("{}", "{  }"), ("{1}", "{ 1 }"),
    ('{1, "a", {2}}', '{ 1,"a",{ 2 } }'), ("{1 + 1, 2 * 2}", "{ 2,4 }"),
    ("[a = 1; b = a + 1]", "[ a = 1; b = a + 1 ]"), ("[]", "[  ]"),
    ("9223372036854775807", "9223372036854775807"),
    ("9223372036854775807 + 1", "-9223372036854775808"),
    ("99999999999999999999", '0'),
]


@check(LITERALS)
def test_literals(text, expected):
    assert value_of(text) == expected


def test_python_types_of_values():
    assert parse("1").eval() == 1 and type(parse("1").eval()) is int
    assert type(parse("1.0").eval()) is float
    assert parse("true").eval() is True
    assert parse('"x"').eval() == "x"
    assert parse("{1, 2}").eval() == [1, 2]
    assert parse("undefined").eval() is UNDEFINED
    assert parse("error").eval() is ERROR
    nested = parse("[a = 1; b = a + 1]").eval()
    assert isinstance(nested, ClassAd) and nested.eval("b") == 2


# ------------------------------------------------------ arithmetic operators

ARITHMETIC = [
    ("1 + 2", "3"), ("1 - 2", "-1"), ("3 * 4", "12"), ("7 / 2", "3"), ("-7 / 2", "-3"),
    ("7 / -2", "-3"), ("7 % 3", "1"), ("-7 % 3", "-1"), ("7 % -3", "1"), ("6 / 3", "2"),
    ("1.5 + 1", '2.500000000000000E+00'), ("1 + 1.5", '2.500000000000000E+00'), ("2 * 1.5", '3.000000000000000E+00'), ("7.0 / 2", '3.500000000000000E+00'),
    ("7 / 2.0", '3.500000000000000E+00'), ("1.0 - 1", "0.0"), ("0.1 + 0.2", '3.000000000000000E-01'), ("1 / 3.0", '3.333333333333333E-01'),
    ("2.0 / 3", '6.666666666666666E-01'), ("1 / 0", "error"), ("1 % 0", "error"),
    ("1.0 / 0", "error"), ("1 / 0.0", "error"), ("0.0 / 0.0", 'real("NaN")'), ("5.5 % 2", "error"),
    ("5 % 2.0", "error"), ("1e308 * 10", "error"), ('"a" + "b"', "error"), ('"a" + 1', "error"),
    ('1 - "a"', "error"), ('2 * "3"', "error"), ('"6" / 2', "error"), ("{1} + 1", "error"),
    ("[a=1] * 2", "error"), ("true + 1", "2"), ("true + true", "2"), ("false * 5", "0"),
    ("true + 0.5", '1.500000000000000E+00'), ("10 / true", "10"), ("1 / false", "error"),
    ("-9223372036854775807 - 2", "9223372036854775807"), ("9223372036854775807 * 2", "-2"),
]


@check(ARITHMETIC)
def test_arithmetic(text, expected):
    assert value_of(text) == expected


# ------------------------------------------------------ comparison operators

COMPARISON = [
    ("1 < 2", "true"), ("2 < 1", "false"), ("2 <= 2", "true"), ("3 <= 2", "false"),
    ("3 > 2", "true"), ("2 > 3", "false"), ("2 >= 2", "true"), ("1 >= 2", "false"),
    ("1 == 1", "true"), ("1 == 2", "false"), ("1 != 2", "true"), ("1 != 1", "false"),
    ("1 == 1.0", "true"), ("1.5 > 1", "true"), ("0.5 < 1", "true"), ("2 != 2.0", "false"),
    ("true == 1", "true"), ("false == 0", "true"), ("true == true", "true"),
    ("true > false", "true"), ("true < 2", "true"),
    ('"ABC" == "abc"', "true"), ('"abc" != "ABC"', "false"), ('"abc" == "abd"', "false"),
    ('"a" < "B"', "true"), ('"B" < "a"', "false"), ('"abc" <= "ABC"', "true"),
    ('"b" >= "A"', "true"), ('"Zed" > "apple"', "true"),
    ('10 == "ABC"', "error"), ('"10" == 10', "error"), ('1 < "2"', "error"),
    ('"a" == true', "error"), ("{1} == {1}", "error"), ("[a=1] == [a=1]", "error"),
    ("{1} < 2", "error"),
]


@check(COMPARISON)
def test_comparison(text, expected):
    assert value_of(text) == expected


META = [
    ("10 =?= 10", "true"), ("10 =?= 5", "false"), ('10 =?= "ABC"', "false"),
    ('"ABC" =?= "abc"', "false"), ('"abc" =?= "abc"', "true"), ("10 =?= undefined", "false"),
    ("undefined =?= undefined", "true"), ("error =?= error", "true"), ("error =?= undefined", "false"),
    ("1 =?= 1.0", "false"), ("true =?= 1", "false"), ("true =?= true", "true"),
    ("{1, 2} =?= {1, 2}", 'error'), ("{1, 2} =?= {1, 3}", 'error'),
    ("[a = 1] =?= [A = 1]", 'error'), ("[a = 1] =?= [a = 2]", 'error'),
    ("10 =!= 10", "false"), ("10 =!= 5", "true"), ('10 =!= "ABC"', "true"),
    ('"ABC" =!= "abc"', "true"), ("10 =!= undefined", "true"), ("undefined =!= undefined", "false"),
    ("error =!= error", "false"), ("1 =!= 1.0", "true"),
    ("x is undefined", "true"), ("x isnt undefined", "false"), ("3 IS 3", "true"),
    ("3 ISNT 3", "false"), ('"a" is "A"', "false"), ("undefined is error", "false"),
]


@check(META)
def test_meta_equality(text, expected):
    assert value_of(text) == expected


# --------------------------------------------------------- logical operators

LOGIC_VALUES = ["true", "false", "undefined", "error"]
AND_TABLE = {
    ("true", "true"): "true", ("true", "false"): "false", ("true", "undefined"): "undefined",
    ("true", "error"): "error", ("false", "true"): "false", ("false", "false"): "false",
    ("false", "undefined"): "false", ("false", "error"): "false",
    ("undefined", "true"): "undefined", ("undefined", "false"): "false",
    ("undefined", "undefined"): "undefined", ("undefined", "error"): "error",
    ("error", "true"): "error", ("error", "false"): "error", ("error", "undefined"): "error",
    ("error", "error"): "error",
}
OR_TABLE = {
    ("true", "true"): "true", ("true", "false"): "true", ("true", "undefined"): "true",
    ("true", "error"): "true", ("false", "true"): "true", ("false", "false"): "false",
    ("false", "undefined"): "undefined", ("false", "error"): "error",
    ("undefined", "true"): "true", ("undefined", "false"): "undefined",
    ("undefined", "undefined"): "undefined", ("undefined", "error"): "error",
    ("error", "true"): "error", ("error", "false"): "error", ("error", "undefined"): "error",
    ("error", "error"): "error",
}
LOGIC = ([(f"{a} && {b}", AND_TABLE[a, b]) for a in LOGIC_VALUES for b in LOGIC_VALUES]
         + [(f"{a} || {b}", OR_TABLE[a, b]) for a in LOGIC_VALUES for b in LOGIC_VALUES]
         + [("1 && 2", "true"), ("0 && 1", "false"), ("0.0 || 0", "false"), ("2.5 || false", "true"),
            ('"yes" && true', "error"), ('true && "yes"', "error"), ('false && "yes"', "false"),
            ('true || "yes"', "true"), ('undefined && "x"', "error"), ("{1} || false", "error"),
            ("!true", "false"), ("!false", "true"), ("!undefined", "undefined"), ("!error", "error"),
            ("!0", "true"), ("!3", "false"), ("!0.0", "true"), ('!"a"', "error"), ("!{1}", "error")])


@check(LOGIC)
def test_logic(text, expected):
    assert value_of(text) == expected


def test_seed_three_valued_examples():
    assert parse("UNDEFINED && FALSE").eval() is False
    assert parse("UNDEFINED && TRUE").eval() is UNDEFINED
    assert parse("FALSE || UNDEFINED").eval() is UNDEFINED
    assert parse("TRUE || ERROR").eval() is True
    assert parse("10 == UNDEFINED").eval() is UNDEFINED
    assert parse("10 =?= UNDEFINED").eval() is False
    assert parse("UNDEFINED =?= UNDEFINED").eval() is True
    assert parse("UNDEFINED == UNDEFINED").eval() is UNDEFINED


def test_logic_short_circuits_the_right_operand():
    # The right side would be a cycle (ERROR) if it were evaluated.
    ad = ClassAd({"a": parse("false && b"), "b": parse("a"), "c": parse("true || d"),
                  "d": parse("c")})
    assert ad.eval("a") is False
    assert ad.eval("c") is True


# ------------------------------------------------------------------- unary

UNARY = [
    ("-5", "-5"), ("- -5", "5"), ("-2.5", '-2.500000000000000E+00'), ("+5", "5"), ("+2.5", '2.500000000000000E+00'),
    ("-true", "error"), ('-"a"', "error"), ("+true", "error"), ('+"a"', "error"),
    ("-undefined", "undefined"), ("-error", "error"), ("+undefined", "undefined"),
    ("+error", "error"), ("~0", "-1"), ("~5", "-6"), ("~-1", "0"), ("~1.5", "error"),
    ("~true", "error"), ("~undefined", "undefined"), ("~error", "error"), ("-{1}", "error"),
]


@check(UNARY)
def test_unary(text, expected):
    assert value_of(text) == expected


# ----------------------------------------------------------------- bitwise

BITWISE = [
    ("12 & 10", "8"), ("12 | 10", "14"), ("12 ^ 10", "6"), ("1 << 4", "16"), ("256 >> 4", "16"),
    ("-16 >> 2", "-4"), ("-16 >>> 60", "15"), ("16 >>> 2", "4"), ("1 << 63", "-9223372036854775808"),
    ("1 << 64", '1'), ("1 << -1", '-9223372036854775808'), ("1 >> -1", '0'), ("1.0 & 1", "error"),
    ("true | 1", "error"), ('"a" ^ 1', "error"), ("-1 & 255", "255"),
]


@check(BITWISE)
def test_bitwise(text, expected):
    assert value_of(text) == expected


# --------------------------------------- UNDEFINED and ERROR in every position

STRICT_BINARY = ["+", "-", "*", "/", "%", "<", "<=", ">", ">=", "==", "!=",
                 "&", "|", "^", "<<", ">>", ">>>"]
STRICT = []
for _op in STRICT_BINARY:
    STRICT += [
        (f"undefined {_op} 1", "undefined"), (f"1 {_op} undefined", "undefined"),
        (f"error {_op} 1", "error"), (f"1 {_op} error", "error"),
        (f"undefined {_op} error", "error"), (f"error {_op} undefined", "error"),
        (f'undefined {_op} "s"', "undefined"), (f"error {_op} error", "error"),
    ]


@check(STRICT)
def test_strict_operators_propagate(text, expected):
    assert value_of(text) == expected


# ------------------------------------------------------------- conditional

CONDITIONAL = [
    ("true ? 1 : 2", "1"), ("false ? 1 : 2", "2"), ("undefined ? 1 : 2", "undefined"),
    ("error ? 1 : 2", "error"), ('"s" ? 1 : 2', "error"), ("3 ? 1 : 2", "1"), ("0 ? 1 : 2", "2"),
    ("0.0 ? 1 : 2", "2"), ("true ? undefined : 2", "undefined"), ("false ? 1 : error", "error"),
    ("true ? 1 : 1 / 0", "1"), ("{1} ? 1 : 2", "error"),
    ("x ?: 5", "5"), ("3 ?: 5", "3"), ("error ?: 5", "error"), ("false ?: 5", "false"),
    ("undefined ?: undefined", "undefined"),
    ("false ? 1 : true ? 2 : 3", "2"), ("false ? 1 : false ? 2 : 3", "3"),
    ("true ? false ? 1 : 2 : 3", "2"),
]


@check(CONDITIONAL)
def test_conditional(text, expected):
    assert value_of(text) == expected


# ---------------------------------------- precedence and associativity

PRECEDENCE = [
    ("1 + 2 * 3", "7"), ("(1 + 2) * 3", "9"), ("2 * 3 % 4", "2"), ("2 * (3 % 4)", "6"),
    ("10 - 4 - 3", "3"), ("10 - (4 - 3)", "9"), ("100 / 10 / 5", "2"), ("2 * 3 / 4", "1"),
    ("-2 * 3", "-6"), ("-(2 + 3)", "-5"), ("1 + 2 < 4", "true"), ("1 < 2 == true", "true"),
    ("2 > 1 == 3 > 2", "true"), ("1 << 2 + 1", "8"), ("1 + 1 << 2", "8"), ("16 >> 1 < 9", "true"),
    ("1 | 2 ^ 3 & 4", "3"), ("(1 | 2) ^ 3", "0"), ("6 & 3 == 3", "error"), ("(6 & 3) == 2", "true"),
    ("1 == 1 & 1", "error"), ("true || false && false", "true"), ("(true || false) && false", "false"),
    ("!true || true", "true"), ("!(true || true)", "false"), ("false && false || true", "true"),
    ("1 < 2 && 2 < 3", "true"), ("1 + 1 == 2 && 2 * 2 == 4", "true"),
    ("true ? 1 : 0 + 10", "1"), ("(true ? 1 : 0) + 10", "11"), ("1 == 1 ? 7 : 8", "7"),
    ("x || true ? 1 : 2", "1"), ("3 - -2", "5"), ("!!true", "true"), ("-~1", "2"),
    ("5+5*5+5", "35"), ("((5+5)*(5+5))", "100"), ("2 * 3 == 6 =?= true", "true"),
    ("1 - 1 =?= 0", "true"), ("{1, 2, 3}[1] + 1", "3"), ("[a = 2].a * 3", "6"),
]


@check(PRECEDENCE)
def test_precedence_and_associativity(text, expected):
    assert value_of(text) == expected


# ------------------------------------------------------ attribute references

AD = ClassAd({"Memory": 2048, "Owner": "Alice", "Load": 0.25, "L": [10, 20, 30],
              "Sub": {"Inner": 5, "Up": parse("Memory")}, "Name": "m1"})
OTHER = ClassAd({"Memory": 512, "Request": 1024, "OnlyThere": "yes", "Owner": "bob"})

REFERENCES = [
    ("Memory", "2048"), ("memory", "2048"), ("MEMORY * 2", "4096"), ("MY.Memory", "2048"),
    ("my.memory", "2048"), ("TARGET.Memory", "512"), ("target.MEMORY", "512"),
    ("OnlyThere", '"yes"'), ("MY.OnlyThere", "undefined"), ("TARGET.Load", "undefined"),
    ("Missing", "undefined"), ("TARGET.Missing", "undefined"), ("Request <= Memory", "true"),
    ("TARGET.Request > TARGET.Memory", "true"), ('Owner == "alice"', "true"),
    ('Owner =?= "alice"', "false"), ("L[0]", "10"), ("L[2]", "30"), ("L[3]", "error"),
    ("L[-1]", "error"), ('L["0"]', "error"), ("L[undefined]", "undefined"), ("Sub.Inner", "5"),
    ('Sub["inner"]', "5"), ("Sub.inner + 1", "6"), ("Sub.Missing", "undefined"),
    ('Sub["missing"]', "undefined"), ("Sub[0]", "error"), ("Sub.Up", "2048"), ("Name.x", "error"),
    ("Missing.x", "undefined"), ("Missing[0]", "undefined"), ("error[0]", "error"),
    ("{[a = 1], [a = 2]}.a", "{ 1,2 }"), ("[x = 1; y = [z = x + 1]].y.z", "2"),
    ('[Owner = "nested"].Owner', '"nested"'),
]


@check(REFERENCES)
def test_attribute_references(text, expected):
    assert value_of(text, AD, OTHER) == expected


def test_attribute_found_in_target_is_evaluated_there():
    job = ClassAd({"Owner": "alice", "Want": parse("TARGET.Memory")})
    machine = ClassAd({"Memory": 4096, "Check": parse("Want > 100"), "Who": parse("TARGET.Owner")})
    assert machine.eval("Check", job) is True  # Want comes from the job, Memory from the machine
    assert machine.eval("Who", job) == "alice"


def test_circular_references_are_undefined():
    ad = ClassAd({"a": parse("b + 1"), "b": parse("a + 1"), "c": parse("c"),
                  "d": parse("ifThenElse(true, d, 1)")})
    assert ad.eval("a") is UNDEFINED
    assert ad.eval("c") is UNDEFINED
    assert ad.eval("d") is UNDEFINED


def test_current_time_is_built_in():
    assert parse("CurrentTime > 1000000000").eval() is True
    assert ClassAd({"CurrentTime": 5}).eval("CurrentTime") == 5


def test_unknown_function_is_error_not_crash():
    assert parse("noSuchFunction(1, 2)").eval() is ERROR
    assert parse("noSuchFunction()").eval() is ERROR
    assert parse("strcat()").eval() == ""


def test_deep_reference_chains_give_error_not_crash():
    ad = ClassAd({f"a{i}": parse(f"a{i + 1} + 1") for i in range(2000)})
    ad["a2000"] = 0
    assert ad.eval("a0") in (2000, ERROR)


# ---------------------------------------------------------- real printing

def test_reals_print_like_htcondor():
    assert unparse(1.0) == "1.000000000000000E+00"
    assert unparse(0.5) == "5.000000000000000E-01"
    assert unparse(-2.0) == "-2.000000000000000E+00"
    assert unparse(0.0) == "0.0"
    assert unparse(-0.0) == "-0.0"
    assert unparse(float("inf")) == 'real("INF")'
    assert unparse(float("-inf")) == 'real("-INF")'
    assert unparse(float("nan")) == 'real("NaN")'


def test_long_form_prints_reals_as_condor_q_l():
    ad = ClassAd({"a": 1.0, "b": 1.5e20, "c": parse("x =?= 2.5")})
    assert str(ad) == "a = 1.0\nb = 1.5E+20\nc = x =?= 2.5\n"


def test_strings_print_with_escapes():
    assert unparse('say "hi"\n') == r'"say \"hi\"\n"'
    assert unparse("back\\slash") == r'"back\\slash"'
    assert unparse("\x01") == r'"\001"'
    assert parse(unparse("a\tb\x07\"'\\")).eval() == "a\tb\x07\"'\\"

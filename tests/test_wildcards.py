"""The shared wildcard match: fnmatch's answers, fnmatch (and re) loaded only when a
pattern has wildcards."""

import fnmatch
import random

from conftest import run_bare
from gridtools import wildcards


def test_matches_as_fnmatch_does():
    rng = random.Random(4)
    names = ["all.q", "a", "", "all.q@host", "x*y", "[a]", "b\n", "ALL.Q"]
    patterns = ["*", "all.q", "a", "", "all.*", "?", "[ab]", "x*y", "[a]", "b\n", "All.Q"]
    patterns += ["".join(rng.choice("a*?[]l.qA") for _ in range(rng.randint(0, 4))) for _ in range(300)]
    for name in names:
        for pattern in patterns:
            assert wildcards.match(name, pattern) == fnmatch.fnmatchcase(name, pattern), (name, pattern)
            assert wildcards.match(name, pattern, fold=True) == \
                fnmatch.fnmatchcase(name.lower(), pattern.lower()), (name, pattern)


def test_fnmatch_is_loaded_only_for_a_wildcard_pattern():
    code = ("from gridtools import wildcards\n"
            "first = wildcards.match('all.q', '*') and wildcards.match('all.q', 'all.q')\n"
            "plain = 'fnmatch' in sys.modules\n"
            "print(first, plain, wildcards.match('all.q', 'a*'), 'fnmatch' in sys.modules)")
    out = run_bare(code)
    assert out.stdout == "True False True True\n", out.stderr

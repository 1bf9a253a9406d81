"""Job ads from submit descriptions equal HTCondor's own.

Each tests/data/condor_submit/NAME.sub has NAME.ads: the ads that HTCondor
24's submit code made for it (tests/condor_oracle.py). The committed ads
are always compared; a live comparison runs where the oracle is installed.
"""

import os

import pytest

import condor_oracle as oracle
from gridtools.classad import parse
from gridtools.formats.condor.fsview import LocalFiles
from gridtools.formats.condor.moreattrs import old_strings
from gridtools.formats.condor.jobad import SUBMIT_METHOD_PYTHON, SubmitContext
from gridtools.formats.condor.submit import parse_submit

# Attributes HTCondor's submit code leaves for the schedd to fill in.
SCHEDD_FILLS = {"owner"}


def read_ads(text):
    """[{lowered name: (name, normalized value text)}] from long-form ads (HTCondor prints
    them in the old ClassAd syntax, where a backslash in a string is itself)."""
    ads = []
    for block in text.strip().split("\n\n"):
        ad = {}
        for line in block.splitlines():
            name, _, value = line.partition(" = ")
            ad[name.lower()] = (name, parse(old_strings(value)).unparse())
        ads.append(ad)
    return ads


def our_ads(name, root, first):
    with open(os.path.join(oracle.CASES, name + ".sub")) as handle:
        desc = parse_submit(handle.read())
    ctx = SubmitContext(cwd=root, owner="root", now=oracle.QDATE, files=LocalFiles(root),
                        environ=dict(oracle.ENVIRON), filesystem_domain="@HOST@",
                        condor_version=first["condorversion"][1].strip('"'),
                        condor_platform=first["condorplatform"][1].strip('"'),
                        submit_method=SUBMIT_METHOD_PYTHON)
    # both sides go through the same parser, so a literal -3 and the text "-3" compare equal
    return [{name.lower(): (name, parse(oracle.placeholders(ad[name].unparse(), root)).unparse())
             for name in ad} for ad in desc.job_ads(oracle.CLUSTER, ctx)]


def differences(expected, got):
    out = []
    if len(expected) != len(got):
        return [f"{len(got)} ads, expected {len(expected)}"]
    for i, (want, have) in enumerate(zip(expected, got)):
        for key in sorted(set(want) | set(have) - SCHEDD_FILLS):
            if key in SCHEDD_FILLS:
                continue
            w, h = want.get(key), have.get(key)
            if (w and w[1]) != (h and h[1]):
                out.append(f"ad {i}: {key}: expected {w and w[1]}, got {h and h[1]}")
    return out


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    path = os.path.realpath(str(tmp_path_factory.mktemp("submit")))
    oracle.make_fixture(path)
    return path


@pytest.mark.parametrize("name", oracle.cases())
def test_ads_equal_committed_oracle_ads(name, root):
    with open(os.path.join(oracle.CASES, name + ".ads")) as handle:
        expected = read_ads(handle.read())
    got = our_ads(name, root, expected[0])
    assert differences(expected, got) == []
    assert all(ad["owner"][1] == '"root"' for ad in got)


@pytest.fixture(scope="module")
def live():
    if not oracle.available():
        pytest.skip("the htcondor package (version 1 bindings) is not installed")


#: attributes that name the oracle's own build (our ads take them from the committed ads)
BUILD = {"condorversion", "condorplatform"}


def _without_build(ads):
    return [{key: value for key, value in ad.items() if key not in BUILD} for ad in ads]


@pytest.mark.parametrize("name", oracle.cases())
def test_committed_ads_are_what_the_oracle_says(name, root, live):
    """Any HTCondor 24 release installed says what the committed ads say (but its version)."""
    with open(os.path.join(oracle.CASES, name + ".sub")) as handle:
        text = oracle.oracle_text(handle.read(), root)
    with open(os.path.join(oracle.CASES, name + ".ads")) as handle:
        assert _without_build(read_ads(text)) == _without_build(read_ads(handle.read()))

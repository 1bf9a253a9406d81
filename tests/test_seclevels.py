"""HTCondor's security levels (seed 002): ALLOW_* / DENY_* lists, patterns, defaults."""

import pytest

from gridtools.seclevels import Identity, Level, entries, manager_defaults, split_entry, verify

ALICE = Identity("alice", "cs.wisc.edu", ("puffin.cs.wisc.edu", "puffin", "localhost"), ("127.0.0.1",))
ABUSER = Identity("abuser", "cs.wisc.edu", ("bird.cs.wisc.edu",), ("192.168.12.7",))


def getter(**config):
    return lambda name: config.get(name)


@pytest.mark.parametrize("entry, expected", [
    ("adesmet@cs.wisc.edu/puffin.cs.wisc.edu", ("adesmet@cs.wisc.edu", "puffin.cs.wisc.edu")),
    ("*@wisc.edu/*.wisc.edu", ("*@wisc.edu", "*.wisc.edu")),
    ("*/*.wisc.edu", ("*", "*.wisc.edu")),
    ("abuser@*.wisc.edu", ("abuser@*.wisc.edu", "*")),          # a user from anywhere
    ("*.cs.wisc.edu", ("*", "*.cs.wisc.edu")),                  # a host, any user
    ("192.168.12.1/255.255.192.0", ("*", "192.168.12.1/255.255.192.0")),
    ("joe@cs.wisc.edu/192.0.2.0/24", ("joe@cs.wisc.edu", "192.0.2.0/24")),
])
def test_entries_split_as_htcondor_splits_them(entry, expected):
    assert split_entry(entry) == expected


def test_lists_are_separated_by_commas_or_blanks():
    assert entries("a@x/h1, b@y/h2  c@z/h3") == [("a@x", "h1"), ("b@y", "h2"), ("c@z", "h3")]


def test_nothing_configured_allows_everybody_but_config_allows_nobody():
    assert verify(getter(), Level.READ, ALICE).allowed
    assert verify(getter(), Level.WRITE, ABUSER).allowed
    denied = verify(getter(), Level.CONFIG, ALICE)
    assert not denied.allowed and "denies all access" in denied.reason


def test_an_allow_list_lets_in_only_whom_it_names():
    get = getter(ALLOW_WRITE="*@cs.wisc.edu/*.cs.wisc.edu")
    assert verify(get, Level.WRITE, ALICE).allowed
    outsider = Identity("eve", "evil.org", ("evil.org",))
    refused = verify(get, Level.WRITE, outsider)
    assert not refused.allowed
    assert refused.reason.startswith("WRITE authorization policy contains no matching ALLOW entry")


def test_deny_wins_over_allow():
    get = getter(ALLOW_WRITE="*@cs.wisc.edu/*", DENY_WRITE="abuser@*/*")
    assert verify(get, Level.WRITE, ALICE).allowed
    refused = verify(get, Level.WRITE, ABUSER)
    assert not refused.allowed and "DENY entry abuser@*/*" in refused.reason


def test_a_deny_without_an_allow_allows_everybody_else():
    """The seed's warning: DENY_* without a matching ALLOW_* defaults to ALLOW."""
    get = getter(DENY_WRITE="abuser@*/*")
    assert not verify(get, Level.WRITE, ABUSER).allowed
    assert verify(get, Level.WRITE, ALICE).allowed
    assert verify(get, Level.WRITE, ALICE).reason == "WRITE authorization policy does not deny, so allowing"


def test_higher_levels_imply_lower_ones():
    get = getter(ALLOW_READ="nobody@nowhere/*", ALLOW_WRITE="alice@cs.wisc.edu/*",
                 ALLOW_ADMINISTRATOR="abuser@cs.wisc.edu/*")
    read = verify(get, Level.READ, ALICE)
    assert read.allowed and read.reason.startswith("READ is implied by WRITE")
    assert verify(get, Level.READ, ABUSER).allowed           # ADMINISTRATOR -> WRITE -> READ
    assert not verify(get, Level.ADMINISTRATOR, ALICE).allowed


def test_a_daemons_own_list_replaces_the_general_one():
    get = getter(ALLOW_READ="*/*", ALLOW_READ_COLLECTOR="alice@*/*")
    assert verify(get, Level.READ, ABUSER).allowed
    assert not verify(get, Level.READ, ABUSER, "COLLECTOR").allowed
    assert verify(get, Level.READ, ALICE, "COLLECTOR").allowed


def test_hosts_by_wildcard_address_and_net_mask():
    assert verify(getter(ALLOW_WRITE="*/192.168.12.*"), Level.WRITE, ABUSER).allowed
    assert verify(getter(ALLOW_WRITE="*/192.168.12.1/255.255.192.0"), Level.WRITE, ABUSER).allowed
    assert verify(getter(ALLOW_WRITE="*/192.168.0.0/18"), Level.WRITE, ABUSER).allowed
    assert not verify(getter(ALLOW_WRITE="*/10.0.0.0/8"), Level.WRITE, ABUSER).allowed
    assert verify(getter(ALLOW_WRITE="*/{:local_ips:}"), Level.WRITE, ALICE).allowed


def test_old_host_lists_count_as_host_entries():
    assert not verify(getter(HOSTALLOW_WRITE="*.cs.wisc.edu"), Level.WRITE,
                      Identity("x", "y", ("evil.org",), ("10.1.1.1",))).allowed
    assert verify(getter(HOSTALLOW_WRITE="*.cs.wisc.edu"), Level.WRITE, ALICE).allowed
    assert not verify(getter(HOSTDENY_WRITE="bird.cs.wisc.edu"), Level.WRITE, ABUSER).allowed


def test_administrator_defaults_to_the_cells_managers():
    defaults = manager_defaults({"alice"})
    assert verify(getter(), Level.ADMINISTRATOR, ALICE, "NEGOTIATOR", defaults).allowed
    assert not verify(getter(), Level.ADMINISTRATOR, ABUSER, "NEGOTIATOR", defaults).allowed
    root = Identity("root", "cs.wisc.edu", ("puffin",))
    assert verify(getter(), Level.ADMINISTRATOR, root, "", defaults).allowed
    # a configured list replaces the default; a DENY alone does not open it to everybody
    assert verify(getter(ALLOW_ADMINISTRATOR="abuser@*/*"), Level.ADMINISTRATOR, ABUSER, "", defaults).allowed
    assert not verify(getter(DENY_ADMINISTRATOR="x@*/*"), Level.ADMINISTRATOR, ABUSER, "", defaults).allowed


def test_daemon_defaults_to_the_cells_managers_too():
    """condor_checkpoint's level: HTCondor's daemons act as its own account, here the managers'."""
    defaults = manager_defaults({"alice"})
    assert verify(getter(), Level.DAEMON, ALICE, "STARTD", defaults).allowed
    assert not verify(getter(), Level.DAEMON, ABUSER, "STARTD", defaults).allowed
    assert verify(getter(ALLOW_DAEMON="abuser@*/*"), Level.DAEMON, ABUSER, "STARTD", defaults).allowed
    # the default gives no one WRITE who had it not: with no ALLOW_WRITE everybody writes still
    assert verify(getter(), Level.WRITE, ABUSER, "SCHEDD", defaults).allowed


def test_the_seed_example_configuration():
    get = getter(ALLOW_READ="*", ALLOW_WRITE="*@wisc.edu/*.wisc.edu", DENY_WRITE="abuser@*.wisc.edu/*",
                 ALLOW_ADMINISTRATOR="admin@wisc.edu/*.wisc.edu")
    member = Identity("zmiller", "wisc.edu", ("bird.cs.wisc.edu",))
    abuser = Identity("abuser", "cs.wisc.edu", ("bird.cs.wisc.edu",))
    admin = Identity("admin", "wisc.edu", ("condor.wisc.edu",))
    assert verify(get, Level.READ, abuser).allowed
    assert verify(get, Level.WRITE, member).allowed
    assert not verify(get, Level.WRITE, abuser).allowed
    assert verify(get, Level.ADMINISTRATOR, admin).allowed and verify(get, Level.WRITE, admin).allowed
    assert not verify(get, Level.ADMINISTRATOR, member).allowed


#: the levels each level gives, itself included (seed 002: WRITE includes READ;
#: ADMINISTRATOR and DAEMON include READ and WRITE; NEGOTIATOR includes READ; HTCondor's
#: CONFIG implies READ)
GIVES = {Level.READ: {Level.READ}, Level.WRITE: {Level.WRITE, Level.READ},
         Level.ADMINISTRATOR: {Level.ADMINISTRATOR, Level.WRITE, Level.READ},
         Level.DAEMON: {Level.DAEMON, Level.WRITE, Level.READ},
         Level.NEGOTIATOR: {Level.NEGOTIATOR, Level.READ}, Level.CONFIG: {Level.CONFIG, Level.READ}}


@pytest.mark.parametrize("granted", list(GIVES), ids=lambda level: level.value)
@pytest.mark.parametrize("others", ["closed", "unset"])
def test_a_level_gives_the_levels_it_includes_transitively(granted, others):
    """alice is named only in ALLOW_<granted>; every other level is closed to her by an
    ALLOW naming someone else, or (``unset``) only READ is, the others have no list."""
    config = {f"ALLOW_{granted.value}": "alice@cs.wisc.edu/*"}
    for level in Level:
        if level is not granted and (others == "closed" or level is Level.READ):
            config[f"ALLOW_{level.value}"] = "nobody@nowhere/*"
    get = getter(**config)
    for level in Level:
        allowed = verify(get, level, ALICE).allowed
        if others == "unset" and level not in (Level.READ, Level.CONFIG) and f"ALLOW_{level.value}" not in config:
            assert allowed, level                        # no list: anybody
        else:
            assert allowed == (level in GIVES[granted]), level


def test_an_administrator_reads_without_any_allow_write():
    """ADMINISTRATOR -> WRITE -> READ holds though WRITE has no ALLOW list; an ALLOW_WRITE
    that does not name the administrator changes nothing."""
    get = getter(ALLOW_ADMINISTRATOR="alice@*/*", ALLOW_READ="nobody@*/*")
    read = verify(get, Level.READ, ALICE)
    assert read.allowed
    assert read.reason == ("READ is implied by WRITE; WRITE is implied by ADMINISTRATOR; ADMINISTRATOR "
                           "authorization policy allows alice@cs.wisc.edu (ALLOW entry alice@*/*)")
    assert not verify(get, Level.READ, ABUSER).allowed   # WRITE open to anybody gives nobody READ
    assert verify(get, Level.WRITE, ABUSER).reason == "WRITE authorization policy allows access by anyone"
    closed = getter(ALLOW_ADMINISTRATOR="alice@*/*", ALLOW_READ="nobody@*/*", ALLOW_WRITE="nobody@*/*")
    assert verify(closed, Level.READ, ALICE).allowed
    assert not verify(closed, Level.READ, ABUSER).allowed
    denied_write = getter(ALLOW_ADMINISTRATOR="alice@*/*", ALLOW_READ="nobody@*/*", DENY_WRITE="abuser@*/*")
    assert verify(denied_write, Level.READ, ALICE).allowed      # (a DENY alone: the seed's warning)
    assert not verify(denied_write, Level.READ, ABUSER).allowed


def test_the_default_administrators_read_and_write():
    """Without ALLOW_ADMINISTRATOR the cell's managers (root always) administer, and so
    read and write whatever ALLOW_READ and ALLOW_WRITE say of others."""
    defaults = manager_defaults({"alice"})
    get = getter(ALLOW_READ="nobody@*/*", ALLOW_WRITE="nobody@*/*")
    root = Identity("root", "cs.wisc.edu", ("puffin",))
    for who in (ALICE, root):
        assert verify(get, Level.READ, who, "COLLECTOR", defaults).allowed
        assert verify(get, Level.WRITE, who, "SCHEDD", defaults).allowed
    assert not verify(get, Level.READ, ABUSER, "COLLECTOR", defaults).allowed


def test_a_deny_on_a_level_between_or_on_the_level_itself_stops_the_chain():
    get = getter(ALLOW_ADMINISTRATOR="alice@*/*", ALLOW_READ="nobody@*/*", DENY_WRITE="alice@*/*")
    assert not verify(get, Level.WRITE, ALICE).allowed
    assert not verify(get, Level.READ, ALICE).allowed
    get = getter(ALLOW_ADMINISTRATOR="alice@*/*", DENY_READ="alice@*/*")
    refused = verify(get, Level.READ, ALICE)
    assert not refused.allowed and "DENY entry alice@*/*" in refused.reason

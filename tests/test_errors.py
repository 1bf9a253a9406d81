"""Messages as users see them: one line whatever they quote, several only when made so."""

from gridtools.errors import GridError, lines, one_line


def test_one_line_escapes_breaks_controls_and_undecodable_bytes():
    assert one_line("plain text é") == "plain text é"
    assert one_line("a\nb\tc\x1b[2J") == "a\\nb\\tc\\x1b[2J"
    # bytes that did not decode (surrogateescape) are shown as the bytes they were
    assert one_line(b"x\xff\xfe".decode("utf-8", "surrogateescape")) == "x\\xff\\xfe"
    assert one_line("\u2028") == "\\u2028"


def test_lines_keep_their_breaks_and_escape_what_they_quote():
    err = GridError(lines("first \x1b", "\tsecond\nthird"))
    assert str(err) == "first \\x1b\n\tsecond\\nthird"
    assert str(GridError("a\nb")) == "a\\nb"

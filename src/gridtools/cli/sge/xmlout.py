"""Writing Grid Engine's XML documents by hand: escaping and indented elements.

Grid Engine prints one element per line, children indented by two blanks,
text escaped with entities (``&quot;`` for quotes). ``Writer`` collects the
lines; ``text()`` joins them. Used by qstat and qhost.
"""

_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_ATTR_ESCAPES = dict(_ESCAPES, **{"'": "&apos;"})

QSTAT_XSD = "http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/qstat.xsd"
DETAILED_XSD = ("http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/"
                "qstat/detailed_job_info.xsd")
MESSAGE_XSD = "http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qstat/message.xsd"
QHOST_XSD = "http://arc.liv.ac.uk/repos/darcs/sge/source/dist/util/resources/schemas/qhost/qhost.xsd"


def escape(value, table=_ESCAPES):
    """Text content with ``& < > "`` as entities (quotes in attribute values too)."""
    text = str(value)
    if not any(c in text for c in table):
        return text
    return "".join(table.get(c, c) for c in text)


def escape_attr(value):
    return escape(value, _ATTR_ESCAPES)


def attrs(pairs):
    """`` name="value"`` pairs in double quotes (qstat style)."""
    return "".join(f' {k}="{escape_attr(v)}"' for k, v in pairs)


class Writer:
    """Indented XML lines; ``open``/``close`` nest, ``leaf`` writes one element."""

    def __init__(self, root, xsd, step=2):
        self.lines = ["<?xml version='1.0'?>", f'<{root}  xmlns:xsd="{xsd}">']
        self.stack = [root]
        self.step = step

    def _pad(self):
        return " " * (self.step * len(self.stack))

    def open(self, tag, pairs=()):
        self.lines.append(f"{self._pad()}<{tag}{attrs(pairs)}>")
        self.stack.append(tag)

    def close(self):
        tag = self.stack.pop()
        self.lines.append(f"{self._pad()}</{tag}>")

    def leaf(self, tag, value, pairs=()):
        self.lines.append(f"{self._pad()}<{tag}{attrs(pairs)}>{escape(value)}</{tag}>")

    def text(self):
        while self.stack:
            self.close()
        return "\n".join(self.lines) + "\n"

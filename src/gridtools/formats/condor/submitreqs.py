"""Submit requirements: what the configuration asks of every job before the schedd
takes it in (``SUBMIT_REQUIREMENT_NAMES``), as HTCondor's schedd checks them.

Each name of ``SUBMIT_REQUIREMENT_NAMES`` (commas or blanks between them; NAMES
itself is passed over) is a rule: ``SUBMIT_REQUIREMENT_<name>``, a ClassAd
expression, evaluated with the schedd's ad as MY (also ``SCHEDD``) and the job's
ad as TARGET (also ``JOB``), so that an attribute the schedd's ad lacks is the
job's; ``SUBMIT_REQUIREMENT_<name>_REASON``, an expression whose string value is
said when the rule is not met (else "Submit requirement <name> not met."); and
``SUBMIT_REQUIREMENT_<name>_IS_WARNING``: when true, a rule not met only warns. A
rule that is not set or does not parse is left out. A rule whose value is no
boolean or number refuses the job ("... evaluated to non-boolean."). The rules are
tried in their order; the first that refuses a job refuses its whole submission.

condor_submit checks them against each job it builds and prints a refusal in
HTCondor's words (``refusal_text``); the daemon checks them again as it takes a
submission in, with the cell's configuration.
"""

import re

_NAME = re.compile(r"[A-Za-z0-9_]+\Z")


class Rule:
    """One submit requirement: its ``name``, its expression, its reason's (or None)
    and whether it only warns."""

    def __init__(self, name, expr, reason, warning):
        self.name, self.expr, self.reason, self.warning = name, expr, reason, warning


def rules(get, names=None):
    """The submit requirements of a configuration (``get``: knob -> its text or None;
    ``names``: SUBMIT_REQUIREMENT_NAMES's text when it was read already) and the lines
    saying which were left out, as HTCondor's schedd logs them."""
    from gridtools.classad import ClassAdSyntaxError, parse
    names = get("SUBMIT_REQUIREMENT_NAMES") if names is None else names
    found, problems = [], []
    for name in dict.fromkeys((names or "").replace(",", " ").split()):
        if name == "NAMES" or not _NAME.match(name):
            continue
        text = get(f"SUBMIT_REQUIREMENT_{name}")
        if text is None or not text.strip():
            problems.append(f"Submit requirement {name} not defined, ignoring.")
            continue
        try:
            expr = parse(text.strip())
        except (ClassAdSyntaxError, ValueError):
            problems.append(f"Unable to parse submit requirement {name}, ignoring.")
            continue
        reason = None
        said = get(f"SUBMIT_REQUIREMENT_{name}_REASON")
        if said is not None and said.strip():
            try:
                reason = parse(said.strip())
            except (ClassAdSyntaxError, ValueError):
                problems.append(f"Unable to parse submit requirement reason {name}, ignoring.")
        warning = (get(f"SUBMIT_REQUIREMENT_{name}_IS_WARNING") or "").strip().lower() in ("true", "1", "yes")
        found.append(Rule(name, expr, reason, warning))
    return found, problems


#: the names the schedd's ad keeps for itself, in lower case (a schedd cron job gives
#: no other value to them)
OWN_NAMES = ("mytype", "name", "machine", "scheddname")


def schedd_ad(host, version, cron=()):
    """The schedd's own ad: its name, machine and version, and what its cron jobs gave
    it (``cron``: (name, expression text or Expr), in the order they merge; a text that
    does not read is passed over). ``cli.condor.submitters.schedd_ads`` adds the job
    counts the schedd publishes."""
    from gridtools.classad import ClassAd, ClassAdSyntaxError, parse
    ad = ClassAd({"MyType": "Scheduler", "Name": host, "Machine": host, "ScheddName": host,
                  "CondorVersion": version})
    for row in cron:
        try:
            name, value = row
            if str(name).lower() not in OWN_NAMES:
                ad[str(name)] = parse(value) if isinstance(value, str) else value
        except (ValueError, TypeError, ClassAdSyntaxError):     # (a row that does not read)
            continue
    return ad


def check(found, schedd, job):
    """(the refusal's text or None, [the warnings' texts]) of job ad ``job`` (a ClassAd)
    under the rules ``found``, as HTCondor's schedd words them (a refusal of its own
    ends with a newline)."""
    from gridtools.classad import ClassAd
    probe = ClassAd(dict(schedd.items()))
    probe["SCHEDD"] = ClassAd(dict(schedd.items()))
    probe["JOB"] = job
    warnings = []
    for rule in found:
        probe["SubmitRequirement"] = rule.expr
        value = probe.eval("SubmitRequirement", job)
        if type(value) not in (bool, int, float):
            return f"Submit requirement {rule.name} evaluated to non-boolean.\n", warnings
        if value:
            continue
        text = f"Submit requirement {rule.name} not met.\n"
        if rule.reason is not None:
            probe["SubmitRequirementReason"] = rule.reason
            said = probe.eval("SubmitRequirementReason", job)
            if isinstance(said, str):
                text = said
        if rule.warning:
            warnings.append(text)
            continue
        return text, warnings
    return None, warnings


def refusal_text(text):
    """What condor_submit prints on its error stream when a submission is refused."""
    return f"\nERROR: Failed to commit job submission into the queue.\nERROR: {text}\n"


def warning_text(text):
    """What condor_submit prints on its error stream when rules only warned."""
    return f"\nWARNING: Committed job submission into the queue with the following warning(s):\nWARNING: {text}\n"

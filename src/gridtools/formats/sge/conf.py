"""Global and host-local cluster configuration (sge_conf(5)), as ``qconf -sconf``.

The text starts with ``#global:`` (or ``#<host>:``) and lists parameters
with their values; a host-local configuration holds only the parameters it
overrides. The dict has ``conf_name`` (the name in that first line, None
if the text has none) followed by the parameters in qconf's order, then
any parameters this module does not know, in the order read. ``render``
ends with the blank line qconf prints after a configuration.

Known parameters are typed (ints, lower-case booleans, times, lists
written comma-separated, text or None written ``none``); unknown ones stay
text. ``parse_params`` splits the ``name=value`` lists of ``execd_params``,
``qmaster_params``, ``reporting_params`` and the scheduler's ``params``.
"""

from gridtools.formats.sge.attrfile import Field, FieldError, Schema, logical_lines
from gridtools.formats.sge.codecs import (
    Boolean, Choice, Integer, NameList, OptText, Text, Time, TimeSpec, is_none_word, split_words)
from gridtools.formats.sge.names import check_host_name, require_known

#: how job scripts are started
SHELL_START_MODES = ("posix_compliant", "script_from_stdin", "unix_behavior")
#: how strictly submitting users must be known
ENFORCE_USER = ("true", "false", "auto")
#: logging levels of the daemons
LOGLEVELS = ("log_crit", "log_err", "log_warning", "log_notice", "log_info", "log_debug")
#: token where a path into the cell goes; ``gridtools init`` replaces it
CELL_ROOT_TOKEN = "$GRIDTOOLS_ROOT"
#: name column width of qconf -sconf
WIDTH = 28
#: spool bookkeeping line some configuration files carry; dropped when read
VERSION_LINE = "conf_version"


def _none(default=None, spaces=True):
    return OptText("none", spaces=spaces), default


def _field(name, codec_default):
    codec, default = codec_default
    return Field(name, codec, default, optional=True)


def _names(default=()):
    return NameList(sep=",", token="none"), list(default)


SCHEMA = Schema([_field(*spec) for spec in (
    ("execd_spool_dir", (Text(spaces=True), CELL_ROOT_TOKEN + "/spool/execd")),
    ("mailer", (Text(), "/usr/bin/mail")),
    ("xterm", (Text(), "/usr/bin/xterm")),
    ("load_sensor", _none(spaces=False)),
    ("prolog", _none()),
    ("epilog", _none()),
    ("shell_start_mode", (Choice(SHELL_START_MODES), "posix_compliant")),
    ("login_shells", _names(("bash", "sh", "ksh", "csh", "tcsh"))),
    ("min_uid", (Integer(), 1000)),
    ("min_gid", (Integer(), 1000)),
    ("user_lists", _names()),
    ("xuser_lists", _names()),
    ("projects", _names()),
    ("xprojects", _names()),
    ("enforce_project", (Boolean(upper=False), False)),
    ("enforce_user", (Choice(ENFORCE_USER), "auto")),
    ("load_report_time", (Time(), TimeSpec("00:00:40"))),
    ("max_unheard", (Time(), TimeSpec("00:05:00"))),
    ("reschedule_unknown", (Time(), TimeSpec("00:00:00"))),
    ("loglevel", (Choice(LOGLEVELS), "log_warning")),
    ("administrator_mail", (OptText("none"), "root")),
    ("set_token_cmd", _none()),
    ("pag_cmd", _none()),
    ("token_extend_time", _none(spaces=False)),
    ("shepherd_cmd", _none()),
    ("qmaster_params", _none()),
    ("execd_params", _none()),
    ("reporting_params", (OptText("none", spaces=True),
                          "accounting=true reporting=false flush_time=00:00:15 joblog=false sharelog=00:00:00")),
    ("finished_jobs", (Integer(), 100)),
    ("gid_range", (Text(), "65400-65500")),
    *((name, (Text(spaces=True), "builtin")) for name in (
        "qlogin_command", "qlogin_daemon", "rlogin_command", "rlogin_daemon", "rsh_command", "rsh_daemon")),
    ("max_aj_instances", (Integer(), 2000)),
    ("max_aj_tasks", (Integer(), 75000)),
    ("max_u_jobs", (Integer(), 0)),
    ("max_jobs", (Integer(), 0)),
    ("auto_user_oticket", (Integer(), 0)),
    ("auto_user_fshare", (Integer(), 0)),
    ("auto_user_default_project", _none(spaces=False)),
    ("auto_user_delete_time", (Integer(), 86400)),
    ("delegated_file_staging", (Boolean(upper=False), False)),
    ("reprioritize", (Text(), "0")),
    ("jsv_url", _none()),
    ("jsv_allowed_mod", (Text(), "ac,h,i,e,o,j,M,N,p,w")),
)], WIDTH, open_codec=Text(spaces=True))


def _header(text):
    """The name in the ``#name:`` first line, or None."""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#") and stripped.endswith(":") and len(stripped) > 2:
            return stripped[1:-1].strip()
        break
    return None


def parse(text):
    """A configuration dict from ``qconf -sconf`` text."""
    name = _header(text)
    lines = [(n, line) for n, line in logical_lines(text) if line.split()[0] != VERSION_LINE]
    return {"conf_name": name, **SCHEMA.parse_lines(lines)}


def _entries(obj):
    return {k: v for k, v in obj.items() if k != "conf_name"}


def render(obj):
    """``qconf -sconf`` text: the ``#name:`` line, the parameters, a blank line."""
    head = f"#{obj['conf_name']}:\n" if obj.get("conf_name") else ""
    return head + SCHEMA.render(_entries(obj)) + "\n"


def template(name="global"):
    """The global configuration with every default, or an empty host configuration."""
    if name != "global":
        return {"conf_name": name}
    return {"conf_name": "global", **{f.name: f.default if not isinstance(f.default, list)
                                       else list(f.default) for f in SCHEMA.fields}}


def validate(obj, known=None):
    """Raise ConfigError for malformed values, bad names or unknown lists."""
    name = obj.get("conf_name")
    if name is not None and name != "global":
        check_host_name(name, "conf_name")
    entries = _entries(obj)
    SCHEMA.check(entries)
    for attr, kind, what in (("user_lists", "userset", "user list"), ("xuser_lists", "userset", "user list"),
                             ("projects", "project", "project"), ("xprojects", "project", "project")):
        require_known(entries.get(attr, []), known, kind, attr, what)
    if entries.get("auto_user_default_project") is not None:
        require_known([entries["auto_user_default_project"]], known, "project",
                      "auto_user_default_project", "project")
    _check_gid_range(entries.get("gid_range"))


def _check_gid_range(value):
    if value is None or is_none_word(value):
        return
    for part in value.split(","):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and (not hi.isdigit() or int(hi) < int(lo))):
            raise FieldError(f'invalid value "{value}" for attribute "gid_range": expected n-m[,n-m...]',
                             "gid_range")


#: seconds a server JSV has for a line when qmaster_params JSV_TIMEOUT does not say
JSV_TIMEOUT = 10


def jsv_timeout(qmaster_params):
    """The seconds the server JSV has for a line (1 to 3600): JSV_TIMEOUT of the text of
    ``qmaster_params`` (daemon.serverjsv), else JSV_TIMEOUT."""
    params = parse_params(qmaster_params)
    try:
        value = int(params.get("JSV_TIMEOUT") or params.get("jsv_timeout") or JSV_TIMEOUT)
    except ValueError:
        value = JSV_TIMEOUT
    return min(max(value, 1), 3600)


def parse_params(text):
    """``{name: value}`` of a ``name=value`` list separated by blanks or commas.

    A name without a value maps to ``"true"``; None or ``none`` gives ``{}``.
    """
    if text is None or is_none_word(text.strip()):
        return {}
    result = {}
    for item in split_words(text):
        name, eq, value = item.partition("=")
        result[name] = value if eq else "true"
    return result

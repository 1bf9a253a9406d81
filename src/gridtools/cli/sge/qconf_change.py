"""qconf -a…/-A…/-m…/-M…/-d…: changing configuration objects.

The client never writes etc/ itself: it builds the new text (from a file,
or by running ``$EDITOR``, default ``vi``, on the template or the current
object), checks its syntax to fail early with the line and reason, and
sends a ``qconf`` request to the daemon, which checks rights and
references again, stores the object and answers with Grid Engine's
message. An editor session that leaves the file unchanged changes
nothing ("Object has not been changed").
"""

import os

from gridtools.cli.sge.qconf_show import MISSING, error, split, stored
from gridtools.errors import ConfigError, GridError

#: seconds to wait for the daemon's answer
#: what an unchanged editor file means
UNCHANGED = "Object has not been changed"


# ---------------------------------------------------------------- rights and requests

def may_change(payload):
    """The client's early check of the daemon's rule (the daemon decides again)."""
    from gridtools.cli.sge import jobsel
    from gridtools.model.qconfrights import needs_manager
    user = jobsel.me()
    if jobsel.is_manager(user):
        return True
    return jobsel.is_operator(user) and not needs_manager(payload)


def refused(payload):
    """The refusal line when the caller may not make this change, else None."""
    from gridtools.cli.sge import jobsel
    if may_change(payload):
        return None
    return f'denied: "{jobsel.me()}" must be manager for this operation'


def check_rights(op, kind):
    """Raise GridError before an editor opens when the change would be refused."""
    denial = refused({"op": op, "object": kind})
    if denial:
        raise GridError(denial)


def send(payload):
    """Send one qconf request, print the daemon's answer; returns the exit code."""
    denial = refused(payload)
    if denial:
        return error(denial)
    from gridtools.cli.ask import ask
    try:
        return ask("qconf", payload)
    except GridError as exc:
        return error(str(exc))


# ---------------------------------------------------------------- texts

def edit(text):
    """Run $EDITOR on ``text`` in a temporary file; the edited text (``text`` itself when
    the file comes back as it was shown, which may be without line breaks)."""
    import shlex
    import subprocess
    import tempfile
    from gridtools.formats.sge.attrfile import as_shown
    editor = os.environ.get("EDITOR") or "vi"
    shown = as_shown(text)
    fd, path = tempfile.mkstemp(prefix="qconf-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(shown)             # (a name given in bytes that are not UTF-8, as given)
        rc = subprocess.call(f"{editor} {shlex.quote(path)}", shell=True)
        if rc < 0 or rc > 128:
            raise GridError(f"editor was terminated by a signal {abs(rc) if rc < 0 else rc - 128}")
        if rc != 0:
            raise GridError(f"editor exited with error {rc}")
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                edited = fh.read()
            return text if edited == shown else edited
        except FileNotFoundError:
            raise GridError(f"edit file {path} no longer exists") from None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def read_file(path):
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            return fh.read()
    except OSError as exc:
        raise GridError(f'error: cannot read file "{path}": {exc.strerror}') from None


def check(kind, text):
    """Raise GridError with the line and reason when ``text`` is not a valid ``kind``."""
    from gridtools.formats.sge import objects, rqs
    try:
        if kind == "rqs":
            sets = rqs.parse_list(text)
            if not sets:
                raise ConfigError("no resource quota set given")
            for one in sets:
                objects.validate("rqs", one)
            return
        obj = objects.parse(kind, text)
        if kind == "conf" and not obj.get("conf_name"):
            obj["conf_name"] = "global"
        objects.validate(kind, obj)
    except ConfigError as exc:
        from gridtools.formats.sge.attrfile import problem_line
        raise GridError(problem_line(exc)) from None


def template_text(kind, name=None):
    from gridtools.formats.sge import objects
    if kind == "sharetree":
        return objects.render("sharetree", {"id": 0, "name": "Root", "type": 0, "shares": 1,
                                            "childnodes": []})
    if kind == "rqs":
        return "".join(objects.render("rqs", objects.template("rqs", n)) for n in split([name or "template"]))
    return objects.render(kind, objects.template(kind, name) if name else objects.template(kind))


def _guard(func):
    """Run ``func``; a GridError becomes its message on stderr and exit code 1."""
    try:
        return func()
    except GridError as exc:
        return error(str(exc))


# ---------------------------------------------------------------- add

def graphic_names(names):
    """GridError naming the first byte of ``names`` that is not UTF-8 text (given on the
    command line in another encoding), as Grid Engine refuses a non-graphic character."""
    for name in names:
        odd = next((ord(c) - 0xDC00 for c in name if 0xDC80 <= ord(c) <= 0xDCFF), None)
        if odd is not None:
            raise GridError(f"Non-graphic character (hex {odd:x}) not allowed in objectname")


def add_edit(kind, words):
    """-aq [name], -ae [template], -ap name, -ahgrp group, -auser, -arqs [names] ..."""
    def run():
        graphic_names(split(words))
        check_rights("add", kind)
        name = split(words)[0] if split(words) and kind != "rqs" else None
        current = stored(kind, name) if name and kind in ("queue", "exechost") else None
        if kind == "rqs":
            text = edit(template_text("rqs", ",".join(split(words)) or None))
        else:
            text = edit(current if current is not None else template_text(kind, name))
        check(kind, text)
        return send({"op": "add", "object": kind, "text": text})
    return _guard(run)


def add_file(kind, words):
    """-Aq, -Ae, -Ap, -Ahgrp, -Ackpt, -Acal, -Au, -Auser, -Aprj, -Arqs, -Astree from a file."""
    def run():
        check_rights("add", kind)
        text = read_file(words[0])
        check(kind, text)
        return send({"op": "add", "object": kind, "text": text})
    return _guard(run)


def add_conf_edit(words):
    """-aconf host,...: an editor session per host."""
    def run():
        check_rights("add", "conf")
        for host in split(words):
            code = _send_conf("add", host, edit(template_text("conf", host)))
            if code:
                return code
        return 0
    return _guard(run)


def conf_files(op, words):
    """-Aconf / -Mconf file,...: the configuration of the host named like each file."""
    code = _guard(lambda: check_rights(op, "conf"))
    if code:
        return code
    for path in split(words):
        code = _guard(lambda p=path: _send_conf(op, os.path.basename(p), read_file(p)))
        if code:
            return code
    return 0


def _send_conf(op, host, text):
    if not text.lstrip().startswith("#"):
        text = f"#{host}:\n" + text
    check("conf", text)
    return send({"op": op, "object": "conf", "name": host, "text": text})


# ---------------------------------------------------------------- modify

def modify_edit(kind, words):
    """-mq, -me, -mhgrp, -mp, -mckpt, -mcal, -mu, -muser, -mprj: edit stored objects."""
    names = split(words)
    for name in names:
        code = _guard(lambda n=name: _modify_one(kind, n))
        if code:
            return code
    return 0


def _modify_one(kind, name):
    check_rights("modify", kind)
    current = stored(kind, name)
    if current is None:
        return error(MISSING[kind].format(name))
    text = edit(current)
    if text == current:
        return error(UNCHANGED)
    check(kind, text)
    payload = {"op": "modify", "object": kind, "text": text, "expect": name}
    if kind == "conf":
        payload["name"] = name
    return send(payload)


def modify_conf_edit(words):
    """-mconf [host,...|global]."""
    return modify_edit("conf", split(words) or ["global"])


def modify_single_edit(kind, missing, _words=()):
    """-msconf, -mc, -mstree: edit the one object of the kind."""
    def run():
        check_rights("modify", kind)
        current = stored(kind)
        if current is None:
            if kind != "sharetree":
                return error(missing)
            current = ""
        text = edit(current or template_text(kind))
        if text == current:
            return error(UNCHANGED)
        check(kind, text)
        return send({"op": "modify", "object": kind, "text": text})
    return _guard(run)


def modify_file(kind, words):
    """-Mq, -Me, -Mhgrp, -Mp, -Mckpt, -Mcal, -Mu, -Muser, -Mprj, -Msconf, -Mc, -Mstree."""
    def run():
        check_rights("modify", kind)
        text = read_file(words[0])
        check(kind, text)
        return send({"op": "modify", "object": kind, "text": text})
    return _guard(run)


def modify_rqs_edit(words):
    """-mrqs [name,...]: edit the named resource quota sets, or all of them."""
    from gridtools.spool import config as spool_config

    def run():
        check_rights("modify", "rqs")
        names = split(words)
        for name in names:
            if stored("rqs", name) is None:
                return error(MISSING["rqs"].format(name))
        current = "".join(stored("rqs", n) for n in names or spool_config.names("rqs"))
        if not current:
            return error("no resource quota set list defined")
        text = edit(current)
        if text == current:
            return error(UNCHANGED)
        check("rqs", text)
        return send({"op": "modify", "object": "rqs", "text": text, "names": names,
                     "replace_all": not names})
    return _guard(run)


def modify_rqs_file(words):
    """-Mrqs fname [name,...]: without names the file replaces every set."""
    def run():
        check_rights("modify", "rqs")
        text = read_file(words[0])
        check("rqs", text)
        names = split(words[1:])
        return send({"op": "modify", "object": "rqs", "text": text, "names": names,
                     "replace_all": not names})
    return _guard(run)


# ---------------------------------------------------------------- delete and lists

def delete(kind, words):
    """-dq, -de, -dhgrp, -dp, -dckpt, -dcal, -dul, -duser, -dprj, -dconf, -drqs."""
    return send({"op": "delete", "object": kind, "names": split(words)})


def delete_sharetree(_words=()):
    return send({"op": "delete", "object": "sharetree"})


def names_change(kind, add, words):
    """-am/-dm, -ao/-do, -ah/-dh, -as/-ds."""
    if not split(words):
        return error(f'error: no name given in "{" ".join(words)}"')
    if add:
        try:
            graphic_names(split(words))
        except GridError as exc:
            return error(str(exc))
    return send({"op": "names_add" if add else "names_delete", "object": kind, "names": split(words)})


def acl_change(add, words):
    """-au / -du user,... list,..."""
    if not split(words[:1]) or not split(words[1:]):
        return error(f'error: no user or access list name given in "{" ".join(words)}"')
    return send({"op": "acl_add" if add else "acl_delete", "object": "userset",
                 "users": split(words[:1]), "lists": split(words[1:])})

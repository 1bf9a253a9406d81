"""qconf -a…/-A…/-m…/-M…/-d…: changing configuration objects.

The client never writes etc/ itself: it builds the new text (from a file,
or by running ``$EDITOR``, default ``vi``, on the template or the current
object), checks its syntax to fail early with the line and reason, and
sends a ``qconf`` request to the daemon, which checks rights and
references again, stores the object and answers with Grid Engine's
message. Whether an editor session changed the file is decided as Grid
Engine's sge_edit decides it, by the file's modification time and size;
what an unchanged file means depends on the option, as in Grid Engine
(see ``edit``).
"""

import os
import sys

from gridtools.cli.sge.qconf_show import MISSING, error, split, stored
from gridtools.errors import ConfigError, GridError, lines

#: the file came back as written (-ap, -mp, -ae, -me, -auser, -mstree, -arqs ...;
#: on stdout for -mu, which goes on with the next list)
FILE_UNCHANGED = "file unchanged"
#: the edited object equals the stored one (-mq, -mhgrp, -mrqs)
NOT_CHANGED = "Object has not been changed"
#: -aconf / -mconf with the file as written
CONF_UNCHANGED = "configuration unchanged"
#: -mc with every complex entry as it was (not an error)
COMPLEX_UNCHANGED = "Complex attribute configuration has not been changed"
#: the last line after the editor's own error line
EDIT_FAILED = "edit failed"


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
    try:
        from gridtools.cli.ask import ask
        return ask("qconf", payload, ordered=True)
    except GridError as exc:
        return error(str(exc))


# ---------------------------------------------------------------- texts

def edit(text):
    """Run $EDITOR on ``text`` in a temporary file: ``(changed, edited)``.

    ``changed`` is False when the file's modification time and size are as
    written (Grid Engine's sge_edit test; an editor that only touches the file
    changes it) and its text is the same; ``edited`` is ``text`` itself when the
    file comes back as it was shown (which may be without line breaks). A failing
    editor raises GridError with sge_edit's error line and "edit failed".
    """
    import shlex
    import subprocess
    import tempfile
    import time
    from gridtools.formats.sge.attrfile import as_shown
    editor = os.environ.get("EDITOR") or "vi"
    shown = as_shown(text)
    fd, path = tempfile.mkstemp(prefix="qconf-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as fh:
            fh.write(shown)             # (a name given in bytes that are not UTF-8, as given)
        # dated a second back, so that an editor writing at once still changes the time
        past = time.time_ns() - 1_000_000_000
        os.utime(path, ns=(past, past))
        before = _stamp(path)
        rc = subprocess.call(f"{editor} {shlex.quote(path)}", shell=True)
        if rc < 0 or rc > 128:
            raise _edit_failed(f"editor was terminated by a signal {abs(rc) if rc < 0 else rc - 128}")
        if rc != 0:
            raise _edit_failed(f"editor exited with error {rc}")
        try:
            after = _stamp(path)
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                edited = fh.read()
        except FileNotFoundError:
            raise _edit_failed(f"edit file {path} no longer exists") from None
        if edited == shown:
            return after != before, text
        return True, edited
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def _stamp(path):
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


def _edit_failed(reason):
    """sge_edit's error line, then qconf's own."""
    return GridError(lines(f"error: {reason}", EDIT_FAILED))


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


#: kinds whose -a… form adds the object even from a file left unchanged (Grid Engine's
#: queue and host group editors ignore that); every other -a… refuses: "file unchanged"
ADD_UNCHANGED = ("queue", "hostgroup")


def add_edit(kind, words):
    """-aq [name], -ae [template], -ap name, -ahgrp group, -auser, -arqs [names] ..."""
    def run():
        graphic_names(split(words))
        check_rights("add", kind)
        name = split(words)[0] if split(words) and kind != "rqs" else None
        current = stored(kind, name) if name and kind in ("queue", "exechost") else None
        if kind == "rqs":
            changed, text = edit(template_text("rqs", ",".join(split(words)) or None))
        else:
            changed, text = edit(current if current is not None else template_text(kind, name))
        if not changed and kind not in ADD_UNCHANGED:
            return error(FILE_UNCHANGED)
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
    """-aconf host,...: an editor session per host; as in Grid Engine a host that fails
    does not stop the others, and a blank line on stdout comes before every host after
    the first."""
    code = _guard(lambda: check_rights("add", "conf"))
    if code:
        return code
    failed = 0
    for number, host in enumerate(split(words)):
        if number:
            sys.stdout.write("\n")
            sys.stdout.flush()
        failed = _guard(lambda h=host: _add_conf_one(h)) or failed
    return failed


def _add_conf_one(host):
    changed, text = edit(template_text("conf", host))
    if not changed:
        return error(CONF_UNCHANGED)
    return _send_conf("add", host, text)


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


#: kinds whose -m… form compares the edited object with the stored one ("Object has not
#: been changed"); every other -m… goes by the file alone ("file unchanged")
MODIFY_COMPARED = ("queue", "hostgroup")


def _modify_one(kind, name):
    check_rights("modify", kind)
    current = stored(kind, name)
    if current is None:
        return error(MISSING[kind].format(name))
    changed, text = edit(current)
    if kind in MODIFY_COMPARED:
        if text == current:
            return error(NOT_CHANGED)
    elif not changed:
        if kind == "userset":
            # -mu says so on stdout and goes on with the next list
            sys.stdout.write(FILE_UNCHANGED + "\n")
            sys.stdout.flush()
            return 0
        return error(CONF_UNCHANGED if kind == "conf" else FILE_UNCHANGED)
    check(kind, text)
    payload = {"op": "modify", "object": kind, "text": text, "expect": name}
    if kind == "conf":
        payload["name"] = name
    return send(payload)


def modify_conf_edit(words):
    """-mconf [host,...|global]: as -aconf, every host is edited whatever became of the
    one before, with a blank line on stdout before every host after the first."""
    code = _guard(lambda: check_rights("modify", "conf"))
    if code:
        return code
    failed = 0
    for number, host in enumerate(split(words) or ["global"]):
        if number:
            sys.stdout.write("\n")
            sys.stdout.flush()
        failed = _guard(lambda h=host: _modify_one("conf", h)) or failed
    return failed


def modify_single_edit(kind, missing, _words=()):
    """-msconf, -mc, -mstree: edit the one object of the kind."""
    def run():
        check_rights("modify", kind)
        current = stored(kind)
        if current is None:
            if kind != "sharetree":
                return error(missing)
            current = ""
        changed, text = edit(current or template_text(kind))
        if kind == "complex":
            # Grid Engine sends only the entries that differ, and says so when none do
            if _same_complex(text, current):
                sys.stderr.write(COMPLEX_UNCHANGED + "\n")
                return 0
        elif not changed:
            return error(FILE_UNCHANGED)
        check(kind, text)
        return send({"op": "modify", "object": kind, "text": text})
    return _guard(run)


def _same_complex(text, current):
    from gridtools.formats.sge import objects
    if text == current:
        return True
    try:
        return objects.parse("complex", text) == objects.parse("complex", current)
    except ConfigError:
        return False


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
        changed, text = edit(current)
        if not changed:
            return error(FILE_UNCHANGED)
        if text == current:
            return error(NOT_CHANGED)
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

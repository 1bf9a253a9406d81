"""Who may submit what: Grid Engine's admission rules for a new job, with its words.

The rules, in the order Grid Engine applies them at submit:

0. The global ``user_lists``/``xuser_lists``: the owner must be in one of
   the first (when any) and in none of the second.
1. ``enforce_user true``: the owner must have a user object.
2. A job naming no project gets its owner's ``default_project``.
3. A named project must exist, let the owner in (its ``acl``/``xacl`` access
   lists) and be allowed by the global ``projects``/``xprojects``; without a
   project, a non-empty global ``projects`` list or ``enforce_project true``
   refuses the job.
4. ``-dl`` only for members of the ``deadlineusers`` access list.
5. ``max_u_jobs``: most jobs (pending or running) one user may have in the
   cell; ``max_jobs``: most jobs in the cell (0: no limit).

``check(spec, cell_view)`` returns the refusal text or None, and may set the
job's project. ``cell_view`` answers the questions the rules ask (a small
interface both qsub, reading etc/ by hand, and the daemon, reading its
parsed configuration, provide). Nothing here reads files.
"""

#: the access list whose members may use -dl
DEADLINE_USERS = "deadlineusers"
#: Grid Engine's refusal of a positive -p from a user who is neither operator nor manager
NONADMIN_PRIORITY = "job rejected: positive submission priority requires operator privileges"


def priority_refusal(priority, operator):
    """The refusal of a new job's priority (``-p``) when its owner is (``operator``
    true) or is not an operator or manager; None when it is allowed. Only operators
    and managers may submit with a priority above 0."""
    return NONADMIN_PRIORITY if priority > 0 and not operator else None


class CellView:
    """What the rules look at: the global configuration values, how to find users and
    projects, access list membership, and how many jobs there are. A plain class, not
    a dataclass: qsub builds one on every submit and ``dataclasses`` costs its start-up
    more than everything else here."""

    __slots__ = ("conf", "user", "project", "member", "jobs_of", "jobs_total")

    def __init__(self, conf, user, project, member, jobs_of=None, jobs_total=None):
        self.conf = conf                # the global configuration (strings)
        self.user = user                # name -> user dict or None
        self.project = project          # name -> project dict or None
        self.member = member            # (access list, user, group) -> bool
        self.jobs_of = jobs_of          # user -> jobs in the cell (None: not counted)
        self.jobs_total = jobs_total    # () -> jobs in the cell


def _flag(conf, key):
    return str(conf.get(key, "false")).strip().lower() == "true"


def _names(value):
    if value is None:
        return []
    if isinstance(value, str):
        items = value.replace(",", " ").split()
    else:
        items = [str(v) for v in value]
    return [v for v in items if v.lower() != "none"]


def _number(conf, key):
    try:
        return int(str(conf.get(key, 0)).strip() or 0)
    except ValueError:
        return 0


def has_access(view, acl, xacl, user, group):
    """Grid Engine's access rule: in one of ``acl`` (when any) and in none of ``xacl``."""
    if any(view.member(name, user, group) for name in _names(xacl)):
        return False
    names = _names(acl)
    return not names or any(view.member(name, user, group) for name in names)


def _project_problem(spec, view, user, group):
    conf = view.conf
    allowed, denied = _names(conf.get("projects")), _names(conf.get("xprojects"))
    project = spec.get("project")
    if not project:
        if allowed:
            return "job rejected: no project was supplied and only certain projects are allowed to submit jobs"
        if _flag(conf, "enforce_project"):
            return "job rejected: no project assigned to job"
        return None
    obj = view.project(project)
    if obj is None:
        return f'job rejected: the requested project "{project}" does not exist'
    if not has_access(view, obj.get("acl"), obj.get("xacl"), user, group):
        return f'job rejected: no access to project "{project}" for user "{user}"'
    if project in denied or (allowed and project not in allowed):
        return f'job rejected: project "{project}" is not allowed to submit jobs'
    return None


def _count_problem(view, user):
    most = _number(view.conf, "max_u_jobs")
    if most and view.jobs_of is not None:
        count = view.jobs_of(user)
        if count >= most:
            return f"job rejected: Only {most} jobs are allowed per user (current job count: {count})"
    most = _number(view.conf, "max_jobs")
    if most and view.jobs_total is not None and view.jobs_total() >= most:
        return f"job rejected: Only {most} jobs are allowed per cluster"
    return None


def check(spec, view):
    """The refusal of job description ``spec`` (owner and group filled in), or None;
    sets ``spec["project"]`` to the owner's default project when it names none."""
    user, group = spec["owner"], spec.get("group", "")
    if not has_access(view, view.conf.get("user_lists"), view.conf.get("xuser_lists"), user, group):
        return f"job rejected: {user}@{spec.get('submit_host') or 'unknown'} is not allowed to submit jobs"
    obj = view.user(user)
    if obj is None and str(view.conf.get("enforce_user", "")).strip().lower() == "true":
        return f'job rejected: the user "{user}" does not exist'
    if not spec.get("project") and obj is not None:
        default = obj.get("default_project")
        if default and str(default).lower() != "none":
            spec["project"] = str(default)
    why = _project_problem(spec, view, user, group)
    if why is None and spec.get("deadline") and not view.member(DEADLINE_USERS, user, group):
        why = f'job rejected: the user "{user}" is no deadline initiation user'
    return why or _count_problem(view, user)


def auto_user(name, conf, now):
    """The user object ``enforce_user auto`` creates at a user's first submit."""
    delete = _number(conf, "auto_user_delete_time")
    default = str(conf.get("auto_user_default_project") or "none")
    return {"name": name, "oticket": _number(conf, "auto_user_oticket"),
            "fshare": _number(conf, "auto_user_fshare"),
            "delete_time": int(now + delete) if delete else 0,
            "default_project": None if default.lower() == "none" else default}

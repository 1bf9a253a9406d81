"""The daemon's admission of a submitted job: Grid Engine's rules re-checked at intake.

qsub checks the same rules (``formats.sge.admission``) before it queues a
job; the daemon checks them again against its own configuration, since a
request file is untrusted. A job the rules refuse is not run: its tasks
end at once with the refusal as their reason. Under ``enforce_user auto`` a
user's first job creates their user object from the ``auto_user_*``
defaults (managers excepted), and each later job moves its ``delete_time``
on. A job's department is fixed here, from the DEPT usersets of the moment.
Jobs into an advance reservation are checked by ``arreq``.
"""

from gridtools.daemon import arreq, auth, confstore
from gridtools.formats.sge import admission
from gridtools.daemon import apply
from gridtools.model import shared
from gridtools.sched import inputs
from gridtools.spool import jobs as jobstore


#: the department of a job whose owner no DEPT userset lists; a description names its
#: department only when it is another one
DEFAULT_DEPARTMENT = "defaultdepartment"

#: seconds a user's delete_time may lag behind before a new job moves it on (each move
#: rewrites the user object and reloads the configuration)
REFRESH = 3600


def _global(state):
    return state.config.objects["conf"].get("global") or {}


def view(state, exclude=0):
    """The admission rules' view of the daemon's configuration and jobs (job ``exclude``
    not counted)."""
    conf = state.config

    def member(name, user, group):
        return name in inputs.userlists_of(conf, user, group)

    def jobs_of(user):
        return sum(1 for i in state.live_ids() if i != exclude and state.jobs[i].spec["owner"] == user)

    return admission.CellView(conf=_global(state), user=conf.objects["user"].get,
                              project=conf.objects["project"].get, member=member, jobs_of=jobs_of,
                              jobs_total=lambda: len(state.live_ids() - {exclude}))


def refuse(state, job, why, now):
    apply.reject(state, job, now, why)


def accept(state, dispatcher, job, now):
    """Apply the admission rules to a job just taken in (counted without itself)."""
    spec = dict(job.spec)
    why = admission.check(spec, view(state, exclude=job.id))
    if why is not None:
        refuse(state, job, why, now)
        return
    department = inputs.department_of(state.config, spec["owner"], spec.get("group", ""))
    if department != DEFAULT_DEPARTMENT:
        spec["department"] = department
    if spec != job.spec:
        jobstore.write_spec(spec)
        job.spec = shared.description(spec)
        job.cache.clear()
    _auto_user(state, spec["owner"], now)
    arreq.accept_job(state, dispatcher, job, now)


def _auto_user(state, user, now):
    gconf = _global(state)
    if str(gconf.get("enforce_user", "auto")).lower() != "auto" or auth.is_manager(state, user):
        return
    obj = state.config.objects["user"].get(user)
    fresh = admission.auto_user(user, gconf, now)
    if obj is None:
        confstore.write(state, "user", user, fresh)
    elif obj.get("delete_time") and fresh["delete_time"] > int(obj["delete_time"]) + REFRESH:
        confstore.write(state, "user", user, dict(obj, delete_time=fresh["delete_time"]))

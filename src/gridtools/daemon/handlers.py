"""Which function applies each kind of request: one table.

A handler is ``handler(state, dispatcher, req, now)`` and returns None or
``(exit code, stdout text, stderr text)`` for a client that asked for a
reply. The request's body has been checked (``formats.reqcheck``) before a
handler sees it; a kind without an entry here is refused there already.
"""

from gridtools.daemon import (alterreq, arreq, condoradmin, condorreq, confreq, confset, hostreq, intake, jobreq,
                              petask, qmodreq)

HANDLERS = {
    "submit": intake.submit,
    "delete": jobreq.delete,
    "hold": jobreq.hold,
    "alter": alterreq.alter,
    "qmod": qmodreq.qmod,
    "host": hostreq.host_request,
    "qconf": confreq.qconf_request,
    "ar_submit": arreq.submit,
    "ar_delete": arreq.delete,
    "pe_task": petask.start,
    "condor_rm": condorreq.remove,
    "condor_hold": condorreq.hold,
    "condor_vacate_job": condorreq.vacate_job,
    "condor_qedit": condorreq.qedit,
    "userprio": condoradmin.userprio,
    "reconfig": condoradmin.reconfig,
    "vacate": condoradmin.vacate,
    "checkpoint": condoradmin.checkpoint,
    "reschedule": condoradmin.reschedule,
    "preen": condoradmin.preen,
    "daemon_ctl": condoradmin.daemon_ctl,
    "config_set": confset.handle,
}

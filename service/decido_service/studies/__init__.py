"""Studies as a capability (`/v1/studies`): ask/tell optimization held by the service.

:mod:`~decido_service.studies.replay` keeps each worker's :class:`decido.Study` objects in
step with the store's logs; :mod:`~decido_service.studies.views` turns rows into the API's
types; :mod:`~decido_service.studies.api` is every operation (by concern:
:mod:`~decido_service.studies.operation` the locked transaction of a change,
:mod:`~decido_service.studies.lifecycle`, :mod:`~decido_service.studies.leases`,
:mod:`~decido_service.studies.telling`); :mod:`~decido_service.studies.events` the event
stream's source. This package never imports
the HTTP layer: it raises :class:`decido_service.errors.ServiceError`.
"""

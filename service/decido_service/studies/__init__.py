"""Studies as a capability (`/v1/studies`): ask/tell optimization held by the service.

:mod:`~decido_service.studies.replay` keeps each worker's :class:`decido.Study` objects in
step with the store's logs; :mod:`~decido_service.studies.views` turns rows into the API's
types; :mod:`~decido_service.studies.api` is every operation. This package never imports
the HTTP layer: it raises :class:`decido_service.errors.ServiceError`.
"""

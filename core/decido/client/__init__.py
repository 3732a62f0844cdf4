"""The Python client of the decido service: ``decido.Client`` and ``decido.AsyncClient``.

The same calls and result types as the library, against a server::

    client = decido.Client("http://127.0.0.1:8000", key)       # or DECIDO_KEY
    r = client.minimize("sum(x**2)", [[-5, 5]] * 3)              # a decido.OptimizeResult
    run = client.submit("sum(x**2)", [[-5, 5]] * 3, engine="de")
    for event in run.events(): ...                              # Server-Sent Events
    client.decide({...})                                         # the dict decido.decide returns
    study = client.studies.create(bounds=[[-5, 5]] * 3, max_trials=50)  # ask/tell
    client.studies.optimize(fn, study=study, n_workers=4)        # fn(trial) -> value

It needs httpx (``pip install 'decido[client]'``); importing this package does not, building
a client without it raises :class:`MissingDependency`. Every call has a timeout; refused
calls are retried (:class:`RetryPolicy`); errors are typed (:mod:`decido.client.errors`).
See docs/client.md.
"""

from decido.client import errors
from decido.client._protocol import Event, RetryPolicy
from decido.client.aio import AsyncClient, AsyncRun
from decido.client.errors import *  # noqa: F403 - every exception, listed in errors.__all__
from decido.client.studies import RemoteStudy, RemoteTrial, Studies
from decido.client.studies_aio import AsyncRemoteStudy, AsyncRemoteTrial, AsyncStudies
from decido.client.sync import Client, Run

__all__ = ["AsyncClient", "AsyncRemoteStudy", "AsyncRemoteTrial", "AsyncRun", "AsyncStudies",
           "Client", "Event", "RemoteStudy", "RemoteTrial", "RetryPolicy", "Run", "Studies",
           *errors.__all__]

"""``client.webhooks``: the key's webhook endpoints and their deliveries
(``/v1/webhooks``; docs/webhooks.md), on :class:`~decido.client.Client` (blocking) and
:class:`~decido.client.AsyncClient` (each method a coroutine, ``deliveries`` an async
iterator). Answers are the service's JSON documents as dicts."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterator, Sequence
from typing import Any, Protocol, TypeVar, cast

from decido.client import _ops
from decido.client._protocol import Op

__all__ = ["AsyncWebhooks", "Webhooks"]

T = TypeVar("T")


class _Driver(Protocol):
    """What :class:`Webhooks` needs of a :class:`~decido.client.Client`: its driver."""

    def _drive(self, op: Op[T]) -> T: ...

    def _iterate(self, op: Op[Any]) -> Iterator[Any]: ...


class _AsyncDriver(Protocol):
    """What :class:`AsyncWebhooks` needs of an :class:`~decido.client.AsyncClient`."""

    def _drive(self, op: Op[T]) -> Awaitable[T]: ...

    def _iterate(self, op: Op[Any]) -> AsyncIterator[Any]: ...

_BASE = "/v1/webhooks"


def _changes(url: str | None, events: Sequence[str] | None, enabled: bool | None,
             description: str | None) -> dict[str, Any]:
    given = {"url": url, "events": None if events is None else list(events),
             "enabled": enabled, "description": description}
    return {k: v for k, v in given.items() if v is not None}


def _create(url: str, events: Sequence[str], description: str | None) -> Op[Any]:
    return _ops.fetch("POST", _BASE, _changes(url, events, None, description))


def _update(webhook_id: str, url: str | None, events: Sequence[str] | None,
            enabled: bool | None, description: str | None) -> Op[Any]:
    return _ops.fetch("PATCH", f"{_BASE}/{webhook_id}",
                      _changes(url, events, enabled, description))


class Webhooks:
    """The key's webhook endpoints (``client.webhooks``)."""

    def __init__(self, client: _Driver) -> None:
        self._client = client

    def create(self, url: str, events: Sequence[str] = ("*",),
               description: str | None = None) -> dict[str, Any]:
        """A new endpoint; its ``secret`` (``whsec_...``) is in this answer only."""
        return cast(dict[str, Any], self._client._drive(_create(url, events, description)))

    def list(self) -> list[dict[str, Any]]:
        """The key's endpoints, oldest first."""
        page = self._client._drive(_ops.fetch("GET", _BASE))
        return cast(list[dict[str, Any]], page["data"])

    def get(self, webhook_id: str) -> dict[str, Any]:
        """One endpoint (never its secret)."""
        return cast(dict[str, Any], self._client._drive(_ops.fetch("GET", f"{_BASE}/{webhook_id}")))

    def update(self, webhook_id: str, *, url: str | None = None,
               events: Sequence[str] | None = None, enabled: bool | None = None,
               description: str | None = None) -> dict[str, Any]:
        """Change what is given (``enabled=True`` resumes a disabled endpoint)."""
        return cast(dict[str, Any], self._client._drive(
            _update(webhook_id, url, events, enabled, description)))

    def delete(self, webhook_id: str) -> None:
        """Delete an endpoint and its deliveries."""
        self._client._drive(_ops.fetch("DELETE", f"{_BASE}/{webhook_id}"))

    def rotate(self, webhook_id: str) -> dict[str, Any]:
        """A new secret (in the answer); the previous one signs beside it for 24 h."""
        return cast(dict[str, Any], self._client._drive(
            _ops.fetch("POST", f"{_BASE}/{webhook_id}/rotate")))

    def test(self, webhook_id: str) -> dict[str, Any]:
        """Send a ``webhook.test`` event at once; its delivery."""
        return cast(dict[str, Any], self._client._drive(
            _ops.fetch("POST", f"{_BASE}/{webhook_id}/test")))

    def deliveries(self, webhook_id: str) -> Iterator[dict[str, Any]]:
        """Every delivery of the endpoint with its attempts, newest first."""
        return self._client._iterate(_ops.pages(f"{_BASE}/{webhook_id}/deliveries", {}))

    def resend(self, webhook_id: str, delivery_id: str) -> dict[str, Any]:
        """Attempt a delivery once more, at once, with the same ``webhook-id``."""
        return cast(dict[str, Any], self._client._drive(_ops.fetch(
            "POST", f"{_BASE}/{webhook_id}/deliveries/{delivery_id}/resend")))


class AsyncWebhooks:
    """:class:`Webhooks` for :class:`~decido.client.AsyncClient`."""

    def __init__(self, client: _AsyncDriver) -> None:
        self._client = client

    async def create(self, url: str, events: Sequence[str] = ("*",),
                     description: str | None = None) -> dict[str, Any]:
        """A new endpoint; its ``secret`` is in this answer only."""
        return cast(dict[str, Any], await self._client._drive(
            _create(url, events, description)))

    async def list(self) -> list[dict[str, Any]]:
        """The key's endpoints, oldest first."""
        page = await self._client._drive(_ops.fetch("GET", _BASE))
        return cast(list[dict[str, Any]], page["data"])

    async def get(self, webhook_id: str) -> dict[str, Any]:
        """One endpoint (never its secret)."""
        return cast(dict[str, Any], await self._client._drive(
            _ops.fetch("GET", f"{_BASE}/{webhook_id}")))

    async def update(self, webhook_id: str, *, url: str | None = None,
                     events: Sequence[str] | None = None, enabled: bool | None = None,
                     description: str | None = None) -> dict[str, Any]:
        """Change what is given."""
        return cast(dict[str, Any], await self._client._drive(
            _update(webhook_id, url, events, enabled, description)))

    async def delete(self, webhook_id: str) -> None:
        """Delete an endpoint and its deliveries."""
        await self._client._drive(_ops.fetch("DELETE", f"{_BASE}/{webhook_id}"))

    async def rotate(self, webhook_id: str) -> dict[str, Any]:
        """A new secret; the previous one signs beside it for 24 h."""
        return cast(dict[str, Any], await self._client._drive(
            _ops.fetch("POST", f"{_BASE}/{webhook_id}/rotate")))

    async def test(self, webhook_id: str) -> dict[str, Any]:
        """Send a ``webhook.test`` event at once; its delivery."""
        return cast(dict[str, Any], await self._client._drive(
            _ops.fetch("POST", f"{_BASE}/{webhook_id}/test")))

    def deliveries(self, webhook_id: str) -> AsyncIterator[dict[str, Any]]:
        """Every delivery of the endpoint with its attempts, newest first."""
        return self._client._iterate(_ops.pages(f"{_BASE}/{webhook_id}/deliveries", {}))

    async def resend(self, webhook_id: str, delivery_id: str) -> dict[str, Any]:
        """Attempt a delivery once more, at once, with the same ``webhook-id``."""
        return cast(dict[str, Any], await self._client._drive(_ops.fetch(
            "POST", f"{_BASE}/{webhook_id}/deliveries/{delivery_id}/resend")))

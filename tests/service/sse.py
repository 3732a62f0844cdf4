"""A small Server-Sent Events reader for the tests (``http.client``, no library)."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Event:
    """One event of a stream (``kind`` ``"comment"`` for a ``:`` line)."""

    kind: str
    id: str | None
    data: Any


class Stream:
    """An open ``GET .../events`` response."""

    def __init__(self, port: int, path: str, headers: dict[str, str],
                 timeout: float = 60) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        self.conn.request("GET", path, headers=headers)
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.headers = {k.lower(): v for k, v in self.response.getheaders()}

    def events(self) -> Iterator[Event]:
        """Events until the server ends the stream."""
        kind, ident, data = "message", None, None
        while True:
            line = self.response.readline()
            if not line:
                return
            text = line.decode().rstrip("\r\n")
            if text == "":
                if data is not None:
                    yield Event(kind, ident, json.loads(data))
                kind, ident, data = "message", None, None
            elif text.startswith(":"):
                yield Event("comment", None, text[1:].strip())
            else:
                name, _, value = text.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if name == "event":
                    kind = value
                elif name == "id":
                    ident = value
                elif name == "data":
                    assert data is None, "one data line per event"
                    data = value

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

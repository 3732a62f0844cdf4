"""Large fronts against a running service: what a page of runs, a run and a front's pages
weigh, and what listing them does to ``/v1/health`` (issue 38, High 3).

    python benchmarks/load/fronts.py URL KEY [--runs 3] [--points 10000] [--dims 50]
                                             [--rounds 7] [--listers 4] [--seconds 10]

Submits ``--runs`` runs (one at a time: a free key runs one at once) whose every point is
on their front (two objectives, ``x[0]`` against ``-x[0]``; ``archive_size`` =
``--points``, ``--dims`` variables each: about 1 KB a point at 50), waits for each, then
reports the bytes and the median milliseconds (``--rounds``) of ``GET /v1/runs``
(``limit=20``) and ``GET /v1/runs/{id}``, the pages of ``GET /v1/runs/{id}/front`` (how
many, the largest, the time to read them all), and, while ``--listers`` threads list the
runs without pause for ``--seconds``, the median, 99th percentile and largest time of ``/v1/health``
(asked every 50 ms) and the largest resident size of the server's processes when
``--pid`` names its main process.
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit


class Api:
    """One request per connection to the service at ``url`` with ``key``."""

    def __init__(self, url: str, key: str) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.key = key

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, bytes, float]:
        """Status, body and seconds of one request."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=600)
        headers = {"Authorization": f"Bearer {self.key}"}
        data = None
        if body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        started = time.perf_counter()
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            content = response.read()
        finally:
            conn.close()
        return response.status, content, time.perf_counter() - started


def front_run(points: int, dims: int, seed: int) -> dict[str, Any]:
    """A run whose every point is on its front: ``points`` points of ``dims`` variables."""
    return {"bounds": [[0, 1]] * dims, "seed": seed, "max_evaluations": 3 * points,
            "archive_size": points,
            "objectives": [{"name": "a", "expression": "x[0]"},
                           {"name": "b", "expression": "-x[0]"}]}


def finished(api: Api, body: dict[str, Any]) -> str:
    """Submit ``body`` and wait for its run to end; its id."""
    status, content, _ = api.call("POST", "/v1/runs", body)
    if status != 202:
        raise SystemExit(f"submission refused: {status} {content[:300]!r}")
    run_id: str = json.loads(content)["id"]
    while json.loads(api.call("GET", f"/v1/runs/{run_id}")[1])["state"] in ("queued",
                                                                              "running"):
        time.sleep(0.2)
    return run_id


def median_ms(api: Api, path: str, rounds: int) -> tuple[int, float]:
    """The bytes of ``path``'s answer and its median milliseconds."""
    sizes, times = [], []
    for _ in range(rounds):
        _, content, seconds = api.call("GET", path)
        sizes.append(len(content))
        times.append(seconds)
    return max(sizes), statistics.median(times) * 1e3


def front_pages(api: Api, run_id: str) -> tuple[int, int, float, int]:
    """Pages, the largest page's bytes, the milliseconds to read them all, the points."""
    pages, largest, points, query = 0, 0, 0, ""
    started = time.perf_counter()
    while True:
        _, content, _ = api.call("GET", f"/v1/runs/{run_id}/front{query}")
        page = json.loads(content)
        pages, largest, points = pages + 1, max(largest, len(content)), points + len(page["data"])
        if not page["has_more"]:
            return pages, largest, (time.perf_counter() - started) * 1e3, points
        query = f"?starting_after={page['first'] + len(page['data']) - 1}"


def rss_mib(pid: int) -> float:
    """The resident MiB of ``pid`` and its children (Linux /proc)."""
    total = 0
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            text = status.read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        if int(fields.get("PPid", "0").strip() or 0) == pid or int(status.parent.name) == pid:
            total += int(fields.get("VmRSS", "0 kB").split()[0])
    return total / 1024


def under_load(api: Api, listers: int, seconds: float, pid: int | None) -> dict[str, float]:
    """``/v1/health`` while ``listers`` threads list the runs without pause."""
    stop = threading.Event()

    def lister() -> None:
        while not stop.is_set():
            api.call("GET", "/v1/runs?limit=20")

    threads = [threading.Thread(target=lister) for _ in range(listers)]
    for thread in threads:
        thread.start()
    health: list[float] = []
    rss = 0.0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        health.append(api.call("GET", "/v1/health")[2] * 1e3)
        if pid is not None:
            rss = max(rss, rss_mib(pid))
        time.sleep(0.05)
    stop.set()
    for thread in threads:
        thread.join()
    return {"health_p50_ms": statistics.median(health),
            "health_p99_ms": statistics.quantiles(health, n=100, method="inclusive")[98],
            "health_max_ms": max(health), "rss_max_mib": rss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("key")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--points", type=int, default=10_000)
    parser.add_argument("--dims", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--listers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--pid", type=int, default=None)
    args = parser.parse_args()
    api = Api(args.url, args.key)
    ids = [finished(api, front_run(args.points, args.dims, seed)) for seed in range(args.runs)]
    out: dict[str, Any] = {}
    out["list_bytes"], out["list_ms"] = median_ms(api, "/v1/runs?limit=20", args.rounds)
    out["run_bytes"], out["run_ms"] = median_ms(api, f"/v1/runs/{ids[0]}", args.rounds)
    (out["front_pages"], out["front_page_max_bytes"], out["front_ms"],
     out["front_points"]) = front_pages(api, ids[0])
    out.update(under_load(api, args.listers, args.seconds, args.pid))
    print(json.dumps({k: round(v, 1) if isinstance(v, float) else v for k, v in out.items()},
                     indent=1))


if __name__ == "__main__":
    main()

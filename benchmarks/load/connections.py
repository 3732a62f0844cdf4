"""What the per-address connection cap costs: a new connection per request, cap on and off.

    python benchmarks/load/connections.py [--requests 3000] [--clients 16] [--rounds 4]

Starts two ``decido serve`` (one worker each, temporary databases): one with the default
cap (``DECIDO_CONNECTIONS_PER_ADDRESS=64``), one without (``0``). Each round sends
``requests`` health checks to each server, every one on its own connection
(``Connection: close``) from ``clients`` concurrent clients, so the cap's two signal
handlers (``http.lifecycle.begin``/``complete``) run once per request, and reports the
server's CPU time per request (from ``/proc``) of each, the median over interleaved rounds.
With keep-alive connections (``run.py``) the handlers run once per connection, not per
request. Only 127.0.0.1 is contacted; both servers are stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run  # noqa: E402 - the load script's server helpers, beside this file

REQUEST = b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


async def _burst(port: int, total: int, clients: int) -> int:
    """``total`` requests, each on a new connection, ``clients`` at a time; the 200s."""
    left, ok = [total], [0]

    async def client() -> None:
        while left[0] > 0:
            left[0] -= 1
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(REQUEST)
            answer = await reader.read()
            writer.close()
            ok[0] += answer.startswith(b"HTTP/1.1 200 ")

    await asyncio.gather(*(client() for _ in range(clients)))
    return ok[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="decido-conn-"))
    log = open(tmp / "servers.log", "wb")  # noqa: SIM115 - closed at the end
    servers = {}
    for name, cap in (("cap 64", "64"), ("no cap", "0")):
        port = run._free_port()
        env = {**os.environ, "DECIDO_CONNECTIONS_PER_ADDRESS": cap}
        proc = subprocess.Popen([*run._decido(), "serve", "--port", str(port), "--db",
                                 str(tmp / f"{cap}.db"), "--workers", "1"], stdout=log,
                                stderr=log, env=env, start_new_session=True)
        servers[name] = (proc, port)
    cpu: dict[str, list[float]] = {name: [] for name in servers}
    try:
        for proc, port in servers.values():
            run._wait_up(f"http://127.0.0.1:{port}/v1/health", proc)
        for _ in range(args.rounds):
            for name, (proc, port) in servers.items():
                before = run._tree_cpu_seconds(proc.pid)
                ok = asyncio.run(_burst(port, args.requests, args.clients))
                used = run._tree_cpu_seconds(proc.pid) - before
                if ok != args.requests:
                    raise RuntimeError(f"{name}: {args.requests - ok} answers were not 200")
                cpu[name].append(used / args.requests * 1e6)
    finally:
        for proc, _ in servers.values():
            run._stop(proc)
        log.close()
    result = {name: round(statistics.median(v), 1) for name, v in cpu.items()}
    print(f"{args.requests} requests per round, one connection each, {args.clients} clients, "
          f"{args.rounds} rounds; server CPU us per request (median; rounds)")
    for name, values in cpu.items():
        print(f"  {name:7} {result[name]:7.1f}   {', '.join(f'{v:.1f}' for v in values)}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

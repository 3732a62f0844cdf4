"""Instructions per request: the server under callgrind, counted over a fixed number of requests.

    python benchmarks/load/instructions.py [--targets hello,health,decide] [--requests 2000]
                                           [--connections 16] [--cache-sim]
                                           [--json PATH]

On a shared VM, a change of 1-2 us of CPU per request is lost in the noise of timed runs;
an instruction count is not (valgrind counts the same total for the same code and inputs,
whatever else the machine does: about +-0.2 % per request here). Each target's server runs
in one process under ``valgrind --tool=callgrind`` (decido: the app of ``decido serve``;
hello: ``benchmarks/load/hello.py``'s app), is warmed up, then its counters are zeroed and
dumped by signals around ``--requests`` requests made over ``--connections`` keep-alive
connections (SIGUSR1 and SIGUSR2, handled by a three-line helper built with the
system C compiler from valgrind's ``callgrind.h``). Prints the events per request (``Ir``:
instructions; with ``--cache-sim``, also the simulated cache misses, which is where a
change in instructions and a change in time part ways). Run a variant of the service by
putting it first on ``PYTHONPATH``. Needs valgrind (with its headers) and a C compiler;
takes about 20 s per target.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run  # noqa: E402 - the load script's client pieces, beside this file

from decido_service.serve import BLAS_THREAD_VARIABLES  # noqa: E402

HELPER_C = """#include <valgrind/callgrind.h>
void decido_cg_zero(void) { CALLGRIND_ZERO_STATS; }
void decido_cg_dump(void) { CALLGRIND_DUMP_STATS; }
"""
WARM_UP = 300


def _build_helper(directory: Path) -> Path:
    source, library = directory / "cg_helper.c", directory / "cg_helper.so"
    source.write_text(HELPER_C)
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O1", "-o", str(library),
                    str(source)], check=True)
    return library


def _serve(target: str, port: int, helper: str) -> None:
    """The server side (runs under valgrind): one process, signals around the count."""
    import ctypes  # noqa: PLC0415

    from sanic import Sanic  # noqa: PLC0415

    lib = ctypes.CDLL(helper)
    signal.signal(signal.SIGUSR1, lambda *_: lib.decido_cg_zero())
    signal.signal(signal.SIGUSR2, lambda *_: lib.decido_cg_dump())
    if target.startswith("hello"):
        import hello  # noqa: PLC0415

        app = hello.create_app()
    else:
        from decido_service.http.app import create_app  # noqa: PLC0415

        app = create_app()
    app.prepare(host="127.0.0.1", port=port, access_log=False, motd=False, single_process=True)
    Sanic.serve_single(app)


async def _count(port: int, request: bytes, connections: int, total: int) -> dict[int, int]:
    """Exactly ``total`` requests over ``connections`` keep-alive connections."""
    sent = [0]
    statuses: dict[int, int] = {}

    async def one() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            while sent[0] < total:
                sent[0] += 1
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                framing = run._CONTENT_LENGTH.search(head)
                await reader.readexactly(int(framing[1]) if framing else 0)
                status = int(head[9:12])
                statuses[status] = statuses.get(status, 0) + 1
        finally:
            writer.close()

    await asyncio.gather(*(one() for _ in range(connections)))
    return statuses


def _events(path: Path) -> dict[str, int]:
    names: list[str] = []
    for line in path.read_text().splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        elif line.startswith(("summary:", "totals:")):
            return dict(zip(names, map(int, line.split()[1:]), strict=False))
    raise RuntimeError(f"no summary in {path}")


TARGETS = {
    "hello": ("GET", "/", None, False),
    "hello+hdr": ("GET", "/headers", None, False),
    "hello+enc": ("GET", "/headers-encoded", None, False),
    "health": ("GET", "/v1/health", None, False),
    "engines": ("GET", "/v1/engines", None, False),
    "decide": ("POST", "/v1/decide", run.DECIDE, True),
    "decide-nolog": ("POST", "/v1/decide", {**run.DECIDE, "log": False}, True),
}


def measure(target: str, requests: int, connections: int, cache_sim: bool,
            work: Path, helper: Path, env: dict[str, str], key: str) -> dict[str, float]:
    """Events per request of one target."""
    method, path, body, keyed = TARGETS[target]
    port = run._free_port()
    out = work / f"cg-{target}.out"
    for old in work.glob(f"cg-{target}.out*"):
        old.unlink()
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
           f"--cache-sim={'yes' if cache_sim else 'no'}", sys.executable, __file__,
           "--serve", target, str(port), str(helper)]
    log = open(work / f"{target}.log", "wb")  # noqa: SIM115 - closed below
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log,
                              start_new_session=True)
    try:
        probe = "/" if target.startswith("hello") else "/v1/health"
        run._wait_up(f"http://127.0.0.1:{port}{probe}", server, timeout=300)
        request = run._request_bytes(method, path, body,
                                     {"Authorization": f"Bearer {key}"} if keyed else {})
        asyncio.run(_count(port, request, connections, WARM_UP))
        server.send_signal(signal.SIGUSR1)
        time.sleep(1.0)
        statuses = asyncio.run(_count(port, request, connections, requests))
        server.send_signal(signal.SIGUSR2)
        dump = out.with_name(out.name + ".1")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (dump.exists() and _complete(dump)):
            time.sleep(0.2)
        if set(statuses) != {200}:
            raise RuntimeError(f"{target}: statuses {statuses}")
        return {name: count / requests for name, count in _events(dump).items()}
    finally:
        run._stop(server)
        log.close()


def _complete(path: Path) -> bool:
    text = path.read_text()
    return "\nsummary:" in text or "\ntotals:" in text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", default="hello,health,decide",
                    help=f"comma-separated, of {', '.join(TARGETS)}")
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--cache-sim", action="store_true", help="simulate the caches too")
    ap.add_argument("--json", type=Path, help="also write the events per request there")
    ap.add_argument("--serve", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        _serve(args.serve[0], int(args.serve[1]), args.serve[2])
        return 0
    targets = args.targets.split(",")
    unknown = set(targets) - set(TARGETS)
    if unknown:
        ap.error(f"unknown targets {sorted(unknown)}")

    work = Path(tempfile.mkdtemp(prefix="decido-cg-"))
    helper = _build_helper(work)
    db = str(work / "decido.db")
    # one BLAS thread, as ``decido serve`` sets it: an idle OpenBLAS pool thread spins under
    # valgrind and its instructions would be counted as the server's
    env = {**os.environ, **dict.fromkeys(BLAS_THREAD_VARIABLES, "1"), "DECIDO_DB": db,
           "DECIDO_PLANS": json.dumps({"sdk": {"minute": run.BIG, "month": run.BIG}}),
           "PYTHONPATH": os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"),
                                                       str(HERE)]))}
    made = subprocess.run([*run._decido(), "keys", "create",
                           "--create", "--plan", "sdk", "--db", db,
                           "--json"], capture_output=True, text=True, check=True, env=env)
    key = json.loads(made.stdout)["key"]
    rows = {t: measure(t, args.requests, args.connections, args.cache_sim, work, helper, env,
                       key) for t in targets}
    names = list(next(iter(rows.values())))
    print(f"events per request ({args.requests} requests, {args.connections} connections; "
          f"callgrind files in {work})")
    print(f"{'target':10} " + " ".join(f"{n:>10}" for n in names))
    for target, row in rows.items():
        print(f"{target:10} " + " ".join(f"{row[n]:>10.1f}" for n in names))
    if args.json:
        args.json.write_text(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The dashboard's speed: page server time with 10,000 runs, first-visit transfer, plot time.

1. **Server time.** A key with ``--runs`` (10,000) finished runs is written straight into a
   fresh SQLite store (each with a request, a 20-variable result and a 200-point trace), a
   one-worker ``decido serve`` starts on it, the script signs in through the form and asks
   each page ``--requests`` times, one at a time; the server's own time per request is
   read from its access log (``ms``), and p50/p99 are reported per page.
2. **First visit.** Headless chromium (Debian's, through Playwright) with an empty cache
   signs in and opens the overview, then a run page; the bytes on the wire (compressed
   bodies and headers, as the browser received them) are summed per page and in all.
3. **Plot time.** On a run page, ``decidoDash.drawConvergence`` draws 100,000 points
   (linear and log y); the time from the call to the next animation frame is reported
   (median and max of ``--draws``).

``--screenshots DIR`` instead makes the README's screenshots: a small live store with real
runs and a decision, the overview, a run page and a run of two objectives (its front) at
375 and 1280 px wide.

    python benchmarks/load/dashboard.py [--runs 10000] [--requests 200] [--json out.json]
    python benchmarks/load/dashboard.py --screenshots docs/images

Only 127.0.0.1 is contacted; the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

from run import _decido, _free_port, _stop, _wait_up

CHROMIUM = "/usr/bin/chromium"
DIMS = 20
TRACE = 200
PAGES = ["/dashboard", "/dashboard/runs", "/dashboard/runs?state=succeeded&engine=de",
         "/dashboard/runs/{run}", "/dashboard/runs/{run}/trace.json", "/dashboard/compare",
         "/dashboard/decisions", "/dashboard/keys", "/dashboard/engines", "/dashboard/decide"]


async def _populate(db: str, runs: int) -> tuple[str, list[str]]:
    """A sdk/team key and ``runs`` finished runs of it; (secret, run ids, newest last)."""
    import msgspec

    from decido_service.store import iso_utc, open_store
    from decido_service.types import RunDocument

    store = await open_store(db)
    try:
        record, secret = await store.accounts.create_key("sdk", "team", "bench")
        ids = []
        rng = random.Random(1)
        finished = iso_utc(time.time())  # recent: runs are kept DECIDO_RUN_RETENTION_DAYS
        for i in range(runs):
            run_id = f"run_{i:024x}"
            best = 100.0
            trace = []
            for k in range(TRACE):
                best *= rng.uniform(0.9, 1.0)
                trace.append([(k + 1) * 50, (k + 1) * 0.06, best])
            engine = ("dss", "de", "cmaes", "pso")[i % 4]
            doc = {"request": {"bounds": [[-5.0, 5.0]] * DIMS, "engine": engine,
                               "objective_expression": "sum(x**2)", "goal": "minimize",
                               "seed": i, "max_evaluations": 10_000, "time_limit": None,
                               "target": None, "options": {}},
                   "budget": {"max_evaluations": 10_000, "time_limit": 30.0},
                   "started_at": "2026-01-01T00:00:00Z", "progress": None, "problem": None,
                   "result": {"x": [rng.uniform(-5, 5) for _ in range(DIMS)], "value": best,
                              "evaluations": TRACE * 50, "iterations": TRACE,
                              "status": "max_evaluations", "message": "", "elapsed_ms": 12.5,
                              "seed": i, "feasible": True, "max_violation": 0.0,
                              "constraints": [], "variables": None},
                   "trace": trace}
            await store.runs.record({
                "id": run_id, "key_id": record["id"], "engine": engine, "dims": DIMS,
                "goal": "minimize", "seed": i, "state": "succeeded", "status": "max_evaluations",
                "value": best, "evaluations": TRACE * 50, "elapsed_ms": 12.5,
                "document": msgspec.convert(doc, RunDocument), "finished_at": finished})
            ids.append(run_id)
        return secret, ids
    finally:
        await store.close()


def _start(db: str, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    with open(log, "ab") as out:
        proc = subprocess.Popen([*_decido(), "serve", "--workers", "1", "--port", str(port),
                                 "--db", db], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    _wait_up(f"http://127.0.0.1:{port}/v1/health", proc)
    return proc, port


def _sign_in(port: int, key: str) -> str:
    """The session cookie of a sign-in through the form."""
    conn = HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/dashboard/sign-in")
    form = conn.getresponse()
    body = form.read().decode()
    nonce = re.search(r"decido_signin=([0-9a-f]+)", form.getheader("set-cookie", "")).group(1)
    token = re.search(r'name="csrf" value="([0-9a-f]+)"', body).group(1)
    conn.request("POST", "/dashboard/sign-in", urllib.parse.urlencode(
        {"csrf": token, "key": key}), {"Content-Type": "application/x-www-form-urlencoded",
                                       "Cookie": f"decido_signin={nonce}"})
    done = conn.getresponse()
    done.read()
    return re.search(r"decido_session=([^;]+)", done.getheader("set-cookie", "")).group(1)


def server_times(port: int, cookie: str, run_id: str, requests: int, log: Path
                 ) -> dict[str, dict[str, float]]:
    """p50/p99 of the server's time per page, from its access log."""
    conn = HTTPConnection("127.0.0.1", port, timeout=30)
    paths = [p.format(run=run_id) for p in PAGES]
    for _ in range(requests):
        for path in paths:
            conn.request("GET", path, headers={"Cookie": f"decido_session={cookie}"})
            response = conn.getresponse()
            response.read()
            assert response.status == 200, (path, response.status)
    time.sleep(0.5)  # the access log is flushed within 0.05 s
    times: dict[str, list[float]] = {}
    for line in log.read_text().splitlines():
        if line.startswith("{") and '"path":"/dashboard' in line:
            entry = json.loads(line)
            times.setdefault(entry["path"], []).append(entry["ms"])
    out = {}
    for path, ms in times.items():
        if len(ms) >= requests:  # /dashboard/runs: with and without filters
            ms = sorted(ms)
            out[path] = {"p50_ms": round(statistics.median(ms), 2),
                         "p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 2), "n": len(ms)}
    return out


def browser_numbers(port: int, key: str, run_id: str, draws: int) -> dict[str, Any]:
    """First-visit bytes on the wire and the 100,000-point draw time, in chromium."""
    from playwright.sync_api import sync_playwright

    origin = f"http://127.0.0.1:{port}"
    out: dict[str, Any] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        seen: list[Any] = []
        page.on("requestfinished", lambda r: seen.append(r))

        def wire_bytes() -> tuple[int, int]:
            page.wait_for_load_state("networkidle")
            sizes = [r.sizes() for r in seen]
            seen.clear()
            return (sum(s["responseBodySize"] + s["responseHeadersSize"] for s in sizes),
                    len(sizes))

        page.goto(origin + "/dashboard/sign-in")  # an empty cache: the first visit
        page.fill("#key", key)
        page.click("button[type=submit]")
        page.wait_for_url(origin + "/dashboard")
        out["sign-in and overview bytes"], out["sign-in and overview requests"] = wire_bytes()
        page.goto(origin + f"/dashboard/runs/{run_id}")
        out["then a run page bytes"], out["then a run page requests"] = wire_bytes()
        out["first visit bytes in all"] = (out["sign-in and overview bytes"]
                                           + out["then a run page bytes"])
        for log in (False, True):
            ms = page.evaluate("""async ([n, draws, log]) => {
                const xs = new Array(n), ys = new Array(n);
                let best = 1000;
                for (let i = 0; i < n; i++) { best *= 0.99999; xs[i] = i * 10; ys[i] = best; }
                const out = [];
                for (let k = 0; k < draws; k++) {
                  const t0 = performance.now();
                  window.decidoDash.drawConvergence(xs, ys, {log: log});
                  await new Promise(r => requestAnimationFrame(() => r()));
                  out.push(performance.now() - t0);
                }
                return out;
            }""", [100_000, draws, log])
            label = "log y" if log else "linear y"
            out[f"100,000 points ({label}) median ms"] = round(statistics.median(ms), 1)
            out[f"100,000 points ({label}) max ms"] = round(max(ms), 1)
        browser.close()
    return out


def screenshots(directory: Path) -> None:
    """The README's screenshots from a small live store with real runs (one of two
    objectives: its front) and a decision."""
    from playwright.sync_api import sync_playwright

    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "shots.db")
        proc, port = _start(db, Path(tmp) / "server.log")
        try:
            key = json.loads(subprocess.run(
                [*_decido(), "keys", "create",
                 "--create", "--plan", "sdk", "--tier", "team", "--label",
                 "demo", "--db", db, "--json"], capture_output=True, check=True).stdout)["key"]
            origin = f"http://127.0.0.1:{port}"
            headers = {"X-API-Key": key, "Content-Type": "application/json"}
            run_ids = []
            for engine, seed in (("de", 1), ("cmaes", 2), ("pso", 3), ("dss", 4)):
                body = {"bounds": [[-5.12, 5.12]] * 30, "engine": engine, "seed": seed,
                        "objective_expression": "10*n + sum(x**2 - 10*cos(2*pi*x))",
                        "max_evaluations": 60_000}
                req = urllib.request.Request(origin + "/v1/runs", json.dumps(body).encode(),
                                             headers)
                with urllib.request.urlopen(req) as r:
                    run_ids.append(json.loads(r.read())["id"])
            several = {"bounds": [[0, 1]] * 10, "seed": 5, "max_evaluations": 20_000,
                       "objectives": [{"name": "weight", "expression": "x[0]"},
                                      {"name": "cost", "expression":
                                       "(1 - sqrt(x[0]))**2 + sum(x[1:]**2)"}]}
            req = urllib.request.Request(origin + "/v1/runs", json.dumps(several).encode(),
                                         headers)
            with urllib.request.urlopen(req) as r:
                front_id = json.loads(r.read())["id"]
            decision = {"options": [{"id": "s1", "attributes": {"price": 18.5, "quality": 7.2}},
                                    {"id": "s2", "attributes": {"price": 22.0, "quality": 8.1}}],
                        "method": "topsis",
                        "criteria": [{"attribute": "price", "goal": "minimize", "weight": 5},
                                     {"attribute": "quality", "weight": 3}]}
            urllib.request.urlopen(urllib.request.Request(
                origin + "/v1/decide", json.dumps(decision).encode(), headers)).read()
            time.sleep(5)  # the runs finish
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                for width in (375, 1280):
                    context = browser.new_context(viewport={"width": width, "height": 800})
                    page = context.new_page()
                    page.goto(origin + "/dashboard/sign-in")
                    page.fill("#key", key)
                    page.click("button[type=submit]")
                    page.wait_for_url(origin + "/dashboard")
                    page.screenshot(path=str(directory / f"dashboard-overview-{width}.png"),
                                    full_page=True)
                    page.goto(origin + f"/dashboard/runs/{run_ids[0]}")
                    page.wait_for_function("() => window.decidoDash.finished === true")
                    page.check("#log-y")
                    page.screenshot(path=str(directory / f"dashboard-run-{width}.png"),
                                    full_page=True)
                    page.goto(origin + f"/dashboard/runs/{front_id}")
                    page.wait_for_function("() => window.decidoDash.finished === true")
                    page.screenshot(path=str(directory / f"dashboard-front-{width}.png"),
                                    full_page=True)
                    context.close()
                browser.close()
        finally:
            _stop(proc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--draws", type=int, default=7)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--screenshots", type=Path)
    args = parser.parse_args(argv)
    if args.screenshots:
        screenshots(args.screenshots)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.db")
        started = time.monotonic()
        key, ids = asyncio.run(_populate(db, args.runs))
        print(f"{args.runs} runs written in {time.monotonic() - started:.1f} s", file=sys.stderr)
        log = Path(tmp) / "server.log"
        proc, port = _start(db, log)
        try:
            cookie = _sign_in(port, key)
            results: dict[str, Any] = {
                "runs": args.runs,
                "server": server_times(port, cookie, ids[len(ids) // 2], args.requests, log),
                "browser": browser_numbers(port, key, ids[-1], args.draws)}
        finally:
            _stop(proc)
    width = max(len(p) for p in results["server"])
    for path, row in results["server"].items():
        print(f"{path:<{width}}  p50 {row['p50_ms']:7.2f} ms  p99 {row['p99_ms']:7.2f} ms")
    for name, value in results["browser"].items():
        print(f"{name}: {value}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

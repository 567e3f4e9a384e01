"""Concurrent streams under CPU load (issue 35): errors by type, time to first event and to
completion, against a real ``citewise serve`` process, for this tree and a baseline tree.

Each server (``python -m citewise serve`` with ``PYTHONPATH`` set to the tree's ``src``) is
sent ``--rounds`` bursts of ``--streams`` streaming requests at once, a pause of ``--gap``
seconds between bursts (clients idle between questions; their pooled connections are
reused by the next burst). The streams alternate between four clients: the official
``openai`` client (Responses, then Chat Completions; ``max_retries=0``, so a broken
connection is counted, not retried away) and raw httpx (the same two routes). While they
run, ``--load`` busy processes keep the CPUs loaded; the report states the load average.

Then ``--reuse`` clients of one connection each send a stream, idle just under httpx's
keep-alive expiry (4.9-5.0 s), and send a second stream on the same connection, while 30
other streams keep the server busy: the race between a client's reuse and the server's
keep-alive close that broke streams with a ``ReadError`` in issue 35, made frequent.

    flock /work/scratch/heavy.lock .venv/bin/python benchmarks/streams.py \\
        --home /work/scratch/streams35/home --kb lgos --baseline /work/main/src \\
        --output benchmarks/streams.json
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import multiprocessing
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import openai

HERE = Path(__file__).resolve().parent
QUESTION = "How do I add API key authentication?"
SETUP = ("kb", "streams", "rounds", "gap", "load", "reuse")
CLIENT_TIMEOUT = 600.0  # the openai client's default; a stream is never cut by the client


def _burn(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(src: Path, home: Path, kb: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITEWISE_")}
    env.update(PYTHONPATH=str(src), CITEWISE_HOME=str(home))
    server = subprocess.Popen(
        [sys.executable, "-m", "citewise", "serve", "--kb", kb, "--port", str(port),
         "--log-level", "warning"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert server.poll() is None, f"the server of {src} exited"
        try:
            if httpx.get(f"{base}/healthz", timeout=5).status_code == 200:
                return server, base
        except httpx.TransportError:
            time.sleep(0.2)
    server.kill()
    raise RuntimeError(f"the server of {src} did not start")


def _error(error: BaseException) -> str:
    cause = error.__cause__ or error.__context__
    if isinstance(error, openai.APIError) and cause is not None:
        return f"{type(error).__name__} ({type(cause).__name__})"
    return type(error).__name__


Result = tuple[str, float | None, float]  # outcome, seconds to first event, to the end


async def _openai_stream(client: openai.AsyncOpenAI, number: int, chat: bool) -> Result:
    started = time.perf_counter()
    first: float | None = None
    ended = False
    try:
        if chat:
            chunks = await client.chat.completions.create(
                model="citewise-rag", stream=True,
                messages=[{"role": "user", "content": f"{QUESTION} ({number})"}],
            )  # fmt: skip
            async for chunk in chunks:
                first = first or time.perf_counter() - started
                ended = ended or any(c.finish_reason == "stop" for c in chunk.choices)
        else:
            events = await client.responses.create(
                model="citewise-rag", input=f"{QUESTION} ({number})", stream=True
            )
            async for event in events:
                first = first or time.perf_counter() - started
                ended = ended or event.type == "response.completed"
    except Exception as error:
        return _error(error), first, time.perf_counter() - started
    return ("ok" if ended else "no terminal event"), first, time.perf_counter() - started


async def _httpx_stream(client: httpx.AsyncClient, number: int, chat: bool) -> Result:
    started = time.perf_counter()
    first: float | None = None
    if chat:
        path, end = "/v1/chat/completions", "data: [DONE]"
        body: dict[str, Any] = {"messages": [{"role": "user", "content": f"{QUESTION} ({number})"}]}
    else:
        path, end = "/v1/responses", "event: response.completed"
        body = {"input": f"{QUESTION} ({number})"}
    try:
        async with client.stream(
            "POST", path, json={"model": "citewise-rag", "stream": True, **body}
        ) as response:
            if response.status_code != 200:
                return f"HTTP {response.status_code}", None, time.perf_counter() - started
            text = ""
            async for piece in response.aiter_text():
                first = first or time.perf_counter() - started
                text += piece
    except httpx.HTTPError as error:
        return _error(error), first, time.perf_counter() - started
    outcome = "ok" if end in text else "no terminal event"
    return outcome, first, time.perf_counter() - started


async def _rounds(base: str, streams: int, rounds: int, gap: float) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=streams, max_keepalive_connections=streams)
    api = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="none", max_retries=0,
                             timeout=CLIENT_TIMEOUT)  # fmt: skip
    raw = httpx.AsyncClient(base_url=base, timeout=CLIENT_TIMEOUT, limits=limits)
    results: list[Result] = []
    loads: list[float] = []
    try:
        await _httpx_stream(raw, -1, False)  # warm-up: the embedder loads, the index opens
        for round_ in range(rounds):
            if round_:
                await asyncio.sleep(gap)
            loads.append(os.getloadavg()[0])
            jobs = []
            for n in range(streams):
                number = round_ * streams + n
                kind = n % 4
                if kind < 2:
                    jobs.append(_openai_stream(api, number, chat=kind == 1))
                else:
                    jobs.append(_httpx_stream(raw, number, chat=kind == 3))
            results += await asyncio.gather(*jobs)
    finally:
        await raw.aclose()
        await api.close()
    loads.append(os.getloadavg()[0])
    return _summary(results, loads)


HTTPX_EXPIRY = 5.0  # httpx.Limits' default keepalive_expiry (the openai client's too)


async def _reuse(base: str, clients: int) -> dict[str, Any]:
    """Outcomes of second streams sent on a connection idle just under the client's expiry."""
    stop = asyncio.Event()
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)

    async def pressure(client: httpx.AsyncClient) -> None:
        number = 10**6
        while not stop.is_set():
            await asyncio.gather(*(_httpx_stream(client, number + k, False) for k in range(30)))
            number += 30

    async def pair(number: int) -> Result:
        one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        async with httpx.AsyncClient(base_url=base, timeout=CLIENT_TIMEOUT, limits=one) as c:
            await _httpx_stream(c, number, False)
            await asyncio.sleep(random.uniform(HTTPX_EXPIRY - 0.1, HTTPX_EXPIRY))
            return await _httpx_stream(c, number + clients, True)

    async with httpx.AsyncClient(base_url=base, timeout=CLIENT_TIMEOUT, limits=limits) as busy:
        background = asyncio.create_task(pressure(busy))
        await asyncio.sleep(1)
        results = await asyncio.gather(*(pair(n) for n in range(clients)))
        stop.set()
        await background
    outcomes = collections.Counter(outcome for outcome, _, _ in results)
    return {"streams": clients, "errors": clients - outcomes["ok"], "outcomes": dict(outcomes)}


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 3)


def _summary(results: list[Result], loads: list[float]) -> dict[str, Any]:
    outcomes = collections.Counter(outcome for outcome, _, _ in results)
    ok = [r for r in results if r[0] == "ok"]
    firsts = [first for _, first, _ in ok if first is not None]
    ends = [end for _, _, end in ok]
    return {
        "streams": len(results),
        "errors": len(results) - outcomes["ok"],
        "outcomes": dict(outcomes),
        "first_event_s": {"p50": _percentile(firsts, 0.5), "p95": _percentile(firsts, 0.95)},
        "completion_s": {"p50": _percentile(ends, 0.5), "p95": _percentile(ends, 0.95)},
        "load_1m": {"min": round(min(loads), 2), "max": round(max(loads), 2)},
    }


def measure(src: Path, args: argparse.Namespace) -> dict[str, Any]:
    server, base = _serve(src, Path(args.home), args.kb)
    try:
        report = asyncio.run(_rounds(base, args.streams, args.rounds, args.gap))
        if args.reuse:
            report["reuse"] = asyncio.run(_reuse(base, args.reuse))
        return report
    finally:
        server.terminate()
        server.wait(timeout=30)


def format_report(report: dict[str, Any]) -> str:
    setup = report["setup"]
    lines = [
        "# Concurrent streams under load (issue 35)",
        "",
        f"`{report['command']}`",
        "",
        f"{setup['rounds']} bursts of {setup['streams']} streams at once ({setup['gap']} s "
        f"between bursts) to `citewise serve` (knowledge base `{setup['kb']}`, extractive "
        f"answers), {setup['load']} busy processes beside it on {setup['cpus']} CPUs. Streams "
        "alternate: `openai` Responses, `openai` Chat Completions (max_retries=0), httpx "
        "Responses, httpx Chat Completions; an error is any stream without its terminal "
        "event. Times are seconds from the request.",
        "",
        "| server | streams | errors | outcomes | first event p50 / p95 | completion p50 / "
        "p95 | load average (1 min) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in ("baseline", "branch"):
        if name not in report:
            continue
        run = report[name]
        outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(run["outcomes"].items()))
        lines.append(
            f"| {name} (`{report['trees'][name]}`) | {run['streams']} | **{run['errors']}** | "
            f"{outcomes} | {run['first_event_s']['p50']} / {run['first_event_s']['p95']} | "
            f"{run['completion_s']['p50']} / {run['completion_s']['p95']} | "
            f"{run['load_1m']['min']}-{run['load_1m']['max']} |"
        )
    reused = [name for name in ("baseline", "branch") if "reuse" in report.get(name, {})]
    if reused:
        lines += [
            "",
            f"Reuse after an idle of {HTTPX_EXPIRY - 0.1}-{HTTPX_EXPIRY} s (just under httpx's "
            "keep-alive expiry), the server kept busy by 30 other streams: second streams "
            "sent on a kept-alive connection.",
            "",
            "| server | second streams | errors | outcomes |",
            "|---|---|---|---|",
        ]
        for name in reused:
            run = report[name]["reuse"]
            outcomes = ", ".join(f"{k}: {v}" for k, v in sorted(run["outcomes"].items()))
            lines.append(f"| {name} | {run['streams']} | **{run['errors']}** | {outcomes} |")
    return "\n".join([*lines, ""])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True, help="CITEWISE_HOME holding the knowledge base")
    parser.add_argument("--kb", default="lgos")
    parser.add_argument("--streams", type=int, default=150)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--gap", type=float, default=4.0, help="seconds between bursts")
    parser.add_argument("--load", type=int, default=16, help="busy processes beside the server")
    parser.add_argument("--reuse", type=int, default=150, help="clients of the reuse race")
    parser.add_argument("--baseline", help="another tree's src/ to measure first (e.g. main)")
    parser.add_argument("--output", help="the JSON report (and a .md beside it)")
    args = parser.parse_args()
    trees = {"branch": HERE.parent / "src"}
    if args.baseline:
        trees = {"baseline": Path(args.baseline), **trees}
    burners = [multiprocessing.Process(target=_burn, args=(3600,), daemon=True)
               for _ in range(args.load)]  # fmt: skip
    for burner in burners:
        burner.start()
    report: dict[str, Any] = {
        "command": " ".join(["python", "benchmarks/streams.py", *sys.argv[1:]]),
        "setup": {key: getattr(args, key) for key in SETUP} | {"cpus": os.cpu_count()},
        "trees": {name: str(src) for name, src in trees.items()},
    }
    try:
        time.sleep(30 if args.load else 0)  # the load average climbs to the load
        for name, src in trees.items():
            report[name] = measure(src, args)
            print(name, json.dumps(report[name]), file=sys.stderr, flush=True)
    finally:
        for burner in burners:
            burner.terminate()
    if args.output:
        Path(args.output).write_text(json.dumps(report, indent=2) + "\n")
        Path(args.output).with_suffix(".md").write_text(format_report(report))
    print(format_report(report))


if __name__ == "__main__":
    main()

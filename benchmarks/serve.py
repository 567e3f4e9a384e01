"""``python -m benchmarks.serve``: the server's own overhead under concurrent streaming requests.

Two servers run in this process on real sockets: citewise answering with a scripted chat
model (no model latency, so what is measured is the server: settings, retrieval, the
workflow and the event stream), and a bare FastAPI app that replays the same SSE stream
byte for byte. Each round sends ``concurrency`` streaming ``/v1/responses`` requests at
once to each; the overhead per request is citewise's latency minus the echo's percentile.

One at a time, each request's own search and model time (the ``answer`` operation's
stages, from telemetry) is subtracted as well: what remains is what the server adds. The
process CPU time per request bounds what a burst can cost: ``concurrency`` requests need
at least ``concurrency × CPU ÷ cores`` seconds.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
from fastapi import FastAPI
from fastapi.responses import StreamingResponse

from benchmarks import common
from citewise import telemetry
from citewise.config import Settings
from citewise.server.app import create_app
from citewise.server.receipt import uvicorn_options
from citewise.server.runtime import Runtime, ServerOptions
from citewise.server.testing import running

QUESTION = "How do I add API key authentication?"
# Each request asks a different question (the same words, numbered), so every one embeds
# its query: a repeated question would be served from the query-embedding cache.
SEQUENTIAL = 20
# Stages of the answer operation that are search or model time, not the server's.
_NOT_SERVER = ("plan", "search", "generate", "grade", "rewrite")
_SECTION = re.compile(r'<section url="([^"]+)" title="([^"]+)">')

__all__ = ["format_report", "main", "run_serve_benchmark"]


def cite_first_section(call: Any) -> str:
    """A scripted answer that cites the first section the prompt gives it."""
    found = _SECTION.search(call.messages[-1].text)
    if found is None:
        return "The documentation does not say."
    url, title = found.groups()
    return f"This is covered in [{title}]({url}): follow the steps there, then restart."


def _echo_app(events: list[str]) -> FastAPI:
    app = FastAPI()

    @app.post("/v1/responses")
    async def replay() -> StreamingResponse:
        async def stream() -> AsyncIterator[str]:
            for event in events:
                yield event

        return StreamingResponse(stream(), media_type="text/event-stream")

    return app


def _events(body: str) -> list[str]:
    return [block + "\n\n" for block in body.split("\n\n") if block.strip()]


_asked = itertools.count()


async def _one(client: httpx.AsyncClient, url: str) -> tuple[float, str | None]:
    """One streaming request: seconds to the last byte, and an error (None when it
    completed)."""
    payload = {"model": "citewise-rag", "input": f"{QUESTION} ({next(_asked)})", "stream": True}
    started = time.perf_counter()
    try:
        async with client.stream("POST", f"{url}/v1/responses", json=payload) as response:
            if response.status_code != 200:
                return time.perf_counter() - started, f"HTTP {response.status_code}"
            body = "".join([text async for text in response.aiter_text()])
    except httpx.HTTPError as error:
        return time.perf_counter() - started, f"{type(error).__name__}: {error}"
    elapsed = time.perf_counter() - started
    if "event: response.completed" not in body:
        return elapsed, "no response.completed event"
    return elapsed, None


@dataclass
class _Alone:
    """Requests sent one at a time: latencies, their answers' search and model seconds,
    and the process CPU seconds they took."""

    latencies: list[float] = field(default_factory=list)
    inside: list[float] = field(default_factory=list)
    cpu_seconds: float = 0.0


class _AnswerStages:
    """A telemetry observer: the search and model seconds of each finished answer."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    def observe(self, event: telemetry.Event) -> None:
        if event.kind == telemetry.OPERATION and event.name == "answer":
            self.seconds.append(sum(event.stages.get(name, 0.0) for name in _NOT_SERVER))


async def _burst(
    url: str, concurrency: int, rounds: int, alone: int = SEQUENTIAL
) -> tuple[list[float], list[str], _Alone]:
    """Latencies and errors of ``rounds`` bursts, and ``alone`` requests sent one at a time
    (the cost of one request without queueing)."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        await _one(client, url)  # warm-up: loads the embedder, opens the index
        stages = _AnswerStages()
        stop = telemetry.observe(stages)
        single = _Alone()
        started = time.process_time()
        try:
            for _ in range(alone):
                single.latencies.append((await _one(client, url))[0])
        finally:
            single.cpu_seconds = time.process_time() - started
            stop()
        single.inside = stages.seconds
        latencies: list[float] = []
        errors: list[str] = []
        for _ in range(rounds):
            results = await asyncio.gather(*(_one(client, url) for _ in range(concurrency)))
            latencies += [seconds for seconds, _ in results]
            errors += [error for _, error in results if error is not None]
    return latencies, errors, single


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _summary(latencies: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(_percentile(latencies, 0.50) * 1000, 2),
        "p99_ms": round(_percentile(latencies, 0.99) * 1000, 2),
        "mean_ms": round(statistics.fmean(latencies) * 1000, 2),
    }


def run_serve_benchmark(
    settings: Settings, *, kb: str = "docs", concurrency: int = 50, rounds: int = 3
) -> dict[str, Any]:
    """Measure citewise and the echo under the same load; returns the report."""
    from citewise.testing import ScriptedChatModel, script

    model = ScriptedChatModel(reply=script(answer=cite_first_section))
    app = create_app(settings, ServerOptions(kb=kb), model_factory=lambda: model)
    runtime: Runtime = app.state.runtime
    documents = len(runtime.kb(kb).documents())  # fails early on an unknown knowledge base
    # Served as ``citewise serve`` serves: its protocol and keep-alive (a burst reuses the
    # connections of the one before).
    with running(app, **uvicorn_options()) as url:
        sample = httpx.post(
            f"{url}/v1/responses",
            json={"model": "citewise-rag", "input": QUESTION, "stream": True},
            timeout=120,
        ).text
        served, served_errors, served_alone = asyncio.run(_burst(url, concurrency, rounds))
    events = _events(sample)
    with running(_echo_app(events), **uvicorn_options()) as url:
        echoed, echo_errors, echoed_alone = asyncio.run(_burst(url, concurrency, rounds))
    citewise, echo = _summary(served), _summary(echoed)
    alone = {"citewise": _summary(served_alone.latencies), "echo": _summary(echoed_alone.latencies)}
    echo_p50 = _percentile(echoed_alone.latencies, 0.5)
    # What the server adds to one request: its latency less the echo's (the HTTP stream
    # itself) and less its own search and model time.
    added = [
        latency - echo_p50 - inside
        for latency, inside in zip(served_alone.latencies, served_alone.inside, strict=False)
    ]
    cpu = (served_alone.cpu_seconds - echoed_alone.cpu_seconds) / max(1, SEQUENTIAL)
    cores = _cpus()
    # The least a burst can take when CPU is the limit: every request's CPU, spread on the cores.
    floor = concurrency * max(cpu, 0.0) / max(1, cores)
    return {
        "requests": len(served),
        "concurrency": concurrency,
        "rounds": rounds,
        "errors": len(served_errors),
        "error_samples": sorted(set(served_errors))[:5],
        "echo_errors": len(echo_errors),
        "events_per_stream": len(events),
        "stream_bytes": len(sample.encode()),
        "citewise": citewise,
        "echo": echo,
        "overhead": {
            "p50_ms": round(citewise["p50_ms"] - echo["p50_ms"], 2),
            "p99_ms": round(citewise["p99_ms"] - echo["p99_ms"], 2),
        },
        "one_at_a_time": alone,
        "one_at_a_time_overhead_p50_ms": round(
            alone["citewise"]["p50_ms"] - alone["echo"]["p50_ms"], 2
        ),
        "search_and_model_p50_ms": round(1000 * statistics.median(served_alone.inside), 2)
        if served_alone.inside
        else None,
        "server_added_p50_ms": round(1000 * statistics.median(added), 2) if added else None,
        "cpu_ms_per_request": round(1000 * cpu, 2),
        "burst_cpu_floor_ms": round(1000 * floor, 2),
        "burst_p99_vs_cpu_floor": round(citewise["p99_ms"] / (1000 * floor), 2)
        if floor > 0
        else None,
        "machine": {
            "cpus": _cpus(),
            "python": platform.python_version(),
            # Other work on the machine slows both servers; the load says how much there was.
            "load_1m_after": round(os.getloadavg()[0], 2),
        },
        "kb": kb,
        "documents": documents,
    }


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0


def format_report(report: dict[str, Any]) -> str:
    """The report as a short Markdown page."""
    rows = [
        f"| {name} | {report[name]['p50_ms']} | {report[name]['p99_ms']} | "
        f"{report[name]['mean_ms']} |"
        for name in ("citewise", "echo")
    ]
    overhead = report["overhead"]
    return "\n".join(
        [
            "# python -m benchmarks.serve",
            "",
            f"{report['requests']} streaming `POST /v1/responses` requests "
            f"({report['rounds']} bursts of {report['concurrency']} at once), scripted chat "
            f"model, knowledge base `{report['kb']}`, {report['machine']['cpus']} CPUs "
            f"(load average {report['machine']['load_1m_after']} at the end). "
            f"Each stream: {report['events_per_stream']} SSE events, "
            f"{report['stream_bytes']} bytes. Errors: {report['errors']}.",
            "",
            "| server | p50 ms | p99 ms | mean ms |",
            "|---|---|---|---|",
            *rows,
            "",
            f"Server overhead per request (citewise − echo): **p50 {overhead['p50_ms']} ms, "
            f"p99 {overhead['p99_ms']} ms**. Latency is request to last byte under "
            "the burst, so it includes queueing behind the other requests of the burst.",
            "",
            f"One request at a time ({SEQUENTIAL} each): citewise p50 "
            f"{report['one_at_a_time']['citewise']['p50_ms']} ms, echo p50 "
            f"{report['one_at_a_time']['echo']['p50_ms']} ms: overhead "
            f"{report['one_at_a_time_overhead_p50_ms']} ms per request, of which search "
            f"and model time p50 {report['search_and_model_p50_ms']} ms: **the server adds "
            f"{report['server_added_p50_ms']} ms p50**.",
            "",
            f"CPU per request (citewise − echo, process time): {report['cpu_ms_per_request']}"
            f" ms, so a burst of {report['concurrency']} needs at least "
            f"{report['burst_cpu_floor_ms']} ms on {report['machine']['cpus']} CPUs; the "
            f"burst's p99 is **{report['burst_p99_vs_cpu_floor']}×** that floor.",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.serve --kb KB``: the server's overhead, scripted model."""
    cli = common.parser("benchmarks.serve", __doc__)
    cli.add_argument("--kb", default="docs", help="knowledge base to answer from")
    cli.add_argument("--concurrency", type=int, default=50)
    cli.add_argument("--rounds", type=int, default=3, help="bursts of concurrent streams")
    common.add_report_options(cli)
    args = cli.parse_args(argv)

    def run() -> int:
        report = run_serve_benchmark(
            Settings.from_env(), kb=args.kb, concurrency=args.concurrency, rounds=args.rounds
        )
        common.save_report(args.output, report, format_report)
        common.print_report(args, report, format_report)
        return 0

    return common.guarded("benchmarks.serve", run)


if __name__ == "__main__":
    sys.exit(main())

"""Cold `citewise search` against a minimal script doing the same search: CPU and wall per process.

Each round runs, as fresh processes one after another (the order rotated each round, so all
see the same load): ``citewise search QUERY --kb KB`` (this checkout's console script), the
minimal script ``benchmarks/cold_cli_minimal.py`` on the same knowledge base file (embed
with tokenizers + onnxruntime, FTS5 and the dense product, weighted RRF, top 10) and, with
``--baseline-src``, the same CLI from another source tree (e.g. main's, to measure a change
in the same run; ``--also NAME=SRC`` adds more, e.g. one commit of a change). A process's
CPU is its user + system time from ``os.wait4``; wall is from start to exit. Reports
medians and the CLI / minimal ratios (the median of each round's).

    CITEWISE_HOME=/tmp/home citewise index ../shared/data/lgos-docs-0.12.0/docs --kb lgos
    python -m benchmarks.cold_cli --home /tmp/home --kb lgos --rounds 15 \\
        --baseline-src /tmp/main/src --output benchmarks/cold-cli
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MINIMAL = HERE / "cold_cli_minimal.py"
VOCAB = HERE.parent / "src" / "citewise" / "embedding" / "data" / "minilm-vocab.txt"
QUERIES = (
    "How do I put LGOS behind LiteLLM?",
    "How do I add API key authentication?",
    "Which environment variables configure the server?",
    "How are citations streamed to the client?",
    "Run the demo with Docker Compose",
)


def timed(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """One process to its exit: CPU seconds (user, system) and wall seconds."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{command[:3]} exited with {proc.returncode}")
    cpu = usage.ru_utime + usage.ru_stime
    return {"cpu": cpu, "user": usage.ru_utime, "sys": usage.ru_stime, "wall": wall}


def forms(args: argparse.Namespace) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Each measured form: a command (the query appended) and its environment."""
    # Bytecode written and read, as an installed wheel has it (pip compiles at install).
    skip = ("CITEWISE_", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    env["CITEWISE_HOME"] = str(args.home)
    cli = [str(Path(sys.executable).parent / "citewise"), "search"]
    db = (args.home / "kb" / f"{args.kb}.sqlite").resolve()
    out = {
        "cli": (cli, env),
        "minimal": ([sys.executable, str(MINIMAL), str(db), str(VOCAB)], env),
    }
    if args.baseline_src:
        out["cli_baseline"] = (cli, {**env, "PYTHONPATH": str(args.baseline_src)})
    for name, src in args.also:
        out[name] = (cli, {**env, "PYTHONPATH": str(src)})
    return out


def measure(args: argparse.Namespace) -> dict[str, Any]:
    commands = forms(args)
    names = list(commands)

    def command(name: str, query: str) -> list[str]:
        base, _ = commands[name]
        return [*base, query, "--kb", args.kb] if name != "minimal" else [*base, query]

    for name in names:  # the page cache warm for every form, nothing recorded
        timed(command(name, QUERIES[0]), commands[name][1])
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    load = {"before": os.getloadavg()}
    for r in range(args.rounds):
        query = QUERIES[r % len(QUERIES)]
        for name in names[r % len(names) :] + names[: r % len(names)]:
            runs[name].append(timed(command(name, query), commands[name][1]))
    load["after"] = os.getloadavg()
    medians = {
        name: {m: statistics.median(run[m] for run in runs[name]) for m in runs[name][0]}
        for name in names
    }
    base = runs["minimal"]
    ratios = {
        name: {
            m: statistics.median(a[m] / b[m] for a, b in zip(runs[name], base, strict=True))
            for m in ("cpu", "wall")
        }
        for name in names
        if name != "minimal"
    }
    return {
        "rounds": args.rounds,
        "kb": args.kb,
        "queries": QUERIES,
        "cores": os.cpu_count(),
        "load": load,
        "medians": medians,
        "ratios_to_minimal": ratios,
        "runs": runs,
    }


def report(result: dict[str, Any], argv: str) -> str:
    lines = [
        "# Cold `citewise search` vs a minimal hybrid-search script",
        "",
        f"`{argv}` — {result['rounds']} rounds on {result['cores']} cores, each a fresh "
        f"process per form, order rotated per round; load average before / after "
        f"{result['load']['before'][0]:.2f} / {result['load']['after'][0]:.2f}.",
        "",
        "| form | CPU s (user + sys) | user s | sys s | wall s | CPU / minimal | wall / minimal |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, m in result["medians"].items():
        r = result["ratios_to_minimal"].get(name, {"cpu": 1.0, "wall": 1.0})
        lines.append(
            f"| {name} | {m['cpu']:.3f} | {m['user']:.3f} | {m['sys']:.3f} | {m['wall']:.3f} "
            f"| {r['cpu']:.2f}× | {r['wall']:.2f}× |"
        )
    lines += ["", "Medians over rounds; a ratio is the median of each round's ratio."]
    return "\n".join(lines) + "\n"


def _named_src(value: str) -> tuple[str, Path]:
    name, _, src = value.partition("=")
    if not name or not src or name in ("cli", "minimal", "cli_baseline"):
        raise argparse.ArgumentTypeError(f"expected NAME=SRC with a new name, not {value!r}")
    return name, Path(src)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.cold_cli", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--home", type=Path, required=True, help="CITEWISE_HOME with the KB")
    parser.add_argument("--kb", default="lgos")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--baseline-src", type=Path, help="another tree's src/ (e.g. main's)")
    parser.add_argument(
        "--also", type=_named_src, action="append", default=[], metavar="NAME=SRC",
        help="another tree's src/ measured as the form NAME (repeatable)",
    )  # fmt: skip
    parser.add_argument("--output", type=Path, help="path stem for .md and .json")
    args = parser.parse_args(argv)
    result = measure(args)
    command = f"python -m benchmarks.cold_cli --home HOME --kb {args.kb} --rounds {args.rounds}"
    command += " --baseline-src MAIN/src" if args.baseline_src else ""
    command += "".join(f" --also {name}={name.upper()}/src" for name, _ in args.also)
    text = report(result, command)
    print(text)
    if args.output:
        args.output.with_suffix(".md").write_text(text)
        args.output.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()

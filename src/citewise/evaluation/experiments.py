"""Langfuse experiments (extra ``langfuse``): the cases as a dataset, each run a dataset run.

With ``LANGFUSE_PUBLIC_KEY`` and ``LANGFUSE_SECRET_KEY`` set (``LANGFUSE_HOST`` or
``LANGFUSE_BASE_URL`` for a self-hosted server), ``citewise eval`` upserts every case as an
item of the dataset ``citewise/CASES`` (input: the conversation and its settings; expected
output: the parts' pages and sections and the reply shape), then records the evaluation as
one dataset run per ``--runs`` run through the SDK's experiment runner: each item's trace
holds the reply and the planner's queries, scored with every check (``searched``,
``part_N``, ``shape``, ``grounding``, and the judges' ``judge_shape``/``judge_grounded`` on
the first run) as a boolean score with its detail as the comment, and the latency; each run
gets the pass rate of every check as run-level scores. The evaluation itself runs before
and without Langfuse: the export records it, it does not re-run a case.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citewise.config import environment
from citewise.errors import MissingExtraError
from citewise.evaluation.cases import Case, load_cases

if TYPE_CHECKING:
    from langfuse import Langfuse

DATASET_PREFIX = "citewise/"


def langfuse_configured(environ: Mapping[str, str] | None = None) -> bool:
    """True when the Langfuse SDK's keys are set (it reads them and the host itself)."""
    env = environment() if environ is None else environ
    return bool(env.get("LANGFUSE_PUBLIC_KEY") and env.get("LANGFUSE_SECRET_KEY"))


@dataclass(frozen=True)
class Exported:
    """Where an evaluation went: the dataset, its run names, and how many items each had."""

    dataset: str
    run: str
    runs: tuple[str, ...]
    items: int


def dataset_name(cases_path: Path) -> str:
    return f"{DATASET_PREFIX}{cases_path.stem}"


def item_id(dataset: str, case_id: str) -> str:
    """A stable item id (items upsert on it; ids are unique across a project's datasets)."""
    return hashlib.sha256(f"{dataset}\0{case_id}".encode()).hexdigest()[:32]


def item_payload(case: Case) -> dict[str, Any]:
    return {
        "input": {"messages": list(case.messages), "settings": case.settings},
        "expected_output": {
            "parts": [list(part) for part in case.parts],
            "sections": [list(t) for t in case.targets],
            "reply": case.reply,
        },
        "metadata": {"case": case.id},
    }


def export_run(
    results: Mapping[str, Any],
    cases_path: Path,
    *,
    run_name: str | None = None,
    client: Langfuse | None = None,
) -> Exported:
    """Record a finished evaluation (``results.json``'s content) as Langfuse dataset runs."""
    if client is None:
        try:
            from langfuse import Langfuse
        except ImportError as error:
            raise MissingExtraError("langfuse", "langfuse", "Langfuse experiments") from error
        client = Langfuse()
    cases = load_cases(cases_path)
    provenance = results["provenance"]
    dataset = dataset_name(cases_path)
    client.create_dataset(
        name=dataset,
        description=f"citewise evaluation cases from {cases_path.name}",
        metadata={"cases_sha256": provenance.get("cases_sha256"), "cases": len(cases)},
    )
    for case in cases:
        client.create_dataset_item(
            dataset_name=dataset, id=item_id(dataset, case.id), **item_payload(case)
        )
    remote = client.get_dataset(dataset)
    outcomes = {case["case"]: case for case in results["cases"]}
    base = run_name or (
        f"{provenance.get('model') or 'model'} {datetime.now(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}"
    )
    runs = max((len(case.get("runs", [])) for case in outcomes.values()), default=1)
    names: list[str] = []
    for index in range(max(runs, 1)):
        name = base if runs <= 1 else f"{base} run {index + 1}"
        items = [item for item in remote.items if _case_of(item) in outcomes]
        remote_run = _run_experiment(client, items, outcomes, index, name, provenance)
        names.append(str(getattr(remote_run, "run_name", name)))
    client.flush()
    return Exported(dataset, names[0], tuple(names), len(outcomes))


def _case_of(item: Any) -> str | None:
    metadata = getattr(item, "metadata", None)
    return metadata.get("case") if isinstance(metadata, dict) else None


def _run_experiment(
    client: Langfuse,
    items: Sequence[Any],
    outcomes: Mapping[str, Mapping[str, Any]],
    index: int,
    name: str,
    provenance: Mapping[str, Any],
) -> Any:
    from langfuse import Evaluation

    def run_of(item_metadata: Any) -> Mapping[str, Any]:
        case = outcomes[item_metadata["case"]]
        run_list: Sequence[Mapping[str, Any]] = case.get("runs") or [{}]
        return run_list[min(index, len(run_list) - 1)]

    def task(*, item: Any, **_: Any) -> dict[str, Any]:
        case = outcomes[_case_of(item) or ""]
        run = run_of(item.metadata)
        return {
            "reply": case["reply"] if index == 0 else None,
            "queries": run.get("queries", []),
            "latency_ms": run.get("latency_ms"),
        }

    def checks(*, metadata: Any, **_: Any) -> list[Evaluation]:
        case = outcomes[metadata["case"]]
        run = run_of(metadata)
        scored = dict(run.get("checks", {}))
        if index == 0:  # the judges score the first answer only
            scored |= {n: c for n, c in case["checks"].items() if c["kind"] == "judge"}
        evaluations = [
            Evaluation(
                name=check_name,
                value=bool(check["passed"]),
                comment=check["detail"] or None,
                data_type="BOOLEAN",
            )
            for check_name, check in scored.items()
            if check["passed"] is not None
        ]
        if run.get("latency_ms") is not None:
            evaluations.append(Evaluation(name="latency_ms", value=float(run["latency_ms"])))
        return evaluations

    def rates(*, item_results: Sequence[Any], **_: Any) -> list[Evaluation]:
        totals: dict[str, list[bool]] = {}
        for result in item_results:
            for evaluation in result.evaluations:
                if evaluation.data_type == "BOOLEAN":
                    group = "part" if evaluation.name.startswith("part_") else evaluation.name
                    totals.setdefault(group, []).append(bool(evaluation.value))
        return [
            Evaluation(name=f"{group}_rate", value=sum(values) / len(values))
            for group, values in totals.items()
        ]

    metadata = {
        key: str(provenance[key])
        for key in ("model", "judge", "kb", "git_commit", "workflow", "endpoint")
        if provenance.get(key)
    }
    # Dataset items as data link each trace to its item: the run is a dataset run.
    return client.run_experiment(
        name=name, run_name=name, data=list(items), task=task, evaluators=[checks],
        run_evaluators=[rates], metadata=metadata, max_concurrency=4,
    )  # fmt: skip

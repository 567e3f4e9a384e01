"""Named per-check scores of one answer: searched, each part found, reply shape, grounding.

Every check is scored on its own (``passed`` true, false, or None when it does not apply),
so a report or a dashboard can count each one. The deterministic checks (``searched``,
``part_N``, ``shape``, ``grounding``) fail a case; the judges' (``judge_shape``,
``judge_grounded``) only score it unless the run is told to fail on them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from citewise.evaluation.cases import Case
from citewise.evaluation.retrieval import first_answering_rank
from citewise.models import Answer

CheckKind = Literal["structural", "shape", "grounding", "judge"]
FAILING_KINDS: tuple[CheckKind, ...] = ("structural", "shape", "grounding")
"""The kinds of check that fail a case without ``--fail-on-judge``."""

# The all-docs suggestion of a scope miss: the scope `all`, or "all/whole/entire docs".
_ALL_SCOPE = re.compile(
    r"""[`'"]all[`'"]|\bscope\s*(?:=|:|to|of)?\s*all\b|\ball\s+(?:of\s+)?(?:the\s+)?"""
    r"""(?:docs|documentation|sections|scopes)\b|\b(?:whole|entire|full)\s+(?:docs|"""
    r"""documentation)\b|\beverywhere\b""",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class CheckScore:
    """One named check of one answer: ``passed`` is None when it does not apply."""

    name: str
    kind: CheckKind
    passed: bool | None
    detail: str = ""

    @property
    def fails_case(self) -> bool:
        return self.passed is False and self.kind in FAILING_KINDS

    def json(self) -> dict[str, Any]:
        return {"kind": self.kind, "passed": self.passed, "detail": self.detail}


def expects_search(case: Case) -> bool:
    """A case with parts, or a scope miss (it must search to find nothing), needs a search."""
    return bool(case.parts) or case.reply == "scope_hint"


def searched_check(case: Case, answer: Answer) -> CheckScore:
    searched = bool(answer.queries)
    if expects_search(case):
        return CheckScore("searched", "structural", searched, "" if searched else "did not search")
    detail = f"searched for a message that needs no search: {list(answer.queries)}"
    return CheckScore("searched", "structural", not searched, detail if searched else "")


def part_checks(case: Case, answer: Answer) -> list[CheckScore]:
    """One check per part: at section level when the case names sections (``anchors`` or
    ``page#anchor`` targets), with the page-level result in ``detail``."""
    checks = []
    for index, targets in enumerate(case.targets):
        rank = first_answering_rank(answer.hits, targets)
        page_rank = first_answering_rank(answer.hits, case.parts[index])
        level = "section" if targets != case.parts[index] else "page"
        if rank is not None:
            detail = f"{level} rank {rank}"
        elif page_rank is not None:
            detail = f"none of {list(targets)} retrieved (the page was, rank {page_rank})"
        else:
            detail = f"none of {list(targets)} retrieved"
        checks.append(CheckScore(f"part_{index}", "structural", rank is not None, detail))
    return checks


def shape_check(case: Case, answer: Answer) -> CheckScore:
    """The reply's shape, where a rule can tell it (None where only a judge could).

    - ``small_talk``: not searched and nothing cited;
    - ``clarify``: asks (a question mark) and cites nothing;
    - ``scope_hint``: names the searched scope and suggests searching all the docs;
    - no parts and no shape (an unrelated request): cites nothing;
    - a plain answer: left to the judge.
    """
    text = answer.text
    cited = len(answer.citations)
    problems: list[str] = []
    if case.reply == "small_talk":
        if answer.queries:
            problems.append("searched")
        if cited:
            problems.append(f"{cited} citation(s)")
    elif case.reply == "clarify":
        if "?" not in text:
            problems.append("asks no question (no '?')")
        if cited:
            problems.append(f"{cited} citation(s)")
    elif case.reply == "scope_hint":
        scope = case.scope or ""
        if scope and not re.search(rf"(?<![\w-]){re.escape(scope)}(?![\w-])", text, re.I):
            problems.append(f"does not name the scope {scope!r}")
        if not _ALL_SCOPE.search(text):
            problems.append("does not suggest searching all the docs (scope `all`)")
    elif not case.parts:
        if cited:
            problems.append(f"{cited} citation(s) for a message that needs no docs")
    else:
        return CheckScore("shape", "shape", None, "a plain answer: the judge's to score")
    shape = case.reply or "no docs"
    detail = f"{shape}: {'; '.join(problems)}" if problems else shape
    return CheckScore("shape", "shape", not problems, detail)


def grounding_check(answer: Answer) -> CheckScore:
    """``Answer.verification.ok``: the workflow's deterministic grounding check."""
    verification = answer.verification
    if verification is None:
        return CheckScore("grounding", "grounding", None, "not verified")
    if verification.ok:
        return CheckScore("grounding", "grounding", True)
    found = [*verification.unsupported, *verification.outside_links]
    found += [f"citation {c.url}" for c in verification.citations if not c.supported]
    detail = f"unsupported by the sections: {', '.join(found) or 'see verification'}"
    return CheckScore("grounding", "grounding", False, detail)


def answer_checks(case: Case, answer: Answer) -> list[CheckScore]:
    """Every deterministic check of one answer, in report order."""
    return [
        searched_check(case, answer),
        *part_checks(case, answer),
        shape_check(case, answer),
        grounding_check(answer),
    ]


def group_of(name: str) -> str:
    """The aggregate a check counts in: every ``part_N`` counts as ``part``."""
    return "part" if name.startswith("part_") else name


def aggregate(runs: Iterable[Sequence[CheckScore]]) -> dict[str, dict[str, Any]]:
    """Per check group over runs: passed, failed, applicable and the pass rate."""
    totals: dict[str, dict[str, Any]] = {}
    for checks in runs:
        for check in checks:
            if check.passed is None:
                continue
            entry = totals.setdefault(
                group_of(check.name), {"kind": check.kind, "passed": 0, "failed": 0}
            )
            entry["passed" if check.passed else "failed"] += 1
    for entry in totals.values():
        entry["applicable"] = entry["passed"] + entry["failed"]
        entry["rate"] = round(entry["passed"] / entry["applicable"], 4)
    return dict(sorted(totals.items(), key=lambda item: _ORDER.get(item[0], 99)))


_ORDER = {
    name: i
    for i, name in enumerate(
        ["searched", "part", "shape", "grounding", "judge_shape", "judge_grounded"]
    )
}


def checks_json(checks: Sequence[CheckScore]) -> dict[str, Any]:
    return {check.name: check.json() for check in checks}


def combined(runs: Sequence[Sequence[CheckScore]]) -> list[CheckScore]:
    """One score per check over a case's runs: failed when any run failed it."""
    by_name: dict[str, list[CheckScore]] = {}
    for checks in runs:
        for check in checks:
            by_name.setdefault(check.name, []).append(check)
    merged = []
    for name, scores in by_name.items():
        applicable = [s for s in scores if s.passed is not None]
        failed = [s for s in applicable if not s.passed]
        chosen = failed[0] if failed else (applicable[0] if applicable else scores[0])
        passed = None if not applicable else not failed
        detail = chosen.detail
        if failed and len(scores) > 1:
            detail = f"{detail} ({len(failed)}/{len(scores)} runs)"
        merged.append(CheckScore(name, chosen.kind, passed, detail))
    return merged


def scores_by_name(checks: Sequence[CheckScore]) -> Mapping[str, bool | None]:
    return {check.name: check.passed for check in checks}

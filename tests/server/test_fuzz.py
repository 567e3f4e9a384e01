"""Schemathesis over the whole OpenAPI schema, against a real server on 127.0.0.1 with a
scripted chat model and a small indexed knowledge base: no generated request gets a 5xx.

Every operation of ``/openapi.json`` gets up to ``EXAMPLES`` requests, valid and invalid
ones (schemathesis' positive and negative modes), with strings that may hold NUL and any
code point, lone surrogates included. Each operation's strategy runs under Hypothesis
directly (``schemathesis.pytest.from_fixture`` fails under pytest 9). Bounded to about a
minute on the 2-core development machine.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode

from citewise.config import Settings
from citewise.kb import KnowledgeBase
from citewise.server import ServerOptions, create_app
from citewise.server.testing import running
from citewise.testing import ScriptedCall, ScriptedChatModel, script
from tests.reliability.conftest import write_tiny_docs

EXAMPLES = 25
KB = "t"


_ANSWERS = script(answer="Install with pip ([Setup](guide/a/#setup)).")
# The structured calls a search option can ask the chat model for (HyDE, multi-query and
# step-back rewrites, the listwise reranker), answered like the workflow's own.
_SEARCH_CALLS: dict[str, Any] = {
    "HypotheticalPassage": {"passage": "Install the package with pip."},
    "QueryVariants": {"queries": ["install with pip"]},
    "StepBackQuestion": {"question": "How is the package installed?"},
    "Ranking": {"order": [1]},
}


def _every_call(call: ScriptedCall) -> Any:
    return _SEARCH_CALLS[call.kind] if call.kind in _SEARCH_CALLS else _ANSWERS(call)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("fuzz")
    home = root / "home"
    KnowledgeBase(KB, settings=Settings(home=home)).index_folder(write_tiny_docs(root))
    model = ScriptedChatModel(reply=_every_call)
    app = create_app(Settings(home=home), ServerOptions(kb=KB), model_factory=lambda: model)
    with running(app) as url:
        yield url


@pytest.fixture(scope="module")
def api_schema(server: str) -> Any:
    schema = schemathesis.openapi.from_url(f"{server}/openapi.json")
    schema.config.generation.update(
        modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], allow_x00=True, codec=None
    )
    return schema


def test_no_generated_request_gets_a_server_error(server: str, api_schema: Any) -> None:
    failures: list[str] = []
    statuses: Counter[int] = Counter()
    # Deleting the knowledge base comes last, so the other routes find it.
    operations = sorted(
        (result.ok() for result in api_schema.get_all_operations()),
        key=lambda op: op.label == "DELETE /v1/knowledge-bases/{kb}",
    )
    for operation in operations:

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def run(case: schemathesis.Case) -> None:
            if case.path_parameters and "kb" in case.path_parameters:
                # A random name is a 404 at once: the existing one reaches the handlers.
                case.path_parameters["kb"] = KB
            response = case.call(base_url=server, timeout=60)
            statuses[response.status_code] += 1
            # A crawl of a generated host that cannot be reached: the documented 502.
            unreachable = response.status_code == 502 and '"site_unreachable"' in response.text
            if response.status_code >= 500 and not unreachable:
                failures.append(
                    f"{case.method} {case.formatted_path} {case.body!r:.300} -> "
                    f"{response.status_code}: {response.text[:300]}"
                )

        run()
    print(f"{len(operations)} operations, {statuses.total()} requests, statuses {statuses}")
    assert statuses.total() >= 2 * len(operations)
    assert not failures, f"{len(failures)} server errors:\n" + "\n".join(failures[:10])

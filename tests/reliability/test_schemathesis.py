"""Schemathesis against the server's own OpenAPI schema: no generated request gets a 5xx.

Every operation of ``/openapi.json`` (the OpenAI routes, the knowledge-base REST routes,
the settings and health routes) gets up to ``EXAMPLES`` generated requests, in process
over ASGI, against a copy of a tiny indexed knowledge base and no chat model.
(``schemathesis.pytest.from_fixture`` fails under pytest 9, so each operation's strategy
is run with Hypothesis directly.)
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from citewise.config import Settings
from citewise.server import ServerOptions, create_app

EXAMPLES = 50


@pytest.fixture(scope="module")
def api_schema(tiny_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    # A copy: generated DELETE requests may remove the knowledge base.
    home = tmp_path_factory.mktemp("schemathesis") / "home"
    shutil.copytree(tiny_home, home)
    app = create_app(Settings(home=home), ServerOptions(kb="t"), model_factory=lambda: None)
    return schemathesis.openapi.from_asgi("/openapi.json", app)


def test_the_schema_has_the_routes(api_schema: Any) -> None:
    labels = {result.ok().label for result in api_schema.get_all_operations()}
    assert {"POST /v1/responses", "POST /v1/chat/completions"} <= labels
    assert any(label.startswith("POST /v1/knowledge-bases") for label in labels)


def test_no_generated_request_gets_a_server_error(api_schema: Any) -> None:
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
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def run(case: schemathesis.Case) -> None:
            if case.path_parameters and "kb" in case.path_parameters:
                # A random name is a 404 at once: the existing one reaches the handlers.
                case.path_parameters["kb"] = "t"
            response = case.call()
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
    assert not failures, "\n".join(failures[:10])

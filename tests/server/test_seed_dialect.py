"""Clients that speak the seed's dialect: ``metadata.lgos_settings`` is read as
``metadata.citewise_settings``, through the official openai SDK against a real server."""

from __future__ import annotations

import json

import openai
import pytest
from openai import OpenAI

QUESTION = "How do I add API key authentication?"


def cited(sdk: OpenAI, metadata: dict[str, str]) -> list[str]:
    response = sdk.responses.create(model="citewise-rag", input=QUESTION, metadata=metadata)
    return [a.url for a in response.output[0].content[0].annotations]  # type: ignore[union-attr]


def test_lgos_settings_choose_the_search_as_citewise_settings_do(
    extractive: OpenAI, lgos_scopes: tuple[str, ...]
) -> None:
    scope = next(s for s in lgos_scopes if s != "all")
    values = json.dumps({"scope": scope, "top_k": 1, "search_type": "vector"})
    seed = cited(extractive, {"lgos_settings": values})
    assert seed == cited(extractive, {"citewise_settings": values})
    # The settings took effect: one hit, not the ten of the defaults.
    assert len(set(seed)) == 1
    assert len(set(cited(extractive, {}))) > 1


def test_lgos_settings_errors_name_the_key_the_client_sent(extractive: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        cited(extractive, {"lgos_settings": "{scope"})
    assert raised.value.param == "metadata.lgos_settings"
    with pytest.raises(openai.BadRequestError) as raised:
        cited(extractive, {"lgos_settings": '{"top_k": 0}'})
    assert raised.value.param == "metadata.lgos_settings.top_k"


def test_both_keys_at_once_are_refused(extractive: OpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as raised:
        cited(extractive, {"lgos_settings": "{}", "citewise_settings": "{}"})
    assert raised.value.status_code == 400
    assert "not both" in raised.value.message

"""The search options as the REST API takes and documents them: pydantic models built from
:class:`citewise.options.SearchOptions`' fields (their names, types, defaults and bounds),
turned into SearchOptions at the boundary. SearchOptions itself is a plain dataclass, so
that a search never imports pydantic (benchmarks/cold-cli.md)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from citewise.kb import OPTION_NAMES, SearchOptions, parse_options
from citewise.server.json_types import JsonTyped

__all__ = ["OPTIONS_SCHEMA_MODEL", "OptionsBody", "RequestOptions"]

_FORBID = ConfigDict(extra="forbid")


def _fields() -> dict[str, Any]:
    """Each option as a pydantic field: its type, default and bounds (``Field``'s keywords)."""
    return {
        f.name: (f.type, Field(default=f.default, **f.metadata))
        for f in dataclasses.fields(SearchOptions)
    }


class OptionsBody(JsonTyped):
    """A request body holding search options (the fields come from SearchOptions)."""

    model_config = _FORBID

    def options(self) -> SearchOptions:
        """The options the request set (only those count as set, so the rest stay the
        knowledge base's defaults)."""
        given = self.model_fields_set & set(OPTION_NAMES)
        return parse_options(self.model_dump(include=given))


if TYPE_CHECKING:
    RequestOptions = OptionsBody
else:
    RequestOptions = create_model(
        "RequestOptions",
        __base__=OptionsBody,
        __module__=__name__,
        __doc__="Search options as a request sends them: each value of the JSON type the "
        "schema states.",
        **_fields(),
    )

OPTIONS_SCHEMA_MODEL: type[BaseModel] = create_model(
    "SearchOptions", __config__=_FORBID, __doc__=SearchOptions.__doc__, **_fields()
)
"""The options' JSON schema, as the client settings' selector shows it."""

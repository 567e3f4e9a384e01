"""Search options: the one vocabulary every door (CLI, REST, OpenAI metadata, MCP, Python) uses.

One type, :class:`SearchOptions`, with the same field names everywhere: ``top_k``,
``search_type`` (``hybrid | vector | full_text``), ``query_rewrite``, ``rerank``,
``rerank_candidates``, ``candidates_per_ranker``, ``context_window``, ``context_scope``,
``collapse_sections``, ``scope``, ``doc_ids``,
``page_prefix``, ``doc_metadata``, ``verify`` (the answer's grounding check: ``off | report | warn |
regenerate``), the agentic workflow's budget (``agent_rewrites``, ``agent_grading``) and
the models the search stages use (``chat_model``, ``reranker_dir``). A knowledge base
stores its defaults as a ``SearchOptions``; a request overrides some of them.

``query_rewrite`` and ``rerank`` are open names: the built-ins (``QUERY_REWRITES``,
``RERANKERS``) and whatever a package registers (entry-point groups
``citewise.query_rewrites``, ``citewise.rerankers``). Their shape is checked here; that the
name is registered is checked when it is used (the service layer resolves the options
against the registries and names the known ones).

A plain dataclass, checked by :mod:`citewise.option_checks` with pydantic's coercions and
messages: a search never imports pydantic (benchmarks/cold-cli.md). Each field's bounds are
its ``metadata`` (``pydantic.Field``'s keywords), from which the server builds its request
models, so the REST schema states the same ones.
"""

# No ``from __future__ import annotations``: the fields' types are the objects the checks
# and the server's request models read.
import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Self

from citewise.errors import ConfigurationError
from citewise.models import SearchFilter
from citewise.option_checks import Invalid, Problem, check_value

SearchType = Literal["hybrid", "vector", "full_text"]
QueryRewrite = str
"""A query rewrite's name (open: see ``QUERY_REWRITES`` and the module docstring)."""
Rerank = str
"""A reranker's name (open: see ``RERANKERS`` and the module docstring)."""
Verify = Literal["off", "report", "warn", "regenerate"]
ContextScope = Literal["section", "page"]

SEARCH_TYPES: tuple[str, ...] = ("hybrid", "vector", "full_text")
# The built-in names; packages add others (see the module docstring).
QUERY_REWRITES: tuple[str, ...] = ("off", "hyde", "multi_query", "step_back")
RERANKERS: tuple[str, ...] = ("off", "cross_encoder", "llm")
# A registered name: letters, digits, ``_ . -`` (what an entry point's name may hold).
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"
VERIFY_MODES: tuple[str, ...] = ("off", "report", "warn", "regenerate")
CONTEXT_SCOPES: tuple[str, ...] = ("section", "page")

ALL_SCOPE = "all"
"""The scope that searches everything (also the meaning of no scope)."""

MAX_TOP_K = 100
MAX_CONTEXT_WINDOW = 5
MAX_CANDIDATES_PER_RANKER = 200
DEFAULT_CANDIDATES_PER_RANKER = 20
"""Kept by measurement on the 56 LGOS cases (``benchmarks/retrieval_parity.py``, figures in
``benchmarks/retrieval-parity.md``)."""
MAX_AGENT_REWRITES = 3
"""The hard bound on the agentic workflow's rewrites, whatever a request asks for: each
rewrite costs a rewrite call, a search and a grade call."""

# The ranker behind each search type (``full_text`` is BM25 over the store's full-text index).
RANKERS_OF: dict[str, str] = {"hybrid": "hybrid", "vector": "vector", "full_text": "keyword"}


@dataclass(frozen=True, kw_only=True)
class SearchOptions:
    """How to search: a knowledge base's defaults, or one request's overrides over them.

    Args:
        top_k: how many hits a search returns (per planned query when answering).
        search_type: ``hybrid`` (dense + BM25, fused), ``vector`` or ``full_text`` (BM25).
        query_rewrite: ``off``; ``hyde`` (also search a passage a chat model writes as the
            answer); ``multi_query`` (also search rephrasings); ``step_back`` (also search a
            more general question). Every phrasing's results are fused by RRF. Or the name
            of a query rewrite a package registers.
        rerank: ``off``; ``cross_encoder`` (a local ONNX model, ``CITEWISE_RERANKER_DIR``);
            ``llm`` (a chat model orders the candidates); or the name of a reranker a
            package registers.
        rerank_candidates: how many fused candidates the reranker sees.
        candidates_per_ranker: how many candidates each ranker (dense, BM25) contributes to
            the fusion (at least ``top_k``); default 20, chosen by measurement.
        vector_weight: ``hybrid``: the dense ranker's share of the fusion (0..1), the BM25
            ranker's being the rest (the names and proximity rankings and the API prior
            shrink with it: 1 ranks by the embeddings alone); None: equal shares.
        context_window: append up to N neighbouring chunks to each hit.
        context_scope: where the window's chunks may come from: ``section`` (the hit's own
            section) or ``page`` (adjacent sections of the same page too).
        collapse_sections: return each section once, at its best chunk (the section's other
            matching chunks travel with the hit and join its context window); false: every
            matching chunk is its own hit.
        scope: one part (nav section) of the docs; ``all`` or None searches everything.
        doc_ids / page_prefix: only these documents / pages under this path.
        doc_metadata: only documents whose metadata has each of these values (``author``,
            ``subject``, ``description``, ``created``, ``modified``; exact, case-insensitive).
        verify: what the answer's grounding check does (``citewise.grounding``): ``off``;
            ``report`` (the unsupported tokens, outside links and citation support are
            reported with the answer); ``warn`` (also appends a visible warning to the
            answer); ``regenerate`` (writes the answer once more, naming the unsupported
            tokens, before reporting).
        agent_rewrites: ``citewise-agentic``: how many times it may rewrite a search whose
            sections were graded irrelevant (0..``MAX_AGENT_REWRITES``).
        agent_grading: ``citewise-agentic``: grade the sections found (off: answer from
            them straight away, so no rewrite either).
        chat_model: the chat model (a model name at ``CITEWISE_LLM_BASE_URL``, or ``local``)
            that writes query rewrites, ranks for ``rerank=llm`` and, as a knowledge base's
            default, writes ``qa`` questions; None: ``CITEWISE_LLM_MODEL``.
        reranker_dir: the cross-encoder directory for ``rerank=cross_encoder``; None:
            ``CITEWISE_RERANKER_DIR``.
    """

    top_k: int = field(default=10, metadata={"ge": 1, "le": MAX_TOP_K})
    search_type: SearchType = "hybrid"
    query_rewrite: str = field(default="off", metadata={"max_length": 100, "pattern": NAME_PATTERN})
    rerank: str = field(default="off", metadata={"max_length": 100, "pattern": NAME_PATTERN})
    rerank_candidates: int = field(default=20, metadata={"ge": 1, "le": MAX_TOP_K})
    candidates_per_ranker: int = field(
        default=DEFAULT_CANDIDATES_PER_RANKER,
        metadata={"ge": 1, "le": MAX_CANDIDATES_PER_RANKER},
    )
    vector_weight: float | None = field(default=None, metadata={"ge": 0.0, "le": 1.0})
    context_window: int = field(default=0, metadata={"ge": 0, "le": MAX_CONTEXT_WINDOW})
    context_scope: ContextScope = "section"
    collapse_sections: bool = True
    scope: str | None = None
    doc_ids: tuple[str, ...] | None = None
    page_prefix: str | None = None
    doc_metadata: dict[str, str] | None = None
    verify: Verify = "report"
    agent_rewrites: int = field(default=1, metadata={"ge": 0, "le": MAX_AGENT_REWRITES})
    agent_grading: bool = True
    chat_model: str | None = field(default=None, metadata={"min_length": 1, "max_length": 200})
    reranker_dir: str | None = field(default=None, metadata={"min_length": 1})

    def __new__(cls, **given: Any) -> Self:
        # Which fields the caller gave (pydantic's "fields set"): another SearchOptions
        # overrides only those in :meth:`merged`, even where one equals the default.
        options = super().__new__(cls)
        object.__setattr__(options, "_given", frozenset(given))
        return options

    def __post_init__(self) -> None:
        values, problems = _checked({f.name: getattr(self, f.name) for f in _FIELDS})
        if problems:
            raise OptionsError(problems)
        for name, value in values.items():
            if value is not getattr(self, name):
                object.__setattr__(self, name, value)  # coerced: "5" → 5, a list → a tuple

    @property
    def given(self) -> frozenset[str]:
        """The fields set when these options were made (all, for merged options)."""
        given: frozenset[str] = getattr(self, "_given", frozenset(OPTION_NAMES))
        return given

    @property
    def ranker(self) -> str:
        """The ``retrieval.hybrid`` mode for ``search_type`` (``hybrid|vector|keyword``)."""
        return RANKERS_OF[self.search_type]

    @property
    def restricted(self) -> bool:
        """True when the search is limited to one part of the docs."""
        return self.scope not in (None, "", ALL_SCOPE)

    @property
    def needs_model(self) -> bool:
        """True when a chat model may take part: a query rewrite, or a reranker other than
        the cross-encoder (``llm``, or a registered one: it is given the model if any)."""
        return self.query_rewrite != "off" or self.rerank not in ("off", "cross_encoder")

    def search_filter(self) -> SearchFilter | None:
        """The store filter for ``scope``, ``doc_ids`` and ``page_prefix`` (None: no filter)."""
        scope = self.scope if self.restricted else None
        if scope is None and self.doc_ids is None and not self.page_prefix:
            return None
        return SearchFilter(scope=scope, page_prefix=self.page_prefix, doc_ids=self.doc_ids)

    def as_dict(self, *, json_types: bool = False) -> dict[str, Any]:
        """Every field's value (with ``json_types``, a tuple as a list, as JSON has it)."""
        values = {f.name: getattr(self, f.name) for f in _FIELDS}
        if json_types and values["doc_ids"] is not None:
            values["doc_ids"] = list(values["doc_ids"])
        if values["doc_metadata"] is not None:
            values["doc_metadata"] = dict(values["doc_metadata"])
        return values

    def given_values(self) -> dict[str, Any]:
        """The values of the fields given when these options were made."""
        return {name: value for name, value in self.as_dict().items() if name in self.given}

    def replaced(self, **changes: Any) -> Self:
        """These options with ``changes`` (checked), the changed fields given besides."""
        options = dataclasses.replace(self, **changes)
        object.__setattr__(options, "_given", self.given | frozenset(changes))
        return options

    def merged(self, overrides: "Mapping[str, Any] | SearchOptions | None") -> "SearchOptions":
        """These options with ``overrides`` applied: a mapping, or the fields set on another
        SearchOptions. In both, and so in every door (Python, CLI, MCP, REST, OpenAI
        metadata), ``None`` is "not given" and keeps the value below: a request widens a
        scoped default with ``scope="all"``, never with ``null``."""
        if isinstance(overrides, SearchOptions):
            given = overrides.given_values()
        else:
            given = dict(overrides or {})
        changes = {k: v for k, v in given.items() if v is not None}
        return parse_options({**self.as_dict(), **changes})

    def to_json(self) -> str:
        """The options that differ from the built-in defaults, as compact JSON (KB meta)."""
        values = self.as_dict(json_types=True)
        changed = {f.name: values[f.name] for f in _FIELDS if values[f.name] != _DEFAULTS[f.name]}
        return json.dumps(changed, separators=(",", ":"))


_FIELDS: tuple[dataclasses.Field[Any], ...] = dataclasses.fields(SearchOptions)
OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in _FIELDS)
"""The search options' names, in the order they are declared."""
_DEFAULTS: dict[str, Any] = {f.name: f.default for f in _FIELDS}


def _checked(values: Mapping[Any, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """Each field's value checked, and the problems found, located as ``(field, …)``: in
    the fields' order, then the unknown names (pydantic's order)."""
    checked: dict[str, Any] = {}
    problems: list[Problem] = []
    for f in _FIELDS:
        if f.name not in values:
            continue
        try:
            checked[f.name] = check_value(f.type, values[f.name], f.metadata)
        except Invalid as invalid:
            problems += [((f.name, *where), message) for where, message in invalid.problems]
    for name in values:
        if not isinstance(name, str):
            problems.append(((name,), "Keys should be strings"))
        elif name not in _DEFAULTS:
            problems.append(((name,), "Extra inputs are not permitted"))
    return checked, problems


class OptionsError(ConfigurationError):
    """Invalid search options: ``problems`` are each ``(location, message)``, the location
    starting with the field's name."""

    def __init__(self, problems: list[Problem]) -> None:
        described = "; ".join(
            f"{'.'.join(str(p) for p in where) or 'options'}: {message}"
            for where, message in problems
        )
        first = problems[0][0]
        super().__init__(
            f"invalid search options: {described}",
            field=str(first[0]) if first else None,
        )
        self.problems = problems


def parse_options(values: Mapping[str, Any]) -> SearchOptions:
    """Validated options; a bad value raises OptionsError (a ConfigurationError) naming the
    field."""
    checked, problems = _checked(values)
    if problems:
        raise OptionsError(problems)
    return SearchOptions(**checked)


def options_from_json(text: str | None) -> SearchOptions:
    """Options stored by :meth:`SearchOptions.to_json` (the built-in defaults for none)."""
    if not text:
        return SearchOptions()
    try:
        values = json.loads(text)
    except ValueError as error:
        raise ConfigurationError(f"stored search options are not JSON: {error}") from None
    if not isinstance(values, dict):
        raise ConfigurationError("stored search options must be a JSON object")
    return parse_options(values)

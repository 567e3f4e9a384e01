"""A knowledge base's own settings: index strategy, embedder, retrieval defaults, description."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from citewise.retrieval.options import RetrievalOptions, options_from_json
from citewise.strategies import IndexStrategy

META_STRATEGY = "strategy"
META_EMBEDDER = "embedder_name"
META_RETRIEVAL = "retrieval"
META_DESCRIPTION = "description"


@dataclass(frozen=True)
class KBConfig:
    """What ``citewise kb create`` fixes for a knowledge base (kept in its meta).

    The strategy and embedder shape every stored vector, so they are chosen at creation;
    the retrieval defaults apply to each search that does not override them.
    """

    strategy: IndexStrategy = field(default_factory=IndexStrategy)
    embedder: str = "minilm"
    defaults: RetrievalOptions = field(default_factory=RetrievalOptions)
    description: str = ""

    def to_meta(self) -> dict[str, str]:
        return {
            **self.strategy.to_meta(),
            META_EMBEDDER: self.embedder,
            META_RETRIEVAL: self.defaults.to_json(),
            META_DESCRIPTION: self.description,
        }

    @classmethod
    def from_meta(cls, meta: Mapping[str, str], *, default_embedder: str) -> KBConfig:
        return cls(
            strategy=IndexStrategy.from_meta(meta),
            embedder=meta.get(META_EMBEDDER) or default_embedder,
            defaults=options_from_json(meta.get(META_RETRIEVAL)),
            description=meta.get(META_DESCRIPTION, ""),
        )

    def as_json(self) -> dict[str, object]:
        """The settings as the CLI and the REST API show them."""
        s = self.strategy
        return {
            "strategy": s.name,
            "parent_chars": s.parent_chars,
            "child_chars": s.child_chars,
            "qa_questions": s.questions,
            "embedder": self.embedder,
            "retrieval": self.defaults.model_dump(),
            "description": self.description,
        }

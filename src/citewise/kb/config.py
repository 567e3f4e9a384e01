"""A knowledge base's own settings: index strategy, embedder, retrieval defaults, description."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from citewise.options import SearchOptions, options_from_json
from citewise.strategies import IndexStrategy

META_STRATEGY = "strategy"
META_EMBEDDER = "embedder"
META_EMBEDDER_MODEL = "embedder_model"
META_RETRIEVAL = "retrieval"
META_DESCRIPTION = "description"
# A release's knowledge base: the site choices the user gave (JSON), reused by later runs.
META_RELEASE_CHOICES = "release_choices"
# Before one vocabulary: ``embedder`` held the model id and ``embedder_name`` the name.
_OLD_EMBEDDER_NAME = "embedder_name"


def stored_embedder(meta: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(registry name, model id) of the embedder a knowledge base's vectors were made with,
    from either meta layout (None where the meta does not say)."""
    if META_EMBEDDER_MODEL in meta:
        return meta.get(META_EMBEDDER) or None, meta[META_EMBEDDER_MODEL] or None
    return meta.get(_OLD_EMBEDDER_NAME) or None, meta.get(META_EMBEDDER) or None


@dataclass(frozen=True)
class KBConfig:
    """What ``citewise kb create`` fixes for a knowledge base (kept in its meta).

    The strategy and embedder shape every stored vector, so they are chosen at creation;
    the retrieval defaults apply to each search that does not override them.
    """

    strategy: IndexStrategy = field(default_factory=IndexStrategy)
    embedder: str = "minilm"
    defaults: SearchOptions = field(default_factory=SearchOptions)
    description: str = ""

    def to_meta(self) -> dict[str, str]:
        return {
            **self.strategy.to_meta(),
            META_EMBEDDER: self.embedder,
            META_EMBEDDER_MODEL: "",
            META_RETRIEVAL: self.defaults.to_json(),
            META_DESCRIPTION: self.description,
        }

    @classmethod
    def from_meta(cls, meta: Mapping[str, str], *, default_embedder: str) -> KBConfig:
        return cls(
            strategy=IndexStrategy.from_meta(meta),
            embedder=stored_embedder(meta)[0] or default_embedder,
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
            "chunk_overlap": s.overlap,
            "chunk_overlap_unit": s.overlap_unit,
            "embedder": self.embedder,
            # The models the search stages (and qa) use; None: the server's global ones.
            "chat_model": self.defaults.chat_model,
            "reranker_dir": self.defaults.reranker_dir,
            "retrieval": self.defaults.as_dict(),
            "description": self.description,
        }

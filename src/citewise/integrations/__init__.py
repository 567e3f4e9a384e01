"""citewise inside the hosts people already run: langgraph-openai-serve (``lgos``), a LangBot
knowledge-engine plugin (``langbot``) and a Chainlit app (``chainlit_app``).

Each module needs its host's package, installed by the extra of the same name
(``pip install 'citewise[lgos]'``); importing one without it raises ``MissingExtraError``
naming the extra. They reach citewise only through its service layer (``citewise.kb``).
"""

from __future__ import annotations

import importlib
from types import ModuleType

from citewise.errors import MissingExtraError


def require(module: str, package: str, extra: str, purpose: str) -> ModuleType:
    """Import a host's ``module``, or raise ``MissingExtraError`` naming the extra."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtraError(package, extra, purpose) from error

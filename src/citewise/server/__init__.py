"""citewise's HTTP server: the OpenAI-compatible API, the web chat page and metrics."""

from citewise.server.app import create_app
from citewise.server.runtime import ServerOptions

__all__ = ["ServerOptions", "create_app"]

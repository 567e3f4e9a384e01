"""Where documents come from: a folder today; archives, releases and uploads join here."""

from citewise.documents import SourceFile
from citewise.sources.folder import read_folder

__all__ = ["SourceFile", "read_folder"]

"""Where documents come from: a folder today; archives, releases and uploads join here."""

from citewise.sources.folder import SourceFile, read_folder

__all__ = ["SourceFile", "read_folder"]

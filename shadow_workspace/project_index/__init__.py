"""The project index: a workspace root's text files read once in a background thread and
kept current as buffers and the disk change, so that prompts can be given what the
project has written before. Each file becomes windows of lines with their identifier sets
(for retrieval of similar code by Jaccard similarity, as RepoCoder) and, for Python, its
top-level and class-level definitions. Bounded in files, bytes and time; generated,
minified, binary, ignored and vendored files are skipped and counted by reason; symbolic
links are never followed. Queries take and return plain data."""

from .extract import Definition
from .index import ProjectIndex
from .limits import IndexLimits
from .store import WindowMatch

__all__ = ["Definition", "IndexLimits", "ProjectIndex", "WindowMatch"]

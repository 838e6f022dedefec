"""taskspace: find the open model for a task, in prompt semantic task space.

Importing this package is cheap: torch, sentence-transformers, SQLAlchemy and qdrant-client load only
inside the modules that need them (``indexer.encoder``, ``indexer.store``).
"""

__version__ = "0.1.0"

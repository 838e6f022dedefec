"""taskspace: find the open model for a task, in prompt semantic task space.

    from indexer import find_models
    result = find_models("Write a Python function that parses a date string", k=5)
    print(result.to_dict()["results"][0]["model"])

Importing this package is cheap: torch, sentence-transformers, SQLAlchemy and qdrant-client load only
inside the modules that need them (``indexer.encoder``, ``indexer.store``); ``find_models``, ``Filters``,
``FindResult`` and the browse functions are imported on first access.
"""

__version__ = "0.1.0"

_LAZY = {
    "find_models": "find", "Filters": "find", "FindResult": "find", "ModelResult": "find", "parse_params": "find",
    "list_models": "browse", "list_benchmarks": "browse", "model_detail": "browse",
}
__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'indexer' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

"""taskspace: find the open model for a task, in prompt semantic task space.

    from indexer import find_models
    result = find_models("Write a Python function that parses a date string", k=5)
    print(result.to_dict()["results"][0]["model"])

Importing this package is cheap: torch, sentence-transformers, SQLAlchemy and qdrant-client load only
inside the modules that need them (``indexer.encoder``, ``indexer.store``); ``find_models``, ``Filters``,
``FindResult`` (with the classes of its results' fields: ``ModelResult``, ``Coverage``, ``Evidence``) and the browse
functions are imported on first access, and listed by ``dir(indexer)`` before it
(what IPython's and Jupyter's completion of ``indexer.`` read).
"""

__version__ = "0.1.0"

_LAZY = {
    "find_models": "find", "Filters": "find", "FindResult": "find", "ModelResult": "find", "Coverage": "find",
    "Evidence": "find", "parse_params": "find",
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


def __dir__() -> list[str]:
    """The module's names with the lazy ones (PEP 562): before, ``dir(indexer)`` lacked ``find_models`` and the rest
    until their first access, so ``indexer.<TAB>`` in IPython or Jupyter did not offer them."""
    return sorted(set(globals()) | set(_LAZY))

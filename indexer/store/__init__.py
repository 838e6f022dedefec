"""Storage: the SQL source of truth (:mod:`indexer.store.sql`, SQLAlchemy) and the derived vector
index (:mod:`indexer.store.vectors`, Qdrant). Nothing is imported here, so ``import indexer.store``
stays cheap and pulls in neither client; import the submodule you need.
"""

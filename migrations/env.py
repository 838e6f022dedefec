"""Alembic environment. Used two ways:

- programmatically by :mod:`indexer.store.sql_migrate` (``taskspace db ...`` and the automatic upgrade of
  the embedded SQLite), which passes an open connection in ``config.attributes["connection"]``;
- by the ``alembic`` command from the repo root (``alembic.ini``), which connects to
  ``sqlalchemy.url`` if set, else to ``TASKSPACE_DATABASE_URL`` / the default SQLite file.
"""

from __future__ import annotations

from alembic import context

from indexer.store.sql_models import Base

config = context.config
target_metadata = Base.metadata


def _configure(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",  # SQLite cannot ALTER most things
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url")
    if url:
        return url
    from indexer.config import get_settings

    return get_settings().database_url


def run_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
        return
    from indexer.store.sql_migrate import make_engine

    engine = make_engine(_url())
    try:
        with engine.connect() as connection:
            _configure(connection)
            connection.commit()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()

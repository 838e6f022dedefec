"""Published peers as contestants (:mod:`.contestants`), each implemented from its paper (and read, not copied,
public code), each giving a probability of success per (model, prompt):

- ``embedllm``: EmbedLLM (Zhuang et al., ICLR 2025; public code ``richardzhuang0412/EmbedLLM``,
  ``algorithm/mf.py``): matrix factorisation, one learned vector ``v_m`` (k,) per model and a learned linear
  projection ``W`` of the prompt embedding, ``logit = w . (v_m * (W q + c)) + b`` (the public code's
  ``classifier(P(model) * text_proj(q))``, two classes there, one logit here: the same model), binary
  cross-entropy on the source cells, Gaussian noise on the prompt embedding while training (their ``alpha``),
  Adam with weight decay, early stopping on a validation slice of the source prompts, a fixed seed.
- ``irt``: IRT routing (IRT-Router, Song et al., ACL 2025; the M-IRT router): multidimensional IRT, an ability
  vector ``theta_m`` (k,) per model, the prompt's discrimination ``a(q) = softplus(A q)`` (k,) and difficulty
  ``b(q) = u . q + c`` predicted from its embedding, ``P = sigmoid(a(q) . theta_m - b(q))``; trained like
  ``embedllm``. (IRT-Router builds ``theta`` from an embedding of a model's description; the data here has none,
  so ``theta`` is learned per model, as in classic MIRT.)
- ``clusters``: cluster profiles (the UniRoute / Avengers family; training-free): k-means of the source prompt
  embeddings, each model's success rate per cluster (shrunk toward its overall rate by ``prior`` pseudo-cells),
  a prompt scored by its nearest centroid (``hard``, UniRoute) or by a softmax over centroid similarities
  (``soft``, Avengers-style); k and the assignment are chosen on a validation slice of the source (log loss).
- ``benchbest``: per-benchmark best: each model's source success rate on the prompt's own benchmark (its overall
  rate where the benchmark has no source prompt, e.g. leave-one-benchmark-out); selection then picks the model
  with the best source accuracy on that benchmark.

Every fitted peer (:class:`.contestants.Fitted`) gives its own probabilities ``probability(Q)`` (M, n) in (0, 1)
and the scores ``predict(Q) = 2 p - 1`` on the signed scale of the other contestants. ``embedllm`` and ``irt`` need
torch (CPU), ``clusters`` scikit-learn; both are imported only when a peer is fitted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # the contestants module imports this one (it registers the peers): the annotations' name alone
    from .contestants import Fitted


def source_means(S: np.ndarray) -> np.ndarray:
    """(M,) each model's mean observed outcome (:func:`.contestants.source_means`, imported late: the
    contestants module registers the peers)."""
    from .contestants import source_means as means

    return means(S)


__all__ = ["PEER_SETS", "EmbedLLMContestant", "IRTContestant", "ClusterContestant", "BenchmarkBestContestant",
           "peer_contestants", "benchmark_codes"]

#: ``--peers`` choices -> the peers they add (``fast``: training-free; ``all`` adds the two trained ones)
PEER_SETS = {"none": (), "fast": ("clusters", "benchbest"), "all": ("clusters", "benchbest", "embedllm", "irt")}


def _fitted(proba_fn, S: np.ndarray, how: str, info: dict) -> "Fitted":
    """A fitted peer (:class:`.contestants.Fitted`): scores ``2 p - 1`` (the signed scale of the other
    contestants), probabilities ``p = proba_fn(Q)`` (M, n) of its own; ``info`` what the fit chose (k, epochs,
    seconds; also the attribute ``info``)."""
    from .contestants import Fitted

    fitted = Fitted(lambda Q: 2.0 * proba_fn(Q) - 1.0, source_means(S), lambda Q, P: (np.asarray(P) + 1.0) / 2.0,
                    how)
    fitted.info = info
    return fitted


def _validation_split(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, validation) prompt indices: a random ``fraction`` of ``n`` held out (none when fewer than 10)."""
    perm = np.random.default_rng(seed).permutation(n)
    n_val = int(round(n * fraction)) if n >= 10 else 0
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def _log_loss(P: np.ndarray, S: np.ndarray) -> float:
    """Mean binary cross-entropy of probabilities ``P`` against outcomes ``S`` (M, n) over observed cells."""
    obs = ~np.isnan(S)
    p = np.clip(P[obs], 1e-6, 1 - 1e-6)
    s = S[obs]
    return float(-np.mean(s * np.log(p) + (1 - s) * np.log(1 - p))) if s.size else float("nan")


# ----------------------------------------------------------------------------------------------- trained peers


def _train(module, D: np.ndarray, S: np.ndarray, *, seed: int, val_fraction: float, max_epochs: int,
           patience: int, lr: float, weight_decay: float, batch: int, noise: float) -> dict:
    """Fit ``module`` (``module(Xb) -> (b, M)`` logits) by masked binary cross-entropy on the observed cells.

    ``D`` (n, d) source prompt rows, ``S`` (M, n) outcomes in [0, 1] with NaN (a graded outcome is a soft
    target). Mini-batches of ``batch`` prompts against every model; Gaussian noise of standard deviation
    ``noise`` on the prompt rows while training. Early stopping: after each epoch the loss on a validation
    ``val_fraction`` of the source prompts; the best epoch's weights are kept; stop after ``patience`` epochs
    without improvement. Returns {"epochs", "best_epoch", "val_loss"}.
    """
    import torch

    X = torch.as_tensor(np.asarray(D, dtype=np.float32))
    T = torch.as_tensor(np.nan_to_num(S.T, nan=0.0).astype(np.float32))  # (n, M) targets
    O = torch.as_tensor((~np.isnan(S.T)).astype(np.float32))  # (n, M) observed mask
    tr, va = _validation_split(X.shape[0], val_fraction, seed)
    tr_t, va_t = torch.as_tensor(tr), torch.as_tensor(va)
    batch = min(batch, max(32, -(-tr.size // 8)))  # at least 8 steps an epoch on small sources
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(module.parameters(), lr=lr, weight_decay=weight_decay)
    bce = torch.nn.functional.binary_cross_entropy_with_logits

    def loss_on(idx, train: bool):
        xb = X[idx]
        if train and noise > 0:
            xb = xb + noise * torch.randn(xb.shape, generator=gen)
        o = O[idx]
        return (bce(module(xb), T[idx], reduction="none") * o).sum() / o.sum().clamp_min(1.0)

    best, best_state, best_epoch, epoch = float("inf"), None, 0, 0
    for epoch in range(1, max_epochs + 1):
        module.train()
        order = tr_t[torch.randperm(tr_t.numel(), generator=gen)]
        for lo in range(0, order.numel(), batch):
            opt.zero_grad()
            loss = loss_on(order[lo : lo + batch], True)
            loss.backward()
            opt.step()
        if va.size == 0:
            continue
        module.eval()
        with torch.no_grad():
            val = float(loss_on(va_t, False))
        if val < best - 1e-5:
            best, best_epoch = val, epoch
            best_state = {k: v.detach().clone() for k, v in module.state_dict().items()}
        elif epoch - best_epoch >= patience:
            break
    if best_state is not None:
        module.load_state_dict(best_state)
    module.eval()
    return {"epochs": epoch, "best_epoch": best_epoch or epoch, "val_loss": best if va.size else float("nan")}


def _fit_torch(build, D: np.ndarray, S: np.ndarray, peer) -> "Fitted":
    """Build (``build(d, M)``, seeded) and train a torch peer; its probabilities for any query rows."""
    import torch

    t0 = time.perf_counter()
    D = np.asarray(D, dtype=np.float32)
    threads = torch.get_num_threads()
    torch.set_num_threads(max(1, min(threads, peer.threads)))
    try:
        with torch.random.fork_rng():  # a fixed seed for the initial weights, the caller's RNG left alone
            torch.manual_seed(peer.seed)
            module = build(D.shape[1], S.shape[0])
        # prompt-embedding noise relative to the embeddings' scale (their RMS coordinate)
        noise = peer.alpha * float(np.sqrt(np.mean(D.astype(np.float64) ** 2)))
        info = _train(module, D, S, seed=peer.seed, val_fraction=peer.val_fraction, max_epochs=peer.max_epochs,
                      patience=peer.patience, lr=peer.lr, weight_decay=peer.weight_decay, batch=peer.batch,
                      noise=noise)
    finally:
        torch.set_num_threads(threads)
    info["fit_seconds"] = time.perf_counter() - t0

    def proba(Q: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = module(torch.as_tensor(np.asarray(Q, dtype=np.float32))).numpy().T.astype(np.float64)
        return 1.0 / (1.0 + np.exp(-np.clip(logits, -30.0, 30.0)))  # (M, n), strictly inside (0, 1)

    return _fitted(proba, S, "its own: the sigmoid of its logit (trained by cross-entropy)", info)


@dataclass
class _TorchPeer:
    """Training options of the torch peers: ``dim`` the latent size, ``alpha`` the training noise on the prompt
    embedding (a fraction of its RMS coordinate; the public EmbedLLM code adds N(0, 0.05^2)), Adam's ``lr`` and
    ``weight_decay`` (EmbedLLM's 1e-5), ``batch`` prompts per step (at most; at least 8 steps an epoch), early
    stopping after ``patience`` epochs without a better loss on the ``val_fraction`` validation prompts (at most
    ``max_epochs``), the ``seed`` of the initial weights, the slices and the noise, torch ``threads`` (1: on a
    shared machine more threads were 10x slower here)."""

    dim: int = 64
    alpha: float = 0.05
    lr: float = 1e-2
    weight_decay: float = 1e-5
    batch: int = 2048
    max_epochs: int = 100
    patience: int = 5
    val_fraction: float = 0.1
    seed: int = 0
    threads: int = 1


@dataclass
class EmbedLLMContestant(_TorchPeer):
    """EmbedLLM matrix factorisation (module docstring). ``dim``: the model/prompt vector size k; ``alpha``: the
    training noise on the prompt embedding as a fraction of its RMS coordinate."""

    def fit(self, D: np.ndarray, S: np.ndarray) -> "Fitted":
        import torch
        from torch import nn

        k = self.dim

        class TextMF(nn.Module):
            def __init__(self, d: int, M: int):
                super().__init__()
                self.models = nn.Parameter(torch.randn(M, k) / np.sqrt(k))  # (M, k) one vector per model
                self.proj = nn.Linear(d, k)  # the prompt embedding projected to (k,)
                self.out = nn.Linear(k, 1)  # logit = w . (v_m * W q) + b

            def forward(self, X):
                h = self.proj(X)  # (b, k)
                # (b, M): sum_j w_j v_mj h_bj + b
                return h @ (self.models * self.out.weight).T + self.out.bias

        return _fit_torch(TextMF, D, S, self)


@dataclass
class IRTContestant(_TorchPeer):
    """Multidimensional IRT with prompt-predicted item parameters (module docstring). ``dim``: the number of
    latent abilities (IRT-Router uses 25)."""

    dim: int = 25

    def fit(self, D: np.ndarray, S: np.ndarray) -> "Fitted":
        import torch
        from torch import nn

        k = self.dim

        class MIRT(nn.Module):
            def __init__(self, d: int, M: int):
                super().__init__()
                self.theta = nn.Parameter(torch.randn(M, k) * 0.1)  # (M, k) abilities
                self.disc = nn.Linear(d, k)  # a(q) = softplus(A q + a0) >= 0, (k,)
                self.diff = nn.Linear(d, 1)  # b(q) = u . q + c

            def forward(self, X):
                a = nn.functional.softplus(self.disc(X))  # (b, k)
                return a @ self.theta.T - self.diff(X)  # (b, M): a(q) . theta_m - b(q)

        return _fit_torch(MIRT, D, S, self)


# ------------------------------------------------------------------------------------------ training-free peers


@dataclass
class ClusterContestant:
    """Cluster profiles (module docstring). ``ks``: the candidate numbers of clusters (capped at one cluster per
    ``min_size`` source prompts), each a k-means of the training part of the source, scored on its validation
    part (k-means on a seeded sample of at most ``max_fit`` of them); the chosen centroids' profiles are then
    computed on every source prompt; ``temperatures``: the soft assignments tried besides the hard one (a softmax of
    cosine similarity / temperature); ``prior``: pseudo-cells at the model's overall rate in every cluster."""

    ks: tuple = (4, 16, 64)
    temperatures: tuple = (0.02, 0.05)
    prior: float = 5.0
    min_size: int = 20
    val_fraction: float = 0.2
    seed: int = 0
    threads: int = 1
    max_fit: int = 3000

    @property
    def min_prompts(self) -> int:
        """The fewest source prompts that make two clusters (``min_size`` a cluster): on fewer, the fit is one
        cluster, each model's source success rate, the scores of the best source performer (``bsp``)."""
        return 2 * self.min_size

    def _centroids(self, D: np.ndarray, k: int) -> np.ndarray:
        """(k, d) unit centroids of a k-means of the rows ``D`` (n, d) (of ``max_fit`` of them at most)."""
        from sklearn.cluster import KMeans
        from threadpoolctl import threadpool_limits

        if D.shape[0] > self.max_fit:  # the centroids from a seeded sample; every prompt is assigned later
            D = D[np.sort(np.random.default_rng(self.seed).choice(D.shape[0], self.max_fit, replace=False))]
        with threadpool_limits(self.threads):  # more threads were many times slower on the shared 2 cores here
            km = KMeans(n_clusters=k, n_init=1, max_iter=25, random_state=self.seed).fit(D)
        C = np.asarray(km.cluster_centers_, dtype=np.float64)
        return C / np.maximum(np.linalg.norm(C, axis=1, keepdims=True), 1e-12)

    def _rates(self, D: np.ndarray, S: np.ndarray, C: np.ndarray) -> np.ndarray:
        """(M, k) each model's success rate on the prompts ``D`` nearest each centroid of ``C``, shrunk toward its
        overall rate by ``prior`` pseudo-cells."""
        k = C.shape[0]
        labels = np.argmax(np.asarray(D, dtype=np.float64) @ C.T, axis=1)  # nearest centroid by cosine
        onehot = np.zeros((D.shape[0], k))
        onehot[np.arange(D.shape[0]), labels] = 1.0
        obs = ~np.isnan(S)
        num = np.where(obs, S, 0.0) @ onehot  # (M, k) successes per cluster
        den = obs.astype(np.float64) @ onehot  # (M, k) observed cells per cluster
        mean = np.nan_to_num(source_means(S), nan=0.5)[:, None]
        return (num + self.prior * mean) / (den + self.prior)

    @staticmethod
    def _proba(Q: np.ndarray, C: np.ndarray, rate: np.ndarray, temperature: float | None) -> np.ndarray:
        sims = np.asarray(Q, dtype=np.float64) @ C.T  # (n, k) cosine (unit rows)
        if temperature is None:
            return rate[:, np.argmax(sims, axis=1)]  # (M, n) the nearest centroid's rates
        w = np.exp((sims - sims.max(axis=1, keepdims=True)) / temperature)
        return rate @ (w / w.sum(axis=1, keepdims=True)).T  # (M, n) the rates under the soft assignment

    def fit(self, D: np.ndarray, S: np.ndarray) -> "Fitted":
        t0 = time.perf_counter()
        D = np.asarray(D, dtype=np.float32)
        n = D.shape[0]
        ks = sorted({min(k, max(1, n // self.min_size)) for k in self.ks})
        tr, va = _validation_split(n, self.val_fraction, self.seed)
        choice, best, C = (ks[0], None), float("inf"), None
        if va.size and len(tr) > max(ks):
            for k in ks:
                Ck = self._centroids(D[tr], k)
                rate = self._rates(D[tr], S[:, tr], Ck)
                for t in (None, *self.temperatures):
                    loss = _log_loss(self._proba(D[va], Ck, rate, t), S[:, va])
                    if loss < best:
                        best, choice, C = loss, (k, t), Ck
        k, t = choice
        if C is None:  # too few source prompts to choose: the smallest k on all of them
            C = self._centroids(D, k)
        rate = self._rates(D, S, C)  # the chosen centroids, every source prompt's outcomes
        info = {"k": k, "assignment": "hard" if t is None else f"soft T={t:g}", "val_loss": best,
                "fit_seconds": time.perf_counter() - t0}
        return _fitted(lambda Q: self._proba(Q, C, rate, t), S, "its own: the cluster's success rate", info)


def benchmark_codes(benchmarks: np.ndarray) -> np.ndarray:
    """(N, 1) float rows: each prompt's benchmark as an integer code (the ``rows`` of
    :class:`BenchmarkBestContestant`, so a fold hands it its source and target prompts' benchmarks)."""
    _, inv = np.unique(np.asarray(benchmarks, dtype=str), return_inverse=True)
    return inv.astype(np.float64).reshape(-1, 1)


@dataclass
class BenchmarkBestContestant:
    """Per-benchmark best (module docstring). ``rows = (codes, codes)`` (:func:`benchmark_codes`): the protocol
    fits it on the source prompts' benchmark codes and queries it with the target prompts' codes, instead of
    the embeddings."""

    rows: tuple | None = None

    @classmethod
    def for_benchmarks(cls, benchmarks: np.ndarray) -> "BenchmarkBestContestant":
        codes = benchmark_codes(benchmarks)
        return cls(rows=(codes, codes))

    def fit(self, codes: np.ndarray, S: np.ndarray) -> "Fitted":
        codes = np.asarray(codes).reshape(-1).astype(np.int64)
        mean = source_means(S)
        overall = np.nan_to_num(mean, nan=0.5)
        obs = ~np.isnan(S)
        rates: dict[int, np.ndarray] = {}
        for c in np.unique(codes):
            cols = codes == c
            n = obs[:, cols].sum(axis=1)
            total = np.where(obs[:, cols], S[:, cols], 0.0).sum(axis=1)
            # the model's source accuracy on this benchmark; its overall one where it has no cell there
            rates[int(c)] = np.where(n > 0, total / np.maximum(n, 1), overall)

        def proba(Q: np.ndarray) -> np.ndarray:
            q = np.asarray(Q).reshape(-1).astype(np.int64)
            out = np.repeat(overall[:, None], q.size, axis=1)
            for c, r in rates.items():
                out[:, q == c] = r[:, None]
            return out

        return _fitted(proba, S, "its own: the benchmark's success rate", {"benchmarks": len(rates)})


def peer_contestants(which: str, benchmarks: np.ndarray) -> dict:
    """name -> contestant of the ``--peers`` choice ``which`` (:data:`PEER_SETS`); ``benchmarks`` (N,) the
    benchmark of every prompt (for ``benchbest``)."""
    from ..errors import InputError

    if which not in PEER_SETS:
        raise InputError(f"unknown --peers {which!r}; use one of {', '.join(PEER_SETS)}")
    make = {
        "clusters": lambda: ClusterContestant(),
        "benchbest": lambda: BenchmarkBestContestant.for_benchmarks(benchmarks),
        "embedllm": lambda: EmbedLLMContestant(),
        "irt": lambda: IRTContestant(),
    }
    return {name: make[name]() for name in PEER_SETS[which]}

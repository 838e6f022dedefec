"""The ridge maths of the solver: the shrinkage phi(w), the projection of one coverage pattern, the paper's
formula computed directly (the reference), and the general per-pattern solve in which the options intercept,
GCV, free and prior combine in one formula (:func:`solve_pattern`, on a pattern's :class:`Eigen`).

Everything here works on sufficient statistics (Gram matrices, ``b``, sums of y and y^2) or, for
:func:`paper_normals`, on ``D`` and ``S`` directly; nothing reads the solver's state.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .inputs import signed_outcomes
from .kernels import CHUNK, single_threaded_lapack

#: The lambda grid of ``select='gcv'`` (log-spaced; the largest is close to "the model's mean only").
GCV_LAMBDAS = tuple(float(x) for x in np.logspace(-2, 4, 25))


def shrinkage(w: np.ndarray, lam: float, eps: float) -> np.ndarray:
    """phi(w) of the eigenvalues ``w`` (d,) of a Gram matrix: 0 below the threshold, else 1/(w + 2 lambda).

    ``sqrt(w)`` are the singular values of the model's prompt matrix. With ``lam == 0`` this is the
    pseudo-inverse, so eigenvalues at round-off level (relative 1e-12) are dropped as numpy's ``pinv`` does.
    """
    w = np.clip(np.asarray(w, dtype=np.float64), 0.0, None)
    keep = np.sqrt(w) >= eps
    if lam == 0:
        keep &= w > (w.max(initial=0.0) * 1e-12)
    denom = w + 2.0 * lam
    out = np.zeros_like(w)
    np.divide(1.0, denom, out=out, where=keep & (denom > 0))
    return out


def projection(G: np.ndarray, lam: float, eps: float) -> np.ndarray:
    """The (d, d) matrix ``V diag(phi(w)) V^T`` of a Gram matrix ``G = V diag(w) V^T``; ``e = b @ it``.

    With ``eps == 0`` and ``lam > 0`` every component is kept, so this is ``(G + 2 lambda I)^-1``, computed
    by an LU inverse (several times faster than the eigendecomposition, same result to round-off).
    """
    G = np.asarray(G, dtype=np.float64)
    d = G.shape[0]
    if eps == 0 and lam > 0 and 2.0 * lam >= 1e-8 * max(float(np.abs(np.diag(G)).max(initial=0.0)), 1.0):
        P = np.linalg.inv(G + 2.0 * lam * np.eye(d))
        return (P + P.T) * 0.5
    w, V = np.linalg.eigh(G)
    phi = shrinkage(w, lam, eps)
    return (V * phi) @ V.T


def paper_normals(D: np.ndarray, S: np.ndarray, lam: float = 1.0, eps: float = 0.0) -> np.ndarray:
    """The paper's formula computed the direct way, for dense outcomes: ``E = P U S' V^T``.

    ``D`` (N, d), ``S`` (M, N) in [0, 1] without NaN. Returns E (M, d) float64. Used as the reference in
    tests and benchmarks; the solver never calls it. ``P U`` is formed in chunks of models.
    """
    S = np.asarray(S)
    if S.ndim == 1:
        S = S[None, :]
    U, s, Vt = np.linalg.svd(np.asarray(D, dtype=np.float64), full_matrices=False)
    keep = s >= eps
    if lam == 0:
        keep &= s > s.max(initial=0.0) * 1e-6
    s_prime = np.zeros_like(s)
    s_prime[keep] = s[keep] / (s[keep] ** 2 + 2.0 * lam)  # S'_k = s_k / (s_k^2 + 2 lambda)
    E = np.empty((S.shape[0], Vt.shape[1]))
    for lo in range(0, S.shape[0], CHUNK):
        Y, observed = signed_outcomes(S[lo : lo + CHUNK], model_ids=range(lo, lo + CHUNK))
        if not observed.all():
            raise InputError("paper_normals needs dense outcomes (no NaN)")
        E[lo : lo + CHUNK] = ((Y @ U) * s_prime) @ Vt  # E = P U S' V^T
    return E


@dataclass(frozen=True, eq=False)
class Covariates:
    """The k unpenalised trailing columns (option ``free``) of a pattern's (centred) Gram
    ``[[A, B], [B^T, C]]``: A (p, p) the embedding block, C (k, k) the covariate block, B (p, k) between."""

    B: np.ndarray  # (p, k) cross block
    K: np.ndarray  # (p, k) B C^+
    Cinv: np.ndarray  # (k, k) C^+ (pseudo-inverse)
    rank: float  # rank(C): the covariates' degrees of freedom


#: reflectors per block when :class:`Tridiagonal` applies ``Q`` (a compact WY block: three matrix products)
REFLECTOR_BLOCK = 64


class Tridiagonal:
    """A symmetric ``A`` (p, p) as ``Q T Q^T``: ``T`` tridiagonal (diagonal ``d`` (p,), off-diagonal ``e`` (p-1,)),
    ``Q`` orthogonal, kept as its Householder reflectors (LAPACK ``dsytrd``, the first step of every symmetric
    eigensolver and about a third of ``eigh``'s time at p = 768), with the eigenvalues ``w`` (p,) ascending
    (``dsterf``, no eigenvectors). A ridge solve needs nothing more: ``(A + s I)^-1 B = Q (T + s I)^-1 Q^T B``, a
    tridiagonal solve per shift (:meth:`solve`) between two applications of ``Q`` (:meth:`qt`, :meth:`q`); the
    eigenvectors are formed only when asked (:meth:`eigenvectors`: ``Q Z`` with ``T = Z diag(w) Z^T``)."""

    def __init__(self, A: np.ndarray):
        from scipy.linalg import lapack

        A = np.array(A, dtype=np.float64, order="F")  # dsytrd works in place on this copy
        p = A.shape[0]
        self.blocks: list[tuple[int, np.ndarray, np.ndarray]] = []
        if p < 2:
            self.d, self.e = np.diag(A).copy(), np.zeros(0)
            self.w = self.d.copy()
            return
        c, d, e, tau, info = lapack.dsytrd(A, lower=1, lwork=REFLECTOR_BLOCK * p, overwrite_a=1)
        if info:
            raise np.linalg.LinAlgError(f"tridiagonal reduction failed (dsytrd info {info})")
        self.d, self.e = d, e
        # Q = H_0 H_1 ... H_{p-2}, H_i = I - tau_i v_i v_i^T with v_i = [0 (i+1 entries), 1, c[i+2:, i]]
        for lo in range(0, p - 1, REFLECTOR_BLOCK):
            hi = min(lo + REFLECTOR_BLOCK, p - 1)
            Vb = np.tril(c[lo + 1 :, lo:hi], -1)  # rows from lo + 1 (above, these reflectors are 0)
            Vb[np.arange(hi - lo), np.arange(hi - lo)] = 1.0
            t = tau[lo:hi]
            VtV = Vb.T @ Vb
            T = np.zeros((hi - lo, hi - lo))  # H_lo ... H_hi-1 = I - Vb T Vb^T (LAPACK's dlarft, forward)
            for j in range(hi - lo):
                T[j, j] = t[j]
                if j:
                    T[:j, j] = -t[j] * (T[:j, :j] @ VtV[:j, j])
            self.blocks.append((lo + 1, Vb, T))
        w, info = lapack.dsterf(d, e)
        if info:
            raise np.linalg.LinAlgError(f"tridiagonal eigenvalues failed (dsterf info {info})")
        self.w = w

    def q(self, B: np.ndarray) -> np.ndarray:
        """``Q B`` for ``B`` (p, k)."""
        B = np.array(B, dtype=np.float64)
        for r0, Vb, T in reversed(self.blocks):  # the last block first
            B[r0:] -= Vb @ (T @ (Vb.T @ B[r0:]))
        return B

    def qt(self, B: np.ndarray) -> np.ndarray:
        """``Q^T B`` for ``B`` (p, k)."""
        B = np.array(B, dtype=np.float64)
        for r0, Vb, T in self.blocks:
            B[r0:] -= Vb @ (T.T @ (Vb.T @ B[r0:]))
        return B

    def tmul(self, X: np.ndarray) -> np.ndarray:
        """``T X`` for ``X`` (p, k)."""
        out = self.d[:, None] * X
        out[:-1] += self.e[:, None] * X[1:]
        out[1:] += self.e[:, None] * X[:-1]
        return out

    def solve(self, shift: float, B: np.ndarray) -> np.ndarray:
        """``(T + shift I)^-1 B`` for ``B`` (p, k) (``T + shift I`` positive definite: ``shift`` > 0)."""
        if self.d.size < 2 or B.shape[1] == 0:
            return B / (self.d + shift)[:, None]
        from scipy.linalg import lapack

        _, _, x, info = lapack.dptsv(self.d + shift, self.e, B)
        if info:
            raise np.linalg.LinAlgError(f"tridiagonal solve failed (dptsv info {info}, shift {shift})")
        return x

    def eigenvectors(self) -> np.ndarray:
        """(p, p): the eigenvectors of ``A`` as columns, in the order of :attr:`w` (``Q Z``, ``Z`` those of ``T``
        by divide and conquer, as ``eigh`` finds them)."""
        if self.d.size < 2:
            return np.ones((self.d.size, self.d.size))
        from scipy.linalg import lapack

        _, Z, info = lapack.dstevd(self.d, self.e, compute_v=1)
        if info:
            raise np.linalg.LinAlgError(f"tridiagonal eigenvectors failed (dstevd info {info})")
        return self.q(Z)


class Eigen:
    """A pattern's Gram as the general solve uses it, ``V diag(w) V^T``: centred (option ``intercept``) and
    with the covariates partialled out (option ``free``): (p, p) with p = d - k.

    ``w`` (p,): eigenvalues clipped at 0 (ascending); ``V`` (p, p): eigenvectors (columns); ``mu`` (d,): the
    pattern's mean prompt row (zeros without the intercept); ``covariates``: option ``free``. A factorisation of
    the solver (:func:`factorise`) keeps the Gram's :class:`Tridiagonal` form (``tri``), which is all a solve needs,
    and forms ``V`` on first use (the posterior's variance, :func:`predictive_variance`; then ``tri`` is dropped);
    stored factors (:class:`indexer.posterior.PatternPosterior`) give ``w`` and ``V`` directly."""

    def __init__(self, w: np.ndarray, V: np.ndarray | None, mu: np.ndarray, covariates: "Covariates | None" = None,
                 tri: Tridiagonal | None = None):
        if V is None and tri is None:
            raise ValueError("Eigen needs its eigenvectors V or the tridiagonal form they come from")
        self.w = w
        self._V = V
        self.mu = mu
        self.covariates = covariates
        self.tri = tri

    @property
    def V(self) -> np.ndarray:
        if self._V is None:
            with single_threaded_lapack():
                self._V = self.tri.eigenvectors()
            self.tri = None  # solves use V from now on (the reflectors would double the memory)
        return self._V


def factorise(G: np.ndarray, mu: np.ndarray | None, n: int, free: int) -> Eigen:
    """The :class:`Eigen` of a pattern of ``n`` prompts with Gram ``G`` (d, d), centred on ``mu`` (d,) (the
    pattern's mean prompt row; None: no intercept, not centred) and with the last ``free`` columns partialled
    out: its :class:`Tridiagonal` form and eigenvalues (the eigenvectors are formed on first use)."""
    if mu is None:
        mu = np.zeros(G.shape[0])
    else:
        G = G - n * np.outer(mu, mu)  # centred Gram G_c = G - n mu mu^T
    cov = None
    if free:  # partial the unpenalised covariates out of the embedding block
        p = G.shape[0] - free
        Bm, C = G[:p, p:], G[p:, p:]
        Cinv = np.linalg.pinv(C, hermitian=True)
        K = Bm @ Cinv  # (p, free)
        cov = Covariates(Bm, K, Cinv, float(np.linalg.matrix_rank(C, hermitian=True)))
        G = G[:p, :p] - K @ Bm.T  # A_r = A - B C^+ B^T
    with single_threaded_lapack():  # multi-threaded LAPACK on a small matrix is slower under load
        tri = Tridiagonal(G)  # the eigenvectors only when a posterior asks (Eigen.V)
    return Eigen(np.clip(tri.w, 0.0, None), None, mu, cov, tri=tri)


def solve_pattern(eig: Eigen, n: int, b: np.ndarray, sum_y: np.ndarray, sum_yy: np.ndarray, *, lam: float,
                  eps: float, intercept: bool, grid: np.ndarray | None = None,
                  prior: np.ndarray | None = None
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray | float, np.ndarray]:
    """Normals of k models observed on the same pattern of ``n`` prompts, from their statistics ``b`` (k, d),
    ``sum_y`` and ``sum_yy`` (k,) and the pattern's ``eig``.

    Per model (``c = V^T (b_i - sum_y_i mu)``, or ``V^T b_i`` without the intercept):

        e_i = V diag(phi(w; lambda_i)) c,    intercept_i = sum_y_i / n - e_i . mu

    which minimises ``sum_j (y_ij - a_i - e_i . d_j)^2 + 2 lambda ||e_i||^2`` with an unpenalised ``a_i``.
    With a ``grid`` (L,) of lambdas (``select='gcv'``), lambda_i minimises GCV(lambda) = n RSS / (n - df)^2,
    where ``RSS = ss - sum_k c_k^2 (2 phi_k - w_k phi_k^2)``, ``ss = sum_yy - sum_y^2 / n`` and
    ``df = 1 + sum_k w_k phi_k``: all from the sufficient statistics, so an incremental update equals a fit
    from scratch. Without one, lambda_i = ``lam``.

    With covariates (``eig.covariates``, option ``free = k``) the covariates are partialled out (Frisch-Waugh)
    in statistics space: ``A_r = A - B C^+ B^T`` takes the place of ``G_c`` (done by :func:`factorise`) and
    ``b_D - B C^+ b_F`` of ``b``; then the covariate coefficients are ``f_i = C^+ (b_F - B^T e_i)``, ``ss``
    loses ``b_F^T C^+ b_F`` and ``df`` gains rank(C).

    With a ``prior`` u (p,) the embedding part is ``e_i = u + delta_i``, delta_i the ridge fit of the residual
    target ``y - X u``: in statistics space ``b -> b - A u`` and ``ss -> ss - 2 b.u + u^T A u`` (``A`` the
    centred, partialled Gram above), so GCV picks lambda for the residual target.

    Computed on the pattern's :class:`Tridiagonal` form ``A = Q T Q^T`` (every lambda > 0 at eps 0, the general
    solve's case): ``V diag(phi) V^T = Q (T + 2 lambda I)^-1 Q^T``, so ``c^T (2 phi - w phi^2) c = b~ . x + 2 lambda
    x . x`` with ``b~ = Q^T b`` and ``x = (T + 2 lambda I)^-1 b~``, one tridiagonal solve per lambda; on the
    eigenbasis ``V`` otherwise (eps > 0 drops components, lambda 0 is the pseudo-inverse). Same numbers to
    round-off.

    The residual variance of each model at its lambda, ``s_i^2 = RSS / max(n - df, 1)``, is what the posterior
    of the fit needs (:mod:`indexer.posterior`): ``var(score at x) = s_i^2 (1/n + x~^T V diag(phi) V^T x~)``.

    Returns (E (k, d) the normals ``[e_i, f_i]``, lambda_i (k,), intercept_i (k,) or 0.0 without the intercept,
    s_i^2 (k,)).
    """
    w, mu = eig.w, eig.mu
    sy, syy = sum_y, sum_yy
    lams = np.asarray(grid if grid is not None else [lam], dtype=np.float64)  # (L,)
    # the tridiagonal form serves every lambda > 0 at eps 0 (no component dropped): (A + 2 lambda I)^-1 directly
    tri = eig.tri if eps == 0 and bool((lams > 0).all()) else None
    if intercept:
        b = b - sy[:, None] * mu[None, :]  # b_i - sum_y_i mu
    ss = syy - (sy * sy / n if intercept else 0.0)  # sum_j (y_ij - mean_i)^2 (or sum_j y_ij^2)
    df0 = 1.0 if intercept else 0.0
    cov = eig.covariates
    if cov is not None:
        free = cov.Cinv.shape[0]
        bF = b[:, -free:]
        b = b[:, :-free] - bF @ cov.K.T  # the embedding part of b with the covariates partialled out
        ss = ss - ((bF @ cov.Cinv) * bF).sum(axis=1)
        df0 += cov.rank
    u = prior
    # the products with Q are chains of small ones for a few models: one thread (kernels.single_threaded_lapack)
    threads = single_threaded_lapack if b.shape[0] <= CHUNK else contextlib.nullcontext
    if u is not None:  # e_i = u + ridge fit of the residual target y - X u (same A, so same V and w)
        if tri is not None:
            with single_threaded_lapack():
                Au = tri.q(tri.tmul(tri.qt(u[:, None])))[:, 0]
        else:
            Au = eig.V @ (w * (eig.V.T @ u))
        ss = ss - 2.0 * (b @ u) + float(u @ Au)
        b = b - Au[None, :]
    if tri is not None:  # b in the tridiagonal basis; c^T (2 phi - w phi^2) c = bt . x + 2 lambda x . x there
        with threads():
            bt = tri.qt(b.T)  # (p, k)
        red = np.empty((b.shape[0], lams.size))
        for l, lam_l in enumerate(lams):
            x = tri.solve(2.0 * lam_l, bt)  # (T + 2 lambda I)^-1 Q^T b
            red[:, l] = (bt * x).sum(axis=0) + 2.0 * lam_l * (x * x).sum(axis=0)
        phis = 1.0 / (w[None, :] + 2.0 * lams[:, None])  # (L, p): shrinkage(w, lambda, 0)
    else:
        c = b @ eig.V  # (k, p) coordinates in the eigenbasis
        phis = np.stack([shrinkage(w, float(lam_l), eps) for lam_l in lams])  # (L, p)
        red = (c * c) @ (2.0 * phis - w * phis * phis).T  # (k, L) explained sum of squares
    rss = np.maximum(ss[:, None] - red, 0.0)
    df = df0 + (w * phis).sum(axis=1)  # (L,) trace of the hat matrix
    if grid is not None:
        resid_df = n - df
        with np.errstate(divide="ignore", invalid="ignore"):
            gcv = np.where(resid_df > 0.5, n * rss / np.maximum(resid_df, 0.5) ** 2, np.inf)
        best = np.argmin(gcv, axis=1)
        best[~np.isfinite(gcv).any(axis=1)] = int(np.argmax(lams))  # too few prompts: most shrinkage
    else:
        best = np.zeros(b.shape[0], dtype=np.intp)
    lam_i = lams[best]
    rows = np.arange(best.size)
    rss_i, df_i = rss[rows, best], df[best]
    if tri is not None:
        X = np.empty_like(bt)
        for l in np.unique(best):
            sel = best == l
            X[:, sel] = tri.solve(2.0 * lams[l], bt[:, sel])
        with threads():
            E = tri.q(X).T  # e_i = Q (T + 2 lambda_i I)^-1 Q^T (b_i - sum_y_i mu)
    else:
        E = (c * phis[best]) @ eig.V.T  # e_i = V diag(phi) V^T (b_i - sum_y_i mu)
    if u is not None:
        E = E + u[None, :]
    if cov is not None:
        E = np.hstack([E, (bF - E @ cov.B) @ cov.Cinv])  # f_i = C^+ (b_F - B^T e_i)
    a = sy / n - E @ mu if intercept else 0.0  # intercept_i = sum_y_i / n - e_i . mu
    noise = rss_i / np.maximum(n - df_i, 1.0)  # s_i^2 = RSS / (n - df), the residual variance at lambda_i
    return E, lam_i, a, noise


def predictive_variance(eig: Eigen, n: int, lam: np.ndarray, noise: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Posterior variance of the scores of k models of one pattern at the rows ``X`` (q, d): (q, k).

    The fit is a ridge regression per model, so with a flat prior on the intercept and the free covariates and
    the penalty ``2 lambda_i ||e_i - u||^2`` on the embedding part, the posterior covariance of the embedding
    part is ``s_i^2 (A_r + 2 lambda_i I)^-1`` with ``A_r = V diag(w) V^T`` (the pattern's centred, partialled
    Gram: the same eigenbasis for every model of the pattern). For a row ``x``, centred ``x~ = x - mu``, split
    into its embedding part ``x~_D`` and covariates ``t~`` (Frisch-Waugh: ``r = x~_D - K t~``):

        var_i(x) = s_i^2 (1/n + t~^T C^+ t~ + sum_k (V^T r)_k^2 / (w_k + 2 lambda_i))

    (``1/n``: the intercept at the pattern's mean; no intercept, no centring: neither term). Directions the
    pattern's prompts never covered (small ``w_k``) get ``s_i^2 / (2 lambda_i)`` per unit: the prior's variance.
    ``lam``, ``noise`` (k,): the models' lambda and residual variance (:func:`solve_pattern`)."""
    X = np.atleast_2d(np.asarray(X, dtype=np.float64))
    R = X - eig.mu[None, :]
    extra = np.zeros(X.shape[0])
    cov = eig.covariates
    if cov is not None:
        free = cov.Cinv.shape[0]
        T = R[:, -free:]
        extra = ((T @ cov.Cinv) * T).sum(axis=1)  # t~^T C^+ t~
        R = R[:, :-free] - T @ cov.K.T  # r = x~_D - K t~
    Z = (R @ eig.V) ** 2  # (q, r): (V^T r)_k^2
    lam2 = 2.0 * np.asarray(lam, dtype=np.float64)
    phi = 1.0 / (eig.w[None, :] + lam2[:, None])  # (k, r)
    base = (1.0 / n if eig.mu.any() else 0.0) + extra  # (q,)
    # V may keep only the eigenvectors of non-zero eigenvalues (stored factors): the rest of r weighs 1 / (2 lambda)
    rest = np.maximum((R * R).sum(axis=1) - Z.sum(axis=1), 0.0) if eig.V.shape[1] < eig.V.shape[0] else 0.0
    # one row (a query): each model's sum on its own, so its bits do not depend on which models share the call
    # (a matrix product's kernel sums in an order set by the number of models: a deep page's variances, computed for
    # its candidates alone, differed in the last bit from the whole ranking's); rows of a fit: the product
    out = base[:, None] + ((phi * Z).sum(axis=1)[None, :] if Z.shape[0] == 1 else Z @ phi.T)
    if np.ndim(rest):
        out = out + rest[:, None] / lam2[None, :]
    return np.asarray(noise, dtype=np.float64)[None, :] * out

"""Train/test splits of prompts: in-sample (random held-out fraction per seed) and out-of-sample (leave one
group out). Pure functions over indices."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError

__all__ = ["Fold", "in_sample", "leave_one_group_out"]


@dataclass(frozen=True)
class Fold:
    name: str  # "seed 0" or the held-out group
    train: np.ndarray  # (n_train,) prompt indices
    test: np.ndarray  # (n_test,) prompt indices


def in_sample(n: int, seeds: int = 5, test_fraction: float = 0.2) -> list[Fold]:
    """``seeds`` random splits holding out ``test_fraction`` of the prompts (seed k uses ``default_rng(k)``)."""
    if seeds < 1:
        raise InputError(f"--seeds {seeds}: need at least 1 seed")
    if not 0 < test_fraction < 1:
        raise InputError(f"test fraction {test_fraction} must be in (0, 1)")
    n_test = max(1, int(round(n * test_fraction)))
    if n - n_test < 1:
        raise InputError(f"{n} prompts are too few to hold out {test_fraction:.0%} and keep a source set")
    folds = []
    for seed in range(seeds):
        perm = np.random.default_rng(seed).permutation(n)
        folds.append(Fold(f"seed {seed}", np.sort(perm[n_test:]), np.sort(perm[:n_test])))
    return folds


def leave_one_group_out(labels: np.ndarray) -> list[Fold]:
    """One fold per distinct label: its prompts are the target, all the others the source."""
    labels = np.asarray(labels, dtype=object)
    groups = sorted(set(labels.tolist()), key=str)
    if len(groups) < 2:
        raise InputError(
            f"out-of-sample evaluation needs at least 2 groups, found {len(groups)} ({groups}); "
            "use --split in-sample or --group-by another field"
        )
    idx = np.arange(labels.size)
    return [Fold(str(g), idx[labels != g], idx[labels == g]) for g in groups]

"""Train/test splits of prompts: in-sample (random held-out fraction per seed), out-of-sample (leave one
group out) and coverage (a group's outcomes hidden from half of the models). Pure functions over indices."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError, arg

__all__ = ["Fold", "in_sample", "leave_one_group_out", "coverage"]


@dataclass(frozen=True)
class Fold:
    name: str  # "seed 0" or the held-out group
    train: np.ndarray  # (n_train,) prompt indices
    test: np.ndarray  # (n_test,) prompt indices
    #: coverage split: the models (indices) whose outcomes on the prompts ``hide_prompts`` (indices, a part of
    #: ``train``) are hidden from every contestant: the *uncovered* models of the fold; None elsewhere
    hide_models: np.ndarray | None = None
    hide_prompts: np.ndarray | None = None
    group: str | None = None  # coverage split: the group the fold hides and holds out


def in_sample(n: int, seeds: int = 5, test_fraction: float = 0.2) -> list[Fold]:
    """``seeds`` random splits holding out ``test_fraction`` of the prompts (seed k uses ``default_rng(k)``)."""
    if seeds < 1:
        raise InputError(f"--seeds {seeds}: need at least 1 seed")
    if not 0 < test_fraction < 1:
        raise InputError(f"test fraction {test_fraction} must be in (0, 1)")
    n_test = max(1, int(round(n * test_fraction)))
    if n - n_test < 1:
        raise InputError(f"{n} prompt{'' if n == 1 else 's'} {'is' if n == 1 else 'are'} too few to hold out "
                         f"{test_fraction:.0%} and keep a source set: the in-sample split needs at least 2 prompts "
                         "(one held out, one to predict it from); evaluate data with more prompts")
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
            f"out-of-sample evaluation needs at least 2 groups, found {len(groups)} ({', '.join(map(str, groups))}); "
            f"use {arg('split', 'in-sample', quote=False)} or {arg('group_by')} another field"
        )
    idx = np.arange(labels.size)
    return [Fold(str(g), idx[labels != g], idx[labels == g]) for g in groups]


def coverage(labels: np.ndarray, n_models: int, seeds: int = 5) -> list[Fold]:
    """The coverage protocol (issue 13): for every seed and every group g, a seeded random half of the models
    (``n_models // 2``) loses its outcomes on g (it keeps every other group: the *uncovered* models), and a
    seeded random half of g's prompts (``len(g) // 2``) is held out as the target; the source is every other
    prompt, including the rest of g, which only the covered models were observed on. Every model is then scored
    on every target. Seed k, group number i (groups sorted) uses ``default_rng([k, i])``."""
    if seeds < 1:
        raise InputError(f"--seeds {seeds}: need at least 1 seed")
    labels = np.asarray(labels, dtype=object)
    groups = sorted(set(labels.tolist()), key=str)
    if n_models < 2:
        raise InputError(f"the coverage split needs at least 2 models to hide a group from half of them, found {n_models}")
    idx = np.arange(labels.size)
    small = [str(g) for g in groups if (labels == g).sum() < 2]
    if small:
        raise InputError(f"the coverage split holds out half of each group's prompts: {len(small)} of {len(groups)} groups "
                         f"have fewer than 2 prompts ({', '.join(small[:5])}{', ...' if len(small) > 5 else ''}); use "
                         f"{arg('group_by')} another field")
    folds = []
    for seed in range(seeds):
        for i, g in enumerate(groups):
            rng = np.random.default_rng([seed, i])
            hide = np.sort(rng.permutation(n_models)[: n_models // 2])
            members = rng.permutation(idx[labels == g])
            k = members.size // 2
            test, rest = np.sort(members[:k]), np.sort(members[k:])
            train = np.setdiff1d(idx, test, assume_unique=True)
            folds.append(Fold(f"{g} seed {seed}", train, test, hide_models=hide, hide_prompts=rest, group=str(g)))
    return folds

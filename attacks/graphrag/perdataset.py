"""A value computed once per dataset object: the attack planners dress dozens of variants per
target, and each dress would otherwise recompute what depends on the clean corpus alone."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from environments.graphrag.corpus import Document
from environments.graphrag.dataset import Dataset

T = TypeVar("T")


class PerDataset(Generic[T]):
    """``build(dataset)`` kept for the last ``kept`` datasets, while a dataset keeps the same
    documents list (a caller that swaps the list in gets a fresh value)."""

    def __init__(self, kept: int) -> None:
        self.kept = kept
        self._held: dict[int, tuple[Dataset, list[Document], T]] = {}

    def get(self, dataset: Dataset, build: Callable[[Dataset], T]) -> T:
        held = self._held.get(id(dataset))
        if held is not None and held[0] is dataset and held[1] is dataset.documents:
            return held[2]
        value = build(dataset)
        if len(self._held) >= self.kept:
            self._held.pop(next(iter(self._held)))
        self._held[id(dataset)] = (dataset, dataset.documents, value)
        return value

    def clear(self) -> None:
        """Forget every value (a test's cold start)."""
        self._held.clear()

"""Gymnasium spaces for text observations and actions."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium.spaces import Text

_SAMPLE_CHARSET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 {}[]":,._-'


class AnyText(Text):
    """Text of any Unicode characters up to ``max_length`` characters.

    ``gymnasium.spaces.Text`` only contains strings over its charset; observations here are
    arbitrary tool output (JSON, URLs, tokens) and actions are whatever the agent typed, so
    membership is decided by type and length alone. Samples are short JSON-ish strings.
    """

    def __init__(self, max_length: int = 10_000_000, sample_length: int = 64, seed: Any = None) -> None:
        super().__init__(max_length=max_length, min_length=0, charset=_SAMPLE_CHARSET, seed=seed)
        self.sample_length = sample_length

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        length = int(self.np_random.integers(1, self.sample_length + 1))
        chars = self.np_random.choice(np.array(list(_SAMPLE_CHARSET)), size=length)
        return "".join(chars.tolist())

    def __repr__(self) -> str:
        return f"AnyText(max_length={self.max_length})"

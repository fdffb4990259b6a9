"""What model requests cost: a price table per model-name prefix, built in or from a file.

Shared by model agents and model graders, so both report cost the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from webmcp_eval.errors import InvalidInput

# USD per million tokens (input, output), matched by the longest model-name prefix.
# Prices as published by the providers in 2025; check yours and override with a price file.
PRICES_AS_OF = "2025"
DEFAULT_PRICES: dict[str, dict[str, float]] = {
    "gpt-4o": {"input": 2.50, "output": 10.00},
    "gpt-4o-mini": {"input": 0.15, "output": 0.60},
    "gpt-4.1": {"input": 2.00, "output": 8.00},
    "gpt-4.1-mini": {"input": 0.40, "output": 1.60},
    "gpt-4.1-nano": {"input": 0.10, "output": 0.40},
    "gpt-5": {"input": 1.25, "output": 10.00},
    "gpt-5-mini": {"input": 0.25, "output": 2.00},
    "gpt-5-nano": {"input": 0.05, "output": 0.40},
    "o3": {"input": 2.00, "output": 8.00},
    "o4-mini": {"input": 1.10, "output": 4.40},
    "claude-opus-4": {"input": 15.00, "output": 75.00},
    "claude-opus-4-5": {"input": 5.00, "output": 25.00},
    "claude-sonnet-4": {"input": 3.00, "output": 15.00},
    "claude-3-7-sonnet": {"input": 3.00, "output": 15.00},
    "claude-haiku-4-5": {"input": 1.00, "output": 5.00},
    "claude-3-5-haiku": {"input": 0.80, "output": 4.00},
}


class ModelConfigError(InvalidInput, ValueError):
    """Model options cannot work (unknown provider, missing SDK or key, a bad price table): a usage error."""


@dataclass
class PriceTable:
    prices: dict[str, dict[str, float]] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    source: str = f"built-in table ({PRICES_AS_OF})"

    @classmethod
    def load(cls, spec: dict[str, Any] | str | Path | None) -> PriceTable:
        """A mapping, or a YAML/JSON file of ``model-prefix: {input: USD/Mtok, output: USD/Mtok}``."""
        if spec is None:
            return cls()
        if isinstance(spec, dict):
            return cls(_check_prices(spec, "the price table"), "configured table")
        path = Path(spec)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as err:
            raise ModelConfigError(f"cannot read the price file {path}: {err}") from None
        return cls(_check_prices(data, str(path)), str(path))

    def lookup(self, model: str) -> tuple[str, dict[str, float]] | None:
        matches = [p for p in self.prices if model.startswith(p)]
        if not matches:
            return None
        best = max(matches, key=len)
        return best, self.prices[best]

    def cost(self, model: str, usage: dict[str, int]) -> float | None:
        """USD for one request's tokens at the model's price; None: the table has no price for the model."""
        price = self.lookup(model)
        if not price:
            return None
        p = price[1]
        return round((usage["input"] * p["input"] + usage["output"] * p["output"]) / 1e6, 8)


def _check_prices(data: object, where: str) -> dict[str, dict[str, float]]:
    if not isinstance(data, dict):
        raise ModelConfigError(f"{where}: expected a mapping of model prefix to {{input, output}}")
    out = {}
    for model, price in data.items():
        if not (isinstance(price, dict) and {"input", "output"} <= set(price)):
            raise ModelConfigError(f"{where}: {model!r} needs input and output prices (USD per million tokens)")
        out[str(model)] = {"input": float(price["input"]), "output": float(price["output"])}
    return out

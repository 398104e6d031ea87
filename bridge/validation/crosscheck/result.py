"""The verdict of a cross-check: per signal (band and tube) and per model folder."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..metrics import SignalMetrics
from .band import BAND_OUTLIERS


@dataclass(frozen=True)
class SignalCheck:
    """One signal of ``_ref.csv`` against the result: the cross-check band and nhbridge's tube."""

    signal: str
    metrics: SignalMetrics
    band_outside: int
    samples: int
    band: float = 0.0  # the band's half-width in value

    @property
    def band_fraction(self) -> float:
        """The fraction of samples outside the cross-check band (1 without samples)."""
        return self.band_outside / self.samples if self.samples else 1.0

    @property
    def band_ok(self) -> bool:
        """Whether the fraction outside the band is within the allowed outliers."""
        return self.band_fraction <= BAND_OUTLIERS

    @property
    def passed(self) -> bool:
        """Whether the signal passes both the band and the tube."""
        return self.band_ok and self.metrics.tube_ok


@dataclass
class CrosscheckResult:
    """The verdict on one model folder: ``passed``, the per-signal results, reasons and files written."""

    model: str
    model_dir: Path
    fmi_version: str
    fmi_type: str
    passed: bool = False
    signals: list[SignalCheck] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    results_dir: Path | None = None
    settings: str = ""

    @property
    def status(self) -> str:
        """``passed`` or ``failed``."""
        return "passed" if self.passed else "failed"

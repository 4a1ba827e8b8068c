"""Input limits (SPEC-trajectories §1): each is a parameter, each fails with a clear error."""

from __future__ import annotations

from dataclasses import dataclass

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Limits:
    """How much input one job accepts. Defaults are the spec's."""

    max_file_bytes: int = 10 * MIB
    max_trajectory_files: int = 10_000
    max_steps_per_trajectory: int = 500
    max_total_steps: int = 10_000

    def __post_init__(self) -> None:
        for name in self.__slots__:
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")

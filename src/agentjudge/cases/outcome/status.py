"""Case statuses and how bad each one is (graph-agents-cli's `STATUS_RANK`)."""

from __future__ import annotations

PASSED = "passed"
QUALITY_BELOW_THRESHOLD = "quality_below_threshold"
FAILED = "failed"
ERROR = "error"
MISSING = "missing"

# Higher is worse. Error and missing tie: neither produced an answer worth grading.
STATUS_RANK: dict[str, int] = {
    PASSED: 0,
    QUALITY_BELOW_THRESHOLD: 1,
    FAILED: 2,
    ERROR: 3,
    MISSING: 3,
}

"""The failure taxonomy: what a judge may call the failure of a step that scored below the
failure threshold. Spelled here only; the answer schema, the verdict parser, aggregation and
the reports take it from here, and a test holds the categorization prompt to it."""

from __future__ import annotations

# the failures a step can be blamed on, in the order reports list them
FAILURES = (
    "tool_selection_failure",
    "context_loss",
    "policy_boundary_violation",
    "reasoning_failure",
)
NO_FAILURE = "none"  # the judge found nothing actionable in the step
CATEGORIES = (*FAILURES, NO_FAILURE)  # every answer a judge may give
# Not a judge's answer: a failure candidate whose categorization failed (an unusable answer,
# a failed call), or one the judge gave no category.
UNCATEGORIZED = "uncategorized"

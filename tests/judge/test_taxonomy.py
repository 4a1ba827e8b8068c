"""The failure taxonomy is spelled once: the categorization prompt lists exactly it."""

from __future__ import annotations

import re

from agentjudge.judge.taxonomy import CATEGORIES
from agentjudge.scoring.prompts import CATEGORIZE_SYSTEM


def test_the_categorization_prompt_lists_exactly_the_taxonomy_in_its_order() -> None:
    listed = re.findall(r"^- ([a-z_]+): ", CATEGORIZE_SYSTEM, flags=re.MULTILINE)
    assert tuple(listed) == CATEGORIES

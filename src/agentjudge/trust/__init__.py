"""How far the judge's numbers can be trusted: intervals and paired comparisons (pure, no I/O)."""

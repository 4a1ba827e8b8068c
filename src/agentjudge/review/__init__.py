"""Review: people check the judge's verdicts one item at a time and their labels calibrate
it (docs/calibration.md). `items.py` reads the items of a results file, `order.py` puts
them in the order a look is worth most, `labels.py` keeps a reviewer's labels on disk and
`agreement.py` measures the judge (and two reviewers) against them."""

"""Calibration: a judge measured against human labels (docs/calibration.md). The labels
file (`labels.py`), set beside a score results document (`matching.py`), and the figures
with their intervals (`figures.py`); the statistics themselves are in `trust/`."""

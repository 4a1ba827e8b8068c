"""Running code of a graph-agents-cli project in the project's own environment: its custom
metrics and its own judge model (`worker.py`, which imports nothing of ours), started and
talked to by `process.py`."""

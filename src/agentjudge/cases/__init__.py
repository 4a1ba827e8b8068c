"""Grading eval cases: graph-agents-cli's datasets, traces and eval_config.yaml, read as they are.

A run goes through four stages, each a package that imports only the ones before it:
`loading` (the files, validated) → `checking` (the `expect` checks) → `judging` (judges and
custom metrics) → `outcome` (the gate: statuses, quality, exit code; what a run shows).
`grade.py` runs them in that order.
"""

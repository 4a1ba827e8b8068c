"""Grading eval cases: graph-agents-cli's datasets, traces and eval_config.yaml, read as they are.

Data flows one way: load (dataset, traces, config) → plan (cases) → checks → judges and
custom metrics → gate (statuses, quality, exit code) → report (results file, JUnit, table).
"""

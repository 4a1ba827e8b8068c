"""Scoring ATIF trajectories: criteria, step requests, the job, aggregation, categorization."""

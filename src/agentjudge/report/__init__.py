"""Reporters: how results are shown and written (terminal lines, JSON, later HTML/JUnit/MLflow)."""

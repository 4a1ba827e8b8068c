"""Converters of public datasets into ATIF trajectories and calibration labels."""

"""Typed results documents: what each command writes and every reader takes."""

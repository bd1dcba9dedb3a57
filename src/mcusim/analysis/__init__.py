"""Analyses of a run's records: regions (layers, inferences)."""

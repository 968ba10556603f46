"""Campaigns: the run matrix, executors, the results store, evidence and audit."""

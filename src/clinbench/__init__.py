"""clinbench: benchmarks for AI agents doing clinical data work on MIMIC-style EHR databases."""

__version__ = "0.1.0"

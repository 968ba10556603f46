"""Campaign statistics: task-balanced means, paired deltas, bootstraps, sign-flip tests.

One module serves both benchmarks. Resampling is vectorised numpy, drawn in chunks so
memory stays bounded whatever the number of draws.
"""

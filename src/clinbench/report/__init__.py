"""Reports of a campaign: one self-contained HTML file, Markdown tables and SVG figures.

``clinbench.report.build.write_report`` renders everything from a campaign folder or a
per-run CSV; the numbers come from ``clinbench.stats`` so report and ``clinbench stats`` agree.
"""

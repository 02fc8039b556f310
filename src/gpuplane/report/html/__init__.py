"""The self-contained HTML report of a twin run (``report.html``).

One file, no script, no network: the plots are static SVG drawn by matplotlib with a fixed
hash salt and no date, the node topologies and MIG layouts are SVG written here, and the styles
are inline, so the same run gives the same bytes and the page opens from disk anywhere.
"""

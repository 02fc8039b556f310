"""The sweep engine: the sweep file's shape, grid and seeded random expansion, points and their
table text, field paths into parsed documents, the resumable results table, best points and
Pareto fronts, and the executors that run points (in process, a local ``multiprocessing`` pool,
Ray Core tasks).

It imports ``core`` alone (an import-linter contract): no twin, no reader, no decision package.
A base (``gpuplane.sweep.bases``) brings what a point runs; Ray and multiprocessing stay out of
every decision, which is why every executor gives the same bytes."""

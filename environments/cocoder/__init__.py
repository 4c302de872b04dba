"""CoCoder: graph-partitioned multi-agent coding on real repositories (paper 4).

The gymnasium environment ``agentbed/cocoder-v0`` is registered by the suite
(``suites.cocoder.suite``), not here: the planner's graph (``environments.cocoder.depgraph``,
``cocoder-plan``) needs neither gymnasium nor numpy, which were most of its import time."""

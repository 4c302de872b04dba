"""CoCoder's controller: dependency graph, hub isolation, partition, schedule, cost model.

Plain functions over networkx graphs, after "When Parallelism Pays Off: Cohesion-Aware Task
Partitioning for Multi-Agent Coding" (arXiv 2606.00953). Orientation everywhere: an edge
``u -> v`` means *v needs u* (v imports u), so u must be written before v.
"""

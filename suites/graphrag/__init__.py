"""The composition layer: each workload put together from its world, adversaries and overseers."""

"""Adversaries: corruption of observation-to-action paths and knowledge-graph poisoning."""

"""Corruption of the observation-to-action byte path (ContractBench integrity axis)."""

"""Adversaries in the shell sandbox world."""

"""Overseers: oversight controllers, retrieval defenses, CoCoder scheduling."""

"""Untrusted policies for control settings: honest ones do the main task; attack ones also pursue
the setting's side task, from blatant to subtle."""

"""Errors the CLI reports as one line with exit status 2 (bad input), never a traceback."""


class UsageError(Exception):
    """Bad input from a user: an option, a file, a field. The message names the culprit."""

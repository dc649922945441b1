"""Loopback twins of external services and their generated worlds, for tests and the demo."""

"""Test twins: small real stand-ins (loopback servers) for external services."""

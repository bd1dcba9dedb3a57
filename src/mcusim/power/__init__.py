"""The power model: per-rail energy from the simulated events (docs/power.md)."""

"""Pairwise judges: `judge` (CALF's A / B / tie, `pairwise`), `protocol` (which orders it asks), `ab` (MinosEval's `pairwise-ab` baseline); prompts in `prompts/`."""

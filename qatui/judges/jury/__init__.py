"""A jury of judges: `judge` (the members and the run) and `votes` (how their verdicts become one)."""

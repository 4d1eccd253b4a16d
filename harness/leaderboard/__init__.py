"""Finished runs read back, ranked into leaderboards, compared, and rendered."""

"""A run directory and its records: one layer every method, the status command and the report
share (statuses, summaries, atomic writes, ownership)."""

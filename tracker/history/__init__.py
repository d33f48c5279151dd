"""Price history views: resampled step series per offer and per GPU, the compare table,
exports and plots. Pure functions over the store that return the documented row dicts;
the CLI (``tracker.cli.history``) and the web API render the same rows.
"""

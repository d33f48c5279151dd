"""Alerts: rules over price changes, spot discounts, new hardware, ranking shifts and
collector health, queued in an outbox and delivered to channels (Slack, email, plugins).

* :mod:`tracker.alerts.rules`: the rules file, validated (one line per mistake);
* :mod:`tracker.alerts.evaluate` / :mod:`~tracker.alerts.offer_rules`: what fired,
  queued in one transaction with a dedupe key per event;
* :mod:`tracker.alerts.render` / :mod:`~tracker.alerts.digest`: one renderer per kind
  (the line every channel and the dashboard show), a digest's order and exact count;
* :mod:`tracker.alerts.sender`: one digest per channel, marked sent only after the
  channel accepted it, retried with backoff, ``dead`` after ``max_attempts``;
* :mod:`tracker.alerts.channels`: the ``gpu_tracker.alert_channels`` plugins;
* :mod:`tracker.alerts.hook`: the ``gpu_tracker.hooks`` plugin that runs it all after
  each committed collection.
"""

"""Provider collectors: one module per provider, each producing :class:`tracker.models.Offer`.

Collectors are found through the ``gpu_tracker.collectors`` entry-point group
(see :mod:`tracker.registry`), so a third-party package plugs in exactly as ours do.
"""

"""Fleet plans over months: the cheapest cover of steady and burst GPU demand.

``cover`` finds the cheapest sequence of on-demand months and reserved terms for one
instance, ``build`` prices a whole plan per instance type (steady, burst, storage,
egress, migration), ``stored`` reads the prices it needs, ``rows`` and ``explain`` are
what the faces show.
"""

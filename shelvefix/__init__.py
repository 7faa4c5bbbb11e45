"""shelvefix: nova bug 1798688 (shelve-offload / unshelve allocation race).

The package is laid out like nova so that a nova developer finds each piece
where they would look for it:

``shelvefix.compute``
    ``ComputeManager._shelve_offload_instance`` in the corrected order and the
    ``ResourceTracker`` method that frees the allocations.
``shelvefix.scheduler``
    ``utils.claim_resources`` and the placement ``SchedulerReportClient``.
``shelvefix.placement``
    An in-memory placement service (the "double"), its in-process transport
    and the ``PlacementFixture`` that wires both into a test.
"""

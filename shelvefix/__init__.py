"""shelvefix: nova bug 1798688 (shelve-offload / unshelve allocation race).

The packages, one role each:

The library, laid out like nova's:

``shelvefix.compute``
    ``ComputeManager._shelve_offload_instance`` in the corrected order and
    the ``ResourceTracker`` that frees the allocations.
``shelvefix.objects``
    ``Instance`` and the store its saves write through.
``shelvefix.scheduler``
    ``utils.claim_resources`` and the placement ``SchedulerReportClient``.
``shelvefix.conf``, ``shelvefix.exception``, ``shelvefix.context``
    configuration, exceptions and request contexts, as nova has them.

The tools around it:

``shelvefix.placement``
    the placement double, in placement's own layers.
``shelvefix.backends``
    what puts a placement (the double, the real one in-process, a remote
    one, a gunicorn server) behind a keystoneauth1 adapter, with a call
    log and fault injection.
``shelvefix.contract``
    contract scenarios proving the double against the real placement.
``shelvefix.explorer``
    a generic stateless model checker for real threads.
``shelvefix.race``
    the race lab: the bug run on the library through the explorer, random
    runs, stress and the fault matrix.
``shelvefix.novacheck``
    reads a nova tree (never imports it) and says whether it has the fix.
``shelvefix.cmd``
    the ``shelvefix`` command line.
"""

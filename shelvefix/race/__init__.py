"""The race lab: bug 1798688 run on the library's real code.

* :mod:`~shelvefix.race.scenario` - a shelved server, two hosts, the
  flavor, project and user every run uses;
* :mod:`~shelvefix.race.client` - the API side of an unshelve (the one
  copy of it);
* :mod:`~shelvefix.race.timeline` - placement requests and saves in one
  order, and the order rule;
* :mod:`~shelvefix.race.variants` - the corrected order and the pre-fix
  order derived from it;
* :mod:`~shelvefix.race.outcomes` - what went wrong in a run;
* :mod:`~shelvefix.race.program` - the race as a program for the
  :mod:`~shelvefix.explorer`, and uncontrolled random runs;
* :mod:`~shelvefix.race.report` - tables, timelines, Mermaid and JSON;
* :mod:`~shelvefix.race.stress` - K servers x M cycles under real
  concurrency;
* :mod:`~shelvefix.race.fault_matrix` - a fault at every placement
  request, nothing lost.

This package's own namespace holds only the lab's vocabulary, so that the
command line can offer its choices without loading the lab.
"""

# The two orderings of the shelve-offload (see race.variants).
CORRECTED = 'corrected'
LEGACY = 'legacy'
ORDERINGS = (CORRECTED, LEGACY)

# How compute frees the allocations: GET + PUT empty with the consumer
# generation (nova on Rocky, the bug's branch) or DELETE (nova since
# Ussuri, force=True).
GET_PUT = 'get-put'
DELETE = 'delete'
FREE_METHODS = (GET_PUT, DELETE)

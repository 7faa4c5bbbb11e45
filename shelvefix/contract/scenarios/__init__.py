"""Every contract scenario; importing this package registers them all.

A scenario is a function taking a
:class:`~shelvefix.contract.api.ContractAPI`, registered with
``@scenario('name', 'one-line description')``. It sends requests - setup
included - through the API and returns nothing: what placement answered
is recorded by the API, and the runner compares it between backends.
Scenarios must not depend on anything but placement's answers (no
clocks, no randomness), so that two backends that behave alike produce
equal transcripts.

The areas, in registration order:

* :mod:`.consumers` - the semantics table of bug 1798688, row by row;
* :mod:`.generations` - when consumer and provider generations move;
* :mod:`.capacity` - capacity and inventory constraints;
* :mod:`.bulk` - ``POST /allocations``;
* :mod:`.usages` - provider and project usages;
* :mod:`.microversions` - behaviour per microversion, header parsing;
* :mod:`.http_errors` - schema, content type, routing errors;
* :mod:`.races` - the bug's interleavings as raw HTTP;
* :mod:`.resource_classes` - standard and custom resource classes;
* :mod:`.traits` - standard and custom traits, provider traits;
* :mod:`.aggregates` - provider aggregates;
* :mod:`.provider_filters` - the filters of ``GET /resource_providers``;
* :mod:`.allocation_candidates` - ``GET /allocation_candidates``;
* :mod:`.reshaper` - ``POST /reshaper``;
* :mod:`.policy` - what a non-admin token may do;
* :mod:`.cors` - CORS with ``[cors] allowed_origin`` set, and without.
"""

from shelvefix.contract import registry
from shelvefix.contract.scenarios import aggregates
from shelvefix.contract.scenarios import allocation_candidates
from shelvefix.contract.scenarios import bulk
from shelvefix.contract.scenarios import capacity
from shelvefix.contract.scenarios import consumers
from shelvefix.contract.scenarios import cors
from shelvefix.contract.scenarios import generations
from shelvefix.contract.scenarios import http_errors
from shelvefix.contract.scenarios import microversions
from shelvefix.contract.scenarios import policy
from shelvefix.contract.scenarios import provider_filters
from shelvefix.contract.scenarios import races
from shelvefix.contract.scenarios import reshaper
from shelvefix.contract.scenarios import resource_classes
from shelvefix.contract.scenarios import traits
from shelvefix.contract.scenarios import usages

# Importing the area modules is what registers their scenarios; this is
# the order reports list the areas in (imports must stay alphabetical).
AREAS = (consumers, generations, capacity, bulk, usages, microversions,
         http_errors, races, resource_classes, traits, aggregates,
         provider_filters, allocation_candidates, reshaper, policy, cors)

scenario = registry.scenario
get = registry.get
UnknownScenario = registry.UnknownScenario


def names():
    """Every registered scenario name, area by area (see :data:`AREAS`).

    Scenarios registered elsewhere (a test's own) come last.
    """
    order = [area.__name__ for area in AREAS]

    def area_index(name):
        module = registry.get(name).func.__module__
        return order.index(module) if module in order else len(order)
    # sorted() is stable: within an area, registration order stays.
    return sorted(registry.names(), key=area_index)

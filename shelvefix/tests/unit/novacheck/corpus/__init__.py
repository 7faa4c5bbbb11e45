"""Variants of nova's shelve-offload method, each with a reviewed verdict.

Every variant is a whole ``nova/compute/manager.py`` text whose
``ComputeManager`` holds ``_shelve_offload_instance`` and the helpers it
calls, with the verdict a careful reviewer gives it: does the method free
the instance's placement allocations before any save that can make
``vm_state = SHELVED_OFFLOADED`` visible (bug 1798688)?

The variants derive from two trimmed copies of real releases, embedded
so that nothing is downloaded at test time: :data:`NOVA_34_MANAGER`
(:mod:`.nova_34`, the fixed order) and :data:`NOVA_18_3_MANAGER`
(:mod:`.nova_18_3`, the legacy order). The other variants are small
rewrites of whole lines or methods written out (:mod:`.edits`).

The kinds of variant, in the order :func:`variants` returns them:

* :mod:`.releases` - real releases and their historical shapes;
* :mod:`.helpers` - the free moved into ``ComputeManager`` helpers;
* :mod:`.early_saves` - early returns, early saves, exception handlers;
* :mod:`.aliases` - aliases of the instance, and other objects;
* :mod:`.branches` - if/elif/else, conditional expressions;
* :mod:`.try_except` - try / except / else / finally;
* :mod:`.dead_code` - saves that can never run;
* :mod:`.loops` - for and while, break and continue;
* :mod:`.nested_functions` - nested functions and lambdas;
* :mod:`.state_setting` - other ways of setting the state;
* :mod:`.with_and_match` - with and match statements;
* :mod:`.missing_and_duplicates` - missing pieces, duplicate methods.
"""

from shelvefix.tests.unit.novacheck.corpus import aliases
from shelvefix.tests.unit.novacheck.corpus import branches
from shelvefix.tests.unit.novacheck.corpus import dead_code
from shelvefix.tests.unit.novacheck.corpus import early_saves
from shelvefix.tests.unit.novacheck.corpus import helpers
from shelvefix.tests.unit.novacheck.corpus import loops
from shelvefix.tests.unit.novacheck.corpus import missing_and_duplicates
from shelvefix.tests.unit.novacheck.corpus import nested_functions
from shelvefix.tests.unit.novacheck.corpus import nova_18_3
from shelvefix.tests.unit.novacheck.corpus import nova_34
from shelvefix.tests.unit.novacheck.corpus import registry
from shelvefix.tests.unit.novacheck.corpus import releases
from shelvefix.tests.unit.novacheck.corpus import state_setting
from shelvefix.tests.unit.novacheck.corpus import try_except
from shelvefix.tests.unit.novacheck.corpus import with_and_match

FIXED = registry.FIXED
LEGACY = registry.LEGACY
UNKNOWN = registry.UNKNOWN
Variant = registry.Variant

NOVA_34_MANAGER = nova_34.MANAGER
NOVA_18_3_MANAGER = nova_18_3.MANAGER

# The variants whose text must not parse.
UNPARSABLE = ('syntax_error',)
# The variants without the method, or without its class.
NO_METHOD = ('method_missing', 'class_missing')

# Importing the variant modules is what registers their variants; this is
# the order variants() lists them in (imports must stay alphabetical).
KINDS = (releases, helpers, early_saves, aliases, branches, try_except,
         dead_code, loops, nested_functions, state_setting, with_and_match,
         missing_and_duplicates)


def variants():
    """Every variant, kind by kind (see :data:`KINDS`), in a stable order.

    :returns: a list of :class:`Variant`
    """
    return registry.variants(KINDS)

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
* :mod:`.missing_and_duplicates` - missing pieces, duplicate methods;
* :mod:`.receivers`, :mod:`.receivers_2` - the free called on receivers
  that may not be the resource tracker or the report client;
* :mod:`.not_run`, :mod:`.not_run_2` - the free in functions that do not
  run when called, and nova's decorators, which do run them;
* :mod:`.class_body` - the method's or a helper's name bound again in the
  class body, or the method or class replaced after the class;
* :mod:`.finally_return`, :mod:`.finally_return_2` - return, break and
  continue through a ``finally`` that saves or frees.
"""

from shelvefix.tests.unit.novacheck.corpus import aliases
from shelvefix.tests.unit.novacheck.corpus import branches
from shelvefix.tests.unit.novacheck.corpus import class_body
from shelvefix.tests.unit.novacheck.corpus import dead_code
from shelvefix.tests.unit.novacheck.corpus import early_saves
from shelvefix.tests.unit.novacheck.corpus import finally_return
from shelvefix.tests.unit.novacheck.corpus import finally_return_2
from shelvefix.tests.unit.novacheck.corpus import helpers
from shelvefix.tests.unit.novacheck.corpus import loops
from shelvefix.tests.unit.novacheck.corpus import missing_and_duplicates
from shelvefix.tests.unit.novacheck.corpus import nested_functions
from shelvefix.tests.unit.novacheck.corpus import not_run
from shelvefix.tests.unit.novacheck.corpus import not_run_2
from shelvefix.tests.unit.novacheck.corpus import nova_18_3
from shelvefix.tests.unit.novacheck.corpus import nova_34
from shelvefix.tests.unit.novacheck.corpus import receivers
from shelvefix.tests.unit.novacheck.corpus import receivers_2
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
# The variants whose module does not hold exactly one ComputeManager class
# with a plain (not async) def of the method in its body.
ODD_CLASS = ('method_async_awaits_helper', 'second_class_legacy',
             'second_class_fixed')

# Importing the variant modules is what registers their variants; this is
# the order variants() lists them in (imports must stay alphabetical).
KINDS = (releases, helpers, early_saves, aliases, branches, try_except,
         dead_code, loops, nested_functions, state_setting, with_and_match,
         missing_and_duplicates, receivers, receivers_2, not_run, not_run_2,
         class_body, finally_return, finally_return_2)


# Which module (its last name) defines each variant.
MODULE_OF = registry.module_of()


def variants():
    """Every variant, kind by kind (see :data:`KINDS`), in a stable order.

    :returns: a list of :class:`Variant`
    """
    return registry.variants(KINDS)

"""The registry of variants: the verdicts, the tuple and the decorator.

A variant module defines each variant as a function decorated with
:func:`variant`; the package lists them with :func:`variants`.
"""

import collections

from shelvefix.novacheck import check

FIXED = check.FIXED
LEGACY = check.LEGACY
UNKNOWN = check.UNKNOWN

Variant = collections.namedtuple(
    'Variant', ['name', 'description', 'text', 'verdict', 'why'])
Variant.__doc__ = """One manager module and its reviewed verdict.

:ivar name: identifier, used as the test scenario name
:ivar description: what the variant changes
:ivar text: the whole module source
:ivar verdict: FIXED, LEGACY or UNKNOWN (the strings of
    :mod:`shelvefix.novacheck.check`)
:ivar why: the reviewer's reason, one sentence
"""

_REGISTRY = []


def variant(verdict, why):
    """Register the decorated function as a variant.

    The function's name is the variant's, its docstring the description
    and it returns the text.
    """
    def register(build):
        _REGISTRY.append((build.__name__, build.__doc__, build, verdict,
                          why))
        return build
    return register


def variants(modules):
    """Every registered variant, module by module.

    :param modules: the variant modules, in the order wanted; within a
        module, variants keep their order of definition, and variants
        registered elsewhere come last
    :returns: a list of :class:`Variant`
    """
    order = [module.__name__ for module in modules]

    def module_index(entry):
        module = entry[2].__module__
        return order.index(module) if module in order else len(order)
    # sorted() is stable: within a module, registration order stays.
    entries = sorted(_REGISTRY, key=module_index)
    return [Variant(name, ' '.join(doc.split()), build(), verdict, why)
            for name, doc, build, verdict, why in entries]


def module_of():
    """Each registered variant's module, by its last name: name -> module."""
    return {name: build.__module__.rsplit('.', 1)[-1]
            for name, _doc, build, _verdict, _why in _REGISTRY}

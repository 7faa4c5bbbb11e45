"""Traits of the placement double's state.

The standard traits are those of ``os-traits``; custom ones
(``CUSTOM_...``) are created and deleted by clients. Every trait has
placement's id, and listings follow the ids, as placement's (unordered)
queries do on its database:

* placement inserts the standard traits into its new database from
  ``set(os_traits.get_traits()) - set()`` (the names it does not have yet),
  so their ids follow that set's iteration order, which depends on the
  process' string hashing. :data:`STANDARD_TRAITS` is built by the same
  expression, which gives the same order in the same process;
* a custom trait gets the highest id in use plus one.

A provider's traits are the set ``ProviderRecord.traits``; setting them
moves the provider generation only when they change.
"""

import collections
import re

import os_traits

from shelvefix.placement import exception
from shelvefix.placement.objects import models

STANDARD_TRAITS = tuple(set(os_traits.get_traits()) - set())
_STANDARD_IDS = {name: index
                 for index, name in enumerate(STANDARD_TRAITS, 1)}

Trait = collections.namedtuple('Trait', ['name', 'last_modified'])
Trait.__doc__ = """Snapshot of a trait: its name and when it was created
(a standard trait was created with the state)."""


class CustomTraitRecord(object):
    """A stored custom trait: its id and creation time."""

    def __init__(self, trait_id):
        self.id = trait_id
        self.created_at = models.utcnow()


def like_prefix(prefix):
    """A matcher of the names SQL's ``LIKE '<prefix>%'`` selects.

    As in placement's (sqlite) database: ``%`` matches any run of
    characters, ``_`` any one character, and ASCII letters match either
    case.

    :param prefix: the prefix, wildcards included.
    :returns: a function of one name returning a truth value.
    """
    pattern = ''.join('.*' if char == '%' else '.' if char == '_'
                      else re.escape(char) for char in prefix)
    return re.compile(pattern + '.*',
                      re.IGNORECASE | re.ASCII | re.DOTALL).fullmatch


class TraitsMixin(object):
    """Standard and custom traits, and the traits of providers.

    Mixed into ``PlacementState``; uses its ``_custom_traits`` (names, in
    id order) and ``_trait_records`` (name -> :class:`CustomTraitRecord`).
    """

    def trait_names(self):
        """Every known trait: the standard ones, then the custom ones."""
        with self._lock:
            return list(STANDARD_TRAITS) + list(self._custom_traits)

    def missing_traits(self, names):
        """The names among ``names`` that are not known traits, sorted.

        :param names: trait names.
        """
        with self._lock:
            return sorted(name for name in set(names)
                          if not self._trait_known(name))

    def _trait_known(self, name):
        return name in _STANDARD_IDS or name in self._trait_records

    def _trait_id(self, name):
        standard = _STANDARD_IDS.get(name)
        return standard if standard is not None else (
            self._trait_records[name].id)

    def _trait_view(self, name):
        record = self._trait_records.get(name)
        if record is not None:
            return Trait(name, record.created_at)
        if name in _STANDARD_IDS:
            return Trait(name, self._created_at)
        raise exception.TraitNotFound(name=name)

    def get_trait(self, name):
        """One trait.

        :param name: its name.
        :returns: a :class:`Trait`.
        :raises TraitNotFound: no such trait.
        """
        with self._lock:
            return self._trait_view(name)

    def ensure_trait(self, name):
        """Create a custom trait unless it exists.

        :param name: a ``CUSTOM_`` name (the caller validates its syntax).
        :returns: ``(Trait, created)``.
        :raises ValueError: the name does not start with ``CUSTOM_``.
        """
        with self._lock:
            if self._trait_known(name):
                return self._trait_view(name), False
            if not name.startswith(os_traits.CUSTOM_NAMESPACE):
                raise ValueError('%r is not a custom trait name' % (name,))
            if self._custom_traits:
                next_id = self._trait_records[self._custom_traits[-1]].id + 1
            else:
                next_id = len(STANDARD_TRAITS) + 1
            self._trait_records[name] = CustomTraitRecord(next_id)
            self._custom_traits.append(name)
            return self._trait_view(name), True

    def delete_trait(self, name):
        """Delete a custom trait no provider has.

        :param name: the trait.
        :raises TraitNotFound: no such trait.
        :raises TraitCannotDeleteStandard: it is not a custom trait.
        :raises TraitInUse: a provider has it.
        """
        with self._lock:
            self._trait_view(name)
            if not name.startswith(os_traits.CUSTOM_NAMESPACE):
                raise exception.TraitCannotDeleteStandard(name=name)
            if name in self._associated_traits():
                raise exception.TraitInUse(name=name)
            del self._trait_records[name]
            self._custom_traits.remove(name)

    def _associated_traits(self):
        used = set()
        for record in self._providers.values():
            used |= record.traits
        return used

    def list_traits(self, name_in=None, prefix=None, associated=None):
        """The traits matching every filter given.

        In placement's order: by name when ``name_in`` is given (its
        database walks the name index then), else by id.

        :param name_in: only these names (unknown ones are ignored).
        :param prefix: only names SQL's ``LIKE '<prefix>%'`` selects
            (see :func:`like_prefix`).
        :param associated: True for the traits some provider has, False
            for the others, None for both.
        :returns: a list of :class:`Trait`.
        """
        with self._lock:
            if name_in is not None:
                names = sorted(name for name in set(name_in)
                               if self._trait_known(name))
            else:
                names = self.trait_names()
            if prefix is not None:
                matches = like_prefix(prefix)
                names = [name for name in names if matches(name)]
            if associated is not None:
                used = self._associated_traits()
                names = [name for name in names
                         if (name in used) == associated]
            return [self._trait_view(name) for name in names]

    def provider_traits(self, uuid):
        """A provider's generation and traits, in trait id order.

        :param uuid: the provider.
        :returns: ``(generation, [Trait])``.
        :raises ResourceProviderNotFound: no such provider.
        """
        with self._lock:
            record = self._provider(uuid)
            names = sorted(record.traits, key=self._trait_id)
            return record.generation, [self._trait_view(name)
                                       for name in names]

    def set_provider_traits(self, uuid, generation, names):
        """Replace a provider's traits; a change bumps its generation.

        :param uuid: the provider.
        :param generation: the generation the caller last saw; None skips
            the check.
        :param names: the trait names it must have (duplicates allowed).
        :returns: ``(generation, [Trait])``, the traits by name.
        :raises ResourceProviderNotFound: no such provider.
        :raises ProviderGenerationConflict: stale generation.
        :raises TraitNotFound: unknown traits; its ``name`` lists them
            (in the order placement's message does).
        """
        with self._lock:
            record = self._provider(uuid)
            if generation is not None and generation != record.generation:
                raise exception.ProviderGenerationConflict()
            known = set(name for name in names if self._trait_known(name))
            # The same set difference as placement's, hence the same
            # iteration order in its message.
            missing = set(names) - known
            if missing:
                raise exception.TraitNotFound(name=', '.join(missing))
            if known != record.traits:
                record.traits = known
                record.bump()
            return record.generation, [self._trait_view(name)
                                       for name in sorted(known)]

    def clear_provider_traits(self, uuid):
        """Remove every trait of a provider (no generation check).

        :param uuid: the provider.
        :returns: the provider generation (moved if it had traits).
        :raises ResourceProviderNotFound: no such provider.
        """
        return self.set_provider_traits(uuid, None, ())[0]

"""Resource classes of the placement double's state.

The standard classes are those of ``os-resource-classes``, numbered by
their position as placement numbers them when it syncs its database; they
can be neither renamed nor deleted. Custom classes (``CUSTOM_...``) get
placement's ids: the highest id in use plus one, starting at
:data:`~.models.FIRST_CUSTOM_RESOURCE_CLASS_ID`. Listings follow the ids.

Inventories and allocations name their class, so renaming a custom class
(``PUT /resource_classes/{name}`` before microversion 1.7) renames it in
them too, as placement's rows refer to the class by id.
"""

import collections
import re

from shelvefix.placement import exception
from shelvefix.placement.objects import models

_CUSTOM_CLASS_RE = re.compile(r'^CUSTOM_[A-Z0-9_]+$')
_STANDARD_IDS = {name: index for index, name
                 in enumerate(models.STANDARD_RESOURCE_CLASSES)}

ResourceClass = collections.namedtuple(
    'ResourceClass', ['name', 'last_modified'])
ResourceClass.__doc__ = """Snapshot of a resource class.

``last_modified`` is when its row last changed (a standard class was
written when the state was created).
"""


class CustomClassRecord(object):
    """A stored custom resource class: its id and when it changed."""

    def __init__(self, class_id):
        self.id = class_id
        self.created_at = models.utcnow()
        self.updated_at = None

    @property
    def last_modified(self):
        """``updated_at``, or ``created_at`` for a never-renamed class."""
        return self.updated_at or self.created_at


class ResourceClassesMixin(object):
    """Standard and custom resource classes; mixed into ``PlacementState``.

    Uses the state's ``_custom_classes`` (names, in id order) and
    ``_class_records`` (name -> :class:`CustomClassRecord`).
    """

    @property
    def resource_classes(self):
        """The resource classes known: standard ones, then custom ones."""
        with self._lock:
            return (list(models.STANDARD_RESOURCE_CLASSES) +
                    list(self._custom_classes))

    def add_resource_class(self, name):
        """Make a custom resource class known (idempotent).

        :param name: ``CUSTOM_`` followed by ``[A-Z0-9_]``.
        :raises ValueError: for a name that is not a custom class name.
        """
        if not _CUSTOM_CLASS_RE.match(name or ''):
            raise ValueError('%r is not a CUSTOM_ resource class name'
                             % (name,))
        self.ensure_resource_class(name)

    def class_id(self, name):
        """Placement's numeric id of a resource class, for ordering.

        :param name: the resource class.
        :raises ResourceClassNotFound: unknown class.
        """
        standard = _STANDARD_IDS.get(name)
        if standard is not None:
            return standard
        with self._lock:
            record = self._class_records.get(name)
            if record is None:
                raise exception.ResourceClassNotFound(name=name)
            return record.id

    def _class_order(self, name):
        try:
            return self.class_id(name)
        except exception.ResourceClassNotFound:
            return float('inf')

    def _class_view(self, name):
        record = self._class_records.get(name)
        if record is not None:
            return ResourceClass(name, record.last_modified)
        if name in _STANDARD_IDS:
            return ResourceClass(name, self._created_at)
        raise exception.ResourceClassNotFound(name=name)

    def list_resource_classes(self):
        """Every resource class, in id order (standard ones first).

        :returns: a list of :class:`ResourceClass`.
        """
        with self._lock:
            return [self._class_view(name) for name in self.resource_classes]

    def get_resource_class(self, name):
        """One resource class.

        :param name: its name.
        :returns: a :class:`ResourceClass`.
        :raises ResourceClassNotFound: no such class.
        """
        with self._lock:
            return self._class_view(name)

    def create_resource_class(self, name):
        """Create a custom resource class.

        :param name: a ``CUSTOM_`` name (the caller validates its syntax).
        :returns: the new :class:`ResourceClass`.
        :raises ResourceClassExists: a class of that name exists.
        :raises ValueError: the name does not start with ``CUSTOM_``.
        """
        with self._lock:
            if name in _STANDARD_IDS or name in self._class_records:
                raise exception.ResourceClassExists(resource_class=name)
            if not name.startswith(models.CUSTOM_PREFIX):
                raise ValueError('name must start with %s'
                                 % models.CUSTOM_PREFIX)
            if self._custom_classes:
                next_id = self._class_records[self._custom_classes[-1]].id + 1
            else:
                next_id = models.FIRST_CUSTOM_RESOURCE_CLASS_ID
            self._class_records[name] = CustomClassRecord(next_id)
            self._custom_classes.append(name)
            return self._class_view(name)

    def ensure_resource_class(self, name):
        """Create a custom resource class unless it exists.

        :param name: a ``CUSTOM_`` name (the caller validates its syntax).
        :returns: ``(ResourceClass, created)``.
        :raises ValueError: the name does not start with ``CUSTOM_``.
        """
        with self._lock:
            try:
                return self._class_view(name), False
            except exception.ResourceClassNotFound:
                return self.create_resource_class(name), True

    def rename_resource_class(self, name, new_name):
        """Rename a custom class, in inventories and allocations too.

        Keeps the class id (and so its place in listings); renaming a
        class to its own name changes nothing.

        :param name: the class to rename.
        :param new_name: its new name.
        :returns: the renamed :class:`ResourceClass`.
        :raises ResourceClassNotFound: no class is called ``name``.
        :raises ResourceClassCannotUpdateStandard: ``name`` is standard.
        :raises ResourceClassExists: ``new_name`` is taken.
        """
        with self._lock:
            self._class_view(name)
            if name in _STANDARD_IDS:
                raise exception.ResourceClassCannotUpdateStandard(
                    resource_class=name)
            if new_name == name:
                return self._class_view(name)
            if new_name in _STANDARD_IDS or new_name in self._class_records:
                raise exception.ResourceClassExists(resource_class=new_name)
            record = self._class_records.pop(name)
            record.updated_at = models.utcnow()
            self._class_records[new_name] = record
            position = self._custom_classes.index(name)
            self._custom_classes[position] = new_name
            self._rename_in_rows(name, new_name)
            return self._class_view(new_name)

    def _rename_in_rows(self, name, new_name):
        for record in self._providers.values():
            if name in record.inventories:
                items = list(record.inventories.items())
                record.inventories.clear()
                record.inventories.update(
                    (new_name if rc == name else rc, stored)
                    for rc, stored in items)
        for consumer, rows in self._allocations.items():
            self._allocations[consumer] = [
                row._replace(resource_class=new_name)
                if row.resource_class == name else row for row in rows]

    def delete_resource_class(self, name):
        """Delete a custom resource class no inventory uses.

        :param name: the class.
        :raises ResourceClassNotFound: no such class.
        :raises ResourceClassCannotDeleteStandard: it is a standard class.
        :raises ResourceClassInUse: a provider has inventory of it.
        """
        with self._lock:
            self._class_view(name)
            if name in _STANDARD_IDS:
                raise exception.ResourceClassCannotDeleteStandard(
                    resource_class=name)
            if any(name in record.inventories
                   for record in self._providers.values()):
                raise exception.ResourceClassInUse(resource_class=name)
            del self._class_records[name]
            self._custom_classes.remove(name)

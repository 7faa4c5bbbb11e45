"""Python cross-references resolved the way Python resolves the names.

A docstring names things as its module sees them: ``:raises NotFound:`` in
a module that did ``from shelvefix.placement.errors import NotFound``, or
``:class:`~shelvefix.explorer.Controller``` for a name the package
re-exports. Sphinx only knows the names objects are documented under (where
they are defined), so it guesses: two ``NotFound`` classes in the package
make the reference ambiguous (a warning, so ``-W`` fails), and a
re-exported name leads nowhere.

After each page is read (``doctree-read``), every ``py`` reference whose
first name is bound in the module it was written in (the ``py:module``
context: the documented module), or which is spelt from the top of a
package of ``py_names_packages``, is rewritten to the name its object is
documented under (``object.__module__`` + ``object.__qualname__``), when
that object belongs to one of those packages. A reference to a member of
the current class, or one that does not resolve, is left as it is. A
relative module reference (``:mod:`.candidates```) names a module of the
current package, as a relative import does. A bare name the module does
not bind is looked up in the package modules it imports
(``:raises ProviderGenerationConflict:`` where the code raises
``exception.ProviderGenerationConflict``), if exactly one has it.
"""

import importlib
import importlib.util
import inspect
import sys

from sphinx import addnodes

_MISSING = object()


def _module(name):
    if not name:
        return None
    module = sys.modules.get(name)
    if module is not None:
        return module
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: B902 - an unimportable name resolves to nothing
        return None


def _name_of(value):
    """The documented name of a module, class or function (or None)."""
    if inspect.ismodule(value):
        return value.__name__
    if inspect.isclass(value) or inspect.isfunction(value):
        module = getattr(value, '__module__', None)
        qualname = getattr(value, '__qualname__', None)
        if module and qualname and '<locals>' not in qualname:
            return '%s.%s' % (module, qualname)
    return None


def _absolute(parts):
    """The object a dotted name spelt from the top names, and the rest."""
    for length in range(len(parts), 0, -1):
        module = _module('.'.join(parts[:length]))
        if module is not None:
            rest = parts[length:]
            if not rest:
                return module, []
            value = getattr(module, rest[0], _MISSING)
            if value is _MISSING:
                return None, None
            return value, rest[1:]
    return None, None


def _through_imports(module, name, packages):
    """What ``name`` is in the one module ``module`` imports that has it.

    ``:raises ProviderGenerationConflict:`` in a module that raises
    ``exception.ProviderGenerationConflict``: among the modules of
    ``packages`` that ``module`` binds (``from pkg import exception``), the
    one that has ``name``. None has it, or two have different objects:
    ``_MISSING``.
    """
    found = {}
    for value in list(vars(module).values()):
        if (inspect.ismodule(value) and value is not module
                and value.__name__.split('.', 1)[0] in packages):
            candidate = vars(value).get(name, _MISSING)
            if candidate is not _MISSING:
                found[id(candidate)] = candidate
    if len(found) == 1:
        return next(iter(found.values()))
    return _MISSING


def canonical(target, modname, classname, reftype, refspecific, packages):
    """The documented name of ``target`` as written in ``modname``, or None.

    ``classname`` is the class whose description the reference is in, if
    any; ``packages`` the top-level packages whose names may be rewritten.
    """
    parts = target.split('.')
    if not all(parts):
        return None
    module = _module(modname)
    if module is not None and classname:
        cls = module
        for part in classname.split('.'):
            cls = getattr(cls, part, None)
        if cls is not None and hasattr(cls, parts[0]):
            return None           # a member of the current class
    value, rest = _MISSING, None
    if module is not None and parts[0] in vars(module):
        value, rest = vars(module)[parts[0]], parts[1:]
    elif parts[0] in packages:
        value, rest = _absolute(parts)
        if value is None:
            return None
    elif reftype == 'mod' and refspecific and module is not None:
        package = (module.__name__ if hasattr(module, '__path__')
                   else module.__name__.rpartition('.')[0])
        relative = '%s.%s' % (package, target)
        try:
            found = importlib.util.find_spec(relative) is not None
        except (ImportError, ValueError):
            found = False
        return relative if found else None
    if value is _MISSING and module is not None and len(parts) == 1:
        value, rest = _through_imports(module, target, packages), []
    if value is _MISSING:
        return None
    name = _name_of(value)
    if name is None:
        return None
    if name.split('.', 1)[0] not in packages:
        return None
    return '.'.join([name] + list(rest))


def resolve_names(app, doctree):
    packages = set(app.config.py_names_packages)
    if not packages:
        return
    for node in doctree.findall(addnodes.pending_xref):
        if node.get('refdomain') != 'py':
            continue
        target = node.get('reftarget', '')
        new = canonical(target, node.get('py:module'), node.get('py:class'),
                        node.get('reftype'), node.get('refspecific', False),
                        packages)
        if new and new != target:
            node['reftarget'] = new
            node['refspecific'] = False


def setup(app):
    app.add_config_value('py_names_packages', [], 'env')
    app.connect('doctree-read', resolve_names)
    return {'version': '1.0', 'parallel_read_safe': True,
            'parallel_write_safe': True}

"""Which nova runs, and whether the race lab can drive it.

:func:`load` puts the nova the user named first on ``sys.path`` (a source
tree, an unpacked sdist or a wheel, imported from where it is, never
installed), imports the modules the nova target drives and checks that
each method the target calls is there and takes the arguments it passes
(:data:`SURFACE`). Anything missing is one :class:`~shelvefix.nova.
NovaUnusable` line naming it, never a traceback halfway through a run.

This module does not import nova until :func:`load` is called.
"""

import importlib
import importlib.metadata
import inspect
import os
import platform
import subprocess
import sys
import tempfile
import zipfile

from shelvefix import nova as nova_target

INSTALL_HINT = ('install it with: pip install "shelvefix[nova]", or name a '
                'tree with --nova PATH')

#: ``module: {class or function: {method: parameters passed by name}}``;
#: a function of a module is listed under the key None. What the nova
#: target calls (positional arguments are named by the parameter they
#: bind to in every nova release it drives).
SURFACE = {
    'nova.compute.manager': {'ComputeManager': {
        'shelve_offload_instance': ('context', 'instance', 'clean_shutdown',
                                    'accel_uuids'),
        'unshelve_instance': ('context', 'instance', 'image',
                              'filter_properties', 'node', 'request_spec'),
        'confirm_resize': ('context', 'instance', 'migration'),
        'revert_resize': ('context', 'instance', 'migration',
                          'request_spec'),
        'finish_revert_resize': ('context', 'instance', 'migration'),
        'prep_resize': ('context', 'image', 'instance'),
        'rebuild_instance': ('context', 'instance', 'orig_image_ref',
                             'image_ref'),
        'terminate_instance': ('context', 'instance', 'bdms'),
        '_destroy_evacuated_instances': ('context', 'node_cache'),
        # An RPC call the lab serves (shelvefix.nova.bus).
        'check_instance_shared_storage': ('ctxt', 'data'),
    }, 'InstanceEvents': {}},
    'nova.compute.resource_tracker': {'ResourceTracker': {
        '__init__': ('host', 'driver', 'reportclient'),
        'set_service_ref': ('service_ref',),
        'update_available_resource': ('context', 'nodename'),
        '_update': ('context', 'compute_node', 'startup'),
        'drop_move_claim_at_source': ('context', 'instance', 'migration'),
    }},
    'nova.conductor.manager': {'ComputeTaskManager': {
        'unshelve_instance': ('context', 'instance', 'request_spec'),
        'rebuild_instance': ('context', 'instance', 'orig_image_ref',
                             'image_ref', 'injected_files', 'new_pass',
                             'orig_sys_metadata', 'bdms', 'recreate',
                             'on_shared_storage', 'host', 'request_spec'),
        'migrate_server': ('context', 'instance', 'scheduler_hint', 'live',
                           'rebuild', 'flavor', 'block_migration',
                           'disk_over_commit', 'clean_shutdown',
                           'request_spec', 'host_list'),
    }},
    'nova.compute.api': {'API': {'delete': ('context', 'instance'),
                                 'shelve': ('context', 'instance')}},
    'nova.api.openstack.compute.shelve': {'ShelveController': {
        '_shelve': ('req', 'id', 'body')}},
    'nova.context': {
        'RequestContext': {'can': ('action', 'target', 'fatal')},
        None: {'scatter_gather_single_cell': ('context', 'cell_mapping',
                                              'fn')}},
    'nova.objects.instance_mapping': {'InstanceMapping': {'save': ()}},
    'nova.objects.instance_action': {'InstanceAction': {
        'action_start': ('context', 'instance_uuid', 'action_name')}},
    'nova.scheduler.manager': {'SchedulerManager': {}},
    'nova.scheduler.host_manager': {'HostManager': {}},
    'nova.scheduler.client.report': {
        'SchedulerReportClient': {'__init__': ('adapter',)},
        None: {'report_client_singleton': ()}},
    'nova.scheduler.utils': {None: {'claim_resources': ()}},
    'nova.compute.provider_tree': {'ProviderTree': {'new_root': ()}},
    'nova.compute.rpcapi': {},
    'nova.objects': {},
}


def locate(path=None):
    """The ``sys.path`` entry of the nova named, and how to say it.

    :param path: None for the installed nova, else a source tree or an
        unpacked sdist (a directory holding ``nova/__init__.py``) or a
        wheel (``.whl``)
    :returns: ``(entry, description)``; ``entry`` is None for the
        installed nova
    :raises shelvefix.nova.NovaUnusable: nothing to import there
    """
    if path is None:
        try:
            spec = importlib.util.find_spec('nova')
        except ValueError:
            spec = None
        if spec is None:
            raise nova_target.NovaUnusable('nova is not installed; '
                                           + INSTALL_HINT)
        return None, 'the installed nova'
    path = os.path.abspath(path)
    if os.path.isfile(path) and path.endswith('.whl'):
        return path, 'the wheel %s' % path
    if not os.path.exists(path):
        raise nova_target.NovaUnusable('--nova %s: no such file or '
                                       'directory' % path)
    if os.path.isfile(os.path.join(path, 'nova', '__init__.py')):
        return path, 'the tree %s' % path
    raise nova_target.NovaUnusable(
        '--nova %s: not a nova source tree, unpacked sdist or wheel (no '
        'nova/__init__.py in it)' % path)


def unpack(wheel, scratch):
    """The directory ``wheel`` unpacks to, under ``scratch``.

    nova finds its scheduler filters and weighers by listing its own
    package directories, which a zip on ``sys.path`` does not have: a
    wheel is imported unpacked (not installed: nothing is registered).
    """
    target = os.path.join(scratch, os.path.basename(wheel)[:-len('.whl')])
    try:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(target)
    except (OSError, zipfile.BadZipFile) as e:
        raise nova_target.NovaUnusable('--nova %s: cannot unpack the '
                                       'wheel: %s' % (wheel, e))
    return target


def load(path=None, scratch=None):
    """Import the nova named, and check the nova target can drive it.

    :param scratch: a directory to unpack a wheel in (removed by the
        caller)
    :returns: a one-line description (where it is, its version)
    :raises shelvefix.nova.NovaUnusable: it cannot be imported on this
        Python, or a method the target calls is missing or takes other
        arguments
    """
    named, where = locate(path)
    entry = named
    if named is not None:
        if os.path.isfile(named):
            entry = unpack(named, scratch or tempfile.mkdtemp())
        sys.path.insert(0, entry)
        # A git checkout has no package metadata; pbr asks for a version.
        os.environ.setdefault('PBR_VERSION', '0.0.0')
    python = 'Python %s' % platform.python_version()
    for name in SURFACE:
        try:
            importlib.import_module(name)
        except Exception as e:
            raise nova_target.NovaUnusable(
                '%s cannot be imported on %s: %s: %s: %s'
                % (where, python, name, type(e).__name__,
                   str(e).splitlines()[0] if str(e) else ''))
    nova = sys.modules['nova']
    if entry is not None and not os.path.abspath(nova.__file__).startswith(
            entry):
        raise nova_target.NovaUnusable(
            '%s was not imported: nova came from %s'
            % (where, os.path.dirname(nova.__file__)))
    missing = surface_gaps()
    if missing:
        raise nova_target.NovaUnusable(
            '%s cannot be driven by the nova target: %s'
            % (where, '; '.join(missing)))
    return '%s (nova %s, %s)' % (where, version(named), python)


def surface_gaps():
    """What of :data:`SURFACE` the imported nova lacks, one text each."""
    gaps = []
    for module_name, members in SURFACE.items():
        module = sys.modules[module_name]
        for owner_name, methods in members.items():
            owner = (module if owner_name is None
                     else getattr(module, owner_name, None))
            dotted = module_name + ('.' + owner_name if owner_name else '')
            if owner is None:
                gaps.append('%s is missing' % dotted)
                continue
            for method, params in methods.items():
                func = getattr(owner, method, None)
                if func is None:
                    gaps.append('%s.%s is missing' % (dotted, method))
                    continue
                gaps += ['%s.%s takes no argument %r' % (dotted, method, p)
                         for p in _unaccepted(func, params)]
    return gaps


def _unaccepted(func, params):
    """The names of ``params`` that ``func`` takes no argument for."""
    func = inspect.unwrap(func)
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    kinds = {p.kind for p in signature.parameters.values()}
    if inspect.Parameter.VAR_KEYWORD in kinds:
        return []
    return [p for p in params if p not in signature.parameters]


def version(entry=None):
    """The version of the nova at ``entry`` (None: installed), or unknown.

    An unpacked sdist says it in ``PKG-INFO``, a wheel in its file name, a
    git checkout in its tags (``git describe``); the installed nova in its
    package metadata. pbr's own answer is not used: for a tree it finds
    the installed nova's metadata, or none.
    """
    if entry is None:
        try:
            return importlib.metadata.version('nova')
        except importlib.metadata.PackageNotFoundError:
            return 'unknown'
    if os.path.isfile(entry):
        parts = os.path.basename(entry).split('-')
        return parts[1] if len(parts) > 2 else 'unknown'
    try:
        with open(os.path.join(entry, 'PKG-INFO')) as f:
            for line in f:
                if line.startswith('Version:'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    try:
        described = subprocess.run(
            ['git', '-C', entry, 'describe', '--tags', '--always'],
            capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return 'unknown'
    text = described.stdout.strip()
    return text if described.returncode == 0 and text else 'unknown'

"""Checks of the built guide: the API reference is complete, no CDN script.

* Once every page has been read (``env-check-consistency``), every module of
  ``api_coverage_package`` (``shelvefix``) is imported, except those under
  ``api_coverage_skip`` (``shelvefix.tests``) and ``__main__`` modules, and
  every public class and function *defined* in a module (its
  ``__module__`` is the module: re-exports are documented where they are
  defined) must have been documented under its own name, ``module.name``,
  by autodoc (or a ``py:`` directive). Each one that was not, and each
  module that cannot be imported, is a warning: ``sphinx-build -W`` fails.
  Imports happen with ``autodoc_mock_imports`` mocked, as autodoc does.

* Once the HTML is written (``build-finished``), every page is scanned for a
  ``<script src=...>``, a stylesheet ``<link>`` or a script's
  ``x.src = "..."`` or ``url: "..."`` that loads from the network
  (``http:``, ``https:`` or ``//``): each is a warning. The guide
  must read offline; Sphinx's own ``_static`` files are local.
"""

import importlib
import inspect
import os
import pkgutil
import re

from sphinx.util import logging

logger = logging.getLogger(__name__)

_OBJECT_TYPES = ('class', 'exception', 'function')


def _skipped(name, skip):
    if name.rsplit('.', 1)[-1] == '__main__':
        return True
    if any(part.startswith('_') for part in name.split('.')):
        return True
    return any(name == s or name.startswith(s + '.') for s in skip)


def public_objects(module):
    """``(name, object)`` of the public classes and functions of a module.

    Only those the module defines itself: imported ones are documented in
    the module that defines them.
    """
    found = []
    for name, value in sorted(vars(module).items()):
        if name.startswith('_'):
            continue
        if not (inspect.isclass(value) or inspect.isfunction(value)):
            continue
        if getattr(value, '__module__', None) != module.__name__:
            continue
        found.append((name, value))
    return found


def walk_modules(package_name, skip, onerror):
    """Import and yield every module of a package, depth first, by name.

    Skipped modules and packages (and what is under them) are not imported.
    ``onerror(name, exception)`` is called for a module that cannot be
    imported; the walk goes on.
    """
    try:
        module = importlib.import_module(package_name)
    except Exception as e:  # noqa: B902 - any import failure is reported
        onerror(package_name, e)
        return
    yield module
    path = getattr(module, '__path__', None)
    if path is None:
        return
    for info in sorted(pkgutil.iter_modules(path), key=lambda i: i.name):
        name = '%s.%s' % (package_name, info.name)
        if not _skipped(name, skip):
            yield from walk_modules(name, skip, onerror)


def _location(value):
    try:
        path = inspect.getsourcefile(value)
        line = inspect.getsourcelines(value)[1]
    except (OSError, TypeError):
        return None
    return '%s:%d' % (path, line)


def check_documented(app, env):
    package = app.config.api_coverage_package
    if not package:
        return
    skip = list(app.config.api_coverage_skip)
    documented = env.get_domain('py').objects
    missing = 0
    problems = []

    def onerror(name, exception):
        problems.append(name)
        logger.warning('api coverage: cannot import %s: %s: %s', name,
                       type(exception).__name__, exception,
                       type='api-coverage', subtype='import')

    from sphinx.ext.autodoc.mock import mock
    with mock(app.config.autodoc_mock_imports):
        modules = list(walk_modules(package, skip, onerror))
        for module in modules:
            for name, value in public_objects(module):
                full = '%s.%s' % (module.__name__, name)
                entry = documented.get(full)
                if entry is not None and entry.objtype in _OBJECT_TYPES:
                    continue
                missing += 1
                logger.warning(
                    'api coverage: %s %s is public but not documented '
                    '(add its module to an "automodule" in '
                    'doc/source/reference/)',
                    'class' if inspect.isclass(value) else 'function', full,
                    location=_location(value), type='api-coverage',
                    subtype='undocumented')
    logger.info('api coverage: %d modules of %s checked, %d public objects '
                'not documented, %d modules not importable',
                len(modules), package, missing, len(problems))


_NETWORK = r'''(?:https?:)?//'''
_SCRIPT = re.compile(
    r'''<script\b[^>]*?\bsrc\s*=\s*["']?(%s[^"'\s>]*)''' % _NETWORK, re.I)
_LINK = re.compile(r'<link\b[^>]*>', re.I)
_HREF = re.compile(r'''\bhref\s*=\s*["']?(%s[^"'\s>]*)''' % _NETWORK, re.I)
# A script that loads another: "script.src = 'https://...'", or fetches a
# page: "url : 'https://...'" (jQuery's ajax).
_SCRIPTED = re.compile(
    r'''(?:\.src|\burl)\s*[=:]\s*["'](%s[^"'\s]*)''' % _NETWORK, re.I)
_SCRIPT_BODY = re.compile(r'<script\b[^>]*>(.*?)</script>', re.I | re.S)
_STYLESHEET = re.compile(
    r'''\brel\s*=\s*["']?[^"'>]*\b(?:stylesheet|preload|modulepreload)''',
    re.I)


def remote_resources(html):
    """The URLs of scripts and stylesheets that ``html`` loads remotely."""
    found = [m.group(1) for m in _SCRIPT.finditer(html)]
    for body in _SCRIPT_BODY.findall(html):
        found.extend(m.group(1) for m in _SCRIPTED.finditer(body))
    for link in _LINK.findall(html):
        href = _HREF.search(link)
        if href and _STYLESHEET.search(link):
            found.append(href.group(1))
    return found


def check_no_remote_scripts(app, exception):
    if exception is not None or app.builder.format != 'html':
        return
    outdir = str(app.outdir)
    pages = 0
    for root, _dirs, files in os.walk(outdir):
        for filename in sorted(files):
            if not filename.endswith('.html'):
                continue
            path = os.path.join(root, filename)
            pages += 1
            with open(path, encoding='utf-8', errors='replace') as f:
                html = f.read()
            for url in remote_resources(html):
                logger.warning('offline check: %s loads %s from the network',
                               path, url, type='offline-check',
                               subtype='remote')
    logger.info('offline check: %d HTML pages checked', pages)


def setup(app):
    app.add_config_value('api_coverage_package', '', 'env')
    app.add_config_value('api_coverage_skip', [], 'env')
    app.connect('env-check-consistency', check_documented)
    app.connect('build-finished', check_no_remote_scripts)
    return {'version': '1.0', 'parallel_read_safe': True,
            'parallel_write_safe': True}

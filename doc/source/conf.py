# Sphinx configuration of the shelvefix guide (tox -e docs).
#
# The build is offline: openstackdocstheme with its remote parts left out
# (analytics, badge, global search: see html_theme_options), no intersphinx,
# and sequence diagrams rendered to inline SVG at build time
# (_ext/sequence_diagrams.py). _ext/api_coverage.py fails the build (-W)
# when a public class or function of shelvefix is missing from the API
# reference, or when a page loads a script from the network.

import datetime
import importlib.metadata
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '_ext'))
# The tox env installs shelvefix (usedevelop); this lets a plain
# sphinx-build from a checkout import it too.
sys.path.insert(1, os.path.abspath(os.path.join(HERE, '..', '..')))

# -- Project ----------------------------------------------------------------

project = 'shelvefix'
copyright = '%d, shelvefix developers' % datetime.date.today().year
author = 'shelvefix developers'
try:
    release = importlib.metadata.version('shelvefix')
except importlib.metadata.PackageNotFoundError:
    release = ''
version = '.'.join(release.split('.')[:2])

# -- General ----------------------------------------------------------------

extensions = [
    'sphinx.ext.autodoc',
    'sphinx.ext.autosummary',
    'sphinx.ext.viewcode',
    'openstackdocstheme',
    'oslo_config.sphinxext',
    'reno.sphinxext',
    'api_coverage',
    'command_help',
    'corpus_table',
    'py_names',
    'readable_pages',
    'race_diagrams',
    'sequence_diagrams',
]

master_doc = 'index'
source_suffix = {'.rst': 'restructuredtext'}
exclude_patterns = ['_build', 'build', '_ext', 'Thumbs.db', '.DS_Store']
pygments_style = 'sphinx'
# A "::" block's language is chosen by _ext/readable_pages.py; Sphinx's
# own default (highlight_language) stays for viewcode's source pages.
language = 'en'

# -- autodoc ----------------------------------------------------------------

autodoc_member_order = 'bysource'
# Document what shelvefix writes: a method without a docstring does not
# borrow its base's (fixtures', testtools', webob's...).
autodoc_inherit_docstrings = False
# shelvefix.backends.placement_wsgi imports placement's WSGI application,
# which builds placement (and needs its database) at import time: the page
# documents the module, not the application object. The nova target's
# modules (shelvefix.nova) import nova, which the docs do not install.
autodoc_mock_imports = ['placement.wsgi.api', 'nova', 'oslo_messaging']

# -- API reference: a page per module (autosummary) -------------------------

# The pages under reference/api/ list their modules in an autosummary
# table; each module's page is written at build time into
# reference/api/generated/ (not committed) from
# _templates/autosummary/module.rst.
autosummary_generate = True
# The options of a module's automodule beside :members:, by module
# ("shelvefix.exception") or by package ("shelvefix.nova.*": the package
# and every module under it).
# :undoc-members: where some public names have no docstring: the nova
# target's programs (their bases are nova's, mocked here), the contract
# scenarios (classes named for what they check), exceptions.
API_MODULE_OPTIONS = {
    'shelvefix.contract.scenarios.*': [':undoc-members:'],
    'shelvefix.exception': [':undoc-members:'],
    'shelvefix.explorer': [':ignore-module-all:'],
    'shelvefix.nova.*': [':undoc-members:'],
    'shelvefix.novacheck.values': [':undoc-members:'],
    'shelvefix.race.steps': [':undoc-members:'],
}

autosummary_context = {'api_module_options': API_MODULE_OPTIONS}

# -- API coverage (_ext/api_coverage.py) ------------------------------------

api_coverage_package = 'shelvefix'
api_coverage_skip = ['shelvefix.tests']

# -- Python names (_ext/py_names.py) ----------------------------------------

# References in docstrings name objects as their module sees them (imports,
# re-exports): resolve them to where the objects are documented.
py_names_packages = ['shelvefix']

# -- HTML -------------------------------------------------------------------

html_theme = 'openstackdocs'
html_theme_options = {
    # Offline: no analytics, no badge fetched from docs.openstack.org (and
    # _templates/header.html drops the theme's remote search widget).
    'analytics_tracking_code': '',
    'display_badge': False,
}
templates_path = ['_templates']
html_title = 'shelvefix'
html_static_path = ['_static']
html_css_files = ['shelvefix.css']
html_show_sourcelink = True


def _reread_release_notes(app, env, added, changed, removed):
    # reno reads the notes from git, not from this page: read the page
    # again on every build, so that a new note shows without -E.
    return ['reference/releasenotes']


def setup(app):
    app.connect('env-get-outdated', _reread_release_notes)

# Sphinx configuration of the shelvefix guide (tox -e docs).
#
# The build is offline: Sphinx's built-in alabaster theme, no intersphinx,
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
    'sphinx.ext.viewcode',
    'oslo_config.sphinxext',
    'reno.sphinxext',
    'api_coverage',
    'command_help',
    'corpus_table',
    'py_names',
    'sequence_diagrams',
]

master_doc = 'index'
source_suffix = {'.rst': 'restructuredtext'}
exclude_patterns = ['_build', 'build', '_ext', 'Thumbs.db', '.DS_Store']
pygments_style = 'sphinx'
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

# -- API coverage (_ext/api_coverage.py) ------------------------------------

api_coverage_package = 'shelvefix'
api_coverage_skip = ['shelvefix.tests']

# -- Python names (_ext/py_names.py) ----------------------------------------

# References in docstrings name objects as their module sees them (imports,
# re-exports): resolve them to where the objects are documented.
py_names_packages = ['shelvefix']

# -- HTML -------------------------------------------------------------------

html_theme = 'alabaster'
html_theme_options = {
    'description': 'nova bug 1798688: shelve-offload / unshelve',
    'fixed_sidebar': False,
    'page_width': '1100px',
    'show_relbars': True,
}
html_title = 'shelvefix'
html_static_path = []
html_show_sourcelink = True


def _reread_release_notes(app, env, added, changed, removed):
    # reno reads the notes from git, not from this page: read the page
    # again on every build, so that a new note shows without -E.
    return ['reference/releasenotes']


def setup(app):
    app.connect('env-get-outdated', _reread_release_notes)

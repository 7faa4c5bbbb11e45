# Sphinx configuration for the shelvefix release notes.

extensions = ['reno.sphinxext']
source_suffix = '.rst'
master_doc = 'index'
project = 'shelvefix Release Notes'
copyright = '2026, shelvefix developers'
version = ''
release = ''
exclude_patterns = []
pygments_style = 'sphinx'
html_theme = 'alabaster'

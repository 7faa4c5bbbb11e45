"""Data, not code: the corpus rows' patches (shelvefix.corpus.PATCHES).

A package only so that setuptools ships its files as the package's data.
"""

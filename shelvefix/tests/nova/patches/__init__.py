"""Data, not code: the patches the nova tests apply.

A package only so that setuptools ships its files as the package's data.
"""

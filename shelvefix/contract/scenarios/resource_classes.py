"""``/resource_classes``: standard and custom classes.

(Being written.)
"""

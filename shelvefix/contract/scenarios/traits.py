"""``/traits`` and provider traits.

(Being written.)
"""

"""Provider aggregates.

(Being written.)
"""

"""Policy: what a non-admin token may do.

(Being written.)
"""

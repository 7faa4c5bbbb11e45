"""``GET /allocation_candidates``.

(Being written.)
"""

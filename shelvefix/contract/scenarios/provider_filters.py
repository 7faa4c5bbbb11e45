"""The filters of ``GET /resource_providers``.

(Being written.)
"""

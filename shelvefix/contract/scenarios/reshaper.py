"""``POST /reshaper``.

(Being written.)
"""

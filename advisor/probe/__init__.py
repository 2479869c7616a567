"""The accuracy probe (issue #8): the shallow-first workflow run on the user's own data sample.

`learning/` holds the torch and scikit-learn side (no Django); the rest is the thin Django app around it.
"""

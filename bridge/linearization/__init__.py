"""Linearization about steady motions: ``x' = A x + B u``, ``y = C x + D u`` in the minimal coordinates."""

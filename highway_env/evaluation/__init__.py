"""Benchmarking Highway agents against the exact solver (``python evaluate.py``): the held-out
position sets (:mod:`.position_set`, built by :mod:`.positions`), the measures (:mod:`.metrics`,
:mod:`.elo`), the units of work and their perfect opponent (:mod:`.tasks`), the sibling games
(:mod:`.siblings`) and the outputs (:mod:`.report`, :mod:`.plots`, :mod:`.provenance`).
"""

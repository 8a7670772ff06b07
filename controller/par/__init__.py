"""Game math: exact par sheets and optimal strategy (pure: the standard library, and numpy in
``three_card_counts``, which counts every Three Card Lowball hand at once).

``cali_lowball`` and ``three_card_lowball`` enumerate every deal with full card removal from
one deck, using the project's own rankings and house way; ``figures`` holds what both par
sheets share (exact fractions, decimals, the spread of a net result).
"""

"""Which cards of the hand in play the table shows, and which only surveillance may know.

The shoe tells the controller every card as it leaves the shoe; the rules show most of them
much later. Until a card is shown on the table, it is *hidden*: only surveillance receives it
live. Everything a person at the table may read (the dealer's screen, the dealer's command
line, the pit's live view, every endpoint a dealer's key opens) is built from
:func:`table_cards`, never from the hand's own cards. The rules, per game (the table of
``docs/security.md``, "Who may know which card, and when"):

* **Cali LowBall**: the flop (community cards) is dealt face up and shown as dealt; the
  players' and the dealer's two cards stay face down until the showdown, after every
  player's last decision. A burn card is never shown while the hand is in play.
* **Three Card Lowball**: every card is dealt face down. While a spot is to draw, its three
  dealt cards are shown (the player shows the dealer what he gives up, and the dealer touches
  those cards); its replacements stay face down until the showdown. The dealer's three cards
  are shown once every player has drawn (the dealer's draw by the house way, which the screen
  shows), with the dealer's replacements.

Once the hand is settled (or voided) nothing is hidden any more: the pit and the CMS see the
whole hand.

Texts a person reads may name a card too (a fault's detail: ``duplicate card 9h``): on the
table's side every card written in a text is replaced (:func:`without_cards`).

Pure: the standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from controller.core.events import BURN, COMMUNITY, DEALER, Recipient
from controller.core.vocabulary import Game, Phase

#: A card written in a text the table or a device wrote (``As``, ``AS``, ``10d``, ``Td``,
#: ``10♦``), not inside a longer word or number: the rank as the table writes it (a lowercase
#: rank is an English word more often than a card: "as"). The CMS family's redaction
#: (controller/stream/cms_view.py) takes every spelling, since a dealer types free text.
CARD_SPELLING: Final = "(?:10|[A2-9TJQK])(?:[cdhsCDHS]|[\u2660\u2665\u2666\u2663])"
CARD_TEXT: Final = re.compile(f"(?<![A-Za-z0-9]){CARD_SPELLING}(?![A-Za-z0-9])")
#: What a hidden card written in a text becomes on the table's side.
HIDDEN_IN_TEXT: Final = "(hidden)"

#: The phases in which a Three Card Lowball dealer's cards are face up.
_DEALER_SHOWN: Final = frozenset({Phase.DEALER_DRAW, Phase.SHOWDOWN})


def without_cards(text: str, placeholder: str = HIDDEN_IN_TEXT) -> str:
    """``text`` with every card written in it replaced by ``placeholder``.

    >>> without_cards("card 9h came out while waiting for the decision of spot 1")
    'card (hidden) came out while waiting for the decision of spot 1'
    """
    return CARD_TEXT.sub(placeholder, text)


def shown_recipients(game: str, phase: str, deciding: Sequence[int]) -> frozenset[Recipient]:
    """Whose cards the table shows now (all of them for the holders named; see
    :func:`table_cards` for a Three Card Lowball spot's replacements): ``phase`` is the hand's
    phase, ``deciding`` the seats whose decision the hand waits for."""
    if phase == Phase.SHOWDOWN:
        return frozenset({DEALER, COMMUNITY, BURN})  # the seats' too: see table_cards
    if game == Game.CALI_LOWBALL:
        return frozenset({COMMUNITY})
    shown: set[Recipient] = set()
    if phase in _DEALER_SHOWN:
        shown.add(DEALER)
    if phase == Phase.PLAYER_DRAWS:
        shown.update(deciding)
    return frozenset(shown)


def table_cards(game: str, phase: str, deciding: Sequence[int],
                cards: Mapping[Recipient, Sequence[object]],
                dealt: Mapping[Recipient, Sequence[object]] | None = None
                ) -> dict[str, list[str | None]]:
    """The hand's cards as the table shows them: each holder's cards in the order dealt,
    a hidden one as None (a card back). ``cards``: the hand's cards by holder; ``dealt``: a
    Three Card Lowball hand's first three cards by holder (a deciding spot shows those, not
    a replacement).

    >>> table_cards("cali_lowball", "pre-flop", (1, 2), {1: ["Ah", "2c"], "dealer": ["Kd", "Qd"]})
    {'1': [None, None], 'dealer': [None, None]}
    >>> table_cards("three_card_lowball", "player draws", (2,),
    ...             {1: ["Ah", "2c", "3d"], 2: ["9h", "Ts", "4c"]})
    {'1': [None, None, None], '2': ['9h', 'Ts', '4c']}
    """
    everything = phase == Phase.SHOWDOWN
    shown = shown_recipients(game, phase, deciding)
    view: dict[str, list[str | None]] = {}
    for holder, held in cards.items():
        if not held:
            continue
        if everything or (holder in shown and not isinstance(holder, int)):
            view[str(holder)] = [str(card) for card in held]
        elif holder in shown:  # a Three Card Lowball spot to draw: its dealt cards only
            first = list((dealt or {}).get(holder, held))
            view[str(holder)] = [str(card) if card in first else None for card in held]
        else:
            view[str(holder)] = [None] * len(held)
    return view

"""Reference settlement: a deliberately simple second reading of the house rules.

It exists only to check the real engines in ``controller/`` against an independent reading of
the rules. It is slow on purpose and shares nothing with the engines except card parsing
(``controller.core.cards``). Validation is skipped: scenarios are assumed well formed.

Entry point: :func:`settle`.

Conventions used throughout:
- A rank is an int, ace = 1 (always low), king = 13.
- A hand *key* is a tuple; the LOWER key is the BETTER (winning) low hand. Equal keys tie.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from fractions import Fraction
from itertools import combinations
from typing import Any

from controller.core.cards import Card, parse_card

RANK_NAMES = {1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9",
              10: "10", 11: "J", 12: "Q", 13: "K"}
TEN = 10
RED = {"d", "h"}

# --------------------------------------------------------------------------------------------
# Rankings
# --------------------------------------------------------------------------------------------


def _grouped_ranks(cards: Iterable[Card]) -> tuple[list[int], tuple[int, ...]]:
    """(counts sorted high to low, ranks ordered by (count desc, rank desc))."""
    counts = Counter(card.rank for card in cards)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], -item[0]))
    pattern = [count for _, count in ordered]
    ranks = tuple(rank for rank, count in ordered for _ in range(count))
    return pattern, ranks


# Five-card ace-to-five low: category by the multiset of rank counts.
_FIVE_CATEGORY = {
    (1, 1, 1, 1, 1): 0,  # no pair
    (2, 1, 1, 1): 1,     # one pair
    (2, 2, 1): 2,        # two pair
    (3, 1, 1): 3,        # three of a kind
    (3, 2): 4,           # full house
    (4, 1): 5,           # four of a kind
}
_FIVE_CATEGORY_NAME = {1: "pair", 2: "two pair", 3: "three of a kind", 4: "full house",
                       5: "four of a kind"}


def five_card_key(cards: Iterable[Card]) -> tuple[Any, ...]:
    """Ace-to-five low key (lower is better). Straights and flushes are ignored."""
    cards = list(cards)
    assert len(cards) == 5
    pattern, ranks = _grouped_ranks(cards)
    # no pair: highest card first; pair: pair rank then kickers high->low; two pair: higher
    # pair, lower pair, kicker; sets: rank of the set first. (count desc, rank desc) does all.
    return (_FIVE_CATEGORY[tuple(pattern)], ranks)


def five_card_class(cards: Iterable[Card]) -> str:
    category, ranks = five_card_key(cards)
    if category == 0:
        return f"{RANK_NAMES[ranks[0]]}-high"
    return _FIVE_CATEGORY_NAME[category]


def is_three_flush(cards: Iterable[Card]) -> bool:
    return len({card.suit for card in cards}) == 1


def is_three_straight(cards: Iterable[Card]) -> bool:
    ranks = sorted(card.rank for card in cards)
    # ace is always low: A-2-3 (1,2,3) is a straight, Q-K-A (1,12,13) is not.
    return len(set(ranks)) == 3 and ranks[2] - ranks[0] == 2


def three_card_key(cards: Iterable[Card]) -> tuple[Any, ...]:
    """Three-card low key (lower is better): no pair < pair < flush < straight < trips < SF."""
    cards = list(cards)
    assert len(cards) == 3
    pattern, ranks = _grouped_ranks(cards)
    flush, straight = is_three_flush(cards), is_three_straight(cards)
    if pattern == [3]:
        category = 4
    elif flush and straight:
        category = 5
    elif straight:
        category = 3
    elif flush:
        category = 2
    elif pattern == [2, 1]:
        category = 1
    else:
        category = 0
    return (category, ranks)


def is_4_2_a(cards: Iterable[Card]) -> bool:
    """Ranks exactly {A, 2, 4} and not one suit (a suited 4-2-A is a flush)."""
    cards = list(cards)
    return sorted(c.rank for c in cards) == [1, 2, 4] and not is_three_flush(cards)


def three_card_class(cards: Iterable[Card]) -> str:
    cards = list(cards)
    category, ranks = three_card_key(cards)
    if category:
        return {1: "pair", 2: "flush", 3: "straight", 4: "three of a kind",
                5: "straight flush"}[category]
    if ranks == (4, 2, 1):
        colours = {card.suit in RED for card in cards}
        return "4-2-A one color" if len(colours) == 1 else "4-2-A two color"
    if ranks == (4, 3, 1):
        return "4-3-A"
    return f"{RANK_NAMES[ranks[0]]}-high"


# --------------------------------------------------------------------------------------------
# Three Card Lowball dealer house way (the house rules)
# --------------------------------------------------------------------------------------------


def house_way_options(cards: Iterable[Card]) -> list[frozenset[Any]]:
    """Every discard set the house way allows for this dealt hand; the first is canonical.

    More than one option only where the rules say "either"/"any": which two of a trip, and
    which pair card when the rule does not pin it down. The reference settles with the first
    option; the tests check that each scenario's outcome is the same for every option.
    """
    cards = list(cards)
    by_rank = Counter(card.rank for card in cards)
    high_first = sorted(cards, key=lambda c: (-c.rank, c.suit))

    if len(by_rank) == 1:  # three of a kind: discard any two of the three
        ordered = sorted(cards, key=lambda c: c.suit)
        return [frozenset(pair) for pair in combinations(ordered, 2)]

    if is_three_flush(cards) or is_three_straight(cards):
        top, second = high_first[0], high_first[1]
        if top.rank >= TEN and second.rank >= TEN:
            return [frozenset({top, second})]
        return [frozenset({top})]

    if len(by_rank) == 2:  # one pair
        pair_rank = next(rank for rank, count in by_rank.items() if count == 2)
        pair = sorted((c for c in cards if c.rank == pair_rank), key=lambda c: c.suit)
        singleton = next(c for c in cards if c.rank != pair_rank)
        options = []
        for index, discarded in enumerate(pair):
            kept = pair[1 - index]
            # "the higher of the two remaining cards" (kept pair card and the singleton):
            # discard it as well if it is T or higher.
            higher = kept if kept.rank > singleton.rank else singleton
            if higher.rank >= TEN:
                options.append(frozenset({discarded, higher}))
            else:
                options.append(frozenset({discarded}))
        if all(len(option) == 1 for option in options):
            matching = [option for option in options
                        if next(iter(option)).suit == singleton.suit]
            if matching:  # discard the pair card whose suit matches the singleton
                return matching
        # either pair card (the lower suit letter first, c<d<h<s); dedupe equal options
        unique = []
        for option in options:
            if option not in unique:
                unique.append(option)
        return unique

    # no pair: discard every card T or higher; if all three are, keep the lowest
    high = [c for c in cards if c.rank >= TEN]
    if len(high) == 3:
        lowest = min(cards, key=lambda c: c.rank)
        return [frozenset(c for c in cards if c is not lowest)]
    return [frozenset(high)]


# --------------------------------------------------------------------------------------------
# Settlement helpers
# --------------------------------------------------------------------------------------------


def _pay(amount: int, odds: str) -> int:
    numerator, denominator = (int(part) for part in odds.split(":"))
    return int(Fraction(amount) * numerator // denominator)


def _entry(seat: int, wager: str, amount: int, result: str, net: int) -> dict[str, Any]:
    # The scenarios name no player: every record says so with "".
    return {"seat": seat, "wager": wager, "amount": amount, "result": result, "net": net,
            "player": ""}


def _win_lose(seat: int, wager: str, amount: int, player_wins: bool) -> dict[str, Any]:
    if player_wins:
        return _entry(seat, wager, amount, "win", amount)
    return _entry(seat, wager, amount, "lose", -amount)


def _seat_numbers(scenario: dict[str, Any]) -> list[int]:
    return sorted(int(seat) for seat in scenario["seats"])


# --------------------------------------------------------------------------------------------
# Cali LowBall
# --------------------------------------------------------------------------------------------


def _settle_cali(scenario: dict[str, Any], paytables: dict[str, Any]) -> dict[str, Any]:
    rules = scenario.get("rules", {})
    table = paytables["cali_lowball"][scenario["paytable"]]
    xtra_table, lowdown_table = table["xtra_bonus"], table["lowdown_bonus"]
    seats = _seat_numbers(scenario)
    shoe = [parse_card(text) for text in scenario["shoe"]]

    holes: dict[Any, Any] = {seat: [] for seat in seats}
    holes["dealer"] = []
    position = 0
    for _round in range(2):
        for recipient in [*seats, "dealer"]:
            holes[recipient].append(shoe[position])
            position += 1
    if rules.get("burn_before_flop", False):
        position += 1  # burn card: read, joins no hand
    board = shoe[position:position + 3]

    hands = {recipient: holes[recipient] + board for recipient in holes}
    keys = {recipient: five_card_key(hand) for recipient, hand in hands.items()}
    classes = {recipient: five_card_class(hand) for recipient, hand in hands.items()}

    dealer_key = keys["dealer"]
    dealer_category = dealer_key[0]
    dealer_qualifies = dealer_category >= 2 or (dealer_category == 1 and dealer_key[1][0] >= 11)

    settlements = []
    for seat in seats:
        wagers = scenario["seats"][str(seat)]
        decisions = scenario["decisions"][str(seat)]
        ante = wagers["ante"]
        xtra = wagers["xtra_bonus"]
        lowdown = wagers.get("lowdown_bonus")
        folded = decisions == ["check", "fold"]
        raise_amount = 3 * ante if decisions == ["raise"] else ante
        player_class = classes[seat]

        if folded:
            settlements.append(_entry(seat, "ante", ante, "forfeit", -ante))
            settlements.append(_entry(seat, "xtra_bonus", xtra, "forfeit", -xtra))
            if lowdown:
                if rules.get("lowdown_bonus_survives_fold", False):
                    settlements.append(_lowdown(seat, lowdown, player_class, lowdown_table))
                else:
                    settlements.append(_entry(seat, "lowdown_bonus", lowdown, "forfeit",
                                              -lowdown))
            continue

        player_wins = keys[seat] <= dealer_key  # players win all ties
        if dealer_qualifies:
            settlements.append(_entry(seat, "ante", ante, "push", 0))
        else:
            settlements.append(_win_lose(seat, "ante", ante, player_wins))

        if player_class in xtra_table:
            net = _pay(xtra, xtra_table[player_class])
            settlements.append(_entry(seat, "xtra_bonus", xtra, "win", net))
        elif rules.get("xtra_bonus_loses_on_loss", False) and not player_wins:
            settlements.append(_entry(seat, "xtra_bonus", xtra, "lose", -xtra))
        else:
            settlements.append(_entry(seat, "xtra_bonus", xtra, "push", 0))

        if lowdown:
            settlements.append(_lowdown(seat, lowdown, player_class, lowdown_table))

        settlements.append(_win_lose(seat, "raise", raise_amount, player_wins))

    return {
        "settlements": settlements,
        "progressive": [],
        "meter": None,
        "hands": {str(recipient): classes[recipient] for recipient in [*seats, "dealer"]},
    }


def _lowdown(seat: int, amount: int, player_class: str, lowdown_table: dict[str, str]
             ) -> dict[str, Any]:
    if player_class in lowdown_table:
        return _entry(seat, "lowdown_bonus", amount, "win",
                      _pay(amount, lowdown_table[player_class]))
    return _entry(seat, "lowdown_bonus", amount, "lose", -amount)


# --------------------------------------------------------------------------------------------
# Three Card Lowball
# --------------------------------------------------------------------------------------------


def _settle_three_card(scenario: dict[str, Any], paytables: dict[str, Any],
                       progressive: dict[str, Any], dealer_option: int) -> dict[str, Any]:
    rules = scenario.get("rules", {})
    bonus_table = paytables["three_card_lowball"][scenario["paytable"]]["bonus"]
    seats = _seat_numbers(scenario)
    shoe = [parse_card(text) for text in scenario["shoe"]]
    position = 0

    dealt: dict[Any, Any] = {seat: [] for seat in seats}
    dealt["dealer"] = []
    for _round in range(3):
        for recipient in [*seats, "dealer"]:
            dealt[recipient].append(shoe[position])
            position += 1

    final: dict[Any, Any] = {}
    for seat in seats:
        decision = scenario["decisions"][str(seat)][0]
        if decision == "stand":
            discards = []
        else:
            discards = [parse_card(text) for text in decision[len("discard:"):].split(",")]
        kept = [card for card in dealt[seat] if card not in discards]
        final[seat] = kept + shoe[position:position + len(discards)]
        position += len(discards)

    options = house_way_options(dealt["dealer"])
    dealer_discards = options[dealer_option % len(options)]
    kept = [card for card in dealt["dealer"] if card not in dealer_discards]
    final["dealer"] = kept + shoe[position:position + len(dealer_discards)]
    position += len(dealer_discards)

    keys = {recipient: three_card_key(hand) for recipient, hand in final.items()}
    classes = {recipient: three_card_class(hand) for recipient, hand in final.items()}
    dealer_key = keys["dealer"]

    settlements = []
    for seat in seats:
        wagers = scenario["seats"][str(seat)]
        ante, bonus = wagers["ante"], wagers["bonus"]
        if keys[seat] < dealer_key:
            settlements.append(_entry(seat, "ante", ante, "win", ante))
            if classes[seat] in bonus_table:
                settlements.append(_entry(seat, "bonus", bonus, "win",
                                          _pay(bonus, bonus_table[classes[seat]])))
            else:
                settlements.append(_entry(seat, "bonus", bonus, "push", 0))
        elif keys[seat] == dealer_key:
            settlements.append(_entry(seat, "ante", ante, "push", 0))
            settlements.append(_entry(seat, "bonus", bonus, "push", 0))
        else:
            settlements.append(_entry(seat, "ante", ante, "lose", -ante))
            settlements.append(_entry(seat, "bonus", bonus, "lose", -bonus))
        if wagers.get("progressive"):
            amount = wagers["progressive"]
            settlements.append(_entry(seat, "progressive", amount, "lose", -amount))

    # progressive awards
    progressive_seats = [seat for seat in seats if scenario["seats"][str(seat)].get("progressive")]
    dealer_pat = is_4_2_a(dealt["dealer"])
    before = scenario.get("meter", progressive["seed"])
    contributions = sum(
        scenario["seats"][str(seat)]["progressive"] * progressive["contribution_rate_percent"]
        // 100
        for seat in progressive_seats
    )
    awards: dict[Any, Any] = {}
    jackpot_seats = []
    for seat in progressive_seats:
        player_lower = keys[seat] < dealer_key
        pat = is_4_2_a(dealt[seat])
        if pat and dealer_pat:
            jackpot_seats.append(seat)
        elif pat and player_lower and three_card_class(dealt[seat]) == "4-2-A one color":
            awards[seat] = "pat-4-2-A-one-color"
        elif pat and player_lower:
            awards[seat] = "pat-4-2-A-two-color"
        elif player_lower and classes[seat] in ("4-2-A one color", "4-2-A two color", "4-3-A"):
            awards[seat] = "4-high"
        elif player_lower and classes[seat] == "5-high":
            awards[seat] = "5-high"

    total = before + contributions
    jackpot_paid = 0
    progressive_out = []
    split = rules.get("jackpot_split", progressive.get("jackpot_split", "equal"))
    if jackpot_seats:
        if split == "full_each":
            each = total
            jackpot_paid = total
        else:
            each = total // len(jackpot_seats)
            jackpot_paid = each * len(jackpot_seats)
    for seat in progressive_seats:
        if seat in jackpot_seats:
            progressive_out.append({"seat": seat, "award": "jackpot", "amount": each,
                                    "player": ""})
        elif seat in awards:
            progressive_out.append({"seat": seat, "award": awards[seat],
                                    "amount": progressive["awards"][awards[seat]],
                                    "player": ""})
    reseed = progressive["seed"] if jackpot_seats else 0
    meter = {"before": before, "contributions": contributions, "awards": jackpot_paid,
             "reseed": reseed, "after": total - jackpot_paid + reseed}

    return {
        "settlements": settlements,
        "progressive": progressive_out,
        "meter": meter,
        "hands": {str(recipient): classes[recipient] for recipient in [*seats, "dealer"]},
    }


# --------------------------------------------------------------------------------------------


def settle(scenario: dict[str, Any], paytables: dict[str, Any], progressive: dict[str, Any], *,
           dealer_option: int = 0) -> dict[str, Any]:
    """Settle one scenario (docs/scenarios.md).

    ``dealer_option`` picks among equally valid Three Card house-way discards (see
    :func:`house_way_options`); 0 is the canonical choice.
    """
    if scenario["game"] == "cali_lowball":
        return _settle_cali(scenario, paytables)
    if scenario["game"] == "three_card_lowball":
        return _settle_three_card(scenario, paytables, progressive, dealer_option)
    raise ValueError(f"unknown game {scenario['game']!r}")


def dealt_dealer_options(scenario: dict[str, Any]) -> int:
    """How many house-way discard options the Three Card dealer had in this scenario."""
    if scenario["game"] != "three_card_lowball":
        return 1
    shoe = [parse_card(text) for text in scenario["shoe"]]
    count = len(scenario["seats"]) + 1
    dealer_cards = [shoe[round_ * count + count - 1] for round_ in range(3)]
    return len(house_way_options(dealer_cards))


__all__ = ["settle", "five_card_key", "five_card_class", "three_card_key", "three_card_class",
           "house_way_options", "is_4_2_a", "dealt_dealer_options", "Card"]

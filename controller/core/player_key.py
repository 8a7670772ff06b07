"""One player, however the id is written: its key, and the one-script rule (Unicode TR39).

A player id reaches the four-spot limit and the floor's ratings. Two ids that look the same
must count as one player: "P-1", "p-1", "Р-1" (Cyrillic Er) and "Ρ-1" (Greek Rho) all do.
:func:`player_key` is the id's TR39 skeleton ("Unicode Security Mechanisms", section 4) taken
after Unicode's compatibility normalisation and case folding; the table and the floor group
players by it, and show the id as the table wrote it.

:func:`script_problem` is TR39's "highly restrictive" rule (section 5.2): an id writes in one
script (digits and the punctuation belong to every script), or in Latin with Han and the
Japanese kana, with Han and Bopomofo, or with Han and Hangul. A Greek, Cyrillic, Korean or
Japanese player is a player; "Pаul" with a Cyrillic "а" is refused.

Case and likeness cannot make one key: Cyrillic "В" looks like Latin "B" and "в" is its small
letter, but "в" looks like no "b" (merging every such pair makes one letter of many). So an
id has two: :func:`player_key` folds case first (the floor's ratings group by it), and
:func:`key_as_written` maps each capital as written (TR39's own skeleton, case-folded after:
"ВНМТ-7" and "BHMT-7" are one, "aIice" and "alice" too). Two ids are one player when either
key is the same, or the key of the two in capitals ("kim-7" and Cyrillic "КІМ-7":
:func:`one_player_each`, the four-spot limit; names are compared so too).

The tables are generated from Unicode's data (``player_key_gen.py``, run by hand).
"""

from __future__ import annotations

import functools
import unicodedata
from bisect import bisect_right
from collections.abc import Mapping
from functools import lru_cache
from typing import TypeVar

from controller.core.player_key_data import (
    PROTOTYPES,
    SCRIPT_NAMES,
    SCRIPT_SETS,
    SCRIPT_STARTS,
)

#: Common and Inherited: the characters every script uses (digits, punctuation, accents).
_EVERY_SCRIPT = (frozenset({"Zyyy"}), frozenset({"Zinh"}))
#: TR39's augmented script sets: Han, kana and Hangul are also the writing systems they make.
_AUGMENTED = {"Hani": ("Hanb", "Jpan", "Kore"), "Hira": ("Jpan",), "Kana": ("Jpan",),
              "Hang": ("Kore",), "Bopo": ("Hanb",)}
#: The mixes of scripts a "highly restrictive" id may write in (TR39 5.2).
_ALLOWED_MIXES = (frozenset({"Latn", "Hani", "Hira", "Kana"}), frozenset({"Latn", "Hani", "Bopo"}),
                  frozenset({"Latn", "Hani", "Hang"}))


def player_key(player: str) -> str:
    """The key one player's ids share: ``player`` case-folded, in Unicode's compatibility
    form, each character replaced by the one it looks like (TR39's prototype). The key of a
    key is the key itself."""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", player).casefold())
    return unicodedata.normalize("NFKD", "".join(PROTOTYPES.get(char, char) for char in folded))


def key_as_written(player: str) -> str:
    """The key of ``player`` as written: each character, a capital as it is, replaced by the
    one it looks like (TR39's skeleton), then case-folded. The key of a key is the key."""
    written = unicodedata.normalize("NFKD", player)
    return unicodedata.normalize("NFKD", "".join(PROTOTYPES.get(char, char) for char in written))


def _key_in_capitals(player: str) -> str:
    """The key of ``player`` written in capitals: "kim-7" and Cyrillic "КІМ-7" share no other
    key, but both are "KIM-7" to the eye."""
    return key_as_written(player.upper())


#: Pairs of Latin letters that draw another letter, which TR39 does not list (it has rn for
#: m): read as that letter in every key.
DRAWN_AS = (("vv", "w"), ("cl", "d"))


@functools.lru_cache(maxsize=1024)  # a table's regulars lock hand after hand
def lookalike_keys(player: str) -> tuple[str, str, str]:
    """Every key ``player`` is compared by: case-folded (:func:`player_key`), as written
    (:func:`key_as_written`) and in capitals, each with :data:`DRAWN_AS` read as the letter
    drawn. Two ids are one player when one of them is the same."""
    keys = [player_key(player), key_as_written(player), _key_in_capitals(player)]
    for pair, letter in DRAWN_AS:
        keys = [key.replace(pair, letter) for key in keys]
    return keys[0], keys[1], keys[2]


Seat = TypeVar("Seat")


def one_player_each(players: Mapping[Seat, str]) -> list[dict[Seat, str]]:
    """``players`` (a seat -> the id written there) grouped into players: two ids are one when
    one of their :func:`lookalike_keys` is the same, and so is a third that is one with either
    of them. Groups in the order of their first seat."""
    seats = list(players)
    group = {seat: index for index, seat in enumerate(seats)}

    def root(seat: Seat) -> int:
        index = group[seat]
        while group[seats[index]] != index:
            index = group[seats[index]]
        return index

    keyed = {seat: lookalike_keys(players[seat]) for seat in seats}
    for which in range(3):
        first: dict[str, Seat] = {}
        for seat in seats:
            other = first.setdefault(keyed[seat][which], seat)
            low, high = sorted((root(seat), root(other)))
            group[seats[high]] = low
    grouped: dict[int, dict[Seat, str]] = {}
    for seat in seats:
        grouped.setdefault(root(seat), {})[seat] = players[seat]
    return list(grouped.values())


@lru_cache(maxsize=4096)
def scripts_of(char: str) -> frozenset[str]:
    """The scripts ``char`` is written in (Unicode's Script_Extensions, ISO 15924 codes):
    ``{"Zyyy"}`` (Common) or ``{"Zinh"}`` (Inherited) for one every script uses."""
    return frozenset(SCRIPT_SETS[bisect_right(SCRIPT_STARTS, ord(char)) - 1].split())


def script_problem(player: str) -> str | None:
    """Why ``player`` is not written in one script (TR39 "highly restrictive"), or None."""
    found = [scripts for scripts in map(scripts_of, player) if scripts not in _EVERY_SCRIPT]
    common = None
    for scripts in found:
        augmented = scripts.union(*(_AUGMENTED.get(script, ()) for script in scripts))
        common = augmented if common is None else common & augmented
    if common is None or common:
        return None
    if any(all(scripts & mix for scripts in found) for mix in _ALLOWED_MIXES):
        return None
    named = dict.fromkeys(" or ".join(sorted(SCRIPT_NAMES.get(code, code) for code in scripts))
                          for scripts in found)
    return (f"mixes the scripts {', '.join(named)}: a player id writes in one script (Latin "
            f"may join Han with Japanese kana, Bopomofo or Hangul)")

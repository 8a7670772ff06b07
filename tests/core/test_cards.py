import pytest

from controller.core.cards import (
    DECK,
    Card,
    CardError,
    find_duplicate,
    format_cards,
    parse_card,
    parse_cards,
)


def test_deck_has_52_distinct_cards() -> None:
    assert len(DECK) == 52 and len(set(DECK)) == 52
    assert [card.index for card in DECK] == list(range(52))


@pytest.mark.parametrize("text, printed", [
    ("As", "As"), ("Td", "Td"), ("10d", "Td"), ("10D", "Td"), ("kh", "Kh"), (" 7c ", "7c"),
    ("2S", "2s"), ("aS", "As"),
])
def test_parse_accepts_the_written_forms(text: str, printed: str) -> None:
    assert str(parse_card(text)) == printed


def test_parse_returns_the_one_card_object() -> None:
    assert parse_card("As") is parse_card("aS") is DECK[39]


@pytest.mark.parametrize("text, says", [
    ("1s", "rank '1'"), ("Ax", "suit 'x'"), ("", "empty card"), ("11d", "rank '11'"),
    ("Joker", "unknown card"), ("A", "unknown card"),
])
def test_parse_rejects_with_a_reason(text: str, says: str) -> None:
    with pytest.raises(CardError, match=says):
        parse_card(text)


@pytest.mark.parametrize("value", [None, 14, b"As", ["As"]])
def test_parse_rejects_non_text(value: object) -> None:
    with pytest.raises(CardError, match="must be written as text"):
        parse_card(value)


def test_parse_cards_reads_lists_and_strings() -> None:
    assert format_cards(parse_cards("As,7d 10c")) == "As 7d Tc"
    assert parse_cards(["Kh", "2c"]) == (Card(13, "h"), Card(2, "c"))


def test_colour_and_duplicates() -> None:
    assert parse_card("Ah").is_red and parse_card("Ad").is_red
    assert not parse_card("As").is_red and not parse_card("Ac").is_red
    assert find_duplicate(parse_cards("As Kd As")) == parse_card("As")
    assert find_duplicate(parse_cards("As Kd")) is None

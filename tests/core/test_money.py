from fractions import Fraction

import pytest

from controller.core.money import MoneyError, Odds, format_cents, format_rate, parse_rate


@pytest.mark.parametrize("text, stake, paid", [
    ("1:1", 1000, 1000), ("10:1", 2500, 25000), ("3:2", 1000, 1500), ("3:2", 105, 157),
    ("250:1", 500, 125000), ("12 to 1", 100, 1200), ("6:5", 1, 1),
])
def test_payout_is_exact_and_rounds_down(text: str, stake: int, paid: int) -> None:
    assert Odds.parse(text).payout(stake) == paid


@pytest.mark.parametrize("text", ["10", "1.5:1", "-1:1", "1:0", "a:b", "", "10:1:1"])
def test_bad_odds_are_named(text: str) -> None:
    with pytest.raises(MoneyError, match="odds"):
        Odds.parse(text)


def test_rates_are_exact_fractions() -> None:
    assert parse_rate("20%") == Fraction(1, 5)
    assert parse_rate("12.5%") == Fraction(1, 8)
    assert format_rate(Fraction(1, 8)) == "12.5%"
    for bad in ["20", "0.2", "150%", "x%"]:
        with pytest.raises(MoneyError):
            parse_rate(bad)
    with pytest.raises(MoneyError):
        parse_rate(0.2)


def test_format_cents() -> None:
    assert format_cents(0) == "$0.00"
    assert format_cents(1234567) == "$12,345.67"
    assert format_cents(-150) == "-$1.50"

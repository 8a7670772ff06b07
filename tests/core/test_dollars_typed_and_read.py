"""Dollars where a person types or reads an amount, cents everywhere else.

Origin: a dealer typed ``dealer place 3 ante 5.00`` and was told "Input should be a valid
integer"; refusals read ``ante 100 is outside the table limits 500 to 100000``."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.core.money import MAX_TYPED_CENTS, MoneyError, format_cents, parse_dollars

amounts = st.integers(min_value=1, max_value=MAX_TYPED_CENTS)


@given(amounts)
def test_an_amount_read_back_as_typed_is_the_same_amount(cents: int) -> None:
    assert parse_dollars(format_cents(cents)) == cents


@given(st.integers(min_value=-MAX_TYPED_CENTS, max_value=MAX_TYPED_CENTS))
def test_a_signed_amount_reads_back_where_negatives_are_allowed(cents: int) -> None:
    assert parse_dollars(format_cents(cents), negative=True, zero=True) == cents


@given(amounts)
def test_plain_dollars_and_cents_read_as_typed(cents: int) -> None:
    dollars, part = divmod(cents, 100)
    assert parse_dollars(f"{dollars}.{part:02d}") == cents
    if part == 0:
        assert parse_dollars(str(dollars)) == cents
        assert parse_dollars(f"${dollars}") == cents


@pytest.mark.parametrize("typed, cents", [
    ("25", 2500), ("25.50", 2550), ("25.5", 2550), ("$25", 2500), ("$1,000", 100000),
    ("0.01", 1), (" 7 ", 700), ("1,000.25", 100025),
])
def test_what_people_type(typed: str, cents: int) -> None:
    assert parse_dollars(typed) == cents


@pytest.mark.parametrize("typed, named", [
    ("25.505", "more than two decimals"), ("-25", "negative"), ("-$25", "negative"),
    ("0", "zero"), ("$0.00", "zero"), ("1e3", "not an amount in dollars"),
    ("", "not an amount in dollars"), ("25 dollars", "not an amount in dollars"),
    ("1,00", "not an amount in dollars"), ("$$5", "not an amount in dollars"),
    ("99999999999999999999", "more than $10,000,000,000.00"),
    ("10000000000.01", "more than $10,000,000,000.00"), ("NaN", "not an amount in dollars"),
    ("\u0661\u0662", "not an amount in dollars"),
])
def test_a_bad_amount_is_refused_in_one_line_naming_it(typed: str, named: str) -> None:
    with pytest.raises(MoneyError) as refused:
        parse_dollars(typed)
    message = str(refused.value)
    assert named in message and repr(typed) in message and "\n" not in message


def test_a_typed_amount_is_bounded_by_the_caller() -> None:
    with pytest.raises(MoneyError, match=r"'\$101' is more than \$100.00"):
        parse_dollars("$101", limit=10000)
    assert parse_dollars("-0", negative=True, zero=True) == 0


def test_a_huge_input_is_refused_quickly_and_not_repeated_whole() -> None:
    with pytest.raises(MoneyError) as refused:
        parse_dollars("9" * 100_000)
    assert len(str(refused.value)) < 200

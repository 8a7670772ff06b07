"""A supervisor signs in on the console and voids a hand or verifies a jackpot; the journal
names that supervisor. The dealer's screen never shows a supervisor's button, and a
supervisor's command from a screen nobody signed in on is refused."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import TYPE_CHECKING, Any

from controller.console.sessions import FAILURES, Sessions
from controller.settings.scenario import load_scenario

from tests.support.console import SUPERVISORS, ScreenFactory, TableFactory, shot
from tests.support.rig import SCENARIOS
from tests.support.supervisor_screen import sign_in, start_hand
from tests.support.waits import wait_for


if TYPE_CHECKING:   # the browser tests skip, not fail, where Playwright is missing
    from playwright.sync_api import Page


def post_sign_in(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url + "api/sign-in", data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            answer: dict[str, Any] = json.loads(reply.read())
            return reply.status, answer
    except urllib.error.HTTPError as error:
        refusal: dict[str, Any] = json.loads(error.read())
        return error.code, refusal


def test_a_supervisor_voids_with_a_reason_and_the_journal_names_them(table: TableFactory,
                                                                     screen: ScreenFactory) -> None:
    rig, console = table("cali_lowball")
    start_hand(rig)
    rig.deal_one()
    dealer = screen(console.url)
    dealer.wait_for_selector('.spot[data-spot="3"] .card')
    assert dealer.locator('[data-action="void"]').count() == 0    # the dealer cannot see it
    supervisor = screen(console.url)
    sign_in(supervisor, console.url, "Alice", SUPERVISORS["Alice"])
    supervisor.wait_for_selector('body[data-role="supervisor"] [data-action="void"]')
    assert "Supervisor Alice" in supervisor.inner_text("#supervisor")
    supervisor.fill("#void-reason", "card exposed on the floor")
    shot(supervisor, "supervisor-void")
    supervisor.tap('[data-action="void"]')
    wait_for(lambda: rig.events("hand_voided"), "the void")
    voided = rig.events("hand_voided")[0].data
    assert (voided.by, voided.reason) == ("Alice", "card exposed on the floor")
    dealer.wait_for_selector("#banner:has-text('place wagers')")
    assert dealer.locator('[data-action="void"]').count() == 0
    cookies = supervisor.context.cookies()
    assert all(SUPERVISORS["Alice"] not in cookie["value"] for cookie in cookies)
    assert all(cookie["httpOnly"] for cookie in cookies)


def test_a_pending_jackpot_holds_the_screen_until_a_supervisor_verifies_it(
        table: TableFactory, screen: ScreenFactory) -> None:
    rig, console = table("three_card_lowball")
    assert rig.ask({"command": "open"})["ok"]
    rig.play(load_scenario(SCENARIOS / "tcl_prog_jackpot.json"))
    wait_for(lambda: rig.events("jackpot_pending"), "the jackpot")
    page = screen(console.url)
    page.wait_for_selector("#jackpot:not([hidden])")
    assert "JACKPOT" in page.inner_text("#banner")
    assert page.locator('[data-action="verify_jackpot"]').count() == 0
    assert page.locator('#table-actions [data-action]').count() == 0    # the table is held
    shot(page, "dealer-jackpot")
    sign_in(page, console.url, "Bob", SUPERVISORS["Bob"])
    page.wait_for_selector('body[data-role="supervisor"]')
    page.tap('[data-action="verify_jackpot"]')
    wait_for(lambda: rig.events("jackpot_verified"), "the verification")
    assert rig.events("jackpot_verified")[0].data.by == "Bob"
    page.wait_for_selector("#jackpot[hidden]", state="attached")


def test_failed_sign_ins_lock_the_screen_out_and_raise_the_tables_alarm(
        table: TableFactory) -> None:
    rig, console = table("cali_lowball")
    status, answer = post_sign_in(console.url, {"name": "Alice", "credential": "not-it-at-all"})
    assert status == 401 and answer["error"] == "the supervisor credential is not valid"
    for _ in range(FAILURES - 1):
        post_sign_in(console.url, {"name": "Alice", "credential": "not-it-at-all"})
    status, answer = post_sign_in(console.url, {"name": "Alice",
                                                "credential": SUPERVISORS["Alice"]})
    assert status == 429 and "locked" in answer["error"]
    wait_for(lambda: rig.events("alarm"), "the alarm")
    assert rig.events("alarm")[0].data.code == "credential_failures"
    status, answer = post_sign_in(console.url, {"name": "Alice", "credential": "x" * 300})
    assert status == 429                          # still locked: nothing reaches the table


def test_a_sign_in_is_hostile_input_too(table: TableFactory) -> None:
    rig, console = table("cali_lowball")
    for body, said in [({"name": "<b>", "credential": "long-enough"}, "name"),
                       ({"name": "Alice", "credential": "x" * 300}, "credential"),
                       ({"name": "Alice", "credential": "long-enough", "role": "boss"},
                        "role")]:
        status, answer = post_sign_in(console.url, body)
        assert status == 400 and said in answer["error"], answer
        assert "long-enough" not in answer["error"]        # never repeats a credential
    assert rig.events("command_refused") == []


def test_a_session_expires_and_ends_at_sign_out() -> None:
    now = [0.0]
    sessions = Sessions(1, {"Alice": "0" * 64}, clock=lambda: now[0])
    token, session = sessions.open("Alice", "credential-text")
    assert sessions.get(token) is session and session.name == "Alice"
    now[0] = 59.0
    assert sessions.get(token) is session
    now[0] = 60.0
    assert sessions.get(token) is None
    token, _ = sessions.open("Alice", "credential-text")
    sessions.close(token)
    assert sessions.get(token) is None
    assert sessions.get("forged-token") is None and sessions.get(None) is None


def test_a_lock_out_ends_after_its_time() -> None:
    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    for _ in range(FAILURES):
        sessions.failed("10.0.0.9")
    assert sessions.locked_for("10.0.0.9") > 0 and sessions.locked_for("10.0.0.8") == 0
    now[0] = 301.0
    assert sessions.locked_for("10.0.0.9") == 0


def test_failures_under_one_name_from_many_addresses_hold_no_one_out() -> None:
    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    for address in range(5):                       # "alice" guessed from five machines
        sessions.failed(f"10.0.0.{address}")
    # The table checks a credential against every supervisor's whatever the name: holding
    # a name would slow no guesser, and would let anyone keep her out.
    assert sessions.locked_for("10.0.0.77") == 0
    assert all(sessions.locked_for(f"10.0.0.{address}") == 0 for address in range(5))


def test_the_failure_book_stays_bounded_whatever_the_addresses() -> None:
    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    for n in range(5000):
        sessions.failed(f"10.{n // 250}.{n % 250}.1")
    assert len(sessions._failures) <= 4 * 64


def test_a_console_under_a_guesser_checks_one_sign_in_every_few_seconds_then_recovers() -> None:
    from controller.console.sessions import CONSOLE_FAILURES, SPACING_S, WINDOW_S

    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    for guess in range(CONSOLE_FAILURES):          # each from its own machine, its own name
        assert sessions.locked_for(f"10.1.{guess}.1") == 0
        sessions.failed(f"10.1.{guess}.1")
    assert sessions.locked_for("10.9.9.9") == SPACING_S   # anyone waits now
    now[0] += SPACING_S
    assert sessions.locked_for("10.9.9.9") == 0            # one check, then wait
    now[0] += WINDOW_S
    assert sessions.locked_for("10.9.9.9") == 0            # the guesser gone


def _under_a_guesser(sessions: Sessions, now: list[float]) -> None:
    from controller.console.sessions import CONSOLE_FAILURES

    for guess in range(CONSOLE_FAILURES):
        sessions.failed(f"10.1.{guess}.1")
    assert sessions.locked_for("10.9.9.9") > 0


def test_a_screen_that_signed_in_before_is_not_slowed_by_a_guesser_elsewhere() -> None:
    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    sessions.signed_in_from("10.0.0.7")             # the supervisor's podium, this morning
    now[0] += 3600.0
    _under_a_guesser(sessions, now)
    assert sessions.locked_for("10.0.0.7") == 0
    sessions.failed("10.0.0.7")                     # a typo there: still hers
    assert sessions.locked_for("10.0.0.7") == 0
    for _ in range(FAILURES - 1):                   # a guesser at her podium: locked out
        sessions.failed("10.0.0.7")
    assert sessions.locked_for("10.0.0.7") > 0
    sessions.signed_in_from("10.0.0.8", "dealer")   # a dealer's account trusts no screen
    assert sessions.locked_for("10.0.0.8") > 0


def test_the_turns_go_first_to_who_never_failed_then_in_order_of_waiting() -> None:
    from controller.console.sessions import SPACING_S

    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    _under_a_guesser(sessions, now)                 # 10.9.9.9 waits first
    for guesser in range(5):
        assert sessions.locked_for(f"10.6.6.{guesser}") > 0
    now[0] += SPACING_S
    assert sessions.locked_for("10.6.6.0") > 0      # its turn is not first
    assert sessions.locked_for("10.9.9.9") == 0
    assert sessions.locked_for("10.9.9.9") == 0   # the same request asks again
    sessions.failed("10.9.9.9")
    now[0] += SPACING_S
    assert sessions.locked_for("10.9.9.9") > 0      # to the back of the line
    assert sessions.locked_for("10.6.6.0") == 0


def test_the_line_of_waiting_networks_stays_bounded() -> None:
    from controller.console.sessions import MAX_WAITING

    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    _under_a_guesser(sessions, now)
    for n in range(MAX_WAITING + 500):
        assert sessions.locked_for(f"10.{n // 250}.{n % 250}.2") > 0
    assert len(sessions._line) <= MAX_WAITING


def test_a_full_line_gives_the_places_of_those_that_stopped_asking() -> None:
    from controller.console.sessions import MAX_WAITING, SPACING_S

    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    _under_a_guesser(sessions, now)
    guessers = [f"10.{n // 250}.{n % 250}.3" for n in range(MAX_WAITING - 1)]
    for guesser in guessers:                       # the line full, all still asking
        assert sessions.locked_for(guesser) > 0
    assert len(sessions._line) == MAX_WAITING      # (10.9.9.9 asked first)
    assert sessions.locked_for("192.0.2.7") == SPACING_S   # no place: she is told to wait
    assert "192.0.2.7" not in sessions._line
    now[0] += SPACING_S + 1                        # the guessers stop asking; she asks on
    assert sessions.locked_for("192.0.2.7") == 0   # a quiet place is hers, and the turn


def test_one_ipv6_site_is_one_place_in_line_and_each_address_its_own_lock_out() -> None:
    from controller.console.sessions import SPACING_S, network_of

    assert network_of("2001:db8:1:2::1") == network_of("2001:db8:1:ffff::9") \
        == "2001:db8:1::/48"
    assert network_of("2001:db8:2::1") != network_of("2001:db8:1::1")
    assert network_of("::ffff:10.0.0.7") == "10.0.0.7"
    assert network_of("10.0.0.7") == "10.0.0.7"
    now = [0.0]
    sessions = Sessions(15, {}, clock=lambda: now[0])
    for _ in range(FAILURES):                      # one device on the LAN fails five times
        sessions.failed("2001:db8::1")
    assert sessions.locked_for("2001:db8::1") > 0  # it is locked out
    assert sessions.locked_for("2001:db8::2") == 0   # its neighbour is not
    _under_a_guesser(sessions, now)
    now[0] += SPACING_S
    for host in range(40):                         # a site's many addresses wait as one
        sessions.locked_for(f"2001:db8:1:{host:x}::1")
    assert [network for network in sessions._line if network.startswith("2001")] \
        == ["2001:db8:1::/48"]

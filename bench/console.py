"""The console, measured as a dealer sees it: a card's frame written to the shoe -> the card
drawn on the dealer's screen in a real browser (Debian's Chromium, driven by Playwright),
through the daemon process, the event stream, the console process and its WebSocket. Also
the console's resident memory and idle CPU beside the daemon's.

    python -m bench.console [--cards 300]

The shoe simulator notes the wall-clock time just before it writes each card's frame; the
page notes the wall-clock time (``performance.timeOrigin + performance.now()``) at which a
card it did not show before is in the document, from a MutationObserver added before the
page's own script. Each card is dealt once the previous one is on the screen, as a dealer
deals. The first hand warms up and is not counted.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.pipeline import DaemonProcess, cpu_seconds, rss_kib, summary

CHROMIUM = os.environ.get("LOWBALL_CHROMIUM", "/usr/bin/chromium")
TARGET_P99_MS = 100.0
DEADLINE_S = 10.0
#: Records, in the page, when each card first shows (cards of the last hand vanish at the
#: next hand's start, so a card seen again in a later hand counts again).
OBSERVER = """
window.__cards = [];
let shown = new Set();
new MutationObserver(() => {
  const now = performance.timeOrigin + performance.now();
  const present = new Set(Array.from(document.querySelectorAll('.card[data-card]'),
                                     (n) => n.dataset.card));
  for (const card of present) if (!shown.has(card)) window.__cards.push([card, now]);
  shown = present;
}).observe(document, {subtree: true, childList: true});
"""


class ConsoleProcess:
    def __init__(self, table_config: Path):
        config = table_config.parent / "console.toml"
        config.write_text(f'table_config = "{table_config}"\nhost = "127.0.0.1"\nport = 0\n')
        self.process = subprocess.Popen(
            [sys.executable, "-m", "controller.cli.main", "console", "--config", str(config)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line.startswith("console: "):
            self.close()
            raise RuntimeError(f"the console did not start: {line!r}")
        self.url = line.split()[1]

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def run(cards: int = 300, idle_seconds: float = 10.0, verbose: bool = True) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    from drivers.lbs1 import FrameParser

    daemon = DaemonProcess("three_card_lowball")
    parser = FrameParser()
    written: list[float] = []

    def tap(direction: str, data: bytes) -> None:
        if direction == "tx":
            now = time.time() * 1000       # just before the write
            if any(getattr(item, "type", None) == "C" for item in parser.feed(data)):
                written.append(now)

    daemon.shoe.tap = tap
    console = ConsoleProcess(Path(daemon.config))
    latencies: list[float] = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                                 args=["--no-sandbox", "--disable-gpu"])
            # bypass_csp: Playwright's waiting evaluates its predicate, which the console's
            # policy (no eval) would refuse; the page's own script is the same.
            page = browser.new_page(viewport={"width": 1280, "height": 800}, bypass_csp=True)
            page.add_init_script(OBSERVER)
            page.goto(console.url)
            page.wait_for_selector("body[data-seq]")
            assert daemon.ask({"command": "open"})["ok"]
            hands = 0
            while len(latencies) < cards:
                counted = hands > 0
                latencies += [t for t in _hand(daemon, page, written) if counted]
                hands += 1
            console_rss = rss_kib(console.process.pid)
            daemon_rss = rss_kib(daemon.process.pid)
            cpu0 = (cpu_seconds(console.process.pid), cpu_seconds(daemon.process.pid))
            wall0 = time.monotonic()
            time.sleep(idle_seconds)          # idle: the measurement is the waiting itself
            wall = time.monotonic() - wall0
            idle = (100 * (cpu_seconds(console.process.pid) - cpu0[0]) / wall,
                    100 * (cpu_seconds(daemon.process.pid) - cpu0[1]) / wall)
            browser.close()
    finally:
        console.close()
        daemon.close()
    result = {"card_ms": summary(latencies), "console_rss_kib": console_rss,
              "daemon_rss_kib": daemon_rss, "console_idle_cpu_pct": idle[0],
              "daemon_idle_cpu_pct": idle[1], "idle_seconds": idle_seconds}
    if verbose:
        show(result)
    return result


def _hand(daemon: DaemonProcess, page: Any, written: list[float]) -> list[float]:
    """One Three Card Lowball hand at three spots, every card dealt once the previous one is
    on the screen; the latency of each."""
    daemon.shoe.device.load(seed=len(written))
    for spot in (1, 2, 3):
        for wager in ("ante", "bonus"):
            assert daemon.ask({"command": "place", "spot": spot, "wager": wager,
                               "amount": 500})["ok"]
    assert daemon.ask({"command": "lock"})["ok"]
    latencies = []
    while (state := daemon.ask({"command": "status"})["state"])["hand"] is not None:
        step = state["hand"]["next"]
        if step["kind"] == "decision":
            assert daemon.ask({"command": "decide", "spot": step["seats"][0],
                               "decision": "stand"})["ok"]
            continue
        seen = page.evaluate("window.__cards.length")
        before = len(written)
        daemon.shoe.device.deal(1)
        page.wait_for_function("(seen) => window.__cards.length > seen", arg=seen,
                               timeout=DEADLINE_S * 1000, polling="raf")
        shown_at = page.evaluate(f"window.__cards[{seen}][1]")
        latencies.append(shown_at - written[before])
    return latencies


def show(result: dict[str, Any]) -> None:
    card = result["card_ms"]
    verdict = "met" if card["p99"] < TARGET_P99_MS else "NOT met"
    print(f"  card frame at the shoe -> card on the dealer's screen (Chromium, {card['n']} cards)")
    print(f"    median {card['median']:.1f} ms   p99 {card['p99']:.1f} ms   max "
          f"{card['max']:.1f} ms   (target p99 < {TARGET_P99_MS:.0f} ms: {verdict})")
    print(f"  resident memory   console {result['console_rss_kib'] / 1024:.1f} MiB   daemon "
          f"{result['daemon_rss_kib'] / 1024:.1f} MiB")
    print(f"  idle CPU over {result['idle_seconds']:.0f} s, a screen connected   console "
          f"{result['console_idle_cpu_pct']:.2f} %   daemon {result['daemon_idle_cpu_pct']:.2f} %")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.console", description=__doc__)
    parser.add_argument("--cards", type=int, default=300)
    parser.add_argument("--idle", type=float, default=10.0)
    args = parser.parse_args(argv)
    run(args.cards, args.idle)


if __name__ == "__main__":
    main()

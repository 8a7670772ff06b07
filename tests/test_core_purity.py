"""The core (cards, rankings, engines, table, settlement, scenarios) imports no device or
network library: it is driven by cards and decisions alone."""

import subprocess
import sys

CORE = ["controller.cards", "controller.rankings", "controller.games", "controller.table",
        "controller.scenario", "controller.table_config", "controller.events",
        "controller.table_events", "controller.table_commands", "controller.par.cali_lowball",
        "controller.par.three_card_lowball", "controller.par.report"]


def test_core_imports_no_serial_usb_or_zmq():
    code = ("import sys\n" + "".join(f"import {module}\n" for module in CORE) +
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'serial', 'usb', 'zmq'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

"""The unit, sysusers and udev files: valid for systemd, and consistent with each other.

``systemd-analyze verify`` exits 0 on an unknown or misspelt key (it only warns), so the
verify test also fails on any output naming the unit, and a companion test proves that a
typo is caught.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

import pytest

from drivers.config import DEFAULT_USB_PRODUCT_ID, DEFAULT_USB_VENDOR_ID

from tests.support.systemd import ROOT, SYSTEMD_DIR, UNIT, require_tool
from tests.support.waits import DEADLINE_S

SYSUSERS = SYSTEMD_DIR / "sysusers.d" / "lowball-table.conf"
UDEV_RULES = SYSTEMD_DIR / "udev" / "99-lowball-table.rules"
INSTALLED_BINARY = "/usr/bin/lowball-table"


def unit_settings(text: str) -> dict[str, list[str]]:
    """Key -> every value it is given (DeviceAllow= and friends may repeat)."""
    settings: dict[str, list[str]] = defaultdict(list)
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", ";", "[")):
            key, _, value = line.partition("=")
            settings[key.strip()].append(value.strip())
    return settings


def existing_executable() -> str:
    """Something executable to stand in for /usr/bin/lowball-table: the venv's console script
    when there is one, else true(1)."""
    script = Path(sys.executable).with_name("lowball-table")
    return str(script) if script.exists() else shutil.which("true") or "/bin/true"


#: Every unit the project ships: the table daemon, its console, the floor service.
UNITS = sorted(SYSTEMD_DIR.glob("*.service"))
CONSOLE_UNIT = SYSTEMD_DIR / "lowball-table-console.service"
FLOOR_UNIT = SYSTEMD_DIR / "lowball-floor.service"


def verify_copy(unit_text: str, directory: Path, unit: Path = UNIT) -> list[str]:
    """Run ``systemd-analyze verify`` on a copy of the unit; the lines it says about it.

    verify fails a unit whose ExecStart binary does not exist ("Command ... is not
    executable"), and /usr/bin/lowball-table exists only on an installed table PC. The copy
    runs the same arguments with a binary that exists here; everything else is verbatim.
    """
    analyze = require_tool("systemd-analyze")
    assert unit_text.count(f"ExecStart={INSTALLED_BINARY} ") == 1
    copy = directory / unit.name  # verify wants the real unit name and suffix
    copy.write_text(unit_text.replace(f"ExecStart={INSTALLED_BINARY} ",
                                      f"ExecStart={existing_executable()} "))
    result = subprocess.run([analyze, "verify", "--man=no", str(copy)], capture_output=True,
                            text=True, timeout=DEADLINE_S)
    about_unit = [line for line in (result.stdout + result.stderr).splitlines()
                  if unit.name in line]
    if result.returncode != 0:
        about_unit.append(f"exit status {result.returncode}: {result.stderr.strip()}")
    return about_unit


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_systemd_analyze_verify_is_clean(tmp_path: Path, unit: Path) -> None:
    assert verify_copy(unit.read_text(), tmp_path, unit) == []


def test_the_units_are_the_three_the_docs_install() -> None:
    assert [unit.name for unit in UNITS] == ["lowball-floor.service",
                                             "lowball-table-console.service",
                                             "lowball-table.service"]
    install = (ROOT / "docs" / "install.md").read_text()
    assert all(unit.name in install for unit in UNITS)


@pytest.mark.parametrize("unit", [CONSOLE_UNIT, FLOOR_UNIT], ids=lambda unit: unit.name)
def test_the_network_services_see_no_device_and_keep_no_state(unit: Path) -> None:
    """The console and the floor service drive no device and hold nothing a restart loses."""
    settings = unit_settings(unit.read_text())
    assert settings["PrivateDevices"] == ["yes"] and "DeviceAllow" not in settings
    assert "SupplementaryGroups" not in settings and "StateDirectory" not in settings
    assert settings["User"] == ["lowball-table"] and settings["NoNewPrivileges"] == ["yes"]
    assert settings["CapabilityBoundingSet"] == [""]
    assert "AF_NETLINK" not in settings["RestrictAddressFamilies"][0].split()
    command = settings["ExecStart"][0].split()
    assert command[:2] == [INSTALLED_BINARY, "console" if unit == CONSOLE_UNIT else "floor"]


def test_the_console_starts_after_the_daemon() -> None:
    after = unit_settings(CONSOLE_UNIT.read_text())["After"][0].split()
    assert "lowball-table.service" in after


def test_verify_check_catches_a_misspelt_key(tmp_path: Path) -> None:
    text = UNIT.read_text().replace("LockPersonality=yes", "LockPersonalty=yes")
    problems = verify_copy(text, tmp_path)
    assert any("Unknown key" in line and "LockPersonalty" in line for line in problems), problems


def test_sysusers_creates_the_user_in_dialout_and_plugdev(tmp_path: Path) -> None:
    sysusers = require_tool("systemd-sysusers")
    (tmp_path / "etc").mkdir()
    subprocess.run([sysusers, f"--root={tmp_path}", str(SYSUSERS)], check=True,
                   capture_output=True, timeout=DEADLINE_S)
    passwd = (tmp_path / "etc" / "passwd").read_text()
    assert re.search(r"^lowball-table:x:\d+:\d+:Lowball table controller:", passwd, re.M)
    groups = {line.split(":")[0]: line.split(":")[3].split(",")
              for line in (tmp_path / "etc" / "group").read_text().splitlines()}
    for group in unit_settings(UNIT.read_text())["SupplementaryGroups"][0].split():
        assert "lowball-table" in groups[group], group


def test_unit_keeps_what_the_daemon_and_devices_need() -> None:
    settings = unit_settings(UNIT.read_text())
    assert settings["Type"] == ["notify"] and settings["NotifyAccess"] == ["main"]
    assert settings["WatchdogSec"] and settings["StateDirectory"] == ["lowball-table"]
    # PrivateDevices= would hide /dev/ttyUSB* and /dev/bus/usb from the drivers.
    assert "PrivateDevices" not in settings
    assert settings["DevicePolicy"] == ["closed"]
    assert {"char-ttyUSB rw", "char-ttyACM rw", "char-ttyS rw",
            "char-usb_device rw"} <= set(settings["DeviceAllow"])
    assert {"dialout", "plugdev"} <= set(settings["SupplementaryGroups"][0].split())


def test_udev_rule_matches_the_shoe_defaults_and_the_unit_groups() -> None:
    rules = [line for line in UDEV_RULES.read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert len(rules) == 1
    rule = rules[0]
    assert f'ATTR{{idVendor}}=="{DEFAULT_USB_VENDOR_ID:04x}"' in rule
    assert f'ATTR{{idProduct}}=="{DEFAULT_USB_PRODUCT_ID:04x}"' in rule
    group = re.search(r'GROUP="([^"]+)"', rule)
    assert group is not None
    assert group.group(1) in unit_settings(UNIT.read_text())["SupplementaryGroups"][0].split()


# Under the kernel's own memory-deny-write-execute (prctl PR_SET_MDWE, Linux 6.3+), which
# refuses W+X mappings as the unit's MemoryDenyWriteExecute= seccomp filter does, the daemon's
# modules and native libraries must load and work. Exit 77 = the kernel has no PR_SET_MDWE.
MDWE_PROGRAM = textwrap.dedent("""
    import ctypes, importlib, mmap, pkgutil, sqlite3, sys, tempfile
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN = 65, 1
    if libc.prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0, 0, 0) != 0:
        sys.exit(77)
    try:
        mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        sys.exit("PR_SET_MDWE is set but a W+X mapping was allowed")
    except OSError:
        pass
    import controller, drivers
    for package in (controller, drivers):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            importlib.import_module(module.name)
    import usb.backend.libusb1, zmq
    context = zmq.Context()
    public, secret = zmq.curve_keypair()
    pub = context.socket(zmq.PUB)
    pub.curve_secretkey, pub.curve_publickey, pub.curve_server = secret, public, True
    pub.bind("tcp://127.0.0.1:*")
    pub.close()
    context.term()
    with tempfile.TemporaryDirectory() as directory:
        db = sqlite3.connect(directory + "/journal.sqlite")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE t (x)")
        db.commit()
        db.close()
    # What pyusb does for isochronous transfers: libffi must fall back from a W+X closure.
    assert ctypes.CFUNCTYPE(ctypes.c_int)(lambda: 7)() == 7
""")


def test_daemon_runs_without_writable_executable_memory() -> None:
    result = subprocess.run([sys.executable, "-c", MDWE_PROGRAM], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    if result.returncode == 77:
        pytest.skip("kernel has no PR_SET_MDWE (Linux < 6.3)")
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("ci", "outcome"), [(None, pytest.skip.Exception),
                                             ("true", pytest.fail.Exception)])
def test_a_missing_tool_skips_locally_but_fails_in_ci(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path, ci: str | None,
                                                      outcome: type[BaseException]) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on it
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="apt-get install --no-install-recommends systemd"):
        require_tool("systemd-analyze")

"""A config file that is not UTF-8 is one line and exit 2.

The second outside attack on the finished daemon (issue 14): each test is an attack that
worked before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.mark.parametrize("which", ("config", "paytables"))
def test_a_config_file_that_is_not_utf8_is_one_line_exit_2(tmp_path: Path, which: str) -> None:
    """A config (or paytables) file with bytes that are not UTF-8 (a copy gone wrong, a
    file saved in Latin-1) ended the start in a UnicodeDecodeError traceback, exit 1."""
    from tests.support.daemon import cli, one_line_exit_2, run_config

    path = run_config(tmp_path)
    if which == "config":
        path.write_bytes(b"# caf\xe9\n" + path.read_bytes())
        named = str(path)
    else:
        from controller.settings.table_config import load_config

        paytables = path.parent / load_config(path).config.table.paytables_file
        text = paytables.read_bytes()
        paytables = tmp_path / "latin1-paytables.toml"
        paytables.write_bytes(b"# caf\xe9\n" + text)
        path.write_text(path.read_text().replace(
            str(load_config(path).config.table.paytables_file), str(paytables)))
        named = str(paytables)
    result = cli("run", "--config", str(path), "--state-dir", str(tmp_path / "state"))
    one_line_exit_2(result, named, "UTF-8")

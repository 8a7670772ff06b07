"""Generate ``controller/core/player_key_data.py`` from Unicode's data files (run by hand).

``python -m controller.core.player_key_gen UCD_DIR`` reads, from ``UCD_DIR``, Unicode's
``confusables.txt`` (UTS #39, Unicode Security Mechanisms), ``Scripts.txt``,
``ScriptExtensions.txt`` and ``PropertyValueAliases.txt`` (the Unicode Character Database),
and writes the two tables :mod:`controller.core.player_key` uses. Nothing is downloaded at
build or test time: the generated module is committed, and its header names the versions.

Only the characters a player id may hold are kept (letters, marks, digits, ``_`` and the
punctuation ``. ' # -``, and what Unicode's normalisation and case folding turn them into):

- ``PROTOTYPES``: a character -> what it stands for in a player's key. It is the TR39
  skeleton's mapping, closed under NFKD and case folding: each value is a fixed point (the key
  of a key is the key), so "P" and Cyrillic "Р" and Greek "Ρ" all end as "p". The capitals
  are there as written too (:func:`capitals`), for the key of an id as written: Cyrillic "В"
  looks like Latin "B" (though "в" looks like no "b"), Latin "I" like "l".
- ``SCRIPT_STARTS`` / ``SCRIPT_SETS``: ranges of code points and the scripts each belongs to
  (its Script_Extensions, the four-letter codes), for TR39's mixed-script rule. A code point
  no player id may hold takes its neighbour's value, so the ranges stay few.

The normalisation is this Python's ``unicodedata`` (its version is in the header): run the
generator with the interpreter the table runs on.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = ROOT / "controller" / "core" / "player_key_data.py"
#: Besides letters, marks and digits, what a player id may hold.
PUNCTUATION = "_ .'#-"
_VERSION = re.compile(r"^#.*?(?:Version: |-)(\d+\.\d+\.\d+)")


def fold(text: str) -> str:
    """The case-free, compatibility-free, decomposed form (what the key maps, char by char)."""
    return unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold())


def version(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines()[:12]:
        if match := _VERSION.match(line):
            return match.group(1)
    raise SystemExit(f"{path}: no version in its header")


def data_lines(path: Path) -> Iterable[list[str]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            yield [field.strip() for field in line.split(";")]


def code_points(field: str) -> range:
    first, _, last = field.partition("..")
    return range(int(first, 16), int(last or first, 16) + 1)


def may_hold(char: str) -> bool:
    """Whether a player id may hold ``char`` (as its pattern and NFKC allow), or a mark."""
    return char.isalnum() or char in PUNCTUATION or unicodedata.category(char)[0] == "M"


def prototypes(confusables: Path, domain: set[str]) -> dict[str, str]:
    skeleton = {chr(int(source, 16)): "".join(chr(int(cp, 16)) for cp in target.split())
                for source, target, *_ in data_lines(confusables)}

    def step(text: str) -> str:
        return fold("".join(skeleton.get(char, char) for char in text))

    table = {}
    for char in sorted(domain):
        value = step(char)
        for _ in range(8):
            value, previous = step(value), value
            if value == previous:
                break
        else:
            raise SystemExit(f"U+{ord(char):04X}: its skeleton does not settle")
        if value != char:
            table[char] = value
    for char, value in table.items():     # every value a fixed point: the key of a key is it
        if fold(value) != value or any(table.get(part, part) != part for part in value):
            raise SystemExit(f"U+{ord(char):04X} -> {value!r} is not a fixed point")
    return table


def capitals(table: dict[str, str], confusables: Path, written: set[str]) -> None:
    """Add to ``table`` the characters a player id holds as written that case folding changes
    (capitals), each standing for the key of what it looks like (TR39's skeleton of the
    character as written: Cyrillic В and Latin B are b, Latin I is l), else of its small
    letter. The key of a case-folded id never meets them: they serve
    :func:`controller.core.player_key.key_as_written` alone."""
    skeleton = {chr(int(source, 16)): "".join(chr(int(cp, 16)) for cp in target.split())
                for source, target, *_ in data_lines(confusables)}

    def key(text: str) -> str:
        return unicodedata.normalize("NFKD", "".join(table.get(char, char)
                                                     for char in fold(text)))

    added = {}
    for char in sorted(written):
        if fold(char) != char and (value := key(skeleton.get(char, char))) != char:
            added[char] = value
    for char, value in added.items():
        if fold(value) != value or any(table.get(part, part) != part for part in value):
            raise SystemExit(f"U+{ord(char):04X} -> {value!r} is not a fixed point")
    table.update(added)


def scripts(scripts_txt: Path, extensions_txt: Path, aliases_txt: Path
            ) -> tuple[dict[int, str], dict[str, str]]:
    """Code point -> its Script_Extensions (space-separated codes); code -> long name."""
    names = {long: short for prop, short, long, *_ in data_lines(aliases_txt) if prop == "sc"}
    of: dict[int, str] = {}
    for field, script in data_lines(scripts_txt):
        for cp in code_points(field):
            of[cp] = names[script]
    for field, codes in data_lines(extensions_txt):
        for cp in code_points(field):
            of[cp] = " ".join(sorted(codes.split()))
    return of, {short: long for long, short in names.items()}


def ranges(values: dict[int, str], domain: Iterable[int]) -> list[tuple[int, str]]:
    """(first code point, value) of each range; a code point outside ``domain`` is free."""
    wanted = {cp: values.get(cp, "Zzzz") for cp in domain}
    out: list[tuple[int, str]] = []
    for cp in sorted(wanted):
        if not out or out[-1][1] != wanted[cp]:
            out.append((cp, wanted[cp]))
    if out:
        out[0] = (0, out[0][1])
    return out


def escaped(text: str) -> str:
    return '"' + "".join(char if char.isascii() and char.isalnum() or char in " .'#-_"
                         else f"\\u{ord(char):04x}" if ord(char) < 0x10000
                         else f"\\U{ord(char):08x}" for char in text) + '"'


def generate(ucd: Path) -> str:
    held = [chr(cp) for cp in range(sys.maxunicode + 1)
            if not 0xD800 <= cp <= 0xDFFF and may_hold(chr(cp))]
    domain = {part for char in held for part in fold(char)}
    table = prototypes(ucd / "confusables.txt", domain)
    of, names = scripts(ucd / "Scripts.txt", ucd / "ScriptExtensions.txt",
                        ucd / "PropertyValueAliases.txt")
    capitals(table, ucd / "confusables.txt",
             {part for char in held for part in unicodedata.normalize("NFKD", char)})
    spans = ranges(of, (ord(char) for char in held))
    used = sorted({code for _, codes in spans for code in codes.split()})
    lines = [
        '"""The tables of :mod:`controller.core.player_key`, generated: do not edit.',
        "",
        f"Generated by controller/core/player_key_gen.py from Unicode's confusables.txt "
        f"{version(ucd / 'confusables.txt')}",
        f"(UTS #39), Scripts.txt {version(ucd / 'Scripts.txt')} and ScriptExtensions.txt "
        f"{version(ucd / 'ScriptExtensions.txt')}, normalised with Python's",
        f"unicodedata {unicodedata.unidata_version}.",
        '"""',
        "",
        f'UNICODEDATA_VERSION = "{unicodedata.unidata_version}"',
        f'CONFUSABLES_VERSION = "{version(ucd / "confusables.txt")}"',
        "",
        "#: A character of a decomposed player id (case-folded, or a capital as written) -> what",
        "#: it stands for in the key.",
        "PROTOTYPES: dict[str, str] = {",
        *(f"    {escaped(char)}: {escaped(value)}," for char, value in sorted(table.items())),
        "}",
        "",
        "#: The first code point of each range of SCRIPT_SETS.",
        "SCRIPT_STARTS: tuple[int, ...] = (",
        *wrapped([f"0x{cp:x}," for cp, _ in spans]),
        ")",
        "#: The scripts (Script_Extensions, ISO 15924 codes) of each range.",
        "SCRIPT_SETS: tuple[str, ...] = (",
        *wrapped([f'"{codes}",' for _, codes in spans]),
        ")",
        "#: A script's code -> its name.",
        "SCRIPT_NAMES: dict[str, str] = {",
        *wrapped([f'"{code}": "{names.get(code, code).replace("_", " ")}",' for code in used]),
        "}",
        "",
    ]
    return "\n".join(lines)


def wrapped(items: list[str], width: int = 96) -> list[str]:
    lines, line = [], "   "
    for item in items:
        if len(line) + 1 + len(item) > width:
            lines.append(line)
            line = "   "
        line += " " + item
    return lines + [line] if line.strip() else lines


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    TARGET.write_text(generate(Path(args[0])), encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

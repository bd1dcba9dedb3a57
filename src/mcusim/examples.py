"""Prebuilt example firmware shipped inside the package (built by firmware/Makefile)."""
from __future__ import annotations

from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"


def available() -> dict[str, list[str]]:
    """{program: [boards it is built for]}."""
    found: dict[str, list[str]] = {}
    for elf in sorted(EXAMPLES_DIR.glob("*/*.elf")):
        found.setdefault(elf.stem, []).append(elf.parent.name)
    return found


def path(program: str, board: str) -> Path:
    elf = EXAMPLES_DIR / board / f"{program}.elf"
    if not elf.is_file():
        known = available()
        if program not in known:
            raise LookupError(f"no example '{program}' (examples: {', '.join(sorted(known)) or 'none installed'})")
        raise LookupError(f"example '{program}' is not built for board {board} (boards: {', '.join(known[program])})")
    return elf


def toolchain() -> str | None:
    stamp = EXAMPLES_DIR / "TOOLCHAIN"
    return stamp.read_text().strip() if stamp.is_file() else None

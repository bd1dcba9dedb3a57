"""Reads a VCD file back with pyvcd's tokenizer, for the signals.vcd tests."""
from __future__ import annotations

from vcd.reader import TokenKind, tokenize


def read_vcd(path) -> tuple[str, dict[str, list[tuple[int, str]]]]:
    """(timescale text, {"scope.name": [(time, value), ...]}), values as written ('0', '1',
    'z', or a string's text); the $dumpvars values come at time 0."""
    scopes: list[str] = []
    names: dict[str, str] = {}
    changes: dict[str, list[tuple[int, str]]] = {}
    time, timescale = 0, ""
    with open(path, "rb") as stream:
        for token in tokenize(stream):
            if token.kind is TokenKind.TIMESCALE:
                magnitude = token.timescale.magnitude
                timescale = f"{getattr(magnitude, 'value', magnitude)} {token.timescale.unit.value}"
            elif token.kind is TokenKind.SCOPE:
                scopes.append(token.scope.ident)
            elif token.kind is TokenKind.UPSCOPE:
                scopes.pop()
            elif token.kind is TokenKind.VAR:
                names[token.var.id_code] = ".".join(scopes + [token.var.reference])
                changes[names[token.var.id_code]] = []
            elif token.kind is TokenKind.CHANGE_TIME:
                time = token.time_change
            elif token.kind is TokenKind.CHANGE_SCALAR:
                changes[names[token.scalar_change.id_code]].append((time, token.scalar_change.value))
            elif token.kind is TokenKind.CHANGE_STRING:
                changes[names[token.string_change.id_code]].append((time, token.string_change.value))
            elif token.kind is TokenKind.CHANGE_REAL:
                changes[names[token.real_change.id_code]].append((time, token.real_change.value))
    return timescale, changes


def edges(changes: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The 0<->1 transitions of a wire: (time, new level)."""
    found, level = [], None
    for time, value in changes:
        if value in "01" and level in ("0", "1") and value != level:
            found.append((time, value))
        level = value
    return found

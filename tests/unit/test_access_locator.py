"""The access locator finds the instruction of a block that made an MMIO access; its decode of a
block is made once per process and shared by every machine, each reading its own literals."""
from mcusim.machine import access_locator
from mcusim.machine.access_locator import AccessLocator

BLOCK = 0x1000
CODE = bytes([0x01, 0x48, 0x01, 0x60])  # ldr r0, [pc, #4]; str r1, [r0]
LITERAL = 0x1008                        # ((BLOCK + 4) & ~3) + 4


class _Registers:
    def __init__(self, values):
        self.values = values

    def reg_read(self, register):
        return self.values[register]


def _locator(literal_value, registers=None):
    memory = {BLOCK: CODE, LITERAL: literal_value.to_bytes(4, "little")}
    return AccessLocator(_Registers(registers or {}), lambda address, size: memory[address][:size])


def test_machines_share_a_block_decode_and_each_reads_its_own_literal(monkeypatch):
    monkeypatch.setattr(access_locator, "_DECODED", {})
    first, second = _locator(0x40000000), _locator(0x50000000)
    assert first._decode(BLOCK, 4)[0][4] == ("r0", 0x40000000)
    assert second._decode(BLOCK, 4)[0][4] == ("r0", 0x50000000)
    assert list(access_locator._DECODED) == [(BLOCK, CODE)]


def test_the_store_is_located_from_the_registers_it_addresses(monkeypatch):
    from mcusim.machine.registers import UNICORN_REGISTERS

    monkeypatch.setattr(access_locator, "_DECODED", {})
    registers = {register: 0 for register in UNICORN_REGISTERS.values()}
    registers[UNICORN_REGISTERS["r0"]] = 0x40000010
    locator = _locator(0x40000010, registers)
    assert locator.locate(BLOCK, 4, ("run", 1), 0x40000010, is_write=True) == BLOCK + 2
    assert locator.locate(BLOCK, 4, ("run", 2), 0x40000010, is_write=False) is None

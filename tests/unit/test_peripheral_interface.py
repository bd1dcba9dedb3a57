"""The peripheral models reach the machine only through the Chip interface (peripherals/chip.py):
each model runs against a stand-in with those members and no others, the models' source uses
no others, and the machine's own Chip has exactly those."""
import ast
from pathlib import Path
from types import SimpleNamespace

import pytest

import mcusim
from elfgen import program
from mcusim.config import load_board
from mcusim.machine.exceptions import FIRST_IRQ, ExceptionUnit
from mcusim.machine.flash_timing import FlashTiming
from mcusim.machine.native import NativeState
from mcusim.analysis.swo import SwoRecorder
from mcusim.machine.build import build_devices
from mcusim.peripherals import MODELS
from mcusim.peripherals.bus import Bus
from mcusim.peripherals.chip import CHIP_MEMBERS, MmioAccess
from mcusim.peripherals.core.dwt import Dwt
from mcusim.peripherals.core.itm import Itm
from mcusim.peripherals.core.nvic import Nvic
from mcusim.peripherals.core.scb import CoreDebug, Scb, ScbExtension, SystemControlMisc
from mcusim.peripherals.core.systick import SysTick

PERIPHERALS = Path(mcusim.__file__).parent / "peripherals"
BOARDS = sorted(path.stem for path in (Path(mcusim.__file__).parents[2] / "boards").glob("*.toml"))


class StandInChip:
    """The Chip's members and nothing else (__slots__: a model cannot add any either);
    records what the models ask of it."""

    __slots__ = ("board", "mmio", "exceptions", "flash_timing", "flash_ports", "calls", "cycle")

    def __init__(self, board):
        self.board = board
        self.mmio = MmioAccess()
        self.calls = []
        self.cycle = 0
        self.exceptions = ExceptionUnit(SimpleNamespace(uc=None, request_stop=lambda: None), board.irq_count,
                                        board.nvic_priority_bits)
        state = NativeState(capacity_halfwords=64)
        self.flash_ports = [FlashTiming(spec, board, state, port=k) for k, spec in enumerate(board.flash_ports)]
        self.flash_timing = self.flash_ports[0] if self.flash_ports else None

    def _record(self, *call):
        self.calls.append(call)

    def refuse_held(self):
        pass

    def cycles_now(self):
        return self.cycle

    def current_pc(self):
        return 0x100

    def counter_total(self, register):
        return self.cycle

    def set_clock(self, hz, source):
        self._record("set_clock", hz, source)

    def request_stop(self):
        self._record("request_stop")

    def request_reset(self, why):
        self._record("request_reset", why)

    def raise_interrupt(self, number):
        self._record("raise_interrupt", number)
        self.exceptions.set_pending(number)

    def clear_interrupt(self, number):
        self._record("clear_interrupt", number)
        self.exceptions.pending[number] = False

    def set_fpu_enabled(self, enabled):
        self._record("set_fpu_enabled", enabled)

    def divide_trap_changed(self):
        self._record("divide_trap_changed")

    def voltage_scaling_changed(self, register_value):
        self._record("voltage_scaling_changed", register_value)

    def uart_write(self, name, data):
        self._record("uart_write", name, data)

    def itm_write(self, port, data):
        self._record("itm_write", port, data)

    def region_marker(self, begin, name_address):
        self._record("region_marker", begin, name_address)

    def pin_changed(self, pin, level):
        self._record("pin_changed", pin, level)

    def read_memory(self, address, size):
        self._record("read_memory", address, size)
        return bytes(size)

    def warn_once(self, key, message):
        self._record("warn_once", key)

    def report_unmodelled(self, register, address, kind):
        self._record("report_unmodelled", register, kind)

    def internal_error(self, exc):
        self._record("internal_error", exc)


def public_members(cls) -> set[str]:
    return {name for name in (*dir(cls), *getattr(cls, "__slots__", ())) if not name.startswith("_")}


def test_the_stand_in_has_exactly_the_chip_members():
    assert public_members(StandInChip) - {"calls", "cycle"} == CHIP_MEMBERS


def test_the_machines_chip_has_exactly_the_chip_members(tmp_path):
    path = tmp_path / "exit.elf"
    path.write_bytes(program("exit7"))
    sim = mcusim.Simulator(path, "mps2-an386")
    chip = sim.machine.chip
    assert set(vars(chip)) | public_members(type(chip)) == CHIP_MEMBERS
    assert all(device.chip is chip for bus in sim.machine.buses for device in bus.devices)


def drive(device, offsets):
    """Read each register, write back what it read, and a byte and a word of ones and zeros."""
    for offset in offsets:
        value = device.read(offset, 4)
        device.write(offset, 4, value)
        device.write(offset, 1, 0xFF)
        device.read(offset + 1, 1)
        device.write(offset, 4, 0)


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("with_swo", [False, True])
def test_every_model_runs_against_the_stand_in(board, with_swo):
    """Built as the machine builds them (every register block on its bus, the trace components
    linked), each model's registers read, written back, and written with ones and zeros."""
    spec = load_board(board)
    chip = StandInChip(spec)
    devices = build_devices(chip, spec, SwoRecorder(state=NativeState(capacity_halfwords=64)).counters
                            if with_swo else None)
    for device in devices.itm, devices.dwt, devices.systick, devices.nvic, devices.scb, devices.core_debug:
        drive(device, range(0, min(device.size_bytes, 0x100), 4))
    for device in devices.peripherals.values():
        drive(device, sorted(set(device.registers.values())) + [device.size_bytes - 4])
    every = [device for bus in devices.buses for device in bus.devices]
    assert {type(device) for device in every} >= {MODELS[p.model] for p in spec.peripherals if p.model} | {
        Itm, Dwt, SystemControlMisc, SysTick, Nvic, Scb, CoreDebug, ScbExtension}
    assert all(device.chip is chip for device in every)
    assert not [call for call in chip.calls if call[0] == "internal_error"]


def test_a_bus_records_the_access_for_the_chip_and_reports_a_model_error():
    chip = StandInChip(load_board("mcu-m"))
    bus = Bus(chip, 0x40000000, 0x10000, "peripheral space")
    seen = []

    class Probe(SysTick):
        def on_read(self, offset):
            seen.append((chip.mmio.address, chip.mmio.is_write))
            raise ValueError("model error")

    bus.attach(Probe("Probe", 0x40000000, 0x10, chip))
    assert bus.read(None, 0x4, 4, None) == 0
    assert seen == [(0x40000004, False)] and chip.mmio.address is None
    assert chip.calls[-1][0] == "internal_error"
    bus.write(None, 0x2000, 4, 7, None)  # unnamed space: storage, reported
    assert chip.calls[-1] == ("report_unmodelled", "peripheral space@0x40002000+0x000", "write")


def test_interrupts_are_raised_and_cleared_through_the_chip():
    chip = StandInChip(load_board("mcu-m"))
    nvic, tick = Nvic("NVIC", 0xE000E100, 0x400, chip), SysTick("SysTick", 0xE000E010, 0x10, chip)
    nvic.write(0x100, 4, 1 << 3)  # ISPR0: IRQ 3
    assert chip.exceptions.pending[FIRST_IRQ + 3]
    nvic.write(0x180, 4, 1 << 3)  # ICPR0
    assert not chip.exceptions.pending[FIRST_IRQ + 3]
    tick.write(0x4, 4, 9)
    tick.write(0x0, 4, 0b111)
    chip.cycle = 10
    tick.on_time(10)
    assert ("raise_interrupt", 15) in chip.calls
    assert [c for c in chip.calls if c[0] in ("raise_interrupt", "clear_interrupt")] == [
        ("raise_interrupt", FIRST_IRQ + 3), ("clear_interrupt", FIRST_IRQ + 3), ("raise_interrupt", 15)]


def chip_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, member) of every use of the chip in a module: `self.chip.X`, `chip.X` (a name
    bound to the chip), `getattr(<chip>, ...)` as member "getattr"; and any `.machine`."""
    aliases = {"chip"}
    for node in ast.walk(tree):  # names bound to self.chip
        if isinstance(node, ast.Assign) and is_chip(node.value, aliases):
            aliases |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_chip(node.value, aliases):
            uses.append((node.lineno, node.attr))
        elif isinstance(node, ast.Attribute) and node.attr == "machine":
            uses.append((node.lineno, "machine"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr",
                                                                                                  "hasattr", "vars"):
            if node.args and is_chip(node.args[0], aliases):
                uses.append((node.lineno, node.func.id))
    return uses


def is_chip(node, aliases) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "chip"
            and isinstance(node.value, ast.Name) and node.value.id == "self") or \
        (isinstance(node, ast.Name) and node.id in aliases)


def test_the_models_use_nothing_of_the_machine_but_the_chip():
    found = {}
    for path in sorted(PERIPHERALS.rglob("*.py")):
        if path.name == "chip.py":
            continue
        tree = ast.parse(path.read_text())
        for line, member in chip_uses(tree):
            if member not in CHIP_MEMBERS:
                found.setdefault(f"{path.relative_to(PERIPHERALS)}:{line}", member)
        for node in ast.walk(tree):  # nor import the machine's modules, constants aside
            if isinstance(node, ast.ImportFrom) and node.module and "machine" in node.module:
                assert node.module.endswith("machine.exceptions"), f"{path.name} imports {node.module}"
    assert not found, f"peripherals use machine members outside the Chip interface: {found}"
    # (the scan itself: a direct use, one through a name bound to the chip, a reach for the machine)
    assert sorted(chip_uses(ast.parse("x = self.chip.cycles_now()\nc = self.chip\nc.uart\nself.machine.y"))) == \
        [(1, "cycles_now"), (3, "uart"), (4, "machine")]

"""GPIO models on their own (against a stand-in machine), and the VCD writer on plain data."""
import pytest

from mcusim.analysis import vcd
from mcusim.config import load_board
from mcusim.peripherals import model_class
from vcdread import edges, read_vcd


class PinMachine:
    """Records what the models report; report_unmodelled as the real machine has it."""

    def __init__(self, board):
        self.board = load_board(board)
        self.changes = []
        self.unmodelled = []

    def pin_changed(self, pin, level):
        self.changes.append((pin, level))

    def report_unmodelled(self, register, address, kind):
        self.unmodelled.append(register)


def port(board, name):
    machine = PinMachine(board)
    spec = machine.board.peripheral(name)
    return machine, model_class(spec.model).from_spec(spec, machine)


def write(dev, register, value, offset=0):
    dev.write(dev.registers[register] + offset, 4, value)


def read(dev, register, offset=0):
    return dev.read(dev.registers[register] + offset, 4)


def test_stm32l4_port_a_resets_to_its_own_values_and_drives_pa5():
    m, gpio = port("mcu-m", "GPIOA")
    assert read(gpio, "MODER") == 0xABFFFFFF  # RM0351 8.5.1, port A
    assert read(gpio, "IDR") == 1 << 13 | 1 << 15  # PA13 and PA15 pulled up (PUPDR 0x64000000)
    assert m.changes == []
    write(gpio, "MODER", (0xABFFFFFF & ~(3 << 10)) | 1 << 10)  # PA5 output
    write(gpio, "BSRR", 1 << 5)
    write(gpio, "BRR", 1 << 5)
    write(gpio, "BSRR", 1 << 5 | 1 << 21)  # set and reset: set wins
    assert read(gpio, "IDR") & 1 << 5 and read(gpio, "ODR") == 1 << 5
    assert read(gpio, "BSRR") == 0  # write-only
    gpio.write(gpio.registers["BSRR"] + 2, 2, 1 << 5)  # halfword write of the reset half
    write(gpio, "MODER", 0xABFFFFFF)  # back to analog: undriven
    assert m.changes == [("PA5", 0), ("PA5", 1), ("PA5", 0), ("PA5", 1), ("PA5", 0), ("PA5", None)]
    assert m.unmodelled == []


def test_stm32_per_port_reset_values_and_the_f7_has_no_brr():
    m, gpio_b = port("mcu-d", "GPIOB")
    assert read(gpio_b, "MODER") == 0x00000280 and read(gpio_b, "PUPDR") == 0x100  # RM0385 6.4.1, 6.4.4
    assert "BRR" not in gpio_b.registers
    _, gpio_c = port("mcu-m", "GPIOC")
    assert read(gpio_c, "MODER") == 0xFFFFFFFF
    write(gpio_b, "MODER", 0x00000280 | 1 << 0)  # PB0 (LD1) output
    write(gpio_b, "ODR", 1)
    assert m.changes == [("PB0", 0), ("PB0", 1)]


def test_nrf52_dir_out_set_clear_and_pin_cnf():
    m, gpio = port("mcu-s", "GPIO")
    assert read(gpio, "P0_PIN_CNF", 4 * 13) == 0x2  # PS 6.8.2: input, input buffer disconnected
    write(gpio, "P0_DIRSET", 1 << 13)
    write(gpio, "P0_OUTSET", 1 << 13)
    assert read(gpio, "P0_OUTCLR") == 1 << 13 and read(gpio, "P0_DIRCLR") == 1 << 13  # read back OUT, DIR
    assert read(gpio, "P0_PIN_CNF", 4 * 13) == 0x3  # PIN_CNF.DIR is the DIR bit
    assert read(gpio, "P0_IN") == 1 << 13
    write(gpio, "P0_OUTCLR", 1 << 13)
    write(gpio, "P0_PIN_CNF", 0x1, 4 * 6)  # P0.06 output through PIN_CNF
    write(gpio, "P0_PIN_CNF", 3 << 2, 4 * 2)  # P0.02 input with pull-up
    assert read(gpio, "P0_DIR") == 1 << 13 | 1 << 6
    assert read(gpio, "P0_IN") & 1 << 2
    write(gpio, "P1_DIRSET", 1 << 9)
    write(gpio, "P0_DIRCLR", 1 << 13)
    assert m.changes == [("P0.13", 0), ("P0.13", 1), ("P0.13", 0), ("P0.06", 0), ("P1.09", 0), ("P0.13", None)]


def test_apollo3_outcfg_enable_and_set_clear_registers():
    m, gpio = port("mcu-b", "GPIO")
    write(gpio, "PADKEY", 0x73)
    write(gpio, "CFGF", 1 << (4 * (46 % 8) + 1))  # pad 46 (red LED) push-pull
    write(gpio, "WTSB", 1 << (46 - 32))
    assert read(gpio, "WTB") == 1 << 14 and read(gpio, "RDB") == 1 << 14
    write(gpio, "WTCB", 1 << (46 - 32))
    write(gpio, "CFGE", 3 << (4 * (37 % 8) + 1))  # pad 37 tri-state: driven only once enabled
    write(gpio, "ENSB", 1 << (37 - 32))
    write(gpio, "ENCB", 1 << (37 - 32))
    assert m.changes == [("GPIO46", 0), ("GPIO46", 1), ("GPIO46", 0), ("GPIO37", 0), ("GPIO37", None)]
    assert m.unmodelled == []


def test_vcd_writer_pins_nested_regions_and_same_time_changes(tmp_path):
    pins = [(1e-6, "LD2", 0), (2e-6, "LD2", 1), (2e-6 + 1e-10, "LD2", 0),  # a glitch within one ns
            (3e-6, "LD2", 1), (4e-6, "P0.13", 1), (5e-6, "LD2", None)]
    regions = [(1e-6, "layer 1", True), (1.5e-6, "conv", True), (1.7e-6, "conv", True), (1.8e-6, "conv", False),
               (1.9e-6, "conv", False), (2.5e-6, "layer 1", False), (2.6e-6, "stray", False)]
    path = tmp_path / "signals.vcd"
    vcd.write(path, pins, regions, end_seconds=1e-5)
    timescale, changes = read_vcd(path)
    assert timescale == "1 ns"
    assert changes["mcusim.gpio.LD2"] == [(0, "z"), (1000, "0"), (3000, "1"), (5000, "z")]
    assert changes["mcusim.gpio.P0_13"] == [(0, "z"), (4000, "1")]
    assert changes["mcusim.regions.layer_1"] == [(0, "0"), (1000, "1"), (2500, "0")]
    assert changes["mcusim.regions.conv"] == [(0, "0"), (1500, "1"), (1900, "0")]  # nested: one pulse
    assert changes["mcusim.regions.current"] == [(0, "-"), (1000, "layer_1"), (1500, "conv"), (1900, "layer_1"),
                                                 (2500, "-")]
    assert "mcusim.regions.stray" not in changes  # an end marker that never began
    assert edges(changes["mcusim.gpio.LD2"]) == [(3000, "1")]
    assert path.read_text().rstrip().endswith("#10000")


def test_vcd_names_are_identifiers_and_unique(tmp_path):
    path = tmp_path / "signals.vcd"
    vcd.write(path, [(0.0, "a b", 1), (0.0, "a_b", 0)], [])
    _, changes = read_vcd(path)
    assert set(changes) == {"mcusim.gpio.a_b", "mcusim.gpio.a_b_"}


@pytest.mark.parametrize("board,label,pin", [("mcu-m", "LD2", "PA5"), ("mcu-d", "LD3", "PB14"),
                                             ("mcu-s", "LED_BUILTIN", "P0.13"), ("mcu-b", "LED_RED", "GPIO46")])
def test_boards_name_their_led_pins(board, label, pin):
    assert load_board(board).pins[label] == pin

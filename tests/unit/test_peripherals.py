"""Peripheral models on their own, against a stand-in chip (peripherals/chip.py)."""
import pytest

from mcusim.config import load_board
from mcusim.peripherals import model_class
from mcusim.peripherals.core.systick import SysTick


class FakeMachine:
    def __init__(self, board="mcu-m"):
        self.board = load_board(board)
        self.clock_hz = None
        self.cycle = 0
        self.sent = bytearray()
        self.pended = []
        self.unmodelled = []
        self.flash_timing = None
        self.flash_ports = []

    def flash_port(self, name):  # (for the tests: not part of the chip interface)
        return next((port for port in self.flash_ports if port.name == name), None)

    def set_clock(self, hz, source):
        self.clock_hz = hz

    def cycles_now(self):
        return self.cycle

    def request_stop(self):
        pass

    def raise_interrupt(self, number):
        self.pended.append(number)

    def uart_write(self, name, data):
        self.sent += data

    def report_unmodelled(self, register, address, kind):
        self.unmodelled.append((register, kind))


def device(machine, name):
    spec = machine.board.peripheral(name)
    return model_class(spec.model).from_spec(spec, machine)


def write(dev, register, value):
    dev.write(dev.registers[register], 4, value)


def read(dev, register):
    return dev.read(dev.registers[register], 4)


def test_stm32l4_rcc_msi_pll_to_80_mhz():
    m = FakeMachine("mcu-m")
    rcc = device(m, "RCC")
    assert read(rcc, "CR") & 0b10  # MSIRDY at reset
    write(rcc, "PLLCFGR", 0x01002801)  # MSI, M=1, N=40, R=2 (firmware/boards/REGISTERS.md 3.1)
    write(rcc, "CR", read(rcc, "CR") | 1 << 24)
    assert read(rcc, "CR") & 1 << 25  # PLLRDY follows PLLON
    write(rcc, "CFGR", 3)
    assert read(rcc, "CFGR") & 0b1100 == 0b1100  # SWS = PLL
    assert m.clock_hz == 80_000_000
    write(rcc, "CFGR", 3 | 0b1000 << 4)  # AHB /2
    assert m.clock_hz == 40_000_000


def test_stm32l4_rcc_hse_uses_the_board_oscillator():
    m = FakeMachine("mcu-m")
    rcc = device(m, "RCC")
    write(rcc, "CFGR", 2)
    assert m.clock_hz == 8_000_000  # Nucleo-64: 8 MHz from the ST-LINK MCO


def test_stm32f7_rcc_hsi_pll_to_216_mhz():
    m = FakeMachine("mcu-d")
    rcc = device(m, "RCC")
    write(rcc, "PLLCFGR", 0x29003608)  # HSI, M=8, N=216, P=2, Q=9
    write(rcc, "CFGR", 2)
    assert m.clock_hz == 216_000_000


def test_stm32_usart_sends_only_when_enabled():
    m = FakeMachine("mcu-d")
    usart = device(m, "USART3")
    usart.write(usart.registers["TDR"], 1, ord("x"))
    assert m.sent == b""
    write(usart, "CR1", 0b1101)  # UE | RE | TE
    assert read(usart, "ISR") & 0xC0 == 0xC0  # TXE and TC
    usart.write(usart.registers["TDR"], 1, ord("y"))
    assert m.sent == b"y"


def test_unnamed_register_is_storage_and_reported():
    m = FakeMachine("mcu-d")
    rcc = device(m, "RCC")
    rcc.write(0x3FC, 4, 0x1234)
    assert rcc.read(0x3FC, 4) == 0x1234
    assert m.unmodelled == [("RCC+0x3fc", "write"), ("RCC+0x3fc", "read")]


def test_systick_counts_down_wraps_and_pends():
    m = FakeMachine()
    tick = SysTick("SysTick", 0xE000E010, 0x10, m)
    tick.write(0x4, 4, 99)        # reload: period 100 cycles
    tick.write(0x8, 4, 0)         # clear
    tick.write(0x0, 4, 0b111)     # enable, interrupt, processor clock
    assert tick.next_event_cycle() == 100
    m.cycle = 40
    assert tick.read(0x8, 4) == 60
    m.cycle = 100
    tick.on_time(100)
    assert m.pended == [15]
    assert tick.read(0x0, 4) & 1 << 16  # COUNTFLAG, cleared by the read
    assert not tick.read(0x0, 4) & 1 << 16
    m.cycle = 150
    assert tick.read(0x8, 4) == 50
    assert tick.next_event_cycle() == 200


def test_systick_reference_clock_divider():
    m = FakeMachine()
    tick = SysTick("SysTick", 0xE000E010, 0x10, m, external_divider=8)
    tick.write(0x4, 4, 9)
    tick.write(0x0, 4, 0b011)  # CLKSOURCE = reference clock
    assert tick.next_event_cycle() == 80


@pytest.mark.parametrize("board,name", [("mcu-s", "UARTE0"), ("mcu-b", "UART0"), ("mps2-an386", "UART0")])
def test_board_console_uarts_are_modelled(board, name):
    assert load_board(board).peripheral(name).model is not None


def test_byte_write_keeps_the_other_bytes_of_a_modelled_register():
    m = FakeMachine()
    tick = SysTick("SysTick", 0xE000E010, 0x10, m)
    tick.write(0x4, 4, 0x123456)
    tick.write(0x4, 1, 0x78)  # low byte only
    assert tick.read(0x4, 4) == 0x123478


def flash_machine(board):
    from mcusim.machine.flash_timing import FlashTiming
    from mcusim.machine.native import NativeState

    machine = FakeMachine(board)
    machine.state = NativeState(capacity_halfwords=64)
    machine.flash_ports = [FlashTiming(spec, machine.board, machine.state, port=k)
                           for k, spec in enumerate(machine.board.flash_ports)]
    machine.flash_timing = machine.flash_ports[0]
    machine.warn_once = lambda key, text: None
    return machine


def test_stm32l4_flash_acr_drives_the_flash_timing():
    machine = flash_machine("mcu-m")
    flash = device(machine, "FLASH")
    assert machine.flash_timing.settings == {"fetch_wait": 0, "data_wait": 0, "prefetch": False,
                                             "icache": True, "dcache": True}  # ACR reset 0x600
    write(flash, "ACR", 4 | 1 << 8)  # LATENCY 4, PRFTEN, caches off
    assert machine.flash_timing.settings == {"fetch_wait": 4, "data_wait": 4, "prefetch": True,
                                             "icache": False, "dcache": False}


def test_nrf52_nvmc_cache_and_its_profiling_counters():
    from mcusim.machine import native as N

    machine = flash_machine("mcu-s")
    nvmc = device(machine, "NVMC")
    write(nvmc, "ICACHECNF", 1)
    assert machine.flash_timing.settings["icache"]
    machine.flash_timing[N.FL_IC_HITS] = 7
    assert read(nvmc, "IHIT") == 0  # counts only with CACHEPROFEN
    write(nvmc, "ICACHECNF", 1 | 1 << 8)
    assert read(nvmc, "IHIT") == 7
    write(nvmc, "IHIT", 0)
    machine.flash_timing[N.FL_IC_HITS] = 9
    assert read(nvmc, "IHIT") == 2


def test_apollo3_cachectrl_sets_geometry_wait_states_and_caches():
    from mcusim.machine import native as N

    machine = flash_machine("mcu-b")
    ctrl = device(machine, "CACHECTRL")
    assert machine.flash_timing.settings["fetch_wait"] == 3  # FLASHCFG reset RD_WAIT 3
    write(ctrl, "FLASHCFG", 0x0751)  # RD_WAIT 1
    write(ctrl, "CACHECFG", 8 << 4 | 1 << 8 | 1 << 9 | 1)  # 1-way 1024 entries, I and D, enabled
    assert machine.flash_timing.settings == {"fetch_wait": 1, "data_wait": 1, "prefetch": False,
                                             "icache": True, "dcache": True}
    assert (machine.flash_timing[N.FL_IC_SETS], machine.flash_timing[N.FL_IC_WAYS]) == (1024, 1)
    assert read(ctrl, "CTRL") & 1 << 2  # CACHE_READY


def test_stm32f7_flash_acr_sets_both_ports_and_the_itcm_accelerators():
    machine = flash_machine("mcu-d")
    flash = device(machine, "FLASH")
    write(flash, "ACR", 7 | 1 << 8 | 1 << 9)  # LATENCY 7, PRFTEN, ARTEN
    axim, itcm = machine.flash_port("axim"), machine.flash_port("itcm")
    assert axim.settings["fetch_wait"] == itcm.settings["fetch_wait"] == 7
    assert itcm.settings["prefetch"] and itcm.settings["icache"] and itcm.settings["dcache"]
    assert not axim.settings["icache"]  # the L1 caches follow SCB CCR, not FLASH_ACR


@pytest.mark.parametrize("board,name,control", [("mps2-an386", "UART0", "CTRL"), ("mcu-b", "UART0", "CR"),
                                                ("mcu-m", "USART2", "CR1"), ("mcu-d", "USART3", "CR1")])
def test_a_uarts_fast_registers_say_what_its_model_does(board, name, control):
    """machine/console_uart.py serves the status read and the data write natively from
    fast_registers(): for every setting of the enable bits, the status value is what the model
    reads and a data write transmits exactly when the model would."""
    m = FakeMachine(board)
    uart = device(m, name)
    seen = set()
    for bits in range(1 << 5):
        value = sum(1 << bit for k, bit in enumerate((0, 2, 3, 8, 9)) if bits >> k & 1)
        write(uart, control, value)
        status, status_value, data, transmits = uart.fast_registers()
        assert uart.read(status, 4) == status_value
        assert all(uart.read(status + k, 1) == status_value >> 8 * k & 0xFF for k in range(4))
        sent = len(m.sent)
        uart.write(data, 4, 0x41)
        assert m.sent[sent:] == (b"A" if transmits else b""), f"{control}=0x{value:x}"
        seen.add(transmits)
    assert seen == {False, True}

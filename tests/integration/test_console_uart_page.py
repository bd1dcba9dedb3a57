"""The console UART's page served natively (machine/console_uart.py): the firmware reads and
transmits what the Python models would, and its output reaches the console, run.json and the
`on_output` whole and in order with the rest (ITM port 0, semihosting and a warning here)."""
import pytest

import mcusim
from mcusim.machine import console_uart

from asmbuild import RESET, build_elf

BOARDS = {
    # CMSDK APB UART0 (the board's soc file): DATA 0x00, STATE 0x04, CTRL 0x08; TX_EN = CTRL bit 0
    "mps2-an386": dict(flash=0x00000000, ram=0x20000000, uart=0x40004000, data=0x00, status=0x04, control=0x08,
                       on=0x1, status_value=0),
    # STM32L4 USART2: TDR 0x28, ISR 0x1C, CR1 0x00; UE | RE | TE (RM0351 40.8.1). ISR then reads
    # TC | TXE | TEACK | REACK (40.8.8): transmission is instantaneous in the model
    "mcu-m": dict(flash=0x08000000, ram=0x20000000, uart=0x40004400, data=0x28, status=0x1C, control=0x00,
                  on=0xD, status_value=0x6000C0),
    # Apollo3 UART0 (PL011): DR 0x00, FR 0x18, CR 0x30; UARTEN | TXE (PL011 TRM 3.3.8); FR reads TXFE
    "mcu-b": dict(flash=0x00000000, ram=0x10000000, uart=0x4001C000, data=0x00, status=0x18, control=0x30,
                  on=0x101, status_value=0x80),
}
PATTERN = 3072  # bytes written in a loop (an immediate cmp can take): several hand-overs with the stop below

SOURCE = RESET + """
    ldr r5, ={uart}
    ldr r1, ={on}
    str r1, [r5, #{control}]
    movs r1, #'A'
    str r1, [r5, #{data}]
    ldr r2, [r5, #{status}]  @ the status word, kept in RAM for the test
    ldrb r3, [r5, #{status}]
    ldr r4, ={ram}
    str r2, [r4]
    str r3, [r4, #4]
    ldr r2, =0x40100000      @ a register nothing models: a warning, after the A
    str r1, [r2]
    ldr r2, [r5, #{control}] @ a word the Python model serves, read through the fallback
    str r2, [r4, #8]
    ldrb r3, [r5, #{status_byte2}]
    str r3, [r4, #12]
    ldr r2, =0xE0000000      @ ITM port 0 'B', a Python callback while emulation runs
    movs r1, #'B'
    strb r1, [r2]
    movs r0, #3              @ semihosting SYS_WRITEC 'C', served when emulation has stopped
    adr r1, cee
    bkpt 0xab
    movs r1, #'D'
    strb r1, [r5, #{data}]
    movs r1, #'E'
    strb r1, [r5, #{data_byte1}]  @ a byte of the data word other than its first: sent as the models send it
    movs r1, #0
    str r1, [r5, #{control}] @ transmitter off: this byte is not sent
    movs r1, #'x'
    str r1, [r5, #{data}]
    ldr r1, ={on}
    str r1, [r5, #{control}]
    movs r4, #0
loop:
    and r1, r4, #15
    adds r1, #'a'
    str r1, [r5, #{data}]
    adds r4, #1
    cmp r4, #{pattern}
    bne loop
    movs r1, #'\\n'
    str r1, [r5, #{data}]
    movs r0, #0x18           @ SYS_EXIT, ADP_Stopped_ApplicationExit
    ldr r1, =0x20026
    bkpt 0xab
    b .
    .align 2
cee:
    .byte 'C'
    .align 2
    .ltorg
"""


def source(program, pattern):
    return SOURCE.format(stack=program["ram"] + 0x1000, pattern=pattern, status_byte2=program["status"] + 2,
                         data_byte1=program["data"] + 1, **program)


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_the_console_uart_page_transmits_what_the_model_would_in_order(tmp_path, monkeypatch, board):
    monkeypatch.setattr(console_uart, "STOP_AT", 256)  # hand over often (the default is 16 KiB)
    program = BOARDS[board]
    elf = build_elf(tmp_path, board, source(program, PATTERN), program["flash"])
    chunks, order = [], []
    sim = mcusim.Simulator(elf, board, on_output=lambda data, stream: (chunks.append((stream, bytes(data))),
                                                                        order.append(bytes(data))),
                           on_warning=lambda message: order.append(message))
    assert sim.machine.console_page is not None  # (served natively, not by the Python bus)
    result = sim.run()
    assert result.exit_code == 0, result.exit_detail

    pattern = bytes(ord("a") + (i & 15) for i in range(PATTERN))
    assert b"".join(data for _, data in chunks) == b"ABCDE" + pattern + b"\n"
    warning = next(i for i, item in enumerate(order) if isinstance(item, str) and "0x40100000" in item)
    assert b"".join(order[:warning]) == b"A"  # (the byte sent before the warning was raised)
    assert {stream for stream, _ in chunks} == {"stdout"}
    assert len(chunks) > PATTERN // 256  # handed over as the buffer reached the stop, not all at the end
    assert result.stdout == "ABCDE" + pattern.decode() + "\n"
    assert result.uart[sim.machine.board.console_uart] == "ADE" + pattern.decode() + "\n"
    word, byte, control, byte2 = (int.from_bytes(sim.machine.read_memory(program["ram"] + k, 4), "little")
                                  for k in (0, 4, 8, 12))
    status = program["status_value"]
    assert (word, byte, byte2) == (status, status & 0xFF, status >> 16 & 0xFF)
    assert control == program["on"]


def test_a_board_whose_console_uart_has_no_fast_registers_keeps_the_python_bus(tmp_path):
    """nRF52's UARTE sends by DMA (a few accesses a line): its page stays with the bus."""
    sim = mcusim.Simulator(build_elf(tmp_path, "s", source(dict(BOARDS["mcu-b"], ram=0x20000000), 1), 0), "mcu-s")
    assert sim.machine.console_page is None

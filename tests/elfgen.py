"""Builds small ARM ELF files in memory, so unit tests need no cross toolchain."""
from __future__ import annotations

import struct

PT_LOAD = 1
PF_X, PF_W, PF_R = 1, 2, 4

# Thumb code assembled once with arm-none-eabi-as (source in the comment of each entry point).
# Offsets are into CODE; CODE must be placed at a 4-byte aligned address.
CODE = bytes.fromhex(
    "202001a1abbefee726000200070000000130fde74ff010400168fee7012003a1abbe05a148602020abbefee700000000"
    "000000000b0000002600020000000000094801210160426800bf00bf00bf00bf00bf43689b1a02a14b602020abbefee7"
    "2600020000000000001000e000ee100afee700bf06484ff470010160bff34f8fbff36f8f00ee101a30ee000ab8e70000"
    "88ed00e0124840f2e73141600021816007210160002430bf01340a2cfbd102a14c602020abbefee72600020000000000"
    "704700bf07485a210160026802a14a602020abbefee700bf260002000000000010e000e000380140"
    "0c48016841f010010160bff36f8f0021b0fbf1f280e700bf0021b0fbf1f27be705484ff0a0510160bff34f8fbff36f8f72e7000014ed00e004ed00e0"
    "72b600240a484ff080610160bff34f8fbff36f8f62b6254602a14d602020abbefee700bf26000200000000000124704704ed00e0"
    "4ff060404f2101704b2101700a2101704ae700bf")
ENTRY = {
    # movs r0,#0x20; adr r1,blk; bkpt 0xab; b .   blk: .word 0x20026, 7  -> semihosting exit code 7
    "exit7": 0x00,
    # loop: adds r0,#1; b loop                     -> runs until the cycle limit
    "count": 0x10,
    # mov.w r0,#0x90000000; ldr r1,[r0]; b .        -> bus fault on an unmapped read
    "fault": 0x14,
    # SYS_OPEN(name, mode 0, len) then SYS_EXIT_EXTENDED with the returned handle as exit code
    "hostfile": 0x1C,
    # DWT_CTRL=1; r2=CYCCNT; 5 x nop; r3=CYCCNT; exit with r3-r2
    "cyccnt": 0x40,
    # vmov s0,r0; b .                               -> FP instruction with CPACR still 0
    "fpu_off": 0x6C,
    # CPACR = CP10/CP11 full; dsb; isb; vmov s0,r1; vadd.f32; b exit7
    "fpu_on": 0x74,
    # SysTick reload 999, core clock, TICKINT; 10 x (wfi; count); exit with the count
    "wfi": 0x94,
    # bx lr                                         -> an exception handler that returns
    "return": 0xC0,
    # str 0x5a to 0x40013800 (a register no model covers), read it back, exit with it
    "storage": 0xC4,
    # CCR |= DIV_0_TRP; isb; udiv r2,r0,r1 with r1 = 0   -> UsageFault DIVBYZERO
    "div_trap": 0xE8,
    # udiv r2,r0,r1 with r1 = 0, no trap            -> result 0, then exit7
    "div_plain": 0x100,
    # ICSR = PENDSVSET | PENDSTSET; dsb; isb; b exit7 -> two exceptions, the second tail-chained
    "tail_chain": 0x108,
    # cpsid i; r4=0; pend SysTick; cpsie i; r5=r4; exit with r5 (1 if the interrupt ran at once)
    "primask": 0x124,
    # movs r4,#1; bx lr                             -> a handler that marks that it ran
    "set_r4": 0x150,
    # strb 'O', 'K', '\n' to ITM stimulus port 0, then b exit7
    "itm": 0x158,
}
HOSTFILE_BLOCK = 0x2C  # the SYS_OPEN parameter block: name pointer, mode, length


def elf32_arm(segments: list[tuple[int, bytes, int]], entry: int = 0, machine: int = 40,
              elf_class: int = 1, data: int = 1) -> bytes:
    """An ELF image with one PT_LOAD per (address, bytes, flags); machine 40 is EM_ARM."""
    header_size, ph_size = 52, 32
    offset = header_size + ph_size * len(segments)
    program_headers, payload = b"", b""
    for address, content, flags in segments:
        program_headers += struct.pack("<8I", PT_LOAD, offset + len(payload), address, address, len(content),
                                       len(content), flags, 4)
        payload += content
    ident = b"\x7fELF" + bytes([elf_class, data, 1]) + bytes(9)
    header = ident + struct.pack("<HHIIIIIHHHHHH", 2, machine, 1, entry, header_size, 0, 0x05000400,
                                 header_size, ph_size, len(segments), 40, 0, 0)
    return header + program_headers + payload


def program(entry: str, flash_base: int = 0x0, stack_top: int = 0x20001000, patch=None,
            extra: list[tuple[int, bytes, int]] = (), handlers: dict[int, int] | None = None) -> bytes:
    """A bootable image: vector table (SP, reset, `handlers` {exception: CODE offset}) and CODE at
    flash_base + 0x40."""
    code_address = flash_base + 0x40
    code = bytearray(CODE)
    if patch:
        patch(code)
    table = [stack_top, (code_address + ENTRY[entry]) | 1] + [0] * 14
    for number, offset in (handlers or {}).items():
        table[number] = (code_address + offset) | 1
    vectors = struct.pack("<16I", *table)
    return elf32_arm([(flash_base, vectors + bytes(code), PF_R | PF_X), *extra], entry=code_address + ENTRY[entry])


def hostfile_program(name: str, flash_base: int = 0x0, name_address: int = 0x20000000) -> bytes:
    """A program that SYS_OPENs host file `name` (kept in RAM) and exits with the handle (255 if refused)."""
    def patch(code):
        struct.pack_into("<3I", code, HOSTFILE_BLOCK, name_address, 0, len(name))
    return program("hostfile", flash_base, patch=patch,
                   extra=[(name_address, name.encode() + b"\0", PF_R | PF_W)])

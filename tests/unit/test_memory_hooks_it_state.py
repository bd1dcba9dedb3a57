"""A memory hook must not change what an IT block computes.

Unicorn syncs the CPU state before it calls a memory hook (cpu_restore_state): on Arm that
rewrites the IT bits to those of the hooked load. QEMU keeps them zero inside a translated block
and writes them only when leaving the block inside an IT block, so after an IT block whose
conditional load was hooked, stale IT bits made the next block conditional: wrong results (and
faults) with flash wait states on, the timing model's hooks. mcusim's native hooks put the bits
back (native._restore_it_state)."""
from unicorn import UC_ARCH_ARM, UC_HOOK_INTR, UC_MODE_MCLASS, UC_MODE_THUMB, Uc
from unicorn import arm_const as A

from mcusim.machine import native as N

# loop over r3 = 0..199: r2 = table + r3; cmp r3, #130; ite ls; ldrbls r2, [r2]; ldrhhi r2, [r2];
# r4 += r2; bkpt (arm-none-eabi-as, Cortex-M4)
CODE = bytes.fromhex("00230024c218822b94bf1278128814440133c82bf6d100be")
FLASH, TABLE, RAM = 0x08000000, 0x08001000, 0x20000000
TABLE_BYTES = bytes((i * 37 + 11) & 0xFF for i in range(1024))


def run(hook) -> int:
    uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
    uc.ctl_set_cpu_model(A.UC_CPU_ARM_CORTEX_M4)
    uc.mem_map(FLASH, 0x10000)
    uc.mem_map(RAM, 0x10000)
    uc.mem_write(FLASH, CODE)
    uc.mem_write(TABLE, TABLE_BYTES)
    uc.reg_write(A.UC_ARM_REG_R0, TABLE)
    uc.reg_write(A.UC_ARM_REG_SP, RAM + 0x8000)
    state = N.NativeState()
    if hook:
        N.register_flash_read_hook(uc, state, FLASH, FLASH + 0xFFFF)
    uc.hook_add(UC_HOOK_INTR, lambda uc, number, data: uc.emu_stop())
    uc.emu_start(FLASH | 1, FLASH + len(CODE))
    return uc.reg_read(A.UC_ARM_REG_R4)


def test_a_hooked_conditional_load_in_an_it_block_computes_what_an_unhooked_one_does():
    expected = sum(TABLE_BYTES[i] if i <= 130 else TABLE_BYTES[i] | TABLE_BYTES[i + 1] << 8 for i in range(200))
    assert run(hook=False) == expected
    assert run(hook=True) == expected

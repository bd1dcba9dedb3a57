"""Exception timing with FP context (docs/timing.md): lazy stacking defers the 17-word FP store to
the handler's first FP instruction; without it the store is part of entry; the context stored is
loaded back on return."""
import subprocess
from pathlib import Path

from unicorn import arm_const as A

import mcusim
from conftest import require_tool

SOURCE = Path(__file__).parent / "asm" / "lazy_fp.S"


def test_fp_context_costs_only_when_stored(tmp_path):
    gcc = require_tool("arm-none-eabi-gcc")
    elf = tmp_path / "lazy_fp.elf"
    done = subprocess.run([gcc, "-nostdlib", "-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard",
                           "-Wl,-Ttext=0,-e,0", f"-Wa,-I{SOURCE.parent}", str(SOURCE), "-o", str(elf)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    sim = mcusim.Simulator(elf, "mps2-an386")
    result = sim.run()
    assert result.exit_code == 0
    reg = {name: sim.machine.uc.reg_read(getattr(A, f"UC_ARM_REG_{name}")) for name in ("R7", "R8", "R9", "R10", "R11")}
    fp_context = sim.board.core.exception_fp_context_cycles
    assert fp_context == 17
    plain, plain_fp_handler = reg["R7"], reg["R11"]           # no FP context in Thread mode
    assert reg["R8"] == plain                                 # lazy, the handler uses no FP: nothing stored
    assert reg["R9"] == plain_fp_handler + 2 * fp_context     # lazy, stored by the handler's VMOV, loaded back
    assert reg["R10"] == plain + 2 * fp_context               # LSPEN off: stored at entry, loaded back
    # the store is charged at the FP instruction: a CYCCNT read just before it leaves it out
    words = sim.machine.uc.mem_read(0x20000004, 8)
    vmov_alone, vmov_storing = int.from_bytes(words[:4], "little"), int.from_bytes(words[4:], "little")
    assert vmov_storing == vmov_alone + fp_context
    dwt = result.dwt
    assert result.instructions == (dwt["cyccnt"] - dwt["cpicnt"] - dwt["exccnt"] - dwt["sleepcnt"]
                                   - dwt["lsucnt"] + dwt["foldcnt"])

"""`mcusim trace` as people read it: --instructions disassembles every instruction and gives the
cycle of each that made a record; a bundle without a branch trace gets a hint; `trace | head`
ends quietly with 0."""
import os
import subprocess
import sys

import capstone
from click.testing import CliRunner

from mcusim.analysis import branch_trace as BT
from mcusim.cli import main
from mcusim.elf import ElfImage


def test_instructions_are_disassembled_with_the_cycles_of_their_records(firmware_build, tmp_path):
    elf = firmware_build / "mcu-d" / "bench.elf"
    runner = CliRunner()
    assert runner.invoke(main, ["run", str(elf), "--board", "mcu-d", "--branch-trace", "--trace-limit", "2000",
                                "--out", str(tmp_path), "-q"]).exit_code in (0, 124)
    done = runner.invoke(main, ["trace", str(tmp_path), "--instructions", "--limit", "3000"])
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    trace = BT.read(tmp_path / "branches.bin")
    image = ElfImage.load(elf)
    pairs = list(BT.instructions(trace, image, cycles=True))[:3000]
    assert [address for address, _ in pairs] == list(BT.instructions(trace, image))[:3000]
    engine = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    record_cycles = {int(c) for c in trace.cycles}
    code = {segment.vaddr: segment.data for segment in image.segments if segment.data}

    def at(address):
        base = next(b for b, data in code.items() if b <= address < b + len(data))
        return next(engine.disasm(code[base][address - base: address - base + 4], address, 1))

    for line, (address, cycle) in zip(lines, pairs):
        when, text = line[:14].strip(), line[14:].split()
        assert int(text[0], 16) == address
        found = at(address)
        assert line.rstrip().endswith(f"{found.mnemonic} {found.op_str}".strip())
        if cycle is None:
            assert when == ""
        else:  # a record's instruction: a taken branch or a write to PC, at its record's cycle
            assert int(when.replace(",", "")) == cycle and cycle in record_cycles
            assert found.mnemonic.startswith(("b", "cb", "tb")) or "pc" in found.op_str
    assert sum(cycle is not None for _, cycle in pairs) > 10


def test_a_bundle_without_a_branch_trace_gets_a_hint(tmp_path):
    done = CliRunner().invoke(main, ["trace", str(tmp_path)])
    assert done.exit_code == 2 and "--branch-trace" in done.output and "Errno" not in done.output


def test_trace_into_head_ends_quietly(firmware_build, tmp_path):
    assert CliRunner().invoke(main, ["run", "--example", "hello", "--board", "mcu-d", "--branch-trace",
                                     "--out", str(tmp_path), "-q"]).exit_code == 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(f"{sys.executable} -m mcusim.cli trace {tmp_path} --instructions --limit 0 | head -2",
                          shell=True, capture_output=True, text=True, env=env, executable="/bin/bash")
    assert len(done.stdout.splitlines()) == 2 and done.stderr == ""
    status = subprocess.run(f"set -o pipefail; {sys.executable} -m mcusim.cli trace {tmp_path} --instructions "
                            f"--limit 0 | head -1 >/dev/null", shell=True, env=env, executable="/bin/bash")
    assert status.returncode == 0

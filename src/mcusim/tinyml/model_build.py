"""`mcusim model build`: a TFLite model as firmware for a board. Writes the generated C, a
board wrapper (region markers per layer, the test input, the arena, the per-layer MACs table)
and the arena plan, and compiles them with the kit's board start-up code and firmware/tinyml's
kernels with arm-none-eabi-gcc."""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import load_board
from .model_link import ARENA_SECTION, LinkError, itcm_renames, linker_script, needs_script
from .model_plan import ArenaPlan, macs, plan_arena
from .model_summary import show_lines, summarize
from .placement import Placement
from .tflite_codegen import generate
from .tflite_model import TfliteModel

# Compiler flags per core (the FPU each paper board's core has: FPv4-SP on the Cortex-M4F,
# FPv5 single precision on the STM32F746's Cortex-M7F), as the kit's Makefile builds them.
CPU_FLAGS = {
    "cortex-m4": ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
    "cortex-m7": ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16", "-DMCUSIM_CORE_M7"],
}
SHARED_BOARD_SOURCES = {"mps2-an386": "mps2", "mps2-an500": "mps2"}  # system.c, console.c shared by both
COMPILER = "arm-none-eabi-gcc"


class BuildError(RuntimeError):
    """The toolchain is missing or the compile failed."""


@dataclass(frozen=True)
class BuiltModel:
    elf: Path
    source: Path
    plan: ArenaPlan
    inputs: list[np.ndarray]
    placement: Placement


def compiler_path() -> str:
    """arm-none-eabi-gcc, or BuildError saying how to install it."""
    compiler = shutil.which(COMPILER)
    if compiler is None:
        raise BuildError(f"{COMPILER} is not installed (Debian/Ubuntu: apt-get install gcc-arm-none-eabi "
                         "libnewlib-arm-none-eabi)")
    return compiler


def firmware_dir() -> Path:
    """The kit's firmware sources: inside the wheel, else the source tree."""
    packaged = Path(__file__).resolve().parent.parent / "data" / "firmware"
    if packaged.is_dir():
        return packaged
    source_tree = Path(__file__).resolve().parents[3] / "firmware"
    if source_tree.is_dir():
        return source_tree
    raise BuildError(f"cannot find the firmware sources (looked in {packaged} and {source_tree})")


def default_inputs(model: TfliteModel, seed: int = 0) -> list[np.ndarray]:
    """A reproducible input per model input: uniform int8 (or float32 in [-1, 1) for a float input)."""
    rng = np.random.default_rng(seed)
    inputs = []
    for index in model.inputs:
        tensor = model.tensors[index]
        if tensor.dtype == "float32":
            inputs.append(rng.uniform(-1, 1, tensor.shape).astype(np.float32))
        else:
            inputs.append(rng.integers(-128, 128, tensor.shape).astype(np.int8))
    return inputs


def check_inputs(model: TfliteModel, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The inputs in the model's shapes and types, or ValueError saying what differs."""
    if len(inputs) != len(model.inputs):
        raise ValueError(f"the model has {len(model.inputs)} inputs, {len(inputs)} were given")
    checked = []
    for x, index in zip(inputs, model.inputs):
        tensor = model.tensors[index]
        x = np.asarray(x)
        if x.dtype != np.dtype(tensor.dtype):
            raise ValueError(f"input {tensor.name!r} is {tensor.dtype}, the array given is {x.dtype}")
        if x.size != tensor.elements:
            raise ValueError(f"input {tensor.name!r} has shape {list(tensor.shape)} ({tensor.elements} values); "
                             f"the array given has shape {list(x.shape)}")
        checked.append(x.reshape(tensor.shape))
    return checked


def _bytes_array(name: str, data: bytes) -> str:
    rows = [", ".join(str(b) for b in data[i: i + 32]) for i in range(0, len(data), 32)] or ["0"]
    return f"static const uint8_t {name}[{max(len(data), 1)}] __attribute__((aligned(4))) = {{\n    " + \
        ",\n    ".join(rows) + "\n};\n"


def check_expected(model: TfliteModel, expected: list[np.ndarray]) -> list[bytes]:
    """The reference's outputs as the bytes the firmware compares with, or ValueError."""
    if len(expected) != len(model.outputs):
        raise ValueError(f"the model has {len(model.outputs)} outputs, {len(expected)} reference outputs were given")
    data = [np.ascontiguousarray(np.asarray(y, np.dtype(model.tensors[i].dtype))).tobytes()
            for y, i in zip(expected, model.outputs)]
    for blob, index in zip(data, model.outputs):
        if len(blob) != model.tensors[index].bytes:
            raise ValueError(f"reference output for {model.tensors[index].name!r} has {len(blob)} bytes, "
                             f"the tensor {model.tensors[index].bytes}")
    return data


def board_wrapper(model: TfliteModel, plan: ArenaPlan, inputs: list[np.ndarray], arena_section: bool = False,
                  expected: list[np.ndarray] | None = None) -> str:
    """The board's side of the model: region markers, the arena (in its own section when the
    placement puts it somewhere), the test inputs, the reference's outputs when known (the
    firmware compares its own with them: firmware/tinyml/tfl_main.c) and the per-layer MACs
    table mcusim reads (include/mcusim.h)."""
    placed = f', section("{ARENA_SECTION}")' if arena_section else ""
    lines = ['#include "mcusim.h"\n', "#define TFL_LAYER_BEGIN(name) mcusim_region_begin(name)\n",
             "#define TFL_LAYER_END(name) mcusim_region_end(name)\n", '#include "model.c"\n\n',
             f"uint8_t tfl_arena[{max(plan.size, 4)}] __attribute__((aligned(16){placed}));\n"]
    for i, x in enumerate(inputs):
        lines.append(_bytes_array(f"test_input{i}", np.ascontiguousarray(x).tobytes()))
    lines.append("const uint8_t *const tfl_model_test_inputs[] = {"
                 + ", ".join(f"test_input{i}" for i in range(len(inputs))) + "};\n")
    reference = check_expected(model, expected) if expected is not None else []
    for i, blob in enumerate(reference):
        lines.append(_bytes_array(f"expected_output{i}", blob))
    lines.append(f"const uint32_t tfl_model_expected_count = {len(reference)}u;\n"
                 "const uint8_t *const tfl_model_expected_outputs[] = {"
                 + (", ".join(f"expected_output{i}" for i in range(len(reference))) or "0") + "};\n\n")
    lines.append("const mcusim_region_info_t mcusim_region_info[] = {\n")
    for op in model.operators:
        moved = sum(model.tensors[i].bytes for i in op.inputs + op.outputs if i >= 0)
        lines.append(f'    {{ "{op.index}_{op.name}", {macs(model, op)}u, {moved}u }},\n')
    total = sum(macs(model, op) for op in model.operators)
    lines.append(f'    {{ "inference", {total}u, 0u }},\n    {{ 0, 0, 0 }},\n}};\n')
    return "".join(lines)


def build(model: TfliteModel, board_name: str, out: Path, inputs: list[np.ndarray] | None = None,
          placement: Placement = Placement(), keep_all: bool = False,
          expected: list[np.ndarray] | None = None) -> BuiltModel:
    """Generate and compile; `out` gets model.c, board_model.c, plan.txt and model.elf. `keep_all`:
    an arena where no tensor is overwritten (plan_arena). `expected`: the reference's outputs for
    `inputs`, embedded for the firmware to compare with. Raises BuildError, or PlacementError
    for a [layer_kernels] entry the model has no layer for."""
    board = load_board(board_name)
    flags = CPU_FLAGS.get(board.core.name)
    if flags is None:
        raise BuildError(f"no compiler flags for core {board.core.name}")
    compiler = compiler_path()
    inputs = check_inputs(model, inputs if inputs is not None else default_inputs(model))
    plan = plan_arena(model, keep_all=keep_all)
    out.mkdir(parents=True, exist_ok=True)
    source = out / "model.c"
    source.write_text(generate(model, plan, weights_in=placement.weights, variants=placement.variants(model)))
    try:
        wrapper = board_wrapper(model, plan, inputs, arena_section=placement.arena != "ram", expected=expected)
    except ValueError as error:  # reference outputs that do not fit the model
        raise BuildError(str(error)) from None
    (out / "board_model.c").write_text(wrapper)
    (out / "plan.txt").write_text("\n".join(show_lines(summarize(model))) + "\n")
    fw = firmware_dir()
    board_dir = fw / "boards" / board_name
    shared = fw / "boards" / SHARED_BOARD_SOURCES.get(board_name, board_name)
    board_sources = [board_dir / "startup.c"] + [(board_dir / f if (board_dir / f).exists() else shared / f)
                                                 for f in ("system.c", "console.c")]
    script = board_dir / "linker.ld"
    if needs_script(placement):
        try:
            (out / "model.ld").write_text(linker_script(board, script, placement, plan.size))
        except LinkError as error:
            raise BuildError(f"cannot place {model.path} on {board_name} as asked: {error}") from None
        script = out / "model.ld"
    compile_flags = [*flags, "-std=c11", "-O2", "-g", "-Wall", "-Wextra", "-Wno-unused-const-variable",
                     "-ffunction-sections", "-fdata-sections", f"-ffile-prefix-map={fw}=firmware",  # (as the kit's)
                     f"-I{fw / 'include'}", f"-I{fw / 'common'}",
                     f"-I{fw / 'tinyml'}", f"-I{out}", f"-DBOARD_NAME=\"{board_name}\""]
    model_sources = [out / "board_model.c", fw / "tinyml" / "tfl_ops.c", fw / "tinyml" / "tfl_ops_opt.c"]
    if placement.code == "itcm":
        model_sources = [_object_in_itcm(compiler, compile_flags, path, out) for path in model_sources]
    elf = out / "model.elf"
    command = [compiler, *compile_flags, "--specs=nano.specs", "--specs=rdimon.specs", "-nostartfiles",
               "-Wl,--gc-sections", f"-L{fw / 'common'}", f"-T{script}", *[str(s) for s in model_sources],
               str(fw / "tinyml" / "tfl_main.c"), *[str(s) for s in board_sources], "-o", str(elf)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        if "overflowed" in done.stderr:
            where = "ITCM" if "ITCM" in done.stderr else "RAM" if "RAM" in done.stderr else "flash"
            raise BuildError(f"{model.path} does not fit {board_name}'s {where} with weights in {placement.weights} "
                             f"and code in {placement.code} (weights {sum(t.bytes for t in model.tensors if t.constant):,} "
                             f"bytes, arena {plan.size:,} bytes):\n{done.stderr[-1500:]}")
        raise BuildError(f"{COMPILER} failed building {model.path} for {board_name}:\n{done.stderr[-4000:]}")
    return BuiltModel(elf, source, plan, inputs, placement)


def _object_in_itcm(compiler: str, flags: list[str], source: Path, out: Path) -> Path:
    """`source` compiled to an object whose code sections are renamed into the ITCM output section."""
    from elftools.elf.elffile import ELFFile

    obj = out / f"{source.stem}.o"
    done = subprocess.run([compiler, *flags, "-c", str(source), "-o", str(obj)], capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"{COMPILER} failed compiling {source.name}:\n{done.stderr[-4000:]}")
    with obj.open("rb") as stream:
        names = [section.name for section in ELFFile(stream).iter_sections()]
    objcopy = shutil.which("arm-none-eabi-objcopy")
    if objcopy is None:
        raise BuildError("arm-none-eabi-objcopy is not installed (it comes with gcc-arm-none-eabi)")
    done = subprocess.run([objcopy, *itcm_renames(names), str(obj)], capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"arm-none-eabi-objcopy failed on {obj.name}:\n{done.stderr[-2000:]}")
    return obj

"""The TinyML measurements of Zhang et al., "Power-Performance Characterization of TinyML
Systems" (IEEE ICCD 2022), next to mcusim's, on the kit's models.

    python benchmarks/paper_tables.py            (after `make -C firmware`)

Prints Markdown tables for docs/experiments.md:
  Table IV  Micro Speech with plain C kernels vs SIMD kernels on mcu-m (rows 1 and 2).
  Table V   four 1x1 convolutions of Person Detection on mcu-s, mcu-b, mcu-d.
  Table VI  throughput of each model on mcu-m, mcu-b, mcu-d relative to mcu-s.
  Table VIII-style: Keyword Spotting at three widths, latency against model size on mcu-s, mcu-d.
Latencies are the firmware's `inference` and layer regions (ITM markers), in simulated time at
the clock each board's firmware sets. The numbers are simulated, so the same on any host.
"""
from __future__ import annotations

from pathlib import Path

import mcusim
from mcusim.tinyml.kit_firmware import layer_regions

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "firmware" / "build"

# Table IV rows 1 and 2 (MCU-M, bare metal): unoptimized C 488.3 ms, CMSIS-NN 46.2 ms.
PAPER_TABLE_IV = {"ref": 488.3, "opt": 46.2}
# Table V: Conv1x1 layers A-D of Person Detection, latency in ms on MCU-S, MCU-B, MCU-D.
PAPER_TABLE_V = {"A": (295_000, {"mcu-s": 66, "mcu-b": 31, "mcu-d": 11}),
                 "B": (590_000, {"mcu-s": 40, "mcu-b": 21, "mcu-d": 6}),
                 "C": (295_000, {"mcu-s": 28, "mcu-b": 15, "mcu-d": 5}),
                 "D": (590_000, {"mcu-s": 31, "mcu-b": 16, "mcu-d": 4})}
# The kit's layers with those MAC counts: A has few input channels (8), B, C, D more. The firmware
# marks each layer by its exported node, "<index>_<OP>" (layer_regions: pw1 -> 2_CONV_2D).
TABLE_V_LAYERS = {"A": "pw1", "B": "pw3", "C": "pw2", "D": "pw5"}
# Table VI: throughput relative to MCU-S (Person Detection did not fit MCU-M in the paper).
PAPER_TABLE_VI = {"anomaly_ae": (1.43, 1.64, 6.89), "micro_speech": (1.27, 1.53, 6.67),
                  "kws_dscnn": (1.38, 1.84, 6.82), "person_detection": (None, 1.77, 6.63),
                  "resnet8": (1.36, 2.14, 5.99)}
PAPER_NAMES = {"anomaly_ae": "Anomaly Detection", "micro_speech": "Micro Speech", "kws_dscnn": "Keyword Spotting",
               "person_detection": "Person Detection", "resnet8": "Image Classification"}


def regions(board: str, program: str) -> dict[str, dict]:
    result = mcusim.run(BUILD / board / f"{program}.elf", board)
    if result.exit_code != 0:
        raise SystemExit(f"{program} on {board} failed:\n{result.stdout}")
    return {row["name"]: row for row in result.regions}


def ms(row: dict) -> float:
    return 1000 * row["seconds_mean"]


def table_iv() -> str:
    lines = ["| Micro Speech on mcu-m | paper (ms) | mcusim (ms) | mcusim / paper |", "|---|---|---|---|"]
    measured = {variant: ms(regions("mcu-m", f"micro_speech-{variant}")["inference"]) for variant in ("ref", "opt")}
    for variant, label in (("ref", "1) plain C kernels"), ("opt", "2) SIMD kernels")):
        paper = PAPER_TABLE_IV[variant]
        lines.append(f"| {label} | {paper:.1f} | {measured[variant]:.1f} | {measured[variant] / paper:.2f} |")
    lines.append(f"| speedup (1 / 2) | {PAPER_TABLE_IV['ref'] / PAPER_TABLE_IV['opt']:.1f}x | "
                 f"{measured['ref'] / measured['opt']:.1f}x | |")
    return "\n".join(lines)


def table_v() -> str:
    boards = ["mcu-s", "mcu-b", "mcu-d"]
    region = layer_regions("person_detection")
    measured = {}  # board -> the kit layer's region row
    for board in boards:
        rows = regions(board, "person_detection-opt")
        measured[board] = {layer: rows[region[layer]] for layer in TABLE_V_LAYERS.values()}
    lines = ["| layer (kit) | MACs | " + " | ".join(f"{b} paper (ms) | {b} mcusim (ms)" for b in boards) + " |",
             "|---" * (2 + 2 * len(boards)) + "|"]
    for key, layer in TABLE_V_LAYERS.items():
        paper_macs, paper = PAPER_TABLE_V[key]
        row = measured[boards[0]][layer]
        cells = " | ".join(f"{paper[b]} | {ms(measured[b][layer]):.2f}" for b in boards)
        lines.append(f"| {key} ({layer}) | {row['macs']:,} (paper {paper_macs // 1000}k) | {cells} |")
    for big, small in (("B", "A"), ("D", "C")):
        cells = " | ".join(f"{PAPER_TABLE_V[big][1][b] / PAPER_TABLE_V[small][1][b]:.2f} | "
                           f"{ms(measured[b][TABLE_V_LAYERS[big]]) / ms(measured[b][TABLE_V_LAYERS[small]]):.2f}"
                           for b in boards)
        lines.append(f"| ratio {big}/{small} | 2x | {cells} |")
    return "\n".join(lines)


def table_vi() -> str:
    boards = ["mcu-m", "mcu-b", "mcu-d"]
    lines = ["| application (kit model) | " + " | ".join(f"{b} paper | {b} mcusim" for b in boards) + " |",
             "|---" * (1 + 2 * len(boards)) + "|"]
    sums = {b: [] for b in boards}
    for model, paper in PAPER_TABLE_VI.items():
        base = ms(regions("mcu-s", f"{model}-opt")["inference"])
        cells = []
        for board, paper_ratio in zip(boards, paper):
            ratio = base / ms(regions(board, f"{model}-opt")["inference"])
            if paper_ratio:  # average over the models the paper has a value for
                sums[board].append(ratio)
            cells.append(f"{paper_ratio:.2f} | {ratio:.2f}" if paper_ratio else f"n/a | {ratio:.2f}")
        lines.append(f"| {PAPER_NAMES[model]} ({model}) | " + " | ".join(cells) + " |")
    averages = {"mcu-m": 1.36, "mcu-b": 1.78, "mcu-d": 6.60}
    lines.append("| average (where the paper has a value) | " + " | ".join(f"{averages[b]:.2f} | {sum(sums[b]) / len(sums[b]):.2f}"
                                           for b in boards) + " |")
    return "\n".join(lines)


# Table VIII: MicroNet-KWS-L/M/S, TFLite model size (KB) and latency (ms) on MCU-S and MCU-D.
PAPER_TABLE_VIII = {"S": (115, 646, 99), "M": (182, 1118, 172), "L": (659, 3790, 566)}


def table_viii() -> str:
    from mcusim.tinyml.build import build
    from mcusim.tinyml.models import MODELS

    lines = ["| size | paper model (KB) | paper mcu-s (ms) | paper mcu-d (ms) | kit model | kit weights (KB) | "
             "mcusim mcu-s (ms) | mcusim mcu-d (ms) |", "|---" * 8 + "|"]
    for size, model in (("S", "kws_dscnn_s"), ("M", "kws_dscnn"), ("L", "kws_dscnn_l")):
        built = build(MODELS[model])
        weights = sum(q.weights.size + 4 * q.bias.size for q in built.layers if q.weights is not None) / 1024
        kb, paper_s, paper_d = PAPER_TABLE_VIII[size]
        s_ms = ms(regions("mcu-s", f"{model}-opt")["inference"])
        d_ms = ms(regions("mcu-d", f"{model}-opt")["inference"])
        lines.append(f"| {size} | {kb} | {paper_s} | {paper_d} | {model} | {weights:.1f} | {s_ms:.1f} | {d_ms:.1f} |")
    return "\n".join(lines)


def main() -> None:
    print("Table IV\n\n" + table_iv() + "\n\nTable V\n\n" + table_v() + "\n\nTable VI\n\n" + table_vi()
          + "\n\nTable VIII\n\n" + table_viii())


if __name__ == "__main__":
    main()

"""The power model against the paper's power measurements (docs/power.md, "Checks against the paper").

    python benchmarks/power_paper.py [--variant opt]

Runs the five paper workloads on each board and prints, per board and workload, the latency
and energy of one inference (the firmware's "inference" region) and the average power; then
Fig. 5's relation (energy tracks latency at near-constant power: the spread of the average
power across workloads), Fig. 6's ordering (inferences per joule, i.e. performance per watt,
per board) and Table IV row 2 (Micro Speech, CMSIS-NN style kernels, bare metal, on mcu-m).
"""
from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import mcusim

ROOT = Path(__file__).resolve().parents[1]
MODELS = ["micro_speech", "person_detection", "kws_dscnn", "resnet8", "anomaly_ae"]
BOARDS = ["mcu-s", "mcu-m", "mcu-b", "mcu-d"]
TABLE_IV_ROW_2 = {"latency_ms": 46.2, "energy_mj": 5.1}  # paper Table IV, "CMSIS-NN + Bare-Metal", MCU-M


def inference(board: str, model: str, variant: str) -> dict:
    result = mcusim.run(ROOT / "firmware" / "build" / board / f"{model}-{variant}.elf", board)
    row = next(r for r in result.regions if r["name"] == "inference")
    return {"latency_s": row["seconds_mean"], "energy_j": row["energy_j"], "power_w": row["average_power_w"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="opt")
    args = parser.parse_args()
    results = {(b, m): inference(b, m, args.variant) for b in BOARDS for m in MODELS}
    print("| board | workload | latency ms | energy mJ | average mW | inferences per J |")
    print("|---|---|---|---|---|---|")
    for (board, model), r in results.items():
        print(f"| {board} | {model} | {1e3 * r['latency_s']:.2f} | {1e3 * r['energy_j']:.3f} | "
              f"{1e3 * r['power_w']:.1f} | {1 / r['energy_j']:.1f} |")
    print("\nFig. 5: average power across the five workloads (energy / latency)")
    print("| board | min mW | max mW | spread |")
    print("|---|---|---|---|")
    for board in BOARDS:
        powers = [results[board, m]["power_w"] for m in MODELS]
        print(f"| {board} | {1e3 * min(powers):.1f} | {1e3 * max(powers):.1f} | "
              f"{100 * (max(powers) - min(powers)) / statistics.mean(powers):.1f}% |")
    print("\nFig. 6: performance per watt (inferences per joule), geometric mean over the workloads")
    print("| board | inferences per J |")
    print("|---|---|")
    for board in BOARDS:
        per_joule = statistics.geometric_mean([1 / results[board, m]["energy_j"] for m in MODELS])
        print(f"| {board} | {per_joule:.1f} |")
    ours = results["mcu-m", "micro_speech"]
    print("\nTable IV row 2 (Micro Speech, CMSIS-NN + bare metal, MCU-M)")
    print("| | latency ms | energy mJ | average mW |")
    print("|---|---|---|---|")
    print(f"| paper | {TABLE_IV_ROW_2['latency_ms']} | {TABLE_IV_ROW_2['energy_mj']} | "
          f"{TABLE_IV_ROW_2['energy_mj'] / TABLE_IV_ROW_2['latency_ms'] * 1e3:.1f} |")
    print(f"| mcusim ({args.variant}) | {1e3 * ours['latency_s']:.2f} | {1e3 * ours['energy_j']:.3f} | "
          f"{1e3 * ours['power_w']:.1f} |")


if __name__ == "__main__":
    main()

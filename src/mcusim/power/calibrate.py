"""Fit a power model's coefficients to measurements (`mcusim calibrate`): non-negative least
squares (scipy) over the event counts and the time at each operating point that mcusim
simulates for each measured run.

Each row of the measurements CSV names a firmware and its settings and gives the measured
energy (`energy_j`) or average power (`power_w`) and optionally the measured time (`time_s`);
the columns: firmware, clock_hz, voltage_range, energy_j, power_w, time_s (empty cells allowed).
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..files import NotRegular, open_regular
from .model import CLASS_EVENTS, power_model_from

# The coefficients a fit can set: (rail, table, key), and how each one's feature is computed.
EVENT_TERMS = [(rail, "energy_j", event) for rail, event in
               [("core", e) for e in CLASS_EVENTS] + [("sram", "sram_access"), ("flash", "flash_read")]]
STATIC_TERMS = [("core", "static_w_per_mhz", "run"), ("core", "static_w", "run"), ("board", "static_w", "run"),
                ("core", "static_w", "sleep"), ("core", "static_w", "stop")]
TERMS = EVENT_TERMS + STATIC_TERMS


def term_name(term) -> str:
    rail, table, key = term
    return f"{rail}.{table}.{key}"


@dataclass
class Measurement:
    firmware: str
    clock_hz: int | None
    voltage_range: str | None
    energy_j: float | None
    power_w: float | None
    time_s: float | None
    where: str = ""  # "FILE:LINE", for messages


def read_measurements(path: str | Path) -> list[Measurement]:
    """The CSV's rows; ValueError naming the row for a missing column, or a clock, energy, power
    or time that is not a positive finite number (a fit to it would mean nothing)."""
    rows = []
    try:
        with io.TextIOWrapper(open_regular(path), encoding="utf-8", newline="") as f:
            raws = list(csv.DictReader(f))
    except NotRegular as exc:
        raise ValueError(f"{path}: not a measurements CSV: it is {exc.kind}, not a regular file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path}: not a measurements CSV ({exc})") from None
    for number, raw in enumerate(raws, start=2):
        where = f"{path}:{number}"

        def value(key):
            text = (raw.get(key) or "").strip()
            if not text:
                return None
            try:
                figure = float(text)
            except ValueError:
                raise ValueError(f"{where}: {key} {text!r} is not a number") from None
            if not math.isfinite(figure) or figure <= 0:
                raise ValueError(f"{where}: {key} {text} must be a positive finite number")
            return figure
        if not (raw.get("firmware") or "").strip():
            raise ValueError(f"{where}: no firmware (columns: firmware, clock_hz, voltage_range, energy_j, "
                             "power_w, time_s)")
        clock = value("clock_hz")
        if clock is not None and clock != int(clock):
            raise ValueError(f"{where}: clock_hz {clock:g} is not a whole number of Hz")
        row = Measurement(raw["firmware"].strip(), None if clock is None else int(clock),
                          (raw.get("voltage_range") or "").strip() or None, value("energy_j"), value("power_w"),
                          value("time_s"), where)
        if row.energy_j is None and row.power_w is None:
            raise ValueError(f"{where}: give energy_j or power_w")
        if not Path(row.firmware).is_absolute():
            row.firmware = str(Path(path).parent / row.firmware)
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no measurements")
    return rows


def features(counts: dict[str, int], segments, model) -> np.ndarray:
    """One row of the design matrix: what each coefficient multiplies in this run's energy."""
    run = [s for s in segments if s.state == "run"]
    seconds = sum(s.end_s - s.start_s for s in segments) or 1e-30
    squared = sum((s.end_s - s.start_s) * model.scale(s.voltage_range) ** 2 for s in segments) / seconds
    row = [counts.get(event, 0) * squared for _, _, event in EVENT_TERMS]
    row.append(sum((s.end_s - s.start_s) * s.clock_hz / 1e6 * model.scale(s.voltage_range) ** 2 for s in run))
    row.append(sum((s.end_s - s.start_s) * model.scale(s.voltage_range) for s in run))
    row.append(sum(s.end_s - s.start_s for s in run))
    for state in ("sleep", "stop"):
        row.append(sum((s.end_s - s.start_s) * model.scale(s.voltage_range) for s in segments if s.state == state))
    return np.array(row, float)


def target(measurement: Measurement, simulated_s: float) -> float:
    """The measured energy of the run (power x the measured time, else x the simulated time)."""
    if measurement.energy_j is not None:
        return measurement.energy_j
    return measurement.power_w * (measurement.time_s if measurement.time_s is not None else simulated_s)


@dataclass
class Fit:
    terms: list            # the fitted terms, in TERMS' notation
    values: np.ndarray     # their coefficients
    predicted: np.ndarray  # energy per row
    measured: np.ndarray
    r_squared: float | None  # None: undefined (see r_squared)


def fit(design: np.ndarray, measured: np.ndarray, fixed: np.ndarray) -> Fit:
    """NNLS on the terms some row excites; `fixed` holds each term's energy from the base model
    for the terms left out (it is taken off the measurements first)."""
    from scipy.optimize import nnls

    used = [j for j in range(design.shape[1]) if np.any(design[:, j] > 0)]
    if len(used) > len(measured):
        raise ValueError(f"{len(measured)} measurements cannot fit {len(used)} coefficients: add rows (other "
                         "firmware, clocks or voltage ranges) or fit fewer terms (--fit)")
    a = design[:, used]
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    solution, _ = nnls(a / scale, measured - fixed)
    values = solution / scale
    predicted = a @ values + fixed
    return Fit([TERMS[j] for j in used], values, predicted, measured, r_squared(measured, predicted))


def r_squared(measured: np.ndarray, predicted: np.ndarray) -> float | None:
    """1 - residual / total sum of squares; None (undefined) with fewer than two rows, when
    every row measured the same energy, as there is no variance to explain, or when the sums
    are beyond floating point (energies of 1e-300 and 1e300 J)."""
    if len(measured) < 2:
        return None
    with np.errstate(all="ignore"):
        total = float(np.sum((measured - measured.mean()) ** 2))
        value = 1.0 - float(np.sum((measured - predicted) ** 2)) / total if total > 0 else math.nan
    return value if math.isfinite(value) else None


def residual(measured: float, predicted: float) -> float | None:
    """(predicted - measured) / measured; None when that is not a finite number."""
    with np.errstate(all="ignore"):
        value = float((predicted - measured) / measured) if measured else math.nan
    return value if math.isfinite(value) else None


def percent(fraction: float | None) -> str:
    return "n/a" if fraction is None else f"{100 * fraction:.2f}%"


def report(rows: list[Measurement], result: Fit) -> list[str]:
    """`mcusim calibrate`'s table: each run's measured and predicted energy and residual, R^2
    and the fitted coefficients; n/a for a figure that is not a finite number."""
    lines = [f"{'run':<28} {'measured J':>12} {'predicted J':>12} {'residual':>9}"]
    for row, m, p in zip(rows, result.measured, result.predicted):
        label = Path(row.firmware).name + (f"@{row.clock_hz / 1e6:g}MHz" if row.clock_hz else "")
        lines.append(f"{label[:28]:<28} {m:>12.6g} {p:>12.6g} {percent(residual(m, p)):>9}")
    if result.r_squared is None:
        lines.append(f"R^2 = n/a over {len(rows)} run(s) (undefined: fewer than two runs, every run measured the "
                     "same energy, or energies beyond floating point); fitted:")
    else:
        lines.append(f"R^2 = {result.r_squared:.6f} over {len(rows)} runs; fitted:")
    lines += [f"  {term_name(term):<32} {value:.6g}" for term, value in zip(result.terms, result.values)]
    return lines


def provenance(measurements: str | Path, rows: list[Measurement], result: Fit) -> str:
    """What the fitted model's sources say about the fit."""
    residuals = [residual(m, p) for m, p in zip(result.measured, result.predicted)]
    worst = None if None in residuals else max(abs(r) for r in residuals)
    r2 = "n/a" if result.r_squared is None else f"{result.r_squared:.4f}"
    return f"mcusim calibrate on {Path(measurements).name} ({len(rows)} runs, R^2 {r2}, worst residual {percent(worst)})"


def check(data: dict) -> None:
    """ConfigError naming the key when the fitted model is out of what a power model may hold
    (the loader's checks: `mcusim run` would refuse it)."""
    power_model_from(data, "the fitted model")


def apply(data: dict, result: Fit, provenance: str) -> dict:
    """The base model's TOML data with the fitted coefficients in place, each rail's source
    extended with the fit's provenance."""
    rails = {rail["name"]: rail for rail in data["rail"]}
    for (rail, table, key), value in zip(result.terms, result.values):
        target_rail = rails.setdefault(rail, {"name": rail})
        if rail not in [r["name"] for r in data["rail"]]:
            data["rail"].append(target_rail)
        target_rail.setdefault(table, {})[key] = float(value)
        note = f" Fitted {table}.{key}: {provenance}."
        if note not in target_rail.get("source", ""):
            target_rail["source"] = target_rail.get("source", "") + note
    return data


def to_toml(data: dict) -> str:
    """The power model as TOML (the subset the schema uses: scalars, flat tables, [[rail]])."""
    def scalar(value):
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return repr(value)
        if isinstance(value, list):
            return "[" + ", ".join(scalar(v) for v in value) + "]"
        return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    def inline(table: dict) -> str:
        return "{ " + ", ".join(f"{k} = {scalar(v)}" for k, v in table.items()) + " }"

    lines = [f"{k} = {scalar(v)}" for k, v in data.items() if not isinstance(v, dict) and k != "rail"]
    tables = []
    for key, value in data.items():
        if isinstance(value, dict):
            for name, sub in value.items():
                if isinstance(sub, dict):
                    tables += ["", f"[{key}.{name}]"] + [f"{k} = {scalar(v)}" for k, v in sub.items()]
                else:
                    lines.append(f"{key}.{name} = {scalar(sub)}")  # (dotted keys before any table)
    lines += tables
    for rail in data.get("rail", []):
        lines += ["", "[[rail]]"]
        for k, v in rail.items():
            lines.append(f"{k} = {inline(v) if isinstance(v, dict) else scalar(v)}")
    return "\n".join(lines) + "\n"


def simulate(rows: list[Measurement], board: str, model_path: str | None, on_run=None):
    """Run each measured firmware as measured; returns (design matrix, measured energies,
    the base model's energies, simulated seconds)."""
    from ..api import Simulator
    from .energy import RunEnergy

    design, measured, base, seconds = [], [], [], []
    for i, row in enumerate(rows):
        if on_run:
            on_run(i, row)
        try:
            sim = Simulator(row.firmware, board, clock_hz=row.clock_hz, voltage_range=row.voltage_range,
                            power_model=model_path)
        except ValueError as exc:  # (an ElfError, an unknown voltage range: the row's)
            raise ValueError(f"{row.where}: {exc}") from exc
        result = sim.run()
        meter = sim.machine.power
        if meter is None:
            raise ValueError(f"{board} has no power model to start from: give --power-model")
        energy = RunEnergy(meter, result.cycles, result.simulated_seconds)
        design.append(features(meter.counts(), energy.segments, meter.model))
        measured.append(target(row, result.simulated_seconds))
        base.append(sum(energy.totals().values()))
        seconds.append(result.simulated_seconds)
    return np.array(design), np.array(measured), np.array(base), np.array(seconds), meter.model


def base_coefficients(model) -> np.ndarray:
    rails = {rail.name: rail for rail in model.rails}
    values = []
    for rail, table, key in TERMS:
        r = rails.get(rail)
        values.append(getattr(r, table).get(key, 0.0) if r is not None else 0.0)
    return np.array(values)


def calibrate(design, measured, base_energy, model, chosen: list[str] | None = None) -> Fit:
    """Fit the chosen terms (all that the runs excite by default); the rest of the base model
    stays as it is and its share is taken off the measurements."""
    names = [term_name(t) for t in TERMS]
    unknown = set(chosen or []) - set(names)
    if unknown:
        raise ValueError(f"unknown terms {sorted(unknown)}; the terms: {', '.join(names)}")
    columns = [j for j, name in enumerate(names) if chosen is None or name in chosen]
    coefficients = base_coefficients(model)
    fixed = base_energy - design[:, columns] @ coefficients[columns]
    mask = np.zeros_like(design)
    mask[:, columns] = design[:, columns]
    return fit(mask, measured, fixed)

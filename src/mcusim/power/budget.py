"""What a run's energy means for a deployed device: the average power of an inference every T
seconds with the core asleep in between, against a budget and a battery (`mcusim power-budget`),
and the energy per inference across clocks and voltage ranges (`mcusim dvfs`). docs/power.md."""
from __future__ import annotations

from pathlib import Path

from ..config import ConfigError
from .model import PowerModel, load_power_model
from ..units import joules, seconds

DEFAULT_REGION = "inference"
SLEEP_STATES = ("stop", "sleep")  # deepest first: the states a duty-cycled firmware waits in
JOULES_PER_MAH_V = 3.6            # 1 mAh at 1 V: 3.6 C x 1 V


class BudgetError(ValueError):
    """The bundle or the arguments do not allow the computation (a usage error)."""


def run_model(run: dict, path: str | Path | None = None) -> tuple[PowerModel, list[str]]:
    """The power model a run used (run.json power.model), or the one at `path`; with notes when
    the recorded file is gone and the board's current model stands in."""
    notes = []
    if not run.get("power"):
        raise BudgetError(f"the run has no energy figures: board {run.get('board')} had no power model "
                          "(or the bundle predates energy accounting); rerun with --power-model FILE")
    recorded = run["power"].get("model")
    if path is None and recorded and not Path(recorded).is_file():
        notes.append(f"the run's power model {recorded} is gone: using the board's current model")
        recorded = None
    try:
        return load_power_model(run["board"], path or recorded), notes
    except ConfigError as exc:
        raise BudgetError(str(exc)) from exc


def run_voltage_range(run: dict, model: PowerModel) -> str:
    """The voltage range the run ended in: pinned, recorded, the only one used, or the default."""
    power = run.get("power") or {}
    used = power.get("voltage_ranges") or []
    name = ((run.get("settings") or {}).get("voltage_range") or power.get("voltage_range")
            or (used[-1] if len(used) == 1 else None) or model.default_voltage_range)
    if name not in model.voltage_ranges:
        raise BudgetError(f"voltage range {name!r} is not in the power model {model.source_file}")
    return name


def active_part(run: dict, region: str | None) -> dict:
    """Energy and time of one inference: region `region` (mean per run), by default the region
    "inference" when the firmware marks it, else the whole run."""
    rows = {row["name"]: row for row in run.get("regions") or []}
    if region is None and DEFAULT_REGION in rows:
        region = DEFAULT_REGION
    if region is None:
        if run.get("energy_j") is None:
            raise BudgetError("the run has no energy figures (no power model)")
        return {"what": "the whole run (the firmware marks no \"inference\" region)", "region": None,
                "energy_j": float(run["energy_j"]), "seconds": float(run["simulated_seconds"]), "runs": 1}
    if region not in rows:
        known = ", ".join(rows) or "none"
        raise BudgetError(f"the run has no region {region!r} (regions: {known})")
    row = rows[region]
    if row.get("energy_j") is None:
        raise BudgetError(f"region {region!r} has no energy figures (no power model for the run)")
    count = int(row.get("count", 1))
    return {"what": f"region \"{region}\" (mean of {count} run{'s' if count != 1 else ''})", "region": region,
            "energy_j": float(row["energy_j"]), "seconds": float(row["seconds_mean"]), "runs": count}


def sleep_state(run: dict) -> tuple[str, bool]:
    """The deepest state the firmware slept in (stop before sleep), and whether it was assumed
    ("sleep", when the firmware never slept)."""
    seconds = (run.get("power") or {}).get("seconds_by_state") or {}
    for state in SLEEP_STATES:
        if seconds.get(state, 0) > 0:
            return state, False
    return "sleep", True


def power_budget(run: dict, period_s: float, budget_w: float, *, region: str | None = None,
                 battery_mah: float | None = None, battery_v: float | None = None,
                 model_path: str | Path | None = None) -> dict:
    """One inference every `period_s`, asleep in between:

        average W = (E_active + P_sleep x (period - t_active) + E_wakeup) / period

    with E_wakeup = wakeup_us of the sleep state x the active power (E_active / t_active).
    Raises BudgetError on a period shorter than the active time (plus the wake-up)."""
    if period_s <= 0 or budget_w <= 0:
        raise BudgetError("the period and the budget must be positive")
    if (battery_mah is None) != (battery_v is None):
        raise BudgetError("give both --battery-mah and --battery-v")
    if battery_mah is not None and (battery_mah <= 0 or battery_v <= 0):
        raise BudgetError("the battery's capacity and voltage must be positive")
    model, notes = run_model(run, model_path)
    active = active_part(run, region)
    if active["seconds"] <= 0:
        raise BudgetError("the active part took no time")
    active_w = active["energy_j"] / active["seconds"]
    state, assumed = sleep_state(run)
    clock_hz = int(run["clock_hz"])
    voltage_range = run_voltage_range(run, model)
    limit = model.max_clock_hz.get(voltage_range)
    if limit and clock_hz > limit:
        notes.append(f"the run's clock {clock_hz / 1e6:g} MHz is above {voltage_range}'s max_clock_hz "
                     f"({limit / 1e6:g} MHz): its energy is at a voltage the part cannot run at")
    sleep_by_rail = model.static_power(state, clock_hz, voltage_range)
    sleep_w = sum(sleep_by_rail.values())
    wakeup_us = model.wakeup_us.get(state)
    if wakeup_us is None:
        notes.append(f"the power model gives no wake-up time from {state}: no wake-up cost counted")
    wakeup_s = (wakeup_us or 0.0) * 1e-6
    wakeup_j = wakeup_s * active_w
    if period_s < active["seconds"] + wakeup_s:
        raise BudgetError(f"the period ({period_s:g} s) is shorter than the active time "
                          f"({active['seconds']:.6g} s{f' + {wakeup_s:.3g} s wake-up' if wakeup_s else ''})")
    sleep_s = period_s - active["seconds"]
    average_w = (active["energy_j"] + sleep_w * sleep_s + wakeup_j) / period_s
    # the shortest period the budget allows: budget x T = E_active + E_wakeup + P_sleep x (T - t_active)
    fixed_j = active["energy_j"] + wakeup_j - sleep_w * active["seconds"]
    min_period = max(fixed_j / (budget_w - sleep_w), active["seconds"] + wakeup_s) if budget_w > sleep_w else None
    out = {
        "board": run.get("board"), "firmware": (run.get("firmware") or {}).get("path"),
        "power_model": model.source_file, "clock_hz": clock_hz, "voltage_range": voltage_range,
        "active": {**active, "power_w": active_w},
        "sleep": {"state": state, "assumed": assumed, "power_w": sleep_w, "power_by_rail_w": sleep_by_rail,
                  "seconds": sleep_s},
        "wakeup": {"us": wakeup_us, "energy_j": wakeup_j},
        "period_s": period_s, "duty_cycle": active["seconds"] / period_s,
        "average_power_w": average_w, "energy_per_period_j": average_w * period_s,
        "budget_w": budget_w, "pass": average_w <= budget_w, "margin_w": budget_w - average_w,
        "min_period_s": min_period, "battery": None, "notes": notes,
    }
    if battery_mah is not None:
        stored_j = battery_mah * battery_v * JOULES_PER_MAH_V
        life_s = stored_j / average_w
        out["battery"] = {"mah": battery_mah, "v": battery_v, "energy_j": stored_j, "life_s": life_s,
                          "life_h": life_s / 3600, "life_days": life_s / 86400}
    return out


# DVFS -------------------------------------------------------------------------------------------
def dvfs_plan(model: PowerModel, nominal_hz: int, clocks: list[int] | tuple[int, ...] = ()) -> list[tuple[int, str]]:
    """(clock, voltage range) per clock to try, slowest first: `clocks`, else the model's
    dvfs_clocks_hz, else the board's nominal clock, its half and its quarter; each at the
    lowest-voltage range that allows it. BudgetError for a clock no range allows."""
    chosen = sorted(set(clocks or model.dvfs_clocks_hz or (nominal_hz, nominal_hz // 2, nominal_hz // 4)))
    plan = []
    for hz in chosen:
        name = model.range_for_clock(hz)
        if name is None:
            limits = ", ".join(f"{r} {v / 1e6:g} MHz" for r, v in model.max_clock_hz.items())
            raise BudgetError(f"{hz / 1e6:g} MHz is above every voltage range's max_clock_hz ({limits})")
        plan.append((hz, name))
    return plan


def dvfs_row(run: dict, clock_hz: int, voltage_range: str, model: PowerModel, region: str | None) -> dict:
    """One line of the DVFS table from a run's run.json document."""
    active = active_part(run, region)
    return {"clock_hz": clock_hz, "voltage_range": voltage_range, "core_v": model.voltage_ranges[voltage_range],
            "latency_s": active["seconds"], "energy_j": active["energy_j"],
            "average_power_w": active["energy_j"] / active["seconds"] if active["seconds"] else 0.0,
            "what": active["what"], "cycles": run.get("cycles"), "exit_code": (run.get("exit") or {}).get("code")}


def energy_optimal(rows: list[dict]) -> dict:
    return min(rows, key=lambda row: row["energy_j"])


# text ---------------------------------------------------------------------------------------------
def watts(w: float) -> str:
    for scale, unit in ((1, "W"), (1e-3, "mW"), (1e-6, "uW")):
        if abs(w) >= scale:
            return f"{w / scale:.3f} {unit}"
    return f"{w / 1e-9:.3f} nW"






def budget_lines(b: dict) -> list[str]:
    """`mcusim power-budget`'s report."""
    active, sleep, wake = b["active"], b["sleep"], b["wakeup"]
    state = sleep["state"] + (" (assumed: the firmware never slept)" if sleep["assumed"]
                              else " (the deepest state the firmware slept in)")
    lines = [
        f"run:      {b['board']}, {Path(b['firmware'] or '?').name}, {b['clock_hz'] / 1e6:g} MHz, "
        f"{b['voltage_range']}; power model {b['power_model']}",
        f"active:   {active['what']}: {joules(active['energy_j'])} in {seconds(active['seconds'])} "
        f"({watts(active['power_w'])})",
        f"sleep:    {state}: {watts(sleep['power_w'])}",
        (f"wake-up:  {wake['us']:g} us from {sleep['state']} at the active power: {joules(wake['energy_j'])}"
         if wake["us"] is not None else f"wake-up:  not in the power model for {sleep['state']}: not counted"),
        f"period:   {seconds(b['period_s'])}: active {100 * b['duty_cycle']:.3g} %, asleep {seconds(sleep['seconds'])}",
        f"average:  {watts(b['average_power_w'])} ({joules(b['energy_per_period_j'])} per period)",
    ]
    verdict = "PASS" if b["pass"] else "FAIL"
    over = "under" if b["pass"] else "over"
    line = f"budget:   {watts(b['budget_w'])}: {verdict} ({watts(abs(b['margin_w']))} {over})"
    if b["min_period_s"] is not None:
        line += f"; the budget holds for periods of {seconds(b['min_period_s'])} or more"
    else:
        line += f"; no period meets it (sleep alone draws {watts(sleep['power_w'])})"
    lines.append(line)
    if b["battery"]:
        bat = b["battery"]
        lines.append(f"battery:  {bat['mah']:g} mAh at {bat['v']:g} V = {joules(bat['energy_j'])}: "
                     f"{bat['life_h']:,.1f} h ({bat['life_days']:,.2f} days)")
    return lines


def dvfs_lines(rows: list[dict]) -> list[str]:
    """`mcusim dvfs`'s table."""
    best = energy_optimal(rows)
    header = f"{'clock':>10}  {'range':<8} {'core V':>6}  {'latency':>12}  {'energy/inference':>16}  {'avg power':>11}"
    lines = [header]
    for row in rows:
        mark = "  <- energy-optimal" if row is best else ""
        if row.get("exit_code"):
            mark += f"  (exit code {row['exit_code']})"
        lines.append(f"{row['clock_hz'] / 1e6:>6g} MHz  {row['voltage_range']:<8} {row['core_v']:>6.2f}  "
                     f"{seconds(row['latency_s']):>12}  {joules(row['energy_j']):>16}  "
                     f"{watts(row['average_power_w']):>11}{mark}")
    lines.append(f"energy-optimal: {best['clock_hz'] / 1e6:g} MHz ({best['voltage_range']}), "
                 f"{joules(best['energy_j'])} per inference; latency and energy of {rows[0]['what']}")
    return lines

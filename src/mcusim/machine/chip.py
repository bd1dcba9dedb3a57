"""The Chip (peripherals/chip.py) a Machine gives its peripheral models."""
from __future__ import annotations


class MachineChip:
    """Each member is the machine's own, bound here once (a model's call costs no more than
    a call on the machine), so the models reach the machine through these and nothing else."""

    def __init__(self, machine):
        self.board = machine.board
        self.mmio = machine.mmio
        # time (refuse_held: the bus's first call, before a model reads or changes the state)
        self.refuse_held = machine.refuse_held
        self.cycles_now = machine.cycles_now
        self.current_pc = machine.current_pc
        self.counter_total = machine.counter_total
        # the clock, run control
        self.set_clock = machine.set_clock
        self.request_stop = machine.request_stop
        self.request_reset = machine.request_reset
        # exceptions and interrupts
        self.exceptions = machine.exceptions
        self.raise_interrupt = machine.exceptions.set_pending
        # core configuration
        self.set_fpu_enabled = machine.set_fpu_enabled
        self.divide_trap_changed = machine.divide_trap_changed
        # flash, caches and power
        self.flash_timing = machine.flash_timing
        self.flash_ports = machine.flash_ports
        self.voltage_scaling_changed = machine.voltage_scaling_changed
        # output
        self.uart_write = machine.uart_write
        self.itm_write = machine.itm_write
        self.region_marker = machine.region_marker
        self.pin_changed = machine.pin_changed
        # memory, reports
        self.read_memory = machine.read_memory
        self.warn_once = machine.warn_once
        self.report_unmodelled = machine.report_unmodelled
        self.internal_error = machine.internal_error

    def clear_interrupt(self, number: int) -> None:
        self.exceptions.pending[number] = False

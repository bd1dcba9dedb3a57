"""The exact profile's call tree driven the way the machine drives it (block starts, exception
entry and return, skipped idle loops), with hand-checked paths and inclusive cycles."""
import numpy as np

from mcusim.analysis.profile import FunctionProfile
from mcusim.machine import native as N


class Driver:
    def __init__(self, functions, capacity=1 << 16):
        self.state = N.NativeState()
        self.profile = FunctionProfile(self.state, functions, tree_capacity=capacity)
        self.b = self.state.buffer

    def code(self, address, cycles, called_from=None):
        """A block at `address` runs for `cycles`; `called_from`: the 16-bit BLX that led here."""
        self.b[N.ENDS_IN_BRANCH] = N.CALL_FLAG if called_from is not None else 0
        if called_from is not None:
            self.b[N.PREVIOUS_BRANCH_AT] = called_from  # (returns to called_from + 2)
        function = N._function_of(self.b, np.int64(address))
        N.profile_switch(self.b, np.int64(function), np.int64(address), np.int64(N.EVENT_CODE))
        self.b[N.CYCLES] += cycles

    def python(self, event, cycles):
        self.profile.switch_to(event)
        self.b[N.CYCLES] += cycles
        self.b[N.ENDS_IN_BRANCH] = 0

    def paths(self):
        return {";".join(path): cycles for path, cycles in self.profile.stacks()}

    def rows(self):
        return {r["function"]: r for r in self.profile.rows(int(self.b[N.CYCLES]))}


def test_an_interrupt_on_the_way_into_a_call_keeps_the_callee_below_its_caller():
    d = Driver([(0x100, 0x100, "caller"), (0x200, 0x100, "callee"), (0x300, 0x100, "Handler")])
    d.code(0x100, 10)
    d.python(N.EVENT_ENTRY, 12)  # taken between `bl callee` and the callee's first block
    d.code(0x300, 5)
    d.python(N.EVENT_RETURN, 10)
    d.code(0x200, 100)
    d.code(0x102, 7)
    assert d.paths()["caller;callee"] == 100 and "caller;(exception entry and return);callee" not in d.paths()
    rows = d.rows()
    assert rows["caller"]["inclusive_cycles"] == 117 and rows["callee"]["calls"] == 1


def test_an_idle_loop_woken_by_interrupts_stays_one_level_deep():
    d = Driver([(0x100, 0x100, "main"), (0x200, 0x2, "idle"), (0x300, 0x100, "SysTick_Handler")])
    d.code(0x100, 10)
    d.b[N.ENDS_IN_BRANCH] = N.CALL_FLAG
    for _ in range(5):
        d.profile.switch_to_address(0x200)  # the skipped `b .` loop
        d.b[N.CYCLES] += 1000
        d.python(N.EVENT_ENTRY, 12)
        d.code(0x300, 20)
        d.python(N.EVENT_RETURN, 10)
    assert max(path.count(";") for path in d.paths()) == 3  # main;idle;(exception...);SysTick_Handler
    rows = d.rows()
    assert rows["idle"]["calls"] == 1 and rows["SysTick_Handler"]["calls"] == 5
    assert rows["idle"]["inclusive_cycles"] == 5000  # the handlers are not idle's


def test_recursion_grows_the_tree_with_the_depth_not_the_calls():
    d = Driver([(0x100, 0x100, "main"), (0x200, 0x100, "fib")])

    def fib(n, site):
        d.code(0x200, 1, called_from=site)
        if n >= 2:
            fib(n - 1, 0x21E)
            d.code(0x220, 1)
            fib(n - 2, 0x23E)
            d.code(0x240, 1)

    d.code(0x100, 1)
    fib(12, 0x11E)
    d.code(0x120, 1)
    parent, _, _, _ = d.profile.tree()
    assert len(parent) == 2 + 1 + 12  # root, full node, main, fib at depths 1..12
    rows = d.rows()
    assert rows["fib"]["calls"] == 465 and rows["fib"]["inclusive_cycles"] == rows["fib"]["exclusive_cycles"] == 929
    assert rows["main"]["inclusive_cycles"] == int(d.b[N.CYCLES])


def test_a_full_tree_still_finds_the_way_back():
    d = Driver([(0x100, 0x100, "Reset"), (0x200, 0x100, "main"), (0x300, 0x100, "a"), (0x400, 0x100, "b")],
               capacity=4)  # root, full node, Reset, main: no room for a or b
    d.code(0x100, 10)
    d.code(0x200, 10, called_from=0x11E)
    d.code(0x300, 20, called_from=0x21E)   # no room: (call tree full)
    d.code(0x220, 1000)                     # back in main
    d.code(0x400, 5, called_from=0x23E)
    d.code(0x240, 30)
    d.code(0x120, 7)
    paths = d.paths()
    assert paths["Reset;main"] == 1040 and paths["Reset"] == 17 and paths["(call tree full)"] == 25
    assert d.profile.tree_overflow == 2
    assert sum(r["exclusive_cycles"] for r in d.rows().values()) == int(d.b[N.CYCLES])

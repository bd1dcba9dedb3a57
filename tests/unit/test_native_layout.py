"""The native buffer's declared layout (machine/native/layout.py): records do not overlap, the
module-level names are the declared offsets, and every slot the native code indexes is declared."""
import ast
from pathlib import Path

from mcusim.machine.native import layout

PACKAGE = Path(layout.__file__).parent
# Functions whose indexing adds plain numbers on purpose: the profile table's parts are sized by
# the function count at run time (n, starts, ends, ...), and the power lanes are 3-slot arrays.
NUMBERED = {"_function_of", "profile_switch", "power_unpack", "_count_power"}


def test_records_do_not_overlap_and_names_are_their_offsets():
    assert layout.RECORDS
    for record in layout.RECORDS:
        end = 0
        for name, offset, size in record.fields:
            assert size >= 1 and offset == end, (record.name, name)
            end = offset + size
            assert getattr(layout, name) == record.start + offset, (record.name, name)
        assert end == record.size, record.name


def test_buffer_areas_follow_the_header_in_order():
    buffer = next(r for r in layout.RECORDS if r.name == "buffer")
    ends = {name: offset + size for name, offset, size in buffer.fields}
    assert layout.FL_FIRST_SLOT < layout.FL_PORTS < layout.FL_LAST_SLOT == layout.POWER_FIRST_SLOT
    assert layout.POWER_LAST_SLOT == layout.HEADER_LENGTH == layout.WINDOW_TABLE
    assert ends["BTAC_AREA"] == max(ends.values()) == layout.DATA_START  # (the last area)
    assert layout.P_COEF_FLASH < ends["P_COEFFICIENTS"] and layout.P_WORDS < ends["P_COUNTS"]
    for field in ("SETS", "WAYS", "TAGS"):  # the caches' control slots lie inside their blocks
        assert layout.FL_IC_ON < getattr(layout, "FL_IC_" + field) < layout.FL_IC_ON + layout.CACHE_CONTROL
        assert layout.FL_DC_ON < getattr(layout, "FL_DC_" + field) < layout.FL_DC_ON + layout.CACHE_CONTROL


def _terms(node):
    """The terms of an addition/subtraction chain."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return _terms(node.left) + _terms(node.right)
    return [node]


def test_native_code_indexes_only_declared_slots():
    declared = {name for name in vars(layout) if name.isupper()}
    problems = []
    for path in sorted(PACKAGE.glob("*.py")):
        if path.name == "layout.py":
            continue
        tree = ast.parse(path.read_text())
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                        and node.value.id in ("st", "header", "t", "b")):
                    continue
                where = f"{path.name}:{node.lineno} {function.name}"
                for name in ast.walk(node.slice):
                    if isinstance(name, ast.Name) and name.id.isupper() and name.id not in declared:
                        problems.append(f"{where}: {name.id} is not declared in layout.py")
                if function.name not in NUMBERED and not isinstance(node.slice, ast.Slice):
                    for term in _terms(node.slice):
                        if isinstance(term, ast.Constant) and isinstance(term.value, int) and term.value:
                            problems.append(f"{where}: a slot numbered by hand (+ {term.value})")
    assert not problems, "\n".join(problems)


def test_the_counter_list_names_header_slots_once():
    from mcusim.machine.native import counters

    names = [counter.name for counter in counters.COUNTERS]
    assert len(names) == len(set(names))
    slots = [counter.slot for counter in counters.COUNTERS if counter.slot is not None]
    assert len(slots) == len(set(slots)) and all(0 <= slot < layout.HEADER_LENGTH for slot in slots)
    assert sorted(counters.BY_DWT) == ["CPICNT", "CYCCNT", "EXCCNT", "FOLDCNT", "LSUCNT", "SLEEPCNT"]
    assert all(counter.slot is not None for counter in counters.PER_INSTRUCTION)

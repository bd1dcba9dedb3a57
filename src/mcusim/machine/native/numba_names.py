"""The numba objects the hooks' source names (carray, intrinsics, Unicorn's C functions), put
into hooks.py and console_uart.py by jit.load_numba(): only numba's compiler needs them, so a
run that loads its hooks from the object store never imports this module, nor numba."""
from __future__ import annotations

from llvmlite import ir
from numba import carray, types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["carray", "_pointer", "_call_read", "_call_write", "_uc_emu_stop", "_uc_reg_read", "_uc_reg_write",
           "_uc_remove_cache"]

_uc_emu_stop = types.ExternalFunction("uc_emu_stop", types.int32(types.voidptr))
_uc_reg_read = types.ExternalFunction("uc_reg_read", types.int32(types.voidptr, types.int32, types.intp))
_uc_reg_write = types.ExternalFunction("uc_reg_write", types.int32(types.voidptr, types.int32, types.intp))
_BYTE = ir.IntType(8).as_pointer()


def _uc_ctl(builder):
    """Unicorn's uc_ctl(uc, control, ...), declared variadic as it is, in the module being built."""
    kind = ir.FunctionType(ir.IntType(32), [_BYTE, ir.IntType(32)], var_arg=True)
    return cgutils.get_or_insert_function(builder.module, kind, "uc_ctl")


# uc_ctl_remove_cache(uc, begin, end) is uc_ctl(uc, UC_CTL_WRITE(UC_CTL_TB_REMOVE_CACHE, 2), begin, end),
# with UC_CTL_TB_REMOVE_CACHE 9 and two uint64 arguments (unicorn.h, unicorn_const.py)
_TB_REMOVE_CACHE = 9 | 2 << 26 | 1 << 30


@intrinsic
def _uc_remove_cache(typingctx, uc, begin, end):
    """uc_ctl_remove_cache(uc, begin, end): the translated code of [begin, end) dropped, from
    inside a hook (a store to code through an MMIO alias, which Unicorn's own tracking of
    writes to translated code does not see)."""
    def codegen(context, builder, signature, args):
        control = ir.Constant(ir.IntType(32), _TB_REMOVE_CACHE)
        return builder.call(_uc_ctl(builder), [args[0], control, args[1], args[2]])
    return types.int32(types.voidptr, types.uint64, types.uint64), codegen


@intrinsic
def _pointer(typingctx, address):
    """The host address `address` (an int64 slot) as a pointer, for carray."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(types.int64), codegen


@intrinsic
def _call_read(typingctx, function, uc, offset, size, user_data):
    """Call the MMIO read callback at address `function` (an int64 slot) as Unicorn would."""
    def codegen(context, builder, signature, args):
        kind = ir.FunctionType(ir.IntType(64), [_BYTE, ir.IntType(64), ir.IntType(32), _BYTE])
        return builder.call(builder.inttoptr(args[0], kind.as_pointer()), args[1:])
    return types.uint64(types.int64, types.voidptr, types.uint64, types.uint32, types.voidptr), codegen


@intrinsic
def _call_write(typingctx, function, uc, offset, size, value, user_data):
    """Call the MMIO write callback at address `function` (an int64 slot) as Unicorn would."""
    def codegen(context, builder, signature, args):
        kind = ir.FunctionType(ir.VoidType(), [_BYTE, ir.IntType(64), ir.IntType(32), ir.IntType(64), _BYTE])
        builder.call(builder.inttoptr(args[0], kind.as_pointer()), args[1:])
        return context.get_dummy_value()
    return types.void(types.int64, types.voidptr, types.uint64, types.uint32, types.uint64, types.voidptr), codegen

#!/bin/sh
# Run every program built for the QEMU boards (mps2-an386, mps2-an500)
# under qemu-system-arm and compare stdout and exit status with
# scripts/expected/<board>/<program>.{out,rc}.
# Usage: scripts/check-qemu.sh [build-dir]   (run from firmware/)
BUILD=${1:-build}
QEMU=${QEMU:-qemu-system-arm}
fail=0
for board in mps2-an386 mps2-an500; do
    machine=$board
    for elf in "$BUILD/$board"/*.elf; do
        prog=$(basename "$elf" .elf)
        exp=scripts/expected/$board/$prog
        out=$(timeout 20 "$QEMU" -M "$machine" -nographic \
              -semihosting-config enable=on,target=native \
              -kernel "$elf" </dev/null 2>&1)
        rc=$?
        want_rc=$(cat "$exp.rc" 2>/dev/null || echo 0)
        if [ "$rc" = "$want_rc" ] && [ "$out" = "$(cat "$exp.out" 2>/dev/null)" ]; then
            echo "PASS $board/$prog (exit $rc)"
        else
            echo "FAIL $board/$prog (exit $rc, want $want_rc)"
            echo "$out" | sed 's/^/    /'
            fail=1
        fi
    done
done
exit $fail

"""A GDB remote serial protocol server on the run-control layer (run_control.py): `mcusim run
--gdb`. packets.py frames the protocol, target.py describes the registers, server.py answers."""

"""Core register names as Capstone prints them, mapped to Unicorn register ids."""
from unicorn import arm_const as A

UNICORN_REGISTERS = {f"r{i}": getattr(A, f"UC_ARM_REG_R{i}") for i in range(13)}
UNICORN_REGISTERS.update({"sb": A.UC_ARM_REG_R9, "sl": A.UC_ARM_REG_R10, "fp": A.UC_ARM_REG_R11,
                          "ip": A.UC_ARM_REG_R12, "sp": A.UC_ARM_REG_SP, "lr": A.UC_ARM_REG_LR})

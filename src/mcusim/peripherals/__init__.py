"""Peripheral models, looked up by the `model` name a board TOML gives a peripheral."""
from .apollo3.cachectrl import CacheCtrl
from .apollo3.clkgen import ClkGen, McuCtrl
from .apollo3.gpio import Apollo3Gpio
from .apollo3.pwrctrl import PwrCtrl
from .base import Peripheral, PlainStorage, StoragePeripheral
from .nrf52.clock import Clock as NrfClock
from .nrf52.gpio import NrfGpio
from .nrf52.nvmc import Nvmc
from .nrf52.uarte import Uarte
from .stm32.flash import FlashF7, FlashInterface, FlashL4
from .stm32.gpio import Stm32Gpio
from .stm32.pwr import PwrF7, PwrL4
from .stm32.rcc import RccF7, RccL4
from .stm32.usart import Usart
from .uarts import CmsdkUart, Pl011

MODELS: dict[str, type[Peripheral]] = {
    "storage": PlainStorage,
    "stm32l4.rcc": RccL4,
    "stm32f7.rcc": RccF7,
    "stm32.flash": FlashInterface,
    "stm32l4.flash": FlashL4,
    "stm32f7.flash": FlashF7,
    "stm32l4.pwr": PwrL4,
    "stm32f7.pwr": PwrF7,
    "stm32.usart": Usart,
    "stm32.gpio": Stm32Gpio,
    "nrf52.clock": NrfClock,
    "nrf52.uarte": Uarte,
    "nrf52.nvmc": Nvmc,
    "nrf52.gpio": NrfGpio,
    "apollo3.clkgen": ClkGen,
    "apollo3.mcuctrl": McuCtrl,
    "apollo3.pwrctrl": PwrCtrl,
    "apollo3.cachectrl": CacheCtrl,
    "apollo3.gpio": Apollo3Gpio,
    "pl011": Pl011,
    "cmsdk.uart": CmsdkUart,
}


def model_class(name: str | None) -> type[Peripheral]:
    if name is None:
        return StoragePeripheral
    if name not in MODELS:
        raise KeyError(f"unknown peripheral model '{name}' (known: {', '.join(sorted(MODELS))})")
    return MODELS[name]

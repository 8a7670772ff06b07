"""Device drivers: card shoe (LBS1 serial, USB), spot controller, progressive meter.

Drivers are chosen by config name through :data:`drivers.registry.BACKENDS` and imported only
when asked for, so ``import drivers`` pulls in neither pyserial's ports nor pyusb.
"""

from __future__ import annotations

from typing import Any

from drivers.registry import BACKENDS, UnknownDriver, driver_class

__all__ = ["BACKENDS", "UnknownDriver", "driver_class", "open_meter", "open_shoe", "open_spots"]


def open_shoe(config: Any, **kwargs: Any) -> Any:
    """The shoe driver named by ``config.driver`` (a :class:`drivers.config.ShoeConfig`)."""
    return driver_class("shoe", config.driver)(config, **kwargs)


def open_spots(config: Any, **kwargs: Any) -> Any:
    """The spot-controller driver named by ``config.driver`` (a ``SpotsConfig``)."""
    return driver_class("spots", config.driver)(config, **kwargs)


def open_meter(config: Any, **kwargs: Any) -> Any:
    """The meter driver named by ``config.driver`` (a ``MeterConfig``)."""
    return driver_class("meter", config.driver)(config, **kwargs)

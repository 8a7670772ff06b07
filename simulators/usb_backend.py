"""The USB shoe as a pyusb backend: ``usb.core.find(backend=SimulatedUsbShoe(...))``.

A real :class:`usb.backend.IBackend`, so the driver runs pyusb's own code (descriptor parsing,
configuration, interface claiming, endpoint lookup, read and control transfer) against a
simulated device instead of libusb. Unplugging removes the device from enumeration and makes
every open handle fail with ENODEV, as libusb does; replugging brings it back with a new
address, so the driver must find it again.
"""

from __future__ import annotations

import array
import errno
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import usb.backend
import usb.core

from drivers.config import DEFAULT_USB_PRODUCT_ID, DEFAULT_USB_VENDOR_ID
from drivers.usb_report import MAX_REPORT_SIZE, REPORT_ENDPOINT
from simulators.shoe import UsbShoeModel
from simulators.transport import LockedModel

_LIBUSB_ERROR_NO_DEVICE = -4
_LIBUSB_ERROR_TIMEOUT = -7
_LIBUSB_ERROR_PIPE = -9


class _Handle:
    def __init__(self, generation: int) -> None:
        self.generation = generation


class SimulatedUsbShoe(usb.backend.IBackend):  # type: ignore[misc]  # pyusb has no type hints
    """One simulated USB shoe on its own bus; see the module docstring."""

    #: How often a waiting read steps the model (its timers are 200 ms and up).
    TICK_S = 0.01

    def __init__(self, model: UsbShoeModel | None = None, *,
                 vendor_id: int = DEFAULT_USB_VENDOR_ID,
                 product_id: int = DEFAULT_USB_PRODUCT_ID,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.model = model if model is not None else UsbShoeModel()
        self.vendor_id, self.product_id = vendor_id, product_id
        self.clock = clock
        self.lock = threading.RLock()
        self._changed = threading.Condition(self.lock)
        self.device = LockedModel(self.model, self.lock, self._notify)
        self._generation = 1
        self._plugged = True
        self._reports: deque[bytes] = deque()
        self.configured = 0
        self.claimed: set[int] = set()

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    # -- the cable ----------------------------------------------------------------------

    def unplug(self) -> None:
        with self.lock:
            self._plugged = False
            self._reports.clear()
            self._changed.notify_all()

    def replug(self) -> None:
        with self.lock:
            self._plugged = True
            self._generation += 1
            self._changed.notify_all()

    @property
    def plugged(self) -> bool:
        return self._plugged

    # -- descriptors --------------------------------------------------------------------

    def enumerate_devices(self) -> Iterator[int]:
        with self.lock:
            if self._plugged:
                yield self._generation

    def get_device_descriptor(self, dev: int) -> Any:
        return SimpleNamespace(
            bLength=18, bDescriptorType=1, bcdUSB=0x0200, bDeviceClass=0, bDeviceSubClass=0,
            bDeviceProtocol=0, bMaxPacketSize0=64, idVendor=self.vendor_id,
            idProduct=self.product_id, bcdDevice=0x0100, iManufacturer=0, iProduct=0,
            iSerialNumber=0, bNumConfigurations=1, address=dev + 1, bus=1, port_number=1,
            port_numbers=(1,), speed=2)  # speed 2 = full speed

    def get_configuration_descriptor(self, dev: int, config: int) -> Any:
        self._check_index("configuration", config)
        return SimpleNamespace(bLength=9, bDescriptorType=2, wTotalLength=25, bNumInterfaces=1,
                               bConfigurationValue=1, iConfiguration=0, bmAttributes=0x80,
                               bMaxPower=50, extra_descriptors=[])

    def get_interface_descriptor(self, dev: int, intf: int, alt: int, config: int) -> Any:
        self._check_index("interface", intf, alt, config)
        return SimpleNamespace(bLength=9, bDescriptorType=4, bInterfaceNumber=0,
                               bAlternateSetting=0, bNumEndpoints=1, bInterfaceClass=0xFF,
                               bInterfaceSubClass=0, bInterfaceProtocol=0, iInterface=0,
                               extra_descriptors=[])

    def get_endpoint_descriptor(self, dev: int, ep: int, intf: int, alt: int,
                                config: int) -> Any:
        self._check_index("endpoint", ep, intf, alt, config)
        return SimpleNamespace(bLength=7, bDescriptorType=5, bEndpointAddress=REPORT_ENDPOINT,
                               bmAttributes=0x03, wMaxPacketSize=MAX_REPORT_SIZE, bInterval=10,
                               bRefresh=0, bSynchAddress=0, extra_descriptors=[])

    @staticmethod
    def _check_index(what: str, *indexes: int) -> None:
        if any(index != 0 for index in indexes):
            raise IndexError(f"the simulated shoe has one {what}, not index {indexes}")

    # -- handles ------------------------------------------------------------------------

    def open_device(self, dev: int) -> _Handle:
        with self.lock:
            if not self._plugged or dev != self._generation:
                raise self._gone()
            return _Handle(dev)

    def close_device(self, dev_handle: _Handle) -> None:
        pass  # closing a gone device is fine, as with libusb

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        self._check(dev_handle)
        self.configured = config_value

    def get_configuration(self, dev_handle: _Handle) -> int:
        self._check(dev_handle)
        return self.configured

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        self._check(dev_handle)
        self.claimed.add(intf)

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        self.claimed.discard(intf)
        self._check(dev_handle)

    def _check(self, handle: _Handle) -> None:
        with self.lock:
            if not self._plugged or handle.generation != self._generation:
                raise self._gone()

    @staticmethod
    def _gone() -> usb.core.USBError:
        return usb.core.USBError("No such device (it may have been disconnected)",
                                 _LIBUSB_ERROR_NO_DEVICE, errno.ENODEV)

    # -- transfers ------------------------------------------------------------------------

    def intr_read(self, dev_handle: _Handle, ep: int, intf: int, buff: array.array[int],
                  timeout: int) -> int:
        if ep != REPORT_ENDPOINT:
            raise usb.core.USBError(f"no IN endpoint {ep:#04x}", _LIBUSB_ERROR_PIPE,
                                    errno.EPIPE)
        deadline = self.clock() + (timeout / 1000 if timeout else 3600.0)
        with self._changed:
            while True:
                self._check(dev_handle)
                self._reports.extend(self.model.reports(self.clock()))
                if self._reports:
                    report = self._reports.popleft()
                    count = min(len(report), len(buff) * buff.itemsize)
                    buff[:count] = array.array("B", report[:count])
                    return count
                left = deadline - self.clock()
                if left <= 0:
                    raise usb.core.USBTimeoutError("Operation timed out",
                                                   _LIBUSB_ERROR_TIMEOUT, errno.ETIMEDOUT)
                self._changed.wait(min(left, self.TICK_S))

    def ctrl_transfer(self, dev_handle: _Handle, bmRequestType: int, bRequest: int,
                      wValue: int, wIndex: int, data: array.array[int], timeout: int) -> int:
        with self._changed:
            self._check(dev_handle)
            if not self.model.control(bmRequestType, bRequest, wValue, wIndex):
                raise usb.core.USBError("Pipe error (request stalled)", _LIBUSB_ERROR_PIPE,
                                        errno.EPIPE)
            self._changed.notify_all()
        return len(data) * data.itemsize

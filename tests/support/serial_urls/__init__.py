"""pyserial URL handlers for the red-team tests (``serial.protocol_handler_packages``)."""

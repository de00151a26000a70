"""Operator input devices behind one interface (:class:`~pccbullet.teleop.devices.base.InputDevice`).

Hardware SDKs are imported only when a device is opened by name
(:func:`~pccbullet.teleop.devices.registry.open_device`).
"""

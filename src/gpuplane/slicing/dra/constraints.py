"""``constraints[].matchAttribute``: every device allocated for the listed requests carries the
attribute with the same type and value (the allocator's matchAttributeConstraint).

The constraint applies to the requests it lists (a request name also covers all of its
subrequests; ``<request>/<subrequest>`` names one), or to every request when it lists none. The
first device fixes the value; a device without the attribute never satisfies it. Versions are
compared as their strict semver text, as the API stores them. The allocator adds a device before
going deeper and removes it when it backtracks, so only a count is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuplane.slicing.dra.devices import AttributeValue, Device, attribute_kind, lookup_attribute


def same_attribute(a: AttributeValue, b: AttributeValue) -> bool:
    kind = attribute_kind(a)
    if kind != attribute_kind(b):
        return False
    return str(a) == str(b) if kind == "version" else a == b


@dataclass(slots=True)
class MatchAttributeConstraint:
    requests: frozenset[str]
    attribute: str
    value: AttributeValue | None = None
    num_devices: int = field(default=0)

    def applies(self, request: str, subrequest: str | None) -> bool:
        if not self.requests:
            return True
        if request in self.requests:
            return True
        return subrequest is not None and f"{request}/{subrequest}" in self.requests

    def add(self, request: str, subrequest: str | None, device: Device, driver: str) -> bool:
        if not self.applies(request, subrequest):
            return True
        value = lookup_attribute(device, driver, self.attribute)
        if value is None:
            return False
        if self.num_devices == 0:
            self.value = value
            self.num_devices = 1
            return True
        assert self.value is not None
        if not same_attribute(self.value, value):
            return False
        self.num_devices += 1
        return True

    def remove(self, request: str, subrequest: str | None) -> None:
        if self.applies(request, subrequest):
            self.num_devices -= 1

"""The limits and fixed names of ``resource.k8s.io/v1`` (kubernetes ``staging/src/k8s.io/api/
resource/v1/types.go``), under their Go names turned into Python constants.

They are enforced where the API server enforces them (object validation) and where the
allocator checks them again (the 32-device result limit, which a prioritized list can only
bound from below before allocation).
"""

from __future__ import annotations

API_GROUP = "resource.k8s.io"
API_VERSION = "resource.k8s.io/v1"

# One AllocationResult holds at most this many devices; a claim has at most this many requests.
ALLOCATION_RESULTS_MAX_SIZE = 32
DEVICE_REQUESTS_MAX_SIZE = ALLOCATION_RESULTS_MAX_SIZE
DEVICE_CONSTRAINTS_MAX_SIZE = 32
DEVICE_CONFIG_MAX_SIZE = 32
DEVICE_SELECTORS_MAX_SIZE = 32
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
DEVICE_TOLERATIONS_MAX_LENGTH = 16
DEVICE_TAINTS_MAX_LENGTH = 16
RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE = 256

# ResourceSlice.
RESOURCE_SLICE_MAX_DEVICES = 128
# With taints or consumesCounters on any device of the slice.
RESOURCE_SLICE_MAX_DEVICES_WITH_ADVANCED_FEATURES = 64
RESOURCE_SLICE_MAX_COUNTER_SETS = 8
RESOURCE_SLICE_MAX_COUNTERS_PER_COUNTER_SET = 32
RESOURCE_SLICE_MAX_DEVICE_COUNTER_CONSUMPTIONS_PER_DEVICE = 2
RESOURCE_SLICE_MAX_COUNTERS_PER_DEVICE_COUNTER_CONSUMPTION = 32
RESOURCE_SLICE_MAX_ATTRIBUTES_AND_CAPACITIES_PER_DEVICE = 32

# Names.
DRIVER_NAME_MAX_LENGTH = 63
DEVICE_MAX_DOMAIN_LENGTH = 63
DEVICE_MAX_ID_LENGTH = 32
DEVICE_ATTRIBUTE_MAX_VALUE_LENGTH = 64
POOL_NAME_MAX_LENGTH = 253
DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253

CEL_SELECTOR_EXPRESSION_MAX_LENGTH = 10 * 1024

# DeviceAllocationMode values.
EXACT_COUNT = "ExactCount"
ALL = "All"

# DeviceTaintEffect values; unknown effects are treated like None by consumers.
TAINT_NONE = "None"
TAINT_NO_SCHEDULE = "NoSchedule"
TAINT_NO_EXECUTE = "NoExecute"

# DeviceAllocationConfiguration.source values.
CONFIG_FROM_CLASS = "FromClass"
CONFIG_FROM_CLAIM = "FromClaim"

# The standard device attribute prefix (k8s.io/dynamic-resource-allocation/deviceattribute).
STANDARD_ATTRIBUTE_PREFIX = "resource.kubernetes.io/"
PCIE_ROOT_ATTRIBUTE = STANDARD_ATTRIBUTE_PREFIX + "pcieRoot"
PCI_BUS_ID_ATTRIBUTE = STANDARD_ATTRIBUTE_PREFIX + "pciBusID"

# The finalizer the scheduler adds when it allocates a claim.
CLAIM_FINALIZER = "resource.kubernetes.io/delete-protection"

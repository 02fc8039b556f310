"""DRA in the twin: the cluster's ResourceSlices, DeviceClasses and ResourceClaims."""

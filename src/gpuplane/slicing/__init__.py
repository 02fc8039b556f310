"""GPU slicing: MIG profiles, layouts and planner; time-slicing and MPS; DRA."""

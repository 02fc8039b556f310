"""Layer 5: human-facing output (terminal pictures, tables, the demo report). No decisions here."""

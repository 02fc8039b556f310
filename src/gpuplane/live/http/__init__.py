"""HTTP serving shared by the live services: an aiohttp app started on a listen address and
stopped cleanly (``aiohttp_serve``)."""

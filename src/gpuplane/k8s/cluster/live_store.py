"""``LiveStore``: the objects the informers keep, by snapshot key and ``namespace/name``.

Written by the informer threads (a relist replaces one key's objects, an event changes one
object), read whole by the builder. One lock guards every key: writes are a dict update and a
read copies references only, so the lock is held for microseconds per event and for a few
milliseconds per read at 50,000 pods. Each write bumps ``generation`` and calls the listeners
(outside the lock; they must be quick and thread-safe, e.g. ``loop.call_soon_threadsafe``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping

from gpuplane.k8s.cluster.api_lister import RawObject


def object_key(obj: RawObject) -> str:
    """``namespace/name``, or ``name`` for a cluster-scoped object."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name, namespace = str(meta.get("name") or ""), meta.get("namespace")
    return f"{namespace}/{name}" if namespace else name


class LiveStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: dict[str, dict[str, RawObject]] = {}
        self._listed: set[str] = set()
        self._listeners: list[Callable[[], None]] = []
        self.generation = 0

    def subscribe(self, listener: Callable[[], None]) -> None:
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in self._listeners:
            listener()

    def replace(self, key: str, objects: Iterable[RawObject]) -> None:
        """A key's objects as a list read them (the first list makes the key listed)."""
        fresh = {object_key(o): o for o in objects}
        with self._lock:
            self._objects[key] = fresh
            self._listed.add(key)
            self.generation += 1
        self._changed()

    def apply(self, key: str, kind: str, obj: RawObject) -> None:
        """One watch event (ADDED, MODIFIED or DELETED) on a key's objects."""
        name = object_key(obj)
        with self._lock:
            objects = self._objects.setdefault(key, {})
            if kind == "DELETED":
                objects.pop(name, None)
            else:
                objects[name] = obj
            self.generation += 1
        self._changed()

    def touch(self) -> None:
        """Tell the listeners to look again (readiness changed without a write)."""
        with self._lock:
            self.generation += 1
        self._changed()

    def listed(self, keys: Iterable[str]) -> bool:
        with self._lock:
            return all(k in self._listed for k in keys)

    def read(self) -> tuple[int, Mapping[str, tuple[RawObject, ...]]]:
        """The generation and every key's objects as of now."""
        with self._lock:
            return self.generation, {k: tuple(v.values()) for k, v in self._objects.items()}

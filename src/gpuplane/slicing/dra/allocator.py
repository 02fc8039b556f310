"""The structured-parameters allocator (kubernetes ``dynamic-resource-allocation/structured``,
as of Kubernetes 1.36): which devices of one node satisfy all of a pod's unallocated claims.

``allocate(claims, slices, classes, allocated, node)`` is a pure function. It gathers the pools
the node sees (``pools.py``), prepares every request (``requests.py``), then searches depth first,
exactly in the real allocator's order: claim after claim, request after request, one device
after the other, trying the candidate devices pool by pool (driver and pool name order), slice by
slice (slice name order), device by device (the order the driver published them). For each
candidate: in use? (by another claim's allocation, or earlier in this search; an ``adminAccess``
request may share devices but not within its own claim), selectable? (class selectors, then
request selectors, then per-device node selection; results cached per device and request), then
``allocateDevice``: counters of partitionable devices, untolerated ``NoSchedule``/``NoExecute``
taints, and the claim's constraints. The first complete solution wins; on a dead end it
backtracks. A ``firstAvailable`` request tries its subrequests in order and keeps the first with
which the whole rest of the search succeeds. The 32-device result limit prunes the search: when
a claim cannot fit, earlier choices of the same claim are abandoned quickly, and a prioritized
list moves on to a subrequest needing fewer devices.

gpuplane difference: when a device passes the counter check but a later check (taint, constraint)
rejects it, its counters are released again (the Go code in the version read kept them counted
for the rest of that search).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from gpuplane.slicing.dra import limits
from gpuplane.slicing.dra.cel.evaluate import CelProgram, CelRuntimeError, DeviceInput, device_input
from gpuplane.slicing.dra.claims import DeviceClass, ResourceClaim
from gpuplane.slicing.dra.constraints import MatchAttributeConstraint
from gpuplane.slicing.dra.counters import CounterTracker
from gpuplane.slicing.dra.devices import DeviceID, ResourceSlice
from gpuplane.slicing.dra.node_selector import DraNode
from gpuplane.slicing.dra.outcome import (
    INVALID_POOLS,
    NO_SUCH_KEY_HINT,
    AllocationError,
    AllocationOutcome,
    Features,
    OutcomeKind,
)
from gpuplane.slicing.dra.pools import device_targets, gather_pools
from gpuplane.slicing.dra.requests import (
    Candidate,
    RequestData,
    RequestKey,
    candidates_of,
    fill_all_devices,
    prepare_claim,
)
from gpuplane.slicing.dra.results import Chosen, build_result

Undo = Callable[[], None]


class _ResultLimit(Exception):
    """errAllocationResultMaxSizeExceeded: this branch cannot stay within 32 devices."""


class _Search:
    def __init__(
        self,
        claims: Sequence[ResourceClaim],
        slices: Sequence[ResourceSlice],
        classes: Mapping[str, DeviceClass],
        allocated: AbstractSet[DeviceID],
        node: DraNode,
        features: Features,
    ) -> None:
        self.claims = claims
        self.node = node
        self.features = features
        self.allocated = allocated
        self.pools = gather_pools(slices, node)
        self.candidates = [
            c for p in self.pools if not (p.incomplete or p.invalid) for c in candidates_of(p)
        ]
        self.data: dict[RequestKey, RequestData] = {}
        self.selected: dict[tuple[int, int], int] = {}
        self.constraints: list[list[MatchAttributeConstraint]] = []
        self.chosen: list[list[Chosen]] = [[] for _ in claims]
        self.allocating: dict[DeviceID, set[int]] = {}
        self.counters = CounterTracker(allocated)
        self._matches: dict[tuple[DeviceID, RequestKey], bool] = {}
        self._inputs: dict[DeviceID, DeviceInput] = {}
        for ci, claim in enumerate(claims):
            self._prepare(ci, claim, classes)

    # ----- preparation -----
    def _prepare(self, ci: int, claim: ResourceClaim, classes: Mapping[str, DeviceClass]) -> None:
        data = prepare_claim(ci, claim, classes, self.features)
        for key, item in data.items():
            if item.mode == limits.ALL:
                fill_all_devices(item, claim, self.pools, self._selector_for(key))
        self.data.update(data)
        minimum = 0
        for ri, _ in enumerate(claim.spec.devices.requests):
            counts = [d.num_devices for (c, r, _s), d in data.items() if (c, r) == (ci, ri)]
            minimum += min(counts)
        if minimum > limits.ALLOCATION_RESULTS_MAX_SIZE:
            raise AllocationError(
                f"claim {claim.key}: number of requested devices {minimum} exceeds the claim "
                f"limit of {limits.ALLOCATION_RESULTS_MAX_SIZE}"
            )
        constraints = []
        for i, constraint in enumerate(claim.spec.devices.constraints):
            if constraint.match_attribute is None:
                raise AllocationError(
                    f"claim {claim.key}, constraint #{i}: empty constraint "
                    "(unsupported constraint type?)"
                )
            constraints.append(
                MatchAttributeConstraint(frozenset(constraint.requests), constraint.match_attribute)
            )
        self.constraints.append(constraints)

    # ----- selection -----
    def _selector_for(self, key: RequestKey) -> Callable[[RequestData, Candidate], bool]:
        def select(data: RequestData, cand: Candidate) -> bool:
            return self._select(key, data, cand)

        return select

    def _select(self, key: RequestKey, data: RequestData, cand: Candidate) -> bool:
        cache_key = (cand.id, key)
        cached = self._matches.get(cache_key)
        if cached is not None:
            return cached
        result = (
            self._run(data.class_selectors, cand, f"class {data.device_class.name}")
            and self._run(data.selectors, cand, f"claim {self.claims[data.claim_index].key}")
            and (
                not cand.rslice.spec.per_device_node_selection
                or device_targets(cand.device, self.node)
            )
        )
        self._matches[cache_key] = result
        return result

    def _run(self, programs: tuple[CelProgram, ...], cand: Candidate, where: str) -> bool:
        for i, program in enumerate(programs):
            inputs = self._inputs.get(cand.id)
            if inputs is None:
                inputs = device_input(cand.device, cand.id.driver)
                self._inputs[cand.id] = inputs
            try:
                if not program.matches(inputs):
                    return False
            except CelRuntimeError as err:
                text = str(err)
                if text.startswith("no such key:"):
                    text += NO_SUCH_KEY_HINT
                raise AllocationError(
                    f"{where}: selector #{i}: CEL runtime error: {text}"
                ) from None
        return True

    # ----- the search -----
    def in_use(self, data: RequestData, device: DeviceID) -> bool:
        if data.admin_access:
            return data.claim_index in self.allocating.get(device, ())
        return device in self.allocated or bool(self.allocating.get(device))

    def allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        if ci >= len(self.claims):
            return True
        if ri >= len(self.claims[ci].spec.devices.requests):
            try:
                return self.allocate_one(ci + 1, 0, 0, 0, False)
            except _ResultLimit:
                return False  # a later claim does not fit: not this claim's fault
        data = self.data[(ci, ri, si)]
        if not in_sub and data.parent is not None:
            return self._first_available(ci, ri, di)
        if data.mode == limits.ALL and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self.allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.chosen[ci]) + data.num_devices - di > limits.ALLOCATION_RESULTS_MAX_SIZE:
            raise _ResultLimit
        if data.mode == limits.ALL:
            undo = self._allocate_device(data, data.all_devices[di], must=True)
            return undo is not None and self._deeper(undo, ci, ri, si, di, in_sub)
        for cand in self.candidates:
            if self.in_use(data, cand.id) or not self._select((ci, ri, si), data, cand):
                continue
            undo = self._allocate_device(data, cand, must=False)
            if undo is not None and self._deeper(undo, ci, ri, si, di, in_sub):
                return True
        return False

    def _deeper(self, undo: Undo, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        try:
            done = self.allocate_one(ci, ri, si, di + 1, in_sub)
        except _ResultLimit:
            undo()
            raise
        if not done:
            undo()
        return done

    def _first_available(self, ci: int, ri: int, di: int) -> bool:
        all_exceeded = True
        si = 0
        while (ci, ri, si) in self.data:
            try:
                done = self.allocate_one(ci, ri, si, di, True)
            except _ResultLimit:
                si += 1
                continue
            all_exceeded = False
            if done:
                self.selected[(ci, ri)] = si
                return True
            si += 1
        if all_exceeded:
            raise _ResultLimit
        return False

    def _allocate_device(self, data: RequestData, cand: Candidate, *, must: bool) -> Undo | None:
        ci = data.claim_index
        if self.in_use(data, cand.id):
            return None
        device = cand.device
        if device.consumes_counters:
            if not self.features.partitionable_devices:
                return None
            if not self.counters.try_consume(cand.pool, device):
                return None
        release = self._releaser(cand) if device.consumes_counters else _nothing
        if self.features.device_taints and _tainted(data, cand):
            release()
            return None
        added: list[MatchAttributeConstraint] = []
        for constraint in self.constraints[ci]:
            if not constraint.add(data.request_name, data.subrequest_name, device, cand.id.driver):
                if must:
                    claim = self.claims[ci]
                    raise AllocationError(
                        f"claim {claim.key}, request {data.full_name}: cannot add device "
                        f"{cand.id} because a claim constraint would not be satisfied"
                    )
                for done in added:
                    done.remove(data.request_name, data.subrequest_name)
                release()
                return None
            added.append(constraint)
        self.allocating.setdefault(cand.id, set()).add(ci)
        self.chosen[ci].append(Chosen(data, cand))
        count = len(self.chosen[ci])

        def undo() -> None:
            for constraint in added:
                constraint.remove(data.request_name, data.subrequest_name)
            self.allocating[cand.id].discard(ci)
            release()
            del self.chosen[ci][count - 1 :]

        return undo

    def _releaser(self, cand: Candidate) -> Undo:
        def release() -> None:
            self.counters.release(cand.pool, cand.device)

        return release


def _nothing() -> None:
    return None


def _tainted(data: RequestData, cand: Candidate) -> bool:
    for taint in cand.device.taints:
        if taint.effect not in (limits.TAINT_NO_SCHEDULE, limits.TAINT_NO_EXECUTE):
            continue  # None and unknown effects do not prevent allocation
        if not any(t.tolerates(taint) for t in data.tolerations):
            return True
    return False


def allocate(
    claims: Sequence[ResourceClaim],
    slices: Sequence[ResourceSlice],
    classes: Mapping[str, DeviceClass],
    allocated: AbstractSet[DeviceID],
    node: DraNode,
    *,
    features: Features | None = None,
) -> AllocationOutcome:
    """Allocate every claim of ``claims`` (all unallocated) on ``node``; see the module doc."""
    try:
        search = _Search(claims, slices, classes, allocated, node, features or Features())
        done = search.allocate_one(0, 0, 0, 0, False)
    except AllocationError as err:
        return AllocationOutcome(OutcomeKind.ERROR, message=str(err))
    except _ResultLimit:
        done = False
    if not done:
        if any(p.invalid for p in search.pools):
            return AllocationOutcome(OutcomeKind.NODE_ERROR, message=INVALID_POOLS)
        return AllocationOutcome(OutcomeKind.NO_SOLUTION)
    results = tuple(
        build_result(claim, search.chosen[ci], search.selected, ci, search.data)
        for ci, claim in enumerate(claims)
    )
    return AllocationOutcome(OutcomeKind.ALLOCATED, results)

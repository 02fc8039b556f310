"""Pydantic mirrors of the Kubernetes core API types a workload manifest is built from.

Every field of the real type is accepted, so the YAML users deploy loads unchanged; a key that is
not a real field (a typo) is rejected. Fields the twin does not model (image, env, probes,
volumes, securityContext, ...) are kept as ``Any`` and not checked further.

Field lists checked against kubernetes/api ``core/v1/types_swagger_doc_generated.go`` @ 324d094b
(``map_PodSpec``, ``map_EphemeralContainerCommon`` - "a copy of all fields in Container",
``map_PodTemplateSpec``) and kubernetes/apimachinery ``pkg/apis/meta/v1/types.go`` @ 048d7833
(``ObjectMeta``), all read through the code index. ``workloadRef`` is the v1.35 alpha spelling of
what the newest types call ``schedulingGroup``; both are accepted.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, StrictStr

from gpuplane.k8s.manifests.labels import LabelSelector


def _whole_number(value: object) -> object:
    # kubectl turns YAML into JSON through float64, so `replicas: 2.0` reaches the API server as 2;
    # a boolean never becomes a number.
    if isinstance(value, bool):
        raise ValueError(f"expected an integer, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Int32 = Annotated[StrictInt, BeforeValidator(_whole_number), Field(ge=-(2**31), le=2**31 - 1)]
Int64 = Annotated[StrictInt, BeforeValidator(_whole_number), Field(ge=-(2**63), le=2**63 - 1)]
# intstr.IntOrString (maxSurge: 1 or "25%").
IntOrString = Annotated[StrictInt | StrictStr, BeforeValidator(_whole_number)]


class K8sModel(BaseModel):
    """A Kubernetes API type: camelCase keys, unknown keys rejected, nulls allowed."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False)
    # An unknown key is reported as strict decoding does (``kubectl apply --validate=strict``).
    strict_decoding: ClassVar[bool] = True


class ContainerPort(K8sModel):
    """core/v1 ContainerPort; the numbers and names are checked in ``pod_manifest``."""

    name: StrictStr | None = None
    host_port: Int32 | None = Field(default=None, alias="hostPort")
    container_port: Int32 = Field(default=0, alias="containerPort")
    protocol: StrictStr | None = None
    host_ip: StrictStr | None = Field(default=None, alias="hostIP")


class HttpHeader(K8sModel):
    name: StrictStr
    value: StrictStr


class HttpGetAction(K8sModel):
    path: StrictStr | None = None
    port: IntOrString
    host: StrictStr | None = None
    scheme: StrictStr | None = None
    http_headers: list[HttpHeader] | None = Field(default=None, alias="httpHeaders")


class TcpSocketAction(K8sModel):
    port: IntOrString
    host: StrictStr | None = None


class GrpcAction(K8sModel):
    port: Int32
    service: StrictStr | None = None


class ExecAction(K8sModel):
    command: list[StrictStr] | None = None


class Probe(K8sModel):
    """core/v1 Probe (a ProbeHandler plus its timing)."""

    exec_: ExecAction | None = Field(default=None, alias="exec")
    http_get: HttpGetAction | None = Field(default=None, alias="httpGet")
    tcp_socket: TcpSocketAction | None = Field(default=None, alias="tcpSocket")
    grpc: GrpcAction | None = None
    initial_delay_seconds: Int32 | None = Field(default=None, alias="initialDelaySeconds")
    timeout_seconds: Int32 | None = Field(default=None, alias="timeoutSeconds")
    period_seconds: Int32 | None = Field(default=None, alias="periodSeconds")
    success_threshold: Int32 | None = Field(default=None, alias="successThreshold")
    failure_threshold: Int32 | None = Field(default=None, alias="failureThreshold")
    termination_grace_period_seconds: Int64 | None = Field(
        default=None, alias="terminationGracePeriodSeconds"
    )


class ObjectMeta(K8sModel):
    name: StrictStr | None = None
    generate_name: StrictStr | None = Field(default=None, alias="generateName")
    namespace: StrictStr | None = None
    self_link: Any = Field(default=None, alias="selfLink")
    uid: Any = None
    resource_version: Any = Field(default=None, alias="resourceVersion")
    generation: Any = None
    creation_timestamp: Any = Field(default=None, alias="creationTimestamp")
    deletion_timestamp: Any = Field(default=None, alias="deletionTimestamp")
    deletion_grace_period_seconds: Any = Field(default=None, alias="deletionGracePeriodSeconds")
    labels: dict[str, StrictStr] | None = None
    annotations: dict[str, StrictStr] | None = None
    owner_references: Any = Field(default=None, alias="ownerReferences")
    finalizers: Any = None
    managed_fields: Any = Field(default=None, alias="managedFields")


class ResourceClaimRef(K8sModel):
    """core/v1 ResourceClaim (a container's use of one of the pod's resourceClaims)."""

    name: StrictStr = ""
    request: StrictStr | None = None


class ResourceRequirements(K8sModel):
    limits: dict[str, Any] | None = None
    requests: dict[str, Any] | None = None
    claims: list[ResourceClaimRef] | None = None


class Container(K8sModel):
    name: StrictStr = Field(description="The container name (a DNS label).")
    image: StrictStr | None = Field(default=None, description="The container image reference.")
    command: list[StrictStr] | None = None
    args: list[StrictStr] | None = None
    working_dir: Any = Field(default=None, alias="workingDir")
    ports: list[ContainerPort] | None = None
    env_from: Any = Field(default=None, alias="envFrom")
    env: Any = None
    resources: ResourceRequirements | None = None
    resize_policy: Any = Field(default=None, alias="resizePolicy")
    restart_policy: StrictStr | None = Field(default=None, alias="restartPolicy")
    restart_policy_rules: Any = Field(default=None, alias="restartPolicyRules")
    volume_mounts: Any = Field(default=None, alias="volumeMounts")
    volume_devices: Any = Field(default=None, alias="volumeDevices")
    liveness_probe: Probe | None = Field(default=None, alias="livenessProbe")
    readiness_probe: Probe | None = Field(default=None, alias="readinessProbe")
    startup_probe: Probe | None = Field(default=None, alias="startupProbe")
    lifecycle: Any = None
    termination_message_path: Any = Field(default=None, alias="terminationMessagePath")
    termination_message_policy: Any = Field(default=None, alias="terminationMessagePolicy")
    image_pull_policy: Any = Field(default=None, alias="imagePullPolicy")
    security_context: Any = Field(default=None, alias="securityContext")
    stdin: Any = None
    stdin_once: Any = Field(default=None, alias="stdinOnce")
    tty: Any = None


class Toleration(K8sModel):
    key: StrictStr | None = None
    operator: StrictStr | None = None
    value: StrictStr | None = None
    effect: StrictStr | None = None
    toleration_seconds: Int64 | None = Field(default=None, alias="tolerationSeconds")


class TopologySpreadConstraint(K8sModel):
    """core/v1 TopologySpreadConstraint. The three required fields default to their zero values,
    as the API server reads an omitted field, so that validation says what it says there."""

    max_skew: Int32 = Field(default=0, alias="maxSkew")
    topology_key: StrictStr = Field(default="", alias="topologyKey")
    when_unsatisfiable: StrictStr = Field(default="", alias="whenUnsatisfiable")
    label_selector: LabelSelector | None = Field(default=None, alias="labelSelector")
    min_domains: Int32 | None = Field(default=None, alias="minDomains")
    node_affinity_policy: StrictStr | None = Field(default=None, alias="nodeAffinityPolicy")
    node_taints_policy: StrictStr | None = Field(default=None, alias="nodeTaintsPolicy")
    match_label_keys: list[StrictStr] | None = Field(default=None, alias="matchLabelKeys")


class NodeSelectorRequirement(K8sModel):
    key: StrictStr | None = None
    operator: StrictStr | None = None
    values: list[StrictStr] | None = None


class NodeSelectorTerm(K8sModel):
    match_expressions: list[NodeSelectorRequirement] | None = Field(
        default=None, alias="matchExpressions"
    )
    match_fields: list[NodeSelectorRequirement] | None = Field(default=None, alias="matchFields")


class NodeSelector(K8sModel):
    node_selector_terms: list[NodeSelectorTerm] | None = Field(
        default=None, alias="nodeSelectorTerms"
    )


class PreferredSchedulingTerm(K8sModel):
    weight: Int32 | None = None
    preference: NodeSelectorTerm | None = None


class NodeAffinity(K8sModel):
    required: NodeSelector | None = Field(
        default=None, alias="requiredDuringSchedulingIgnoredDuringExecution"
    )
    preferred: list[PreferredSchedulingTerm] | None = Field(
        default=None, alias="preferredDuringSchedulingIgnoredDuringExecution"
    )


class PodAffinityTerm(K8sModel):
    label_selector: LabelSelector | None = Field(default=None, alias="labelSelector")
    namespaces: list[StrictStr] | None = None
    topology_key: StrictStr | None = Field(default=None, alias="topologyKey")
    namespace_selector: LabelSelector | None = Field(default=None, alias="namespaceSelector")
    match_label_keys: list[StrictStr] | None = Field(default=None, alias="matchLabelKeys")
    mismatch_label_keys: list[StrictStr] | None = Field(default=None, alias="mismatchLabelKeys")


class WeightedPodAffinityTerm(K8sModel):
    weight: Int32 | None = None
    pod_affinity_term: PodAffinityTerm | None = Field(default=None, alias="podAffinityTerm")


class PodAffinity(K8sModel):
    """core/v1 PodAffinity and PodAntiAffinity (the same two lists)."""

    required: list[PodAffinityTerm] | None = Field(
        default=None, alias="requiredDuringSchedulingIgnoredDuringExecution"
    )
    preferred: list[WeightedPodAffinityTerm] | None = Field(
        default=None, alias="preferredDuringSchedulingIgnoredDuringExecution"
    )


class Affinity(K8sModel):
    """core/v1 Affinity, decoded as the API server decodes it (types and field names); what
    the terms mean is checked where they are used (scheduler plugins). The scheduler reads the
    dict :meth:`as_api` gives back, with exactly the keys the manifest set."""

    node_affinity: NodeAffinity | None = Field(default=None, alias="nodeAffinity")
    pod_affinity: PodAffinity | None = Field(default=None, alias="podAffinity")
    pod_anti_affinity: PodAffinity | None = Field(default=None, alias="podAntiAffinity")

    def as_api(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, exclude_unset=True)


class PodSpec(K8sModel):
    volumes: Any = None
    init_containers: list[Container] | None = Field(default=None, alias="initContainers")
    containers: list[Container] | None = None
    ephemeral_containers: Any = Field(default=None, alias="ephemeralContainers")
    restart_policy: StrictStr | None = Field(default=None, alias="restartPolicy")
    termination_grace_period_seconds: Int64 | None = Field(
        default=None, alias="terminationGracePeriodSeconds"
    )
    active_deadline_seconds: Int64 | None = Field(default=None, alias="activeDeadlineSeconds")
    dns_policy: Any = Field(default=None, alias="dnsPolicy")
    node_selector: dict[str, StrictStr] | None = Field(default=None, alias="nodeSelector")
    service_account_name: Any = Field(default=None, alias="serviceAccountName")
    service_account: Any = Field(default=None, alias="serviceAccount")
    automount_service_account_token: Any = Field(default=None, alias="automountServiceAccountToken")
    node_name: StrictStr | None = Field(default=None, alias="nodeName")
    host_network: Any = Field(default=None, alias="hostNetwork")
    host_pid: Any = Field(default=None, alias="hostPID")
    host_ipc: Any = Field(default=None, alias="hostIPC")
    share_process_namespace: Any = Field(default=None, alias="shareProcessNamespace")
    security_context: Any = Field(default=None, alias="securityContext")
    image_pull_secrets: Any = Field(default=None, alias="imagePullSecrets")
    hostname: Any = None
    subdomain: Any = None
    affinity: Affinity | None = None
    scheduler_name: StrictStr | None = Field(default=None, alias="schedulerName")
    tolerations: list[Toleration] | None = None
    host_aliases: Any = Field(default=None, alias="hostAliases")
    priority_class_name: StrictStr | None = Field(default=None, alias="priorityClassName")
    priority: Int32 | None = None
    dns_config: Any = Field(default=None, alias="dnsConfig")
    readiness_gates: Any = Field(default=None, alias="readinessGates")
    runtime_class_name: Any = Field(default=None, alias="runtimeClassName")
    enable_service_links: Any = Field(default=None, alias="enableServiceLinks")
    preemption_policy: StrictStr | None = Field(default=None, alias="preemptionPolicy")
    overhead: dict[str, Any] | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] | None = Field(
        default=None, alias="topologySpreadConstraints"
    )
    set_hostname_as_fqdn: Any = Field(default=None, alias="setHostnameAsFQDN")
    os: Any = None
    host_users: Any = Field(default=None, alias="hostUsers")
    scheduling_gates: Any = Field(default=None, alias="schedulingGates")
    resource_claims: Any = Field(default=None, alias="resourceClaims")
    resources: Any = None
    hostname_override: Any = Field(default=None, alias="hostnameOverride")
    scheduling_group: Any = Field(default=None, alias="schedulingGroup")
    workload_ref: Any = Field(default=None, alias="workloadRef")


class PodTemplateSpec(K8sModel):
    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None

/** The subset of core/v1 the node agent reads and writes (shapes only, as served by the apiserver). */
import type { KubeObject } from "@kruntimes/kube";

export interface KeySelector {
  name?: string;
  key: string;
  optional?: boolean;
}
export interface ObjectFieldSelector {
  fieldPath: string;
  apiVersion?: string;
}
export interface ResourceFieldSelector {
  containerName?: string;
  resource: string;
  divisor?: string | number;
}
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: ObjectFieldSelector;
    resourceFieldRef?: ResourceFieldSelector;
    configMapKeyRef?: KeySelector;
    secretKeyRef?: KeySelector;
  };
}
export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name: string; optional?: boolean };
  secretRef?: { name: string; optional?: boolean };
}
export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}
export interface ExecAction {
  command?: string[];
}
export interface HTTPGetAction {
  path?: string;
  port: number | string;
  host?: string;
  scheme?: "HTTP" | "HTTPS";
  httpHeaders?: { name: string; value: string }[];
}
export interface TCPSocketAction {
  port: number | string;
  host?: string;
}
export interface GRPCAction {
  port: number;
  service?: string;
}
export interface ProbeHandler {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
  grpc?: GRPCAction;
}
export interface Probe extends ProbeHandler {
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
}
export interface LifecycleHandler {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
  sleep?: { seconds: number };
}
export interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  subPathExpr?: string;
  readOnly?: boolean;
}
export interface ResourceRequirements {
  limits?: Record<string, string>;
  requests?: Record<string, string>;
}
export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  ports?: ContainerPort[];
  volumeMounts?: VolumeMount[];
  resources?: ResourceRequirements;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { postStart?: LifecycleHandler; preStop?: LifecycleHandler };
  /** Only on init containers: "Always" makes it a native sidecar. */
  restartPolicy?: "Always";
}

export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}
export interface DownwardAPIVolumeFile {
  path: string;
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: ResourceFieldSelector;
  mode?: number;
}
export interface VolumeProjection {
  configMap?: { name: string; items?: KeyToPath[]; optional?: boolean };
  secret?: { name: string; items?: KeyToPath[]; optional?: boolean };
  downwardAPI?: { items?: DownwardAPIVolumeFile[] };
  serviceAccountToken?: { audience?: string; expirationSeconds?: number; path: string };
}
export interface Volume {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: string };
  hostPath?: { path: string; type?: string };
  configMap?: { name: string; items?: KeyToPath[]; optional?: boolean; defaultMode?: number };
  secret?: { secretName: string; items?: KeyToPath[]; optional?: boolean; defaultMode?: number };
  downwardAPI?: { items?: DownwardAPIVolumeFile[]; defaultMode?: number };
  projected?: { sources?: VolumeProjection[]; defaultMode?: number };
  persistentVolumeClaim?: { claimName: string; readOnly?: boolean };
}

export interface PersistentVolumeClaim extends KubeObject {
  spec?: { volumeName?: string; accessModes?: string[]; storageClassName?: string };
  status?: { phase?: string };
}
export interface PersistentVolume extends KubeObject {
  spec?: {
    hostPath?: { path: string; type?: string };
    local?: { path: string };
    claimRef?: { namespace?: string; name?: string; uid?: string };
    [source: string]: unknown;
  };
  status?: { phase?: string };
}

export interface PodSpec {
  nodeName?: string;
  serviceAccountName?: string;
  hostname?: string;
  subdomain?: string;
  restartPolicy?: "Always" | "OnFailure" | "Never";
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  initContainers?: Container[];
  containers: Container[];
  volumes?: Volume[];
  readinessGates?: { conditionType: string }[];
  enableServiceLinks?: boolean;
}

export interface ContainerStateWaiting {
  reason?: string;
  message?: string;
}
export interface ContainerStateRunning {
  startedAt?: string;
}
export interface ContainerStateTerminated {
  exitCode: number;
  signal?: number;
  reason?: string;
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  containerID?: string;
}
export interface ContainerState {
  waiting?: ContainerStateWaiting;
  running?: ContainerStateRunning;
  terminated?: ContainerStateTerminated;
}
export interface ContainerStatus {
  name: string;
  state: ContainerState;
  lastState: ContainerState;
  ready: boolean;
  started?: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
}
export interface PodCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}
export type PodPhase = "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown";
export interface PodStatus {
  phase?: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  qosClass?: string;
}
export interface Pod extends KubeObject {
  spec: PodSpec;
  status?: PodStatus;
}

export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}
export interface Secret extends KubeObject {
  data?: Record<string, string>;
  type?: string;
}

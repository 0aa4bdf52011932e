/** Paths, volume names and env names shared by the runtime container and the runtimed sidecar. */

/** The emptyDir both containers mount; the Runtime Server listens on a Unix socket in it. */
export const SOCKET_DIR = "/var/run/kruntimes";
export const SOCKET_PATH = `${SOCKET_DIR}/runtime.sock`;
export const SA_TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export const Volumes = {
  socket: "krt-socket",
  workspace: "krt-workspace",
  runtimedToken: "krt-runtimed-token",
  runtimedTmp: "krt-runtimed-tmp",
} as const;

export const Env = {
  podName: "POD_NAME",
  podNamespace: "POD_NAMESPACE",
  podUID: "POD_UID",
  podIP: "POD_IP",
  nodeName: "NODE_NAME",
  runtime: "KRT_RUNTIME",
  capacity: "KRT_CAPACITY",
  socket: "KRT_SOCKET",
  /** The Runtime Server's warm interpreters (see warm-pool.ts). */
  warmPool: "KRT_WARM_POOL",
  workspace: "KRT_WORKSPACE",
  port: "KRT_PORT",
  leaseDurationSeconds: "KRT_LEASE_DURATION_SECONDS",
  heartbeatIntervalMs: "KRT_HEARTBEAT_INTERVAL_MS",
  dataplanePort: "KRT_DATAPLANE_PORT",
  dataplaneSubjects: "KRT_DATAPLANE_SUBJECTS",
  sessionMaxQueuedTotal: "KRT_SESSION_MAX_QUEUED_TOTAL",
  sessionCloseDeadlineMs: "KRT_SESSION_CLOSE_DEADLINE_MS",
} as const;

/** runtimed's HTTP port name (readiness `/readyz`, liveness `/healthz`, `/metrics`). */
export const RUNTIMED_PORT_NAME = "runtimed";
/** runtimed's dataplane port name (FunctionDataplaneService, called by the gateway). */
export const DATAPLANE_PORT_NAME = "dataplane";
/** runtimed's writable scratch directory (its root filesystem is read-only); also its TMPDIR. */
export const RUNTIMED_TMP = "/var/tmp/runtimed";
/** runtimed runs as this non-root user unless the pod's securityContext sets one. */
export const RUNTIMED_UID = 65532;

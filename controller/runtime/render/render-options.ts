/** What rendering needs from the controller's options. */
export interface RenderOptions {
  runtimedImage: string;
  /** Replaces the runtimed image's entrypoint (debug builds, test stand-ins). */
  runtimedCommand?: string[];
  runtimedPort: number;
  imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  /** runtimed's heartbeat Lease: duration and renew period. */
  leaseDurationSeconds: number;
  heartbeatIntervalMs: number;
  runtimedResources: ContainerResources;
  /** Applied to the runtime container only when the template sets no resources. */
  runtimeResources: ContainerResources;
  /** Cap of the warm pool derived from `capacity.runs` (0: leave the Runtime Server's default). */
  warmPoolMax: number;
  /** runtimed's dataplane port (named `dataplane`). */
  dataplanePort: number;
  /** Usernames allowed to call the dataplane (the gateway's ServiceAccount); empty: nobody. */
  dataplaneSubjects: string[];
  /** runtimed's session bounds (KRT_SESSION_MAX_QUEUED_TOTAL, KRT_SESSION_CLOSE_DEADLINE_MS); absent: runtimed's defaults. */
  sessionMaxQueuedTotal?: number;
  sessionCloseDeadlineMs?: number;
  /** Render a NetworkPolicy per Runtime: the dataplane port only from the gateway pods. */
  dataplaneNetworkPolicy: boolean;
  /** Where the gateway pods run (absent: the Runtime's own namespace) and their labels. */
  gatewayNamespace?: string;
  gatewayPodLabels: Record<string, string>;
}

export interface ContainerResources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

/** What the pod and container runtimes need from the agent, passed down instead of globals. */
import type { Logger } from "pino";
import type { ClaimSource } from "../api/claim-source.ts";
import type { ObjectSource } from "../api/object-source.ts";
import type { ServiceEnv } from "../env/container-env.ts";
import type { ImageMap } from "../images/image-map.ts";
import type { HostTools } from "../runtime/container-process.ts";
import type { ProcessRegistry } from "../runtime/process-registry.ts";
import type { TokenSource } from "../volumes/payloads.ts";
import type { PodEventSink } from "./pod-events.ts";

export interface PodContext {
  log: Logger;
  /** The image map, re-read when its file changes. */
  images(): ImageMap;
  objects: ObjectSource;
  /** PersistentVolumeClaims and their volumes, for persistentVolumeClaim volumes. */
  claims: ClaimSource;
  /** Warning Events about pods (FailedMount). */
  events: PodEventSink;
  tokens: TokenSource;
  tools: HostTools;
  registry: ProcessRegistry;
  service: ServiceEnv;
  hostIP: string;
  allocatable: { cpu: string; memory: string };
  /** PATH for containers whose image env sets none: the agent's bun first, then the agent's PATH. */
  defaultPath: string;
  /** HOME for containers whose image env sets none. */
  defaultHome: string;
  restartBackoffInitialMs: number;
  restartBackoffMaxMs: number;
  /** Asks for a sync of this pod (level-triggered: what changed is read again). */
  enqueue(uid: string): void;
}

/** PersistentWorkspace fixtures for unit tests. */
import {
  API_VERSION,
  type PersistentWorkspace,
  type PersistentWorkspaceSpec,
  type PersistentWorkspaceStatus,
  WORKSPACE_KIND,
} from "@kruntimes/api";

export interface WorkspaceFixture {
  name: string;
  namespace?: string;
  uid?: string;
  spec?: PersistentWorkspaceSpec;
  status?: PersistentWorkspaceStatus;
  deleting?: boolean;
  finalizers?: string[];
  labels?: Record<string, string>;
  created?: string;
}

export function aWorkspace(f: WorkspaceFixture): PersistentWorkspace {
  return {
    apiVersion: API_VERSION,
    kind: WORKSPACE_KIND,
    metadata: {
      name: f.name,
      namespace: f.namespace ?? "ns",
      uid: f.uid ?? `wsuid-${f.name}-0000`,
      generation: 1,
      creationTimestamp: f.created ?? "2026-01-01T00:00:00Z",
      ...(f.labels ? { labels: f.labels } : {}),
      ...(f.finalizers ? { finalizers: f.finalizers } : {}),
      ...(f.deleting ? { deletionTimestamp: "2026-01-02T00:00:00Z" } : {}),
    },
    spec: f.spec ?? {},
    ...(f.status ? { status: f.status } : {}),
  };
}

/** The status of a workspace bound to `pod` (UID `uid-<pod>`, as aPod makes it). */
export function boundWorkspace(pod: string, runtime = "rt"): PersistentWorkspaceStatus {
  return { phase: "Bound", runtime, boundPod: pod, boundPodUID: `uid-${pod}` };
}

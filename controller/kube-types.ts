/** The fields of core Kubernetes objects the controller reads (the kube client is untyped). */
import type { KubeObject } from "@kruntimes/kube";

export interface PodCondition {
  type: string;
  status: "True" | "False" | "Unknown";
}

export interface Pod extends KubeObject {
  spec?: { nodeName?: string; containers?: { name: string }[] };
  status?: {
    phase?: "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown";
    conditions?: PodCondition[];
    podIP?: string;
  };
}

export interface Lease extends KubeObject {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

export interface Deployment extends KubeObject {
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
  };
}

export function podReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/** Kubernetes MicroTime / Time (RFC 3339) → epoch ms; NaN when absent or invalid. */
export function parseTime(t: string | undefined): number {
  return t ? Date.parse(t) : Number.NaN;
}

/** Epoch ms → Kubernetes MicroTime (`2006-01-02T15:04:05.000000Z`). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

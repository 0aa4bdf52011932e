/** metav1.Condition lists: set one condition, keeping lastTransitionTime when status is unchanged. */
import type { Condition } from "@kruntimes/api";

export interface ConditionInput {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
}

export function setCondition(
  list: readonly Condition[] | undefined,
  c: ConditionInput,
  nowIso: string,
  observedGeneration?: number,
): Condition[] {
  const prev = list?.find((x) => x.type === c.type);
  const next: Condition = {
    type: c.type,
    status: c.status,
    reason: c.reason,
    message: c.message.slice(0, 32768),
    lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : nowIso,
    ...(observedGeneration !== undefined ? { observedGeneration } : {}),
  };
  return [...(list ?? []).filter((x) => x.type !== c.type), next];
}

/** Kubernetes Time (second precision, RFC 3339). */
export function kubeTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

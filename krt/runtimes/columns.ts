/**
 * The table columns of `krt runtime list|get`: desired (the autoscaler's count when autoscaled)
 * vs ready replicas, per-pod capacity and the Runs waiting for a pod; wide adds the autoscaling
 * range.
 */
import { type Runtime, runtimeCapacity } from "@kruntimes/api";
import { humanAge } from "../output/age.ts";
import type { Column } from "../output/table.ts";

export function runtimeColumns(nowMs: number, allNamespaces: boolean): Column<Runtime>[] {
  const cols: Column<Runtime>[] = [
    { header: "NAME", value: (r) => r.metadata.name ?? "" },
    { header: "DESIRED", value: (r) => desired(r) },
    { header: "READY", value: (r) => String(r.status?.readyReplicas ?? 0) },
    { header: "AVAILABLE", value: (r) => String(r.status?.availableReplicas ?? 0) },
    { header: "CAPACITY", value: (r) => formatCapacity(runtimeCapacity(r.spec)) },
    { header: "PENDING", value: (r) => String(r.status?.pendingRuns ?? 0) },
    { header: "AGE", value: (r) => humanAge(r.metadata.creationTimestamp, nowMs) },
    { header: "STATUS", value: (r) => conditionSummary(r), wide: true },
    { header: "IMAGE", value: (r) => runtimeImage(r), wide: true },
    { header: "AUTOSCALE", value: (r) => autoscaleRange(r), wide: true },
  ];
  if (allNamespaces) cols.unshift({ header: "NAMESPACE", value: (r) => r.metadata.namespace ?? "" });
  return cols;
}

export function formatCapacity(cap: Record<string, number>): string {
  return Object.entries(cap)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/** With spec.autoscaling the autoscaler's count (spec.replicas does not apply then). */
function desired(r: Runtime): string {
  if (!r.spec.autoscaling) return String(r.spec.replicas ?? 1);
  return String(r.status?.autoscaling?.desiredReplicas ?? r.spec.autoscaling.minReplicas);
}

function autoscaleRange(r: Runtime): string {
  const a = r.spec.autoscaling;
  return a ? `${a.minReplicas}-${a.maxReplicas}` : "-";
}

function conditionSummary(r: Runtime): string {
  const ready = r.status?.conditions?.find((c) => c.type === "Ready");
  if (!ready) return "Unknown";
  return ready.status === "True" ? "Ready" : `NotReady(${ready.reason ?? "?"})`;
}

function runtimeImage(r: Runtime): string {
  const c = r.spec.template.spec.containers.find((x) => x.name === "runtime");
  return (c?.image as string | undefined) ?? "";
}

/** The table columns of `krt runtime list|get`: desired vs ready replicas and per-pod capacity. */
import { type Runtime, runtimeCapacity } from "@kruntimes/api";
import { humanAge } from "../output/age.ts";
import type { Column } from "../output/table.ts";

export function runtimeColumns(nowMs: number, allNamespaces: boolean): Column<Runtime>[] {
  const cols: Column<Runtime>[] = [
    { header: "NAME", value: (r) => r.metadata.name ?? "" },
    { header: "DESIRED", value: (r) => String(r.spec.replicas ?? 1) },
    { header: "READY", value: (r) => String(r.status?.readyReplicas ?? 0) },
    { header: "AVAILABLE", value: (r) => String(r.status?.availableReplicas ?? 0) },
    { header: "CAPACITY", value: (r) => formatCapacity(runtimeCapacity(r.spec)) },
    { header: "AGE", value: (r) => humanAge(r.metadata.creationTimestamp, nowMs) },
    { header: "STATUS", value: (r) => conditionSummary(r), wide: true },
    { header: "IMAGE", value: (r) => runtimeImage(r), wide: true },
  ];
  if (allNamespaces) cols.unshift({ header: "NAMESPACE", value: (r) => r.metadata.namespace ?? "" });
  return cols;
}

export function formatCapacity(cap: Record<string, number>): string {
  return Object.entries(cap)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
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

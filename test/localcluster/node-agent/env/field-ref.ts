/**
 * The downward API: values of `fieldRef` and `resourceFieldRef`, shared by env vars and
 * downwardAPI volumes. Pod IPs come from the agent (the status carrying them may not be written yet).
 */
import type { Container, ObjectFieldSelector, Pod, ResourceFieldSelector } from "../api/types.ts";
import { divideQuantity } from "./quantity.ts";

export interface PodFacts {
  podIP: string;
  hostIP: string;
  /** Node allocatable: the limit of a container that sets none, as in kubelet. */
  allocatable: { cpu: string; memory: string; "ephemeral-storage"?: string };
}

export class FieldRefError extends Error {
  override name = "FieldRefError";
}

/** `k="v"` lines sorted by key, the format of `metadata.labels`/`annotations` in downwardAPI volumes. */
function formatMap(m: Record<string, string> = {}): string {
  return Object.keys(m)
    .sort()
    .map((k) => `${k}=${JSON.stringify(m[k])}`)
    .join("\n");
}

export function fieldRefValue(pod: Pod, facts: PodFacts, sel: ObjectFieldSelector): string {
  const p = sel.fieldPath;
  const subscript = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(p);
  if (subscript) {
    const map = subscript[1] === "labels" ? pod.metadata.labels : pod.metadata.annotations;
    return map?.[subscript[2]!] ?? "";
  }
  switch (p) {
    case "metadata.name":
      return pod.metadata.name ?? "";
    case "metadata.namespace":
      return pod.metadata.namespace ?? "";
    case "metadata.uid":
      return pod.metadata.uid ?? "";
    case "metadata.labels":
      return formatMap(pod.metadata.labels);
    case "metadata.annotations":
      return formatMap(pod.metadata.annotations);
    case "spec.nodeName":
      return pod.spec.nodeName ?? "";
    case "spec.serviceAccountName":
      return pod.spec.serviceAccountName ?? "";
    case "status.podIP":
    case "status.podIPs":
      return facts.podIP;
    case "status.hostIP":
    case "status.hostIPs":
      return facts.hostIP;
    default:
      throw new FieldRefError(`unsupported fieldPath "${p}"`);
  }
}

/** `limits.cpu`, `requests.memory`, …: the container's value (limits default to node allocatable). */
export function resourceFieldValue(
  pod: Pod,
  facts: PodFacts,
  sel: ResourceFieldSelector,
  defaultContainer?: Container,
): string {
  const all = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  const c = sel.containerName ? all.find((x) => x.name === sel.containerName) : defaultContainer;
  if (!c) throw new FieldRefError(`resourceFieldRef: container "${sel.containerName ?? ""}" not found`);
  const m = /^(limits|requests)\.(cpu|memory|ephemeral-storage|hugepages-.+)$/.exec(sel.resource);
  if (!m) throw new FieldRefError(`unsupported resource "${sel.resource}"`);
  const [, kind, name] = m as unknown as [string, "limits" | "requests", string];
  const limit = c.resources?.limits?.[name] ?? facts.allocatable[name as "cpu"] ?? "0";
  // The API defaults an unset request to the limit when one is set; otherwise kubelet reports 0.
  const value =
    kind === "limits" ? limit : (c.resources?.requests?.[name] ?? c.resources?.limits?.[name] ?? "0");
  return divideQuantity(name, value, sel.divisor ?? "1");
}

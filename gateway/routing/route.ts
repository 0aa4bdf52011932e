/**
 * What a Run says about where it is served, as a pure function: a Ready function Run with a
 * `status.endpoint` and a known pod address is a Route (fenced by Run UID + pod UID + attempt);
 * anything else says why it cannot be called. The address comes from the pod's EndpointSlice
 * entry when the slices hold one (it also says whether the pod is terminating); when they hold
 * none for that pod (pod IPs EndpointSlices cannot carry, e.g. the local cluster's loopback
 * addresses, or a slice not updated yet), from `status.endpoint.address`, which runtimed writes
 * with the Ready status.
 */
import { FunctionLimits, type Run, type RunMode, RunPhase, runModeOf } from "@kruntimes/api";
import type { PodAddress } from "./endpoint-index.ts";

export interface Route {
  namespace: string;
  name: string;
  runUID: string;
  pod: string;
  podUID: string;
  attempt: number;
  /** host:port of the pod's runtimed dataplane. */
  address: string;
  /** Where the address came from: the pod's EndpointSlice entry or the Run's status.endpoint.address. */
  via: "slice" | "status";
  /** The Run's own request limit (spec.mode.function.maxRequestBytes or its default). */
  maxRequestBytes: number;
}

export type Resolution =
  | { kind: "route"; route: Route }
  | { kind: "notReady"; phase: string; mode: RunMode }
  | { kind: "noEndpoint"; pod: string; podUID: string; attempt: number; runUID: string }
  | { kind: "terminating"; pod: string; podUID: string; attempt: number; runUID: string };

/** Where `run` is served for `want` (the mode the caller's service calls), given pod addresses. */
export function resolveRun(
  run: Run,
  want: "function" | "session",
  addressOf: (podUID: string) => PodAddress | undefined,
): Resolution {
  const mode = runModeOf(run.spec);
  const phase = run.status?.phase ?? "";
  const ep = run.status?.endpoint;
  if (mode !== want || phase !== RunPhase.Ready || !ep?.podUID || !ep.attempt)
    return { kind: "notReady", phase, mode };
  const runUID = run.metadata.uid ?? "";
  const where = { pod: ep.pod, podUID: ep.podUID, attempt: ep.attempt, runUID };
  const entry = addressOf(ep.podUID);
  if (entry?.terminating) return { kind: "terminating", ...where };
  const address = entry?.address ?? ep.address;
  if (!address) return { kind: "noEndpoint", ...where };
  return {
    kind: "route",
    route: {
      namespace: run.metadata.namespace ?? "",
      name: run.metadata.name ?? "",
      runUID,
      pod: ep.pod,
      podUID: ep.podUID,
      attempt: ep.attempt,
      address,
      via: entry ? "slice" : "status",
      maxRequestBytes: run.spec.mode.function?.maxRequestBytes ?? FunctionLimits.defaultMaxRequestBytes,
    },
  };
}

/** Same Run, same pod, same attempt: re-resolving found nothing new. */
export function sameRoute(
  a: Pick<Route, "runUID" | "podUID" | "attempt">,
  b: Pick<Route, "runUID" | "podUID" | "attempt">,
) {
  return a.runUID === b.runUID && a.podUID === b.podUID && a.attempt === b.attempt;
}

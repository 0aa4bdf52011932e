/**
 * A call's deadline: what the caller asked for (Connect's `Connect-Timeout-Ms`, or gRPC's
 * `grpc-timeout` — both also accepted on the plain route), else --default-timeout, never above
 * --max-timeout.
 */
export interface DeadlineOptions {
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
}

const GRPC_UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000_001 };

/** Parses `grpc-timeout` ("100m", "5S", "1H"); undefined when malformed. */
export function parseGrpcTimeout(v: string): number | undefined {
  const m = /^(\d{1,8})([HMSmun])$/.exec(v.trim());
  if (!m) return undefined;
  return Number(m[1]) * (GRPC_UNITS[m[2] as string] as number);
}

/** The requested timeout in ms from request headers, or undefined. */
export function requestedTimeoutMs(headers: Headers): number | undefined {
  const connect = headers.get("connect-timeout-ms");
  if (connect !== null && /^\d{1,10}$/.test(connect.trim())) return Number(connect);
  const grpc = headers.get("grpc-timeout");
  if (grpc !== null) return parseGrpcTimeout(grpc);
  return undefined;
}

/** Effective timeout, ms: requested (if any, at least 1 ms) or the default, cut to the maximum. */
export function effectiveTimeoutMs(requested: number | undefined, o: DeadlineOptions): number {
  const want = requested === undefined ? o.defaultTimeoutMs : Math.max(1, Math.ceil(requested));
  return Math.min(want, o.maxTimeoutMs);
}

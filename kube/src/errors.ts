/** The one error type of the Kubernetes API boundary: HTTP status plus the apiserver's Status. */
export interface KubeStatus {
  kind?: "Status";
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    kind?: string;
    causes?: { reason?: string; message?: string; field?: string }[];
  };
}

export class KubeError extends Error {
  override name = "KubeError";
  constructor(
    readonly method: string,
    readonly path: string,
    readonly code: number,
    readonly status: KubeStatus,
  ) {
    super(status.message ?? `${method} ${path}: HTTP ${code}`);
  }
  get reason(): string {
    return this.status.reason ?? "Unknown";
  }
  static is(e: unknown, code: number): e is KubeError {
    return e instanceof KubeError && e.code === code;
  }
}

export const isNotFound = (e: unknown) => KubeError.is(e, 404);
export const isConflict = (e: unknown) => KubeError.is(e, 409);
/** A JSON-patch `test` op that failed: the fence did not hold. */
export const isFenceFailed = (e: unknown) => KubeError.is(e, 422) || KubeError.is(e, 409);
export const isGone = (e: unknown) => KubeError.is(e, 410);

/** The request's result, or undefined when the object does not exist (404); other errors throw. */
export async function unlessNotFound<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

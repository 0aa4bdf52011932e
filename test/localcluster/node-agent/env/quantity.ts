/** Kubernetes resource quantities ("500m", "1.5Gi", "2e3") as plain numbers in base units. */

const SUFFIX: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  "": 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

export class QuantityError extends Error {
  override name = "QuantityError";
}

export function parseQuantity(q: string | number): number {
  if (typeof q === "number") return q;
  const m = /^([+-]?[0-9.]+)(?:[eE]([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/.exec(q.trim());
  if (!m) throw new QuantityError(`invalid quantity "${q}"`);
  const base = Number(m[1]);
  if (Number.isNaN(base)) throw new QuantityError(`invalid quantity "${q}"`);
  if (m[2] !== undefined) return base * 10 ** Number(m[2]);
  return base * SUFFIX[m[3] ?? ""]!;
}

/**
 * The value the downward API exposes for a resource: ceil(value / divisor), as kubelet does
 * (cpu compared in millicores so "1m" divisors work exactly).
 */
export function divideQuantity(
  resource: string,
  value: string | number,
  divisor: string | number = "1",
): string {
  const v = parseQuantity(value);
  const d = parseQuantity(divisor);
  if (d <= 0) throw new QuantityError(`divisor "${divisor}" must be positive`);
  if (resource.endsWith("cpu")) return String(Math.ceil(Math.round(v * 1000) / Math.round(d * 1000)));
  return String(Math.ceil(v / d));
}

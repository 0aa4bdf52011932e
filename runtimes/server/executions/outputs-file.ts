/**
 * The $KRUNTIME_OUTPUTS file: `key=value` lines a Run appends to. Blank lines are skipped, a
 * later line wins over an earlier one with the same key, and values cannot span lines.
 */

export interface OutputLimits {
  maxCount: number;
  maxBytes: number;
  maxValueBytes: number;
}

export type OutputsResult = { ok: true; outputs: Record<string, string> } | { ok: false; message: string };

/** Keys are identifiers with dots and dashes, at most this many bytes. */
export const OUTPUT_KEY_MAX_BYTES = 128;
const keyPattern = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const encoder = new TextEncoder();

/** Parses the file's bytes; `null` means the Run never created the file. */
export function parseOutputs(bytes: Uint8Array | null, limits: OutputLimits): OutputsResult {
  if (bytes === null || bytes.length === 0) return { ok: true, outputs: {} };
  if (bytes.length > limits.maxBytes) {
    return { ok: false, message: `outputs file is ${bytes.length} bytes, the limit is ${limits.maxBytes}` };
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, message: "outputs file is not valid UTF-8" };
  }
  const outputs = new Map<string, string>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.endsWith("\r") ? lines[i]!.slice(0, -1) : lines[i]!;
    if (line === "") continue;
    const at = `outputs file line ${i + 1}`;
    const eq = line.indexOf("=");
    if (eq === -1) return { ok: false, message: `${at}: expected key=value` };
    const key = line.slice(0, eq);
    const value = line.slice(eq + 1);
    if (!keyPattern.test(key) || key.length > OUTPUT_KEY_MAX_BYTES) {
      return {
        ok: false,
        message: `${at}: key ${JSON.stringify(key.slice(0, 64))} must match ${keyPattern.source} and be at most ${OUTPUT_KEY_MAX_BYTES} bytes`,
      };
    }
    const valueBytes = encoder.encode(value).length;
    if (valueBytes > limits.maxValueBytes) {
      return {
        ok: false,
        message: `${at}: value of ${key} is ${valueBytes} bytes, the limit is ${limits.maxValueBytes}`,
      };
    }
    outputs.delete(key);
    outputs.set(key, value);
    if (outputs.size > limits.maxCount) {
      return { ok: false, message: `outputs file has more than ${limits.maxCount} keys` };
    }
  }
  return { ok: true, outputs: Object.fromEntries(outputs) };
}

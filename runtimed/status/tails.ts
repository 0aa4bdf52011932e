/**
 * What of an attempt's stdout/stderr tails and outputs fits into `Run.status`. The schema bounds
 * strings in characters (`Limits.tailLength`, `outputValueLength`), the Runtime Server in bytes;
 * tails are cut to fit (keeping the end and setting the truncated flag), outputs that cannot be
 * stored are refused whole with a message, because half a result set is worse than none.
 */
import { Limits } from "@kruntimes/api";

const decoder = new TextDecoder("utf-8", { fatal: false });
export const TRUNCATION_MARKER = "[... truncated ...]\n";

export interface Tail {
  text: string;
  truncated: boolean;
}

/** The end of a stream as status text: at most `limit` characters, the flag kept or set. */
export function fitTail(bytes: Uint8Array, truncated: boolean, limit: number = Limits.tailLength): Tail {
  const text = decoder.decode(bytes);
  if (text.length <= limit) return { text, truncated };
  return {
    text: TRUNCATION_MARKER + text.slice(text.length - (limit - TRUNCATION_MARKER.length)),
    truncated: true,
  };
}

const OUTPUT_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

export type OutputsCheck = { ok: true; outputs: Record<string, string> } | { ok: false; message: string };

/** Outputs as `status.outputs` accepts them, or why they cannot be stored. */
export function checkOutputs(outputs: Record<string, string>): OutputsCheck {
  const keys = Object.keys(outputs);
  if (keys.length > Limits.outputCount)
    return {
      ok: false,
      message: `the task wrote ${keys.length} outputs; at most ${Limits.outputCount} are kept`,
    };
  for (const k of keys) {
    if (k.length > Limits.outputNameLength || !OUTPUT_NAME.test(k))
      return {
        ok: false,
        message: `output name ${JSON.stringify(k.slice(0, 80))} is invalid: use letters, digits, '_', '.' and '-', not starting with a digit, at most ${Limits.outputNameLength} characters`,
      };
    const v = outputs[k] as string;
    if (v.length > Limits.outputValueLength)
      return {
        ok: false,
        message: `output ${k} is ${v.length} characters; at most ${Limits.outputValueLength} are kept`,
      };
  }
  return { ok: true, outputs };
}

/** A bounded one-line message for `status.message`. */
export function boundMessage(message: string): string {
  return message.length <= Limits.messageLength
    ? message
    : `${message.slice(0, Limits.messageLength - 3)}...`;
}

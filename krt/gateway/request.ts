/**
 * `krt invoke`'s request from its flags: the body (`-d text`, `-d @file`, `-d @-` or piped stdin),
 * the headers (`-H 'name: value'`, names lower-cased; `content-type` becomes the content type),
 * and the content type when none is given: application/json for a body that parses as JSON,
 * application/octet-stream otherwise.
 */
import { CliError, unreadable } from "../errors.ts";

export interface InvokeRequestParts {
  body: Uint8Array;
  contentType: string;
  headers: Record<string, string>;
}

/** Where the body comes from; `read` loads a file (`-` = stdin). */
export interface BodySource {
  data?: string;
  /** stdin when no --data is given and stdin is not a terminal. */
  stdin?: () => Promise<Uint8Array>;
  read: (file: string) => Promise<Uint8Array>;
}

export function parseHeaders(raw: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of raw) {
    const colon = h.indexOf(":");
    const name = colon < 0 ? "" : h.slice(0, colon).trim().toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name))
      throw CliError.usage(`-H "${h}" is not a header`, "e.g. -H 'content-type: application/json'");
    if (name === "authorization")
      throw CliError.usage("-H authorization: the gateway takes your token from --token or the kubeconfig");
    out[name] = h.slice(colon + 1).trim();
  }
  return out;
}

export async function loadBody(src: BodySource): Promise<Uint8Array> {
  if (src.data === undefined) return src.stdin ? await src.stdin() : new Uint8Array();
  if (!src.data.startsWith("@")) return new TextEncoder().encode(src.data);
  const file = src.data.slice(1);
  try {
    return await src.read(file);
  } catch (e) {
    throw unreadable("--data", `@${file}`, e);
  }
}

export function guessContentType(body: Uint8Array): string {
  if (body.length === 0) return "application/octet-stream";
  try {
    JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
    return "application/json";
  } catch {
    return "application/octet-stream";
  }
}

export function buildInvokeRequest(body: Uint8Array, rawHeaders: string[]): InvokeRequestParts {
  const headers = parseHeaders(rawHeaders);
  const contentType = headers["content-type"] ?? guessContentType(body);
  delete headers["content-type"];
  return { body, contentType, headers };
}

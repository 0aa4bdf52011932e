/**
 * The response meta file of a bash handler ($KRUNTIME_RESPONSE_META): optional lines
 * `status: 201`, `content-type: application/json` and any other `name: value` header. Without a
 * content type the response is `text/plain; charset=utf-8` when it is valid UTF-8, else
 * `application/octet-stream`.
 */
export interface ResponseMeta {
  status: number | undefined;
  contentType: string | undefined;
  headers: Record<string, string>;
}

export function parseMeta(text: string): ResponseMeta {
  const meta: ResponseMeta = { status: undefined, contentType: undefined, headers: {} };
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "status") {
      const status = Number(value);
      if (Number.isInteger(status) && status >= 100 && status <= 599) meta.status = status;
    } else if (name === "content-type") meta.contentType = value;
    else meta.headers[name] = value;
  }
  return meta;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

export function responseContentType(body: Uint8Array): string {
  try {
    utf8.decode(body);
    return "text/plain; charset=utf-8";
  } catch {
    return "application/octet-stream";
  }
}

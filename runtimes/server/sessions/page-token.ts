/**
 * ListFiles page tokens: opaque to callers, they carry the session, the directory (as the caller
 * named it, normalized) and the raw bytes of the last name returned, signed with a key of this
 * server (HMAC-SHA256, truncated). A token for another directory or session, a tampered one, or
 * one from an earlier server process fails INVALID_ARGUMENT.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { sessionError } from "./session-error.ts";

interface Payload {
  v: 1;
  /** run_uid of the session. */
  s: string;
  /** Normalized workspace-relative directory. */
  d: string;
  /** Last name returned, base64 of its bytes. */
  n: string;
}

export class PageTokens {
  constructor(private readonly key: Uint8Array) {}

  encode(session: string, dir: string, lastName: Uint8Array): string {
    const payload: Payload = { v: 1, s: session, d: dir, n: Buffer.from(lastName).toString("base64") };
    const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
    return `${body}.${this.sign(body)}`;
  }

  /** The last name a token resumes after; throws INVALID_ARGUMENT unless it is this session's and directory's. */
  decode(token: string, session: string, dir: string): Buffer {
    const dot = token.indexOf(".");
    const body = token.slice(0, dot);
    const signature = Buffer.from(token.slice(dot + 1));
    const expected = Buffer.from(this.sign(body));
    if (dot === -1 || signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
      throw invalid("it is not a page token of this server (malformed, altered, or issued before a restart)");
    }
    let payload: Payload;
    try {
      payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Payload;
    } catch {
      throw invalid("it is malformed");
    }
    if (payload.v !== 1 || typeof payload.n !== "string") throw invalid("it is malformed");
    if (payload.s !== session) throw invalid("it was issued for another session");
    if (payload.d !== dir) {
      throw invalid(`it was issued for directory ${JSON.stringify(payload.d)}, not ${JSON.stringify(dir)}`);
    }
    return Buffer.from(payload.n, "base64");
  }

  private sign(body: string): string {
    return createHmac("sha256", this.key).update(body).digest().subarray(0, 16).toString("base64url");
  }
}

function invalid(why: string) {
  return sessionError(Code.InvalidArgument, `page_token refused: ${why}`);
}

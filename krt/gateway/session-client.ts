/**
 * krt's client of `kruntimes.gateway.v1.SessionService` (Connect binary on Bun `fetch`, whose `tls`
 * option carries the CA and the expected server name), and the operations the session commands
 * are made of: a streamed Exec, a chunked upload (one upload_id, the last chunk commits), a
 * streamed download, and paging through a directory.
 */
import { type Client, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { type ExecResponse, SessionService } from "@kruntimes/api/gen/kruntimes/gateway/v1/session_pb.ts";
import type { FileInfo, WriteMode } from "@kruntimes/api/gen/kruntimes/runtime/v1/session_pb.ts";
import type { GatewayTarget } from "./locate.ts";

export type SessionClient = Client<typeof SessionService>;

/** Bytes per WriteFile call of `krt cp` (below the gateway's default --max-request-bytes). */
export const UPLOAD_CHUNK_BYTES = 1024 * 1024;

export interface SessionCallTarget {
  namespace: string;
  run: string;
  token: string;
}

export function sessionClient(target: GatewayTarget): SessionClient {
  const tls = target.tls;
  return createClient(
    SessionService,
    createConnectTransport({
      baseUrl: target.baseUrl,
      useBinaryFormat: true,
      fetch: ((input: string | URL | Request, init?: RequestInit) =>
        fetch(input, { ...init, tls } as RequestInit)) as typeof fetch,
    }),
  );
}

const auth = (t: SessionCallTarget, timeoutMs?: number) => ({
  headers: { authorization: `Bearer ${t.token}` },
  ...(timeoutMs !== undefined ? { timeoutMs } : {}),
});

export interface ExecCall {
  argv?: string[];
  shell?: string;
  env: Record<string, string>;
  workingDir: string;
  /** Operation timeout, ms (0 = the Run's default). */
  timeoutMs: number;
  stdin?: Uint8Array;
}

/** Runs a command; each event is handed to `on` as it arrives. Resolves with the last (exited) event. */
export async function execStream(
  client: SessionClient,
  t: SessionCallTarget,
  call: ExecCall,
  on: (ev: ExecResponse) => void | Promise<void>,
): Promise<ExecResponse | undefined> {
  let last: ExecResponse | undefined;
  const stream = client.exec(
    {
      target: { namespace: t.namespace, run: t.run },
      command: {
        program:
          call.shell !== undefined
            ? { case: "shell", value: call.shell }
            : { case: "argv", value: { args: call.argv ?? [] } },
      },
      env: call.env,
      workingDir: call.workingDir,
      timeoutMs: call.timeoutMs,
      stdin: call.stdin ?? new Uint8Array(),
    },
    auth(t),
  );
  for await (const ev of stream) {
    last = ev;
    await on(ev);
  }
  return last;
}

/**
 * Uploads `source` (any byte stream) to `path` in chunks of `chunkBytes` sharing one upload_id;
 * a full chunk is sent once more data follows, so the last call (last = true) commits the file.
 */
export async function upload(
  client: SessionClient,
  t: SessionCallTarget,
  path: string,
  source: AsyncIterable<Uint8Array>,
  o: { mode: WriteMode; parents: boolean; fileMode?: number; chunkBytes?: number },
): Promise<FileInfo | undefined> {
  const size = o.chunkBytes ?? UPLOAD_CHUNK_BYTES;
  const uploadId = `krt-cp-${Bun.randomUUIDv7()}`;
  let offset = 0;
  let pending = new Uint8Array(size);
  let filled = 0;
  const send = async (data: Uint8Array, last: boolean) => {
    const res = await client.writeFile(
      {
        target: { namespace: t.namespace, run: t.run },
        path,
        uploadId,
        offset: BigInt(offset),
        data,
        mode: o.mode,
        fileMode: o.fileMode ?? 0,
        last,
        parents: o.parents,
      },
      auth(t),
    );
    offset += data.byteLength;
    return res;
  };
  for await (const piece of source) {
    let at = 0;
    while (at < piece.byteLength) {
      if (filled === size) {
        await send(pending, false);
        pending = new Uint8Array(size);
        filled = 0;
      }
      const n = Math.min(piece.byteLength - at, size - filled);
      pending.set(piece.subarray(at, at + n), filled);
      filled += n;
      at += n;
    }
  }
  return (await send(pending.subarray(0, filled), true)).info;
}

/** Streams `path` into `write` chunk by chunk; resolves with the file's info. */
export async function download(
  client: SessionClient,
  t: SessionCallTarget,
  path: string,
  write: (chunk: Uint8Array) => void | Promise<void>,
): Promise<FileInfo | undefined> {
  let info: FileInfo | undefined;
  for await (const c of client.readFile({ target: { namespace: t.namespace, run: t.run }, path }, auth(t))) {
    if (c.info) info = c.info;
    if (c.data.byteLength > 0) await write(c.data);
  }
  return info;
}

/** Every entry of a directory, page by page (`limit` per page, 0 = the server's default). */
export async function* listAll(
  client: SessionClient,
  t: SessionCallTarget,
  path: string,
  limit = 0,
): AsyncGenerator<FileInfo> {
  let pageToken = "";
  do {
    const page = await client.listFiles(
      { target: { namespace: t.namespace, run: t.run }, path, limit, pageToken },
      auth(t),
    );
    yield* page.entries;
    pageToken = page.nextPageToken;
  } while (pageToken);
}

export async function stat(
  client: SessionClient,
  t: SessionCallTarget,
  path: string,
): Promise<FileInfo | undefined> {
  return (await client.stat({ target: { namespace: t.namespace, run: t.run }, path }, auth(t))).info;
}

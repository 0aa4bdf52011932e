/**
 * The S3-compatible driver on Bun's built-in client (`Bun.S3Client`): multipart uploads through
 * `file.writer({ partSize })` for anything over one part, streamed downloads, and prefix deletes
 * by listing. Bun addresses buckets path-style unless `virtualHostedStyle` is set, and then expects
 * the bucket already in the endpoint's host name; so `pathStyle: false` (the API default, what AWS
 * wants) is done here by putting the bucket into the host: `https://<bucket>.<endpoint host>`, or
 * `https://<bucket>.s3.<region>.amazonaws.com` without an endpoint.
 */
import { ArtifactDriver } from "@kruntimes/api";
import type { ArtifactStoreDriver, StoredObject } from "./store.ts";

export interface S3Config {
  bucket: string;
  prefix?: string;
  region?: string;
  endpoint?: string;
  pathStyle?: boolean;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  /** Multipart part size (at least 5 MiB, S3's minimum). */
  partSize?: number;
}

const DEFAULT_PART_SIZE = 8 * 1024 * 1024;
/** Parts uploaded concurrently (Bun's writer `queueSize`). */
const QUEUE = 4;

export function endpointOptions(c: S3Config): { endpoint?: string; virtualHostedStyle?: boolean } {
  if (c.pathStyle) return c.endpoint ? { endpoint: c.endpoint } : {};
  if (!c.endpoint)
    return {
      endpoint: `https://${c.bucket}.s3.${c.region ?? "us-east-1"}.amazonaws.com`,
      virtualHostedStyle: true,
    };
  const u = new URL(c.endpoint);
  u.hostname = `${c.bucket}.${u.hostname}`;
  return { endpoint: u.toString().replace(/\/$/, ""), virtualHostedStyle: true };
}

export class S3Store implements ArtifactStoreDriver {
  readonly driver = ArtifactDriver.S3;
  private readonly client: Bun.S3Client;
  private readonly prefix: string;
  private readonly partSize: number;

  constructor(private readonly c: S3Config) {
    this.client = new Bun.S3Client({
      bucket: c.bucket,
      ...(c.region ? { region: c.region } : {}),
      ...endpointOptions(c),
      ...(c.accessKeyId ? { accessKeyId: c.accessKeyId } : {}),
      ...(c.secretAccessKey ? { secretAccessKey: c.secretAccessKey } : {}),
      ...(c.sessionToken ? { sessionToken: c.sessionToken } : {}),
    });
    this.prefix = c.prefix ? `${c.prefix.replace(/\/+$/, "")}/` : "";
    this.partSize = Math.max(5 * 1024 * 1024, c.partSize ?? DEFAULT_PART_SIZE);
  }

  location(key: string): string {
    return `s3://${this.c.bucket}/${this.prefix}${key}`;
  }

  keyOf(location: string): string | undefined {
    const head = `s3://${this.c.bucket}/${this.prefix}`;
    return location.startsWith(head) ? location.slice(head.length) : undefined;
  }

  async put(key: string, chunks: AsyncIterable<Uint8Array>, contentType: string): Promise<void> {
    let pending = 0;
    let written = 0;
    const w = this.client
      .file(this.prefix + key)
      .writer({ partSize: this.partSize, queueSize: QUEUE, type: contentType, retry: 0 });
    try {
      for await (const chunk of chunks) {
        w.write(chunk);
        pending += chunk.byteLength;
        written += chunk.byteLength;
        // Up to QUEUE parts in flight at once; flush waits for them, bounding memory to QUEUE parts.
        if (pending >= this.partSize * QUEUE) {
          await w.flush();
          pending = 0;
        }
      }
      await w.end();
    } catch (e) {
      await Promise.resolve(w.end(e as Error)).catch(() => undefined);
      throw e;
    }
    // Bun 1.4's writer can lose the error of a part that failed while more data was still being
    // written (its end() then resolves): only an object of the full size counts as stored.
    const stored = await this.client
      .file(this.prefix + key)
      .stat()
      .catch((e: unknown) => {
        throw Object.assign(new Error(`the store does not have ${key} after the upload: ${e}`), {
          status: 503,
        });
      });
    if (stored.size !== written)
      throw Object.assign(
        new Error(`the store has ${stored.size} of ${written} bytes of ${key} after the upload`),
        {
          status: 503,
        },
      );
  }

  async get(key: string): Promise<StoredObject | undefined> {
    const f = this.client.file(this.prefix + key);
    let size: number;
    try {
      size = (await f.stat()).size;
    } catch (e) {
      if (
        (e as { code?: string }).code === "NoSuchKey" ||
        (e as { code?: string }).code === "ERR_S3_FILE_NOT_FOUND"
      )
        return undefined;
      throw e;
    }
    return { body: f.stream(), size };
  }

  async deletePrefix(prefix: string): Promise<number> {
    let n = 0;
    let token: string | undefined;
    do {
      const page = await this.client.list({
        prefix: this.prefix + prefix,
        maxKeys: 1000,
        ...(token ? { continuationToken: token } : {}),
      });
      for (const o of page.contents ?? []) {
        await this.client.delete(o.key);
        n++;
      }
      token = page.isTruncated ? page.nextContinuationToken : undefined;
    } while (token);
    return n;
  }
}

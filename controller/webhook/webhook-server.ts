/**
 * The admission webhook's HTTPS listener: `POST /validate` takes an admission.k8s.io/v1
 * AdmissionReview and answers it (admission.ts decides). Every controller replica serves it —
 * leader and standby alike, it needs no leadership — so the webhook is as available as the
 * controller Deployment. The certificate is re-read when its files change (a cert-manager renewal
 * rewrites the mounted Secret), checked on every change event and once a minute.
 */
import { type FSWatcher, readFileSync, watch } from "node:fs";
import { createSecureServer, type Http2SecureServer } from "node:http2";
import { dirname } from "node:path";
import type { Logger } from "pino";
import { type AdmissionDeps, type AdmissionRequest, review } from "./admission.ts";

export interface WebhookServerOptions {
  host: string;
  port: number;
  certFile: string;
  keyFile: string;
}

const MAX_BODY_BYTES = 3 * 1024 * 1024;
const RECHECK_MS = 60_000;

export interface WebhookServer {
  readonly port: number;
  close(): Promise<void>;
}

function readPair(o: WebhookServerOptions): { cert: Buffer; key: Buffer } {
  return { cert: readFileSync(o.certFile), key: readFileSync(o.keyFile) };
}

export async function serveWebhook(
  o: WebhookServerOptions,
  deps: AdmissionDeps,
  log: Logger,
): Promise<WebhookServer> {
  let pair = readPair(o);
  // http2 (HTTP/1.1 allowed): its secure server can swap the certificate in place.
  const server: Http2SecureServer = createSecureServer({ ...pair, allowHTTP1: true }, (req, res) => {
    const reply = (code: number, body: unknown) => {
      res.writeHead(code, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method !== "POST" || req.url?.split("?")[0] !== "/validate") {
      reply(404, { message: "POST /validate with an AdmissionReview" });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on("end", () => {
      void (async () => {
        if (size > MAX_BODY_BYTES) return reply(413, { message: "AdmissionReview too large" });
        let ar: { apiVersion?: string; kind?: string; request?: AdmissionRequest };
        try {
          ar = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          return reply(400, { message: "the body is not JSON" });
        }
        if (!ar.request?.uid) return reply(400, { message: "not an AdmissionReview with a request" });
        const t0 = performance.now();
        const response = await review(ar.request, deps);
        log.info(
          {
            uid: ar.request.uid,
            resource: ar.request.resource?.resource,
            operation: ar.request.operation,
            namespace: ar.request.namespace,
            user: ar.request.userInfo?.username,
            allowed: response.allowed,
            ms: Math.round((performance.now() - t0) * 10) / 10,
          },
          response.allowed ? "admitted" : `refused: ${response.status?.message}`,
        );
        reply(200, { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response });
      })();
    });
  });

  // Kept-alive connections (the apiserver's, HTTP/2 or 1.1) would hold close() open.
  const sockets = new Set<{ destroy(): void }>();
  server.on("secureConnection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  const fingerprint = (p: { cert: Buffer; key: Buffer }) =>
    new Bun.CryptoHasher("sha256").update(p.cert).update(p.key).digest("hex");
  let seen = fingerprint(pair);
  const check = () => {
    try {
      const next = readPair(o);
      const f = fingerprint(next);
      if (f === seen) return;
      server.setSecureContext(next);
      pair = next;
      seen = f;
      log.info({ cert: o.certFile }, "webhook certificate reloaded");
    } catch (e) {
      log.warn({ err: e }, "reading the webhook certificate failed; keeping the old one");
    }
  };
  const watchers: FSWatcher[] = [];
  for (const dir of new Set([dirname(o.certFile), dirname(o.keyFile)])) {
    try {
      watchers.push(watch(dir, { persistent: false }, () => setTimeout(check, 200).unref()));
    } catch (e) {
      log.warn({ err: e, dir }, "cannot watch the webhook certificate's directory; checking every minute");
    }
  }
  const interval = setInterval(check, RECHECK_MS);
  interval.unref();

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : o.port;
  log.info({ host: o.host, port }, "admission webhook listening (https)");
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(interval);
        for (const w of watchers) w.close();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

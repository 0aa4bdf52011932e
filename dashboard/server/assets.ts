/**
 * The web UI's files, held in memory: bundled from dashboard/web at start with Bun's bundler
 * (index.html is the entry point; scripts and styles come out content-hashed), or read from a
 * directory built ahead of time (`bun dashboard/build.ts`, what the image ships).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

export interface Asset {
  body: Uint8Array;
  type: string;
  /** Content-hashed names never change: cache them for a year; index.html never. */
  immutable: boolean;
}

export type Assets = Map<string, Asset>;

export const WEB_ENTRY = join(import.meta.dir, "..", "web", "index.html");

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  map: "application/json",
};

const typeOf = (name: string) => TYPES[name.split(".").pop() ?? ""] ?? "application/octet-stream";

/** Bundles the UI; `minify` off keeps tests' stack traces readable. */
export async function buildWeb(minify = true): Promise<Bun.BuildOutput> {
  const out = await Bun.build({
    entrypoints: [WEB_ENTRY],
    target: "browser",
    minify,
    // The run detail (chart, YAML) and the Runtimes view load when first opened.
    splitting: true,
    // Absolute asset URLs: index.html is served for every deep link (/ns/x/runs/y).
    publicPath: "/",
    naming: { entry: "[name].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!out.success) throw new AggregateError(out.logs, "bundling dashboard/web failed");
  return out;
}

export async function bundledAssets(): Promise<Assets> {
  const out = await buildWeb();
  const assets: Assets = new Map();
  for (const o of out.outputs) {
    const name = o.path.replace(/^\.\//, "");
    assets.set(`/${name}`, {
      body: new Uint8Array(await o.arrayBuffer()),
      type: typeOf(name),
      immutable: name !== "index.html",
    });
  }
  return assets;
}

export function assetsFromDir(dir: string): Assets {
  const assets: Assets = new Map();
  const walk = (d: string) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else {
        const name = relative(dir, p);
        assets.set(`/${name}`, {
          body: readFileSync(p),
          type: typeOf(name),
          immutable: name !== "index.html",
        });
      }
    }
  };
  walk(dir);
  if (!assets.has("/index.html"))
    throw new Error(`${dir} has no index.html; build it with \`bun dashboard/build.ts ${dir}\``);
  return assets;
}

const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

/** A file, or index.html for every other path (deep links are the UI's own routes). */
export function serveAsset(assets: Assets, pathname: string): Response {
  const a = assets.get(pathname) ?? (pathname.includes(".") ? undefined : assets.get("/index.html"));
  if (!a) return new Response("not found", { status: 404 });
  return new Response(a.body, {
    headers: {
      "content-type": a.type,
      "cache-control": a.immutable ? "public, max-age=31536000, immutable" : "no-cache",
      ...SECURITY_HEADERS,
    },
  });
}

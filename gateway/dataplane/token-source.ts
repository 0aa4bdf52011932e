/**
 * The gateway's own token for runtimed's dataplane port: a projected ServiceAccount token (audience
 * `kruntimes-dataplane`) the kubelet rotates in place. Re-read when the file changes, checked at
 * most once a second; never logged.
 */
import { readFileSync, statSync } from "node:fs";

export class TokenSource {
  private cached?: { mtimeMs: number; header: string | undefined };
  private checkedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly file: string,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** `Bearer <token>`, or undefined when the file is missing or empty. */
  header(): string | undefined {
    const t = this.now();
    if (this.cached && t - this.checkedAt < 1000) return this.cached.header;
    this.checkedAt = t;
    let mtimeMs: number;
    try {
      mtimeMs = statSync(this.file).mtimeMs;
    } catch {
      this.cached = undefined;
      return undefined;
    }
    if (this.cached?.mtimeMs !== mtimeMs) {
      const token = readFileSync(this.file, "utf8").trim();
      this.cached = { mtimeMs, header: token ? `Bearer ${token}` : undefined };
    }
    return this.cached.header;
  }
}

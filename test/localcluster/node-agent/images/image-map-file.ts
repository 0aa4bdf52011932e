/**
 * The image map file, re-read when it changes: adding an entry to images.yaml takes effect for
 * the next container start without restarting the agent. A broken edit keeps the last good map
 * (and is reported once per change).
 */
import { statSync } from "node:fs";
import { ImageMap } from "./image-map.ts";

export class ImageMapFile {
  private map: ImageMap;
  private mtimeMs: number;

  constructor(
    readonly file: string,
    readonly repoRoot: string,
    private readonly onError: (err: unknown) => void,
  ) {
    this.map = ImageMap.load(file, repoRoot);
    this.mtimeMs = statSync(file).mtimeMs;
  }

  current(): ImageMap {
    try {
      const m = statSync(this.file).mtimeMs;
      if (m !== this.mtimeMs) {
        this.mtimeMs = m;
        this.map = ImageMap.load(this.file, this.repoRoot);
      }
    } catch (e) {
      this.onError(e);
    }
    return this.map;
  }
}

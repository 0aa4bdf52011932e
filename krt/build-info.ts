/**
 * Version, commit and build time, replaced at compile time by `bun build --define` in
 * krt/build.sh. Running from source (`bun krt/main.ts`) reports `dev`/`unknown`.
 */
declare const KRT_VERSION: string | undefined;
declare const KRT_COMMIT: string | undefined;
declare const KRT_BUILD_TIME: string | undefined;

export interface BuildInfo {
  version: string;
  commit: string;
  buildTime: string;
}

export const buildInfo: BuildInfo = {
  version: typeof KRT_VERSION === "string" ? KRT_VERSION : "dev",
  commit: typeof KRT_COMMIT === "string" ? KRT_COMMIT : "unknown",
  buildTime: typeof KRT_BUILD_TIME === "string" ? KRT_BUILD_TIME : "unknown",
};

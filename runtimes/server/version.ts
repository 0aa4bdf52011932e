/** Version of the Runtime Server program, reported by Info: the runtimes package's version. */
import pkg from "../package.json" with { type: "json" };

export const SERVER_VERSION: string = pkg.version;

/** Version of the Runtime Server program, reported by Info. */
export const SERVER_VERSION = "0.1.0";

/**
 * The socket file's life: a stale file left by a crashed server is removed before listening (a
 * live server on the same path is an error, not something to steal from), the socket is made
 * 0666 because runtimed runs as another user in the same pod, and it is unlinked at shutdown.
 */
import { chmodSync, lstatSync, mkdirSync, unlinkSync } from "node:fs";
import { connect } from "node:net";
import { dirname } from "node:path";

/** True when something accepts connections on the socket. */
function listening(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    const done = (alive: boolean) => {
      socket.destroy();
      resolve(alive);
    };
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    setTimeout(() => done(false), 1000).unref();
  });
}

/** Makes `path` free to listen on, or throws saying why it is not. */
export async function prepareSocketPath(path: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const stat = lstatSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return;
  if (!stat.isSocket()) {
    throw new Error(`${path} exists and is not a socket; remove it or choose another --socket`);
  }
  if (await listening(path)) {
    throw new Error(`another server is listening on ${path}; stop it or choose another --socket`);
  }
  unlinkSync(path);
}

export function openSocketToAll(path: string): void {
  chmodSync(path, 0o666);
}

export function removeSocket(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

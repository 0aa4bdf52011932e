/**
 * Errors of the session service: ConnectErrors with the code the contract names (paths that
 * leave the workspace are PERMISSION_DENIED), and the one table mapping file-system errno codes
 * to Connect codes. Messages name paths as the caller gave them, relative to the workspace.
 */
import { Code, ConnectError } from "@connectrpc/connect";

export function sessionError(code: Code, message: string): ConnectError {
  return new ConnectError(message, code);
}

export function denied(path: string, why: string): ConnectError {
  return new ConnectError(`path ${JSON.stringify(path)} is refused: ${why}`, Code.PermissionDenied);
}

const errnoCodes: Record<string, { code: Code; text: string }> = {
  ENOENT: { code: Code.NotFound, text: "no such file or directory" },
  EEXIST: { code: Code.AlreadyExists, text: "already exists" },
  ENOTDIR: { code: Code.FailedPrecondition, text: "a path component is not a directory" },
  EISDIR: { code: Code.FailedPrecondition, text: "is a directory" },
  ENOTEMPTY: { code: Code.FailedPrecondition, text: "directory not empty" },
  EINVAL: { code: Code.InvalidArgument, text: "invalid operation on this path" },
  EXDEV: { code: Code.FailedPrecondition, text: "crosses a file system boundary" },
  ENAMETOOLONG: { code: Code.InvalidArgument, text: "name too long" },
  ELOOP: { code: Code.FailedPrecondition, text: "too many levels of symbolic links" },
  EACCES: { code: Code.PermissionDenied, text: "permission denied by the file system" },
  EPERM: { code: Code.PermissionDenied, text: "operation not permitted by the file system" },
  EROFS: { code: Code.FailedPrecondition, text: "read-only file system" },
  ENOSPC: { code: Code.ResourceExhausted, text: "no space left on the device" },
  EDQUOT: { code: Code.ResourceExhausted, text: "disk quota exceeded" },
  EMFILE: { code: Code.ResourceExhausted, text: "too many open files" },
  ENFILE: { code: Code.ResourceExhausted, text: "too many open files" },
};

/** A thrown file-system error as a ConnectError about `path`; ConnectErrors pass through. */
export function fsError(error: unknown, path: string): ConnectError {
  if (error instanceof ConnectError) return error;
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  const known = errno === undefined ? undefined : errnoCodes[errno];
  if (known !== undefined) return new ConnectError(`${JSON.stringify(path)}: ${known.text}`, known.code);
  return new ConnectError(
    `${JSON.stringify(path)}: ${error instanceof Error ? error.message : String(error)}`,
    Code.Internal,
  );
}

/** The errno code of a thrown value ("" when it has none). */
export function errnoOf(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? "";
}

import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

// Reads a file a third party may have written (skill files, plugin manifests and modules) without trusting it:
// never through a symlink at the last step, only a regular file, and never more than `maxBytes` (checked while
// reading, so a file that grows after the size check is still refused).

/** The file's bytes, or null when it does not exist. Errors name the file by `label`. */
export function readBoundedFile(path: string, maxBytes: number, label: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ELOOP") throw new Error(`${label} is a symlink; only regular files are read`);
    throw new Error(`cannot read ${label} (${(error as Error).message})`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`${label} is not a regular file`);
    const tooLarge = () => new Error(`${label} is larger than ${sizeText(maxBytes)}`);
    if (stat.size > maxBytes) throw tooLarge();
    const buffer = Buffer.alloc(stat.size + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) throw tooLarge(); // grew past its size: only fine while under the cap
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > maxBytes) throw tooLarge();
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

function sizeText(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / 1048576)} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

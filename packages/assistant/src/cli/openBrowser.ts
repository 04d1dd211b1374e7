import { spawn } from "node:child_process";

// Opens a URL in the default browser through the platform's opener, or says why it cannot: `assistant open`
// then prints the URL instead. The opener gets the URL and nothing else.

/** How long an opener may run before it counts as launched (some stay in the foreground with the browser). */
const LAUNCH_WAIT_MS = 5_000;

export type BrowserOpen = { opened: true } | { opened: false; reason: string };

interface Opener {
  command: string;
  args: string[];
}

function openerFor(platform: NodeJS.Platform, url: string): Opener {
  if (platform === "darwin") return { command: "open", args: [url] };
  // `start` is a cmd built-in; its first quoted argument is a window title, hence the empty one.
  if (platform === "win32") return { command: "cmd", args: ["/c", "start", '""', url] };
  return { command: "xdg-open", args: [url] };
}

const overSsh = (env: NodeJS.ProcessEnv) => Boolean(env.SSH_CONNECTION || env.SSH_CLIENT || env.SSH_TTY);

/** Why no browser can show up on this user's screen, or undefined when one may. */
function noDisplay(platform: NodeJS.Platform, env: NodeJS.ProcessEnv): string | undefined {
  if (platform === "win32") return undefined;
  if (platform === "darwin") {
    return overSsh(env) ? "this is an SSH session: a browser would open on the remote Mac, not here" : undefined;
  }
  if (env.DISPLAY || env.WAYLAND_DISPLAY) return undefined;
  return overSsh(env)
    ? "this is an SSH session without a display (DISPLAY and WAYLAND_DISPLAY are unset)"
    : "there is no display (DISPLAY and WAYLAND_DISPLAY are unset)";
}

export async function openBrowser(
  url: string,
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): Promise<BrowserOpen> {
  const why = noDisplay(platform, env);
  if (why) return { opened: false, reason: why };
  const { command, args } = openerFor(platform, url);
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      env,
      stdio: "ignore",
      detached: platform !== "win32",
      windowsVerbatimArguments: platform === "win32",
    });
    const timer = setTimeout(() => {
      child.unref();
      resolve({ opened: true });
    }, LAUNCH_WAIT_MS);
    child.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const reason =
        error.code === "ENOENT"
          ? `no browser opener found (\`${command}\` is not on PATH)`
          : `\`${command}\` could not be started (${error.message})`;
      resolve({ opened: false, reason });
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ opened: true });
      else
        resolve({ opened: false, reason: `\`${command}\` failed (${signal ? `signal ${signal}` : `exit ${code}`})` });
    });
  });
}

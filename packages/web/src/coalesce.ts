// Reloads asked for while one runs collapse into one more run after it: a burst of live events (a busy session
// emits hundreds) costs each view at most two requests, never one per event (Chromium refuses requests past a
// few hundred pending: net::ERR_INSUFFICIENT_RESOURCES).

export function coalesce(run: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  const start = (): Promise<void> => {
    running = (async () => {
      try {
        do {
          again = false;
          await run();
        } while (again);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  return () => {
    if (running) {
      again = true;
      return running;
    }
    return start();
  };
}

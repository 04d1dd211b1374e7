/** Exit codes of `assistant-daemon`, read by the supervisor to decide whether a restart can help. */
export const EXIT_OK = 0;
export const EXIT_CRASH = 1;
/** Startup refused for a reason a restart cannot fix (invalid config, port in use, already running): EX_CONFIG. */
export const EXIT_CONFIG = 78;
/** The daemon stopped to be started again (`/restart`): the supervisor restarts it at once, without backoff. */
export const EXIT_RESTART = 75;

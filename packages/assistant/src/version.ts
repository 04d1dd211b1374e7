/** The release this build is. */
export const VERSION = "0.10.0";

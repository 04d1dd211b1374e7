/** The release this build is (SPEC.md Versioning). */
export const VERSION = "0.10.0";

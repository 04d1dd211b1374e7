// `validateConfigFiles` lives with the registry in configFiles.ts; this entry point is what the daemon start-up and
// `assistant config validate` import.
export { type ConfigFileReport, type ConfigFileStatus, validateConfigFiles } from "./configFiles.ts";

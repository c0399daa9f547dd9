const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Parses `ASK_AMBIENT_CREDENTIALS_PROJECTS`: project ids (UUIDs), separated by commas or whitespace,
 * lower-cased. Unset or empty: no project (the default).
 * @throws Error naming the first entry that is not a project id (`*` included: there is no wildcard).
 */
export function parseAmbientCredentialsProjects(value: string | undefined): readonly string[] {
  const entries = (value ?? '')
    .split(/[\s,]+/)
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== '');
  for (const entry of entries) {
    if (!UUID.test(entry))
      throw new Error(`"${entry.slice(0, 60)}" is not a project id (a UUID); there is no wildcard`);
  }
  return Object.freeze([...new Set(entries)]);
}

/**
 * True when the operator lets `projectId` use the process's own cloud credentials (Google Application
 * Default Credentials, the AWS default credential chain) while it stores none: its id is listed in
 * `ASK_AMBIENT_CREDENTIALS_PROJECTS`. No project setting, and so no project key, can make this true.
 */
export function ambientCredentialsAllowed(
  config: { readonly ASK_AMBIENT_CREDENTIALS_PROJECTS: readonly string[] },
  projectId: string,
): boolean {
  return config.ASK_AMBIENT_CREDENTIALS_PROJECTS.includes(projectId.toLowerCase());
}

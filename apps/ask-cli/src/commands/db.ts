import { loadConfig } from '@ask/config';
import { CredentialsCipher, createDataSource, ProjectsRepository } from '@ask/persistence';
import type { DataSource } from 'typeorm';

/** Opens the configured database for one CLI command and closes it afterwards. */
export async function withDatabase<T>(fn: (ds: DataSource, projects: ProjectsRepository) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const ds = createDataSource(config, { applicationName: 'ask-cli', poolSize: 4 });
  await ds.initialize();
  try {
    return await fn(ds, new ProjectsRepository(ds, new CredentialsCipher(config.ASK_ENCRYPTION_KEY)));
  } finally {
    await ds.destroy();
  }
}

import type { Command } from 'commander';
import { ApiKeysRepository } from '@ask/persistence';
import { withDatabase } from './db';

/**
 * `ask key create|list|revoke`: a project's API keys, written to the database directly (like `project
 * create`), so a project made with the CLI gets a key without the admin key. `create` prints the key
 * alone on stdout (it is shown once; only its SHA-256 is stored), so `$(npm run -s ask -- key create …)`
 * captures it.
 */
export function registerKeyCommands(program: Command): void {
  const key = program
    .command('key')
    .description("create, list and revoke a project's API keys (writes the database directly)");

  key
    .command('create')
    .description('create an API key for a project and print it (shown once)')
    .requiredOption('--project <id>', 'project id')
    .option('--name <name>', 'a name for the key', 'cli')
    .action(async (flags: { project: string; name: string }) => {
      const created = await withDatabase(async (ds, projects) => {
        if (!(await projects.findById(flags.project))) throw new Error(`project ${flags.project} not found`);
        return new ApiKeysRepository(ds).create(flags.project, flags.name);
      });
      console.error(`key ${created.id} (${created.prefix}) created for project ${flags.project}; it is shown once:`);
      console.log(created.key);
    });

  key
    .command('list')
    .description("list a project's keys (ids, prefixes, names, created and revoked times; never the key)")
    .requiredOption('--project <id>', 'project id')
    .action(async (flags: { project: string }) => {
      console.log(JSON.stringify(await withDatabase((ds) => new ApiKeysRepository(ds).list(flags.project)), null, 2));
    });

  key
    .command('revoke <keyId>')
    .description('revoke a key at once')
    .requiredOption('--project <id>', 'project id')
    .action(async (keyId: string, flags: { project: string }) => {
      if (!(await withDatabase((ds) => new ApiKeysRepository(ds).revoke(flags.project, keyId))))
        throw new Error(`key ${keyId} of project ${flags.project} not found`);
      console.log(`revoked ${keyId}`);
    });
}

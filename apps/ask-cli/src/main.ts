import 'reflect-metadata';
import { Command } from 'commander';
import { closeSemanticEmbeddingPools } from '@ask/llm-providers';
import { registerDemoCommand } from './commands/demo.command';
import { registerEvalCommand } from './commands/eval.command';
import { registerIngestCommands } from './commands/ingest.command';
import { registerKeyCommands } from './commands/key.command';
import { registerProjectCommands } from './commands/project.command';
import { registerSessionCommand } from './commands/session.command';
import { registerSessionsCommand } from './commands/sessions.command';
import { registerUsageCommand } from './commands/usage.command';

/** `ask`: the Ask service's command line (projects, ingestion, sessions, the end-to-end demo). */
const program = new Command('ask').description('The Ask service command line').showHelpAfterError();
registerProjectCommands(program);
registerKeyCommands(program);
registerIngestCommands(program);
registerSessionCommand(program);
registerSessionsCommand(program);
registerUsageCommand(program);
registerDemoCommand(program);
registerEvalCommand(program);

program
  .parseAsync(process.argv)
  // A semantic ingest's embedding threads end with the command, so the CLI exits when it is done.
  .then(() => closeSemanticEmbeddingPools())
  .catch((err: unknown) => {
    console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });

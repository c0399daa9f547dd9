import type { Command } from 'commander';
import {
  LOCAL_SEMANTIC_DIMENSIONS,
  LOCAL_SEMANTIC_MODEL,
  type EmbeddingProviderId,
  type EmbeddingSettings,
  type LlmSettings,
} from '@ask/llm-providers';
import type { ProviderId } from '@ask/model-catalog';
import type { ProjectSettingsInput } from '@ask/persistence';
import { withDatabase } from './db';

/** Dimensions of the embedded `local` embedder (libs/llm-providers/src/local). */
const LOCAL_EMBEDDING_DIMENSIONS = 256;

interface ProjectFlags {
  name?: string;
  llmProvider?: string;
  llmModel?: string;
  llmBaseUrl?: string;
  contextWindow?: string;
  maxContextTokens?: string;
  embeddingProvider?: string;
  embeddingModel?: string;
  dimensions?: string;
  topK?: string;
  maxTokens?: string;
  systemPrompt?: string;
  maxHistoryMessages?: string;
  /** commander sets these to false for `--no-llm` / `--no-embedding`. */
  llm?: boolean;
  embedding?: boolean;
}

/** `ask project create|show|update`: manage projects and their settings from the shell. */
export function registerProjectCommands(program: Command): void {
  const project = program.command('project').description('create, show and update projects');
  const withSettings = (cmd: Command) =>
    cmd
      .option('--llm-provider <id>', 'local | openai | azure-foundry | anthropic | bedrock | vertex | ollama')
      .option('--llm-model <model>', 'model id or deployment name')
      .option('--llm-base-url <url>', 'custom base URL (OpenAI-compatible gateways, Ollama host)')
      .option('--context-window <tokens>', 'override of the catalog context window')
      .option('--max-context-tokens <tokens>', 'lower cap on the window (cost control)')
      .option(
        '--embedding-provider <id>',
        'local | local-semantic | openai | azure-foundry | bedrock | vertex | ollama',
      )
      .option('--embedding-model <model>', 'embedding model id')
      .option('--dimensions <n>', 'embedding dimensions')
      .option('--top-k <n>', 'items retrieved per ask')
      .option('--max-tokens <n>', 'tokens reserved for the answer')
      .option('--system-prompt <text>', 'system prompt')
      .option('--max-history-messages <n>', 'extra cap on history messages per ask')
      .option('--no-llm', 'remove the LLM provider (asks then answer 412 llm_not_configured)')
      .option('--no-embedding', 'remove the embedding provider');

  withSettings(
    project
      .command('create')
      .requiredOption('--name <name>', 'project name')
      .option('--id-only', "print only the new project's id (for $(…) in a shell)"),
  ).action(async (flags: ProjectFlags & { idOnly?: boolean }) => {
    const created = await withDatabase((_, projects) =>
      projects.create({ ...toSettings(flags, true), name: flags.name ?? '' }),
    );
    console.log(flags.idOnly ? created.id : JSON.stringify(created, null, 2));
  });

  project.command('show <projectId>').action(async (projectId: string) => {
    const found = await withDatabase((_, projects) => projects.findById(projectId));
    if (!found) throw new Error(`project ${projectId} not found`);
    console.log(JSON.stringify(found, null, 2));
  });

  withSettings(project.command('update <projectId>').option('--name <name>', 'project name')).action(
    async (projectId: string, flags: ProjectFlags) => {
      const updated = await withDatabase((_, projects) =>
        projects.updateSettings(projectId, { ...toSettings(flags, false), name: flags.name }),
      );
      if (!updated) throw new Error(`project ${projectId} not found`);
      console.log(JSON.stringify(updated, null, 2));
    },
  );
}

/** Settings from flags; on create, unset providers default to the embedded `local` ones. */
export function toSettings(flags: ProjectFlags, creating: boolean): ProjectSettingsInput {
  const int = (v: string | undefined) => (v === undefined ? undefined : Number.parseInt(v, 10));
  let llmSettings: LlmSettings | null | undefined;
  if (flags.llm === false) llmSettings = null;
  else if (flags.llmProvider || flags.llmModel || creating) {
    llmSettings = {
      provider: (flags.llmProvider ?? 'local') as ProviderId,
      model: flags.llmModel ?? 'local',
      ...(flags.llmBaseUrl ? { baseUrl: flags.llmBaseUrl } : {}),
      ...(flags.contextWindow ? { contextWindow: int(flags.contextWindow) } : {}),
      ...(flags.maxContextTokens ? { maxContextTokens: int(flags.maxContextTokens) } : {}),
    };
  }
  let embeddingSettings: EmbeddingSettings | null | undefined;
  if (flags.embedding === false) embeddingSettings = null;
  else if (flags.embeddingProvider || flags.embeddingModel || creating) {
    const provider = (flags.embeddingProvider ?? 'local') as EmbeddingProviderId;
    const semantic = provider === 'local-semantic';
    embeddingSettings = {
      provider,
      model: flags.embeddingModel ?? (semantic ? LOCAL_SEMANTIC_MODEL : 'local-lexical-v1'),
      dimensions: int(flags.dimensions) ?? (semantic ? LOCAL_SEMANTIC_DIMENSIONS : LOCAL_EMBEDDING_DIMENSIONS),
    };
  }
  return {
    llmSettings,
    embeddingSettings,
    topK: int(flags.topK),
    maxTokens: int(flags.maxTokens),
    systemPrompt: flags.systemPrompt,
    maxHistoryMessages: int(flags.maxHistoryMessages),
  };
}

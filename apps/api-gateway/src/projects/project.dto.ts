import { Type } from 'class-transformer';
import {
  LOW_RELEVANCE_POLICIES,
  type LowRelevancePolicy,
  MEMORY_MODES,
  type MemoryMode,
  RETRIEVAL_METHODS,
  TEXT_SEARCH_CONFIGS,
  type RetrievalMethod,
  type TextSearchConfig,
} from '@ask/ask-contracts';
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';

const LLM_PROVIDERS = ['local', 'openai', 'azure-foundry', 'anthropic', 'bedrock', 'vertex', 'ollama'] as const;
const EMBEDDING_PROVIDERS = [
  'local',
  'local-semantic',
  'openai',
  'azure-foundry',
  'bedrock',
  'vertex',
  'ollama',
] as const;

/** Limits on project settings (tokens unless named). */
export const LIMITS = {
  topK: { min: 1, max: 50 },
  maxTokens: { min: 16, max: 128_000 },
  systemPromptChars: 8_000,
  maxHistoryMessages: { min: 2, max: 1_000 },
  /** A pair's summary length budget (conversation memory), tokens. */
  summaryMaxTokens: { min: 16, max: 1_024 },
  window: { min: 1_024, max: 10_000_000 },
  dimensions: { min: 8, max: 4_096 },
} as const;

/**
 * A provider region (Bedrock) or location (Vertex): one DNS label, because the adapters splice it into
 * the host (`bedrock-runtime.{region}.amazonaws.com`, `https://{region}-aiplatform.googleapis.com`);
 * `attacker.example/x?` would otherwise aim the provider's credentials at another host.
 */
const LOCATION_ID = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const LOCATION_ID_MESSAGE =
  '$property must be a location id like us-central1 or us-east-1 (letters, digits and inner hyphens)';

/**
 * A model id or deployment name: no control character (C0, DEL, C1: a newline would split a log line
 * or a header), no line or paragraph separator, and no invisible format or bidirectional control
 * (U+200B–U+200F, U+202A–U+202E, U+2060, U+2066–U+2069, U+FEFF: `gpt-4o\u202E…` displays as another
 * id than the one called and stored).
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point: they are refused.
const MODEL_ID = /^[^\u0000-\u001F\u007F-\u009F\u200B-\u200F\u2028-\u202E\u2060\u2066-\u2069\uFEFF]*$/;
const MODEL_ID_MESSAGE = '$property must not contain control, invisible or bidirectional characters';

/**
 * An API version (Azure OpenAI's `api-version` query parameter): a date, optionally `-preview`
 * (`2024-10-21`, `2025-04-01-preview`), `v1`-like, or `latest` / `preview`. It goes into the URL's
 * query, so `2024-10-21&x=1#` (an extra parameter, a fragment cutting the rest) is refused.
 */
const API_VERSION = /^(?:\d{4}-\d{2}-\d{2}(?:-preview)?|v\d{1,3}(?:\.\d{1,3})?(?:alpha|beta)?\d{0,3}|latest|preview)$/;
const API_VERSION_MESSAGE = '$property must be an API version like 2024-10-21, 2025-04-01-preview or v1';

/** A project's embedding provider settings. */
export class EmbeddingSettingsDto {
  @IsIn(EMBEDDING_PROVIDERS)
  provider!: (typeof EMBEDDING_PROVIDERS)[number];

  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  @Matches(MODEL_ID, { message: MODEL_ID_MESSAGE })
  model!: string;

  // Checked from the bottom up (stopAtFirstError): a missing value is reported as missing, not as
  // over the maximum.
  @Max(LIMITS.dimensions.max)
  @Min(LIMITS.dimensions.min)
  @IsInt()
  @IsDefined({ message: '$property is required: the embedding vector size (e.g. 256 for local-lexical-v1)' })
  dimensions!: number;

  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  baseUrl?: string;

  @IsOptional() @IsString() @MaxLength(100) @Matches(LOCATION_ID, { message: LOCATION_ID_MESSAGE }) region?: string;
  @IsOptional() @IsString() @MaxLength(200) gcpProject?: string;
  @IsOptional()
  @IsString()
  @MaxLength(50)
  @Matches(API_VERSION, { message: API_VERSION_MESSAGE })
  apiVersion?: string;
  /** Embed knowledge in languages the model does not cover (default false: refused with a 400). */
  @IsOptional() @IsBoolean() allowOtherLanguages?: boolean;
}

/** A project's LLM provider settings. */
export class LlmSettingsDto {
  @IsIn(LLM_PROVIDERS)
  provider!: (typeof LLM_PROVIDERS)[number];

  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  @Matches(MODEL_ID, { message: MODEL_ID_MESSAGE })
  model!: string;

  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  baseUrl?: string;

  @IsOptional() @IsInt() @Min(LIMITS.window.min) @Max(LIMITS.window.max) contextWindow?: number;
  @IsOptional() @IsInt() @Min(LIMITS.window.min) @Max(LIMITS.window.max) maxContextTokens?: number;
  @IsOptional() @IsInt() @Min(LIMITS.maxTokens.min) @Max(LIMITS.maxTokens.max) maxTokens?: number;
  @IsOptional() @IsInt() @Min(256) @Max(LIMITS.window.max) numCtx?: number;
  @IsOptional() @IsString() @MaxLength(100) @Matches(LOCATION_ID, { message: LOCATION_ID_MESSAGE }) region?: string;
  @IsOptional() @IsString() @MaxLength(200) gcpProject?: string;
  @IsOptional()
  @IsString()
  @MaxLength(50)
  @Matches(API_VERSION, { message: API_VERSION_MESSAGE })
  apiVersion?: string;
}

/** How the project's items are ranked (see docs/API.md, "Retrieval"). */
export class RetrievalSettingsDto {
  @IsOptional() @IsIn(RETRIEVAL_METHODS) method?: RetrievalMethod;
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(10) vectorWeight?: number;
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(10) fulltextWeight?: number;
  @IsOptional() @IsIn(TEXT_SEARCH_CONFIGS) textSearchConfig?: TextSearchConfig;
  @IsOptional() @IsIn(LOW_RELEVANCE_POLICIES) lowRelevance?: LowRelevancePolicy;
}

/** Conversation memory (see docs/API.md, "Conversation memory"). */
export class MemorySettingsDto {
  @IsOptional() @IsIn(MEMORY_MODES) mode?: MemoryMode;
  /** A model of the project's provider, or `extractive` (the built-in extractive summariser). */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  @Matches(MODEL_ID, { message: MODEL_ID_MESSAGE })
  summaryModel?: string;
  @IsOptional() @IsInt() @Min(LIMITS.summaryMaxTokens.min) @Max(LIMITS.summaryMaxTokens.max) summaryMaxTokens?: number;
}

/** Provider secrets: write-only, encrypted at rest, never returned. */
export class CredentialsDto {
  @IsOptional() @IsString() @MaxLength(4_000) apiKey?: string;
  @IsOptional() @IsString() @MaxLength(200) awsAccessKeyId?: string;
  @IsOptional() @IsString() @MaxLength(400) awsSecretAccessKey?: string;
  @IsOptional() @IsString() @MaxLength(4_000) awsSessionToken?: string;
  @IsOptional() @IsString() @MaxLength(4_000) gcpAccessToken?: string;
  @IsOptional() @IsString() @MaxLength(20_000) gcpServiceAccountJson?: string;
}

/** Settings shared by create and update; every field optional on update. */
export class ProjectSettingsDto {
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => EmbeddingSettingsDto)
  embedding?: EmbeddingSettingsDto | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => LlmSettingsDto)
  llm?: LlmSettingsDto | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => RetrievalSettingsDto)
  retrieval?: RetrievalSettingsDto | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => MemorySettingsDto)
  memory?: MemorySettingsDto | null;

  @IsOptional() @IsInt() @Min(LIMITS.topK.min) @Max(LIMITS.topK.max) topK?: number;
  @IsOptional() @IsInt() @Min(LIMITS.maxTokens.min) @Max(LIMITS.maxTokens.max) maxTokens?: number;
  @IsOptional() @IsString() @MaxLength(LIMITS.systemPromptChars) systemPrompt?: string;

  @IsOptional()
  @IsInt()
  @Min(LIMITS.maxHistoryMessages.min)
  @Max(LIMITS.maxHistoryMessages.max)
  maxHistoryMessages?: number | null;

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => CredentialsDto)
  credentials?: CredentialsDto;
}

/** Body of `POST /api/v1/projects`. */
export class CreateProjectDto extends ProjectSettingsDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name!: string;
}

/** Body of `PATCH /api/v1/projects/:projectId`. */
export class UpdateProjectDto extends ProjectSettingsDto {
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name?: string;
}

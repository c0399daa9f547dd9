import type { ModelRef, TokenizerFamily } from '@ask/model-catalog';
import { localTokenizerCounter } from './local-tokenizer-counter';
import { isLocalTokenizerInstalled } from './local-tokenizers';
import { identifyOpenFamily, normalizeForFamily } from './open-family';
import { ScriptAwareCounter } from './script-aware-counter';
import { TiktokenCounter } from './tiktoken-counter';
import type { TokenCounter } from './token-counter';

/** A remote endpoint that counts the assembled request exactly before it is sent. */
export type RemoteTokenCount = 'anthropic-count-tokens' | 'vertex-count-tokens';

/** The counter the planner uses for one model, and why. */
export interface CounterChoice {
  /** Local counter used for planning (count, trim, shrink). Synchronous, no network. */
  counter: TokenCounter;
  /**
   * True when the planned request is counted exactly: by `counter` itself (its `exact`), or by
   * `remote` before sending while `counter` only estimates. Decides the safety margin (5% exact, 15%
   * approximate). Named apart from `TokenCounter.exact`, which says only what the counter does.
   */
  exactPlan: boolean;
  /** Set when the provider verifies the assembled request with its own count endpoint. */
  remote?: RemoteTokenCount;
  /** One sentence saying which rule chose this counter (the provider row, or the bundled open-weight tokenizer); for logs and events. */
  reason: string;
}

let approximate: ScriptAwareCounter | undefined;
const tiktoken = new Map<'o200k_base' | 'cl100k_base', TiktokenCounter>();

/** The process-wide script-aware estimate (`approx:script-v1`). */
export function approximateCounter(): ScriptAwareCounter {
  approximate ??= new ScriptAwareCounter();
  return approximate;
}

/** The process-wide tiktoken counter for an encoding (the ranks load on its first count). */
export function tiktokenCounter(encoding: 'o200k_base' | 'cl100k_base' = 'o200k_base'): TiktokenCounter {
  let counter = tiktoken.get(encoding);
  if (!counter) {
    counter = new TiktokenCounter(encoding);
    tiktoken.set(encoding, counter);
  }
  return counter;
}

function approx(reason: string): CounterChoice {
  return { counter: approximateCounter(), exactPlan: false, reason };
}

function openAiTiktoken(tokenizer: TokenizerFamily, reason: string): CounterChoice {
  const encoding = tokenizer === 'cl100k_base' ? 'cl100k_base' : 'o200k_base';
  return { counter: tiktokenCounter(encoding), exactPlan: true, reason: `${reason} (${encoding})` };
}

/**
 * Open-weight family counted exactly where the id identifies a bundled tokenizer, else the
 * approximate counter with the provider row's reason.
 */
function openFamilyOr(ref: ModelRef, tokenizer: TokenizerFamily, ruleReason: string): CounterChoice {
  const match = identifyOpenFamily(ref.model, tokenizer, ref.provider);
  if (match.kind === 'bundled' && !isLocalTokenizerInstalled(match.key))
    return approx(`${ruleReason}; ${match.why}, but its tokenizer package is not installed (Dockerfile TOKENIZERS)`);
  if (match.kind === 'bundled') {
    const counter = localTokenizerCounter(match.key);
    return {
      counter,
      exactPlan: counter.exact,
      reason: `${match.why}: counted with the bundled ${counter.id} tokenizer`,
    };
  }
  if (match.kind === 'none') return approx(ruleReason);
  return approx(`${ruleReason}; ${match.why}`);
}

/** GPT-5 / 4.1 / 4o / o-series deployments on Azure AI Foundry speak the OpenAI wire with a declared encoding. */
function isOpenAiWire(model: string, tokenizer: TokenizerFamily): boolean {
  if (tokenizer === 'o200k_base' || tokenizer === 'cl100k_base') return true;
  return /^(gpt-(5|4\.1|4o|4|35|3\.5)|o[1-9](-|$))/.test(normalizeForFamily(model));
}

/**
 * Picks the token counter for a model: the spec's counter table per provider, upgraded so that open-weight
 * families (Llama 3.x, Qwen, Gemma 3, DeepSeek V3/R1, Mistral, GPT-OSS) are counted exactly with a bundled
 * tokenizer wherever they run, when the model id identifies the family.
 *
 * | provider | choice |
 * | --- | --- |
 * | anthropic | remote `count_tokens`, planned with the approximate counter; exact |
 * | openai, no baseUrl | tiktoken, the model's declared encoding, o200k_base otherwise (unknown models too) |
 * | openai with baseUrl | approximate; exact open-family counter when identified |
 * | azure-foundry, OpenAI-wire (GPT-5/4.1/4o) | tiktoken |
 * | azure-foundry, Claude / Mistral / unknown | approximate; exact open-family counter when identified |
 * | bedrock | approximate; exact open-family counter when identified |
 * | vertex, Gemini | remote `:countTokens`, planned with the local Gemini tokenizer; exact |
 * | vertex, Claude | approximate |
 * | vertex, MaaS Llama / Qwen / DeepSeek / Mistral | exact open-family counter when identified, else approximate |
 * | ollama | exact family counter when the tag identifies it, else approximate |
 * | local | tiktoken o200k_base (our own stand-in model) |
 * | anything else | approximate |
 *
 * @param ref the project's provider, model id and optional baseUrl.
 * @param tokenizer the catalog's tokenizer family for the model (`resolveModel(ref).tokenizer`).
 * Never throws; counters load their tokenizer on first use.
 */
export function selectTokenCounter(ref: ModelRef, tokenizer: TokenizerFamily): CounterChoice {
  const id = normalizeForFamily(ref.model);
  switch (ref.provider) {
    case 'anthropic':
      return {
        counter: approximateCounter(),
        exactPlan: true,
        remote: 'anthropic-count-tokens',
        reason: 'Anthropic direct counts exactly with /v1/messages/count_tokens; planned with the estimate',
      };
    case 'openai':
      if (!ref.baseUrl) return openAiTiktoken(tokenizer, 'OpenAI canonical endpoint uses tiktoken');
      return openFamilyOr(ref, tokenizer, 'OpenAI with a custom base_url has an unknown upstream tokenizer');
    case 'azure-foundry':
      if (isOpenAiWire(ref.model, tokenizer)) {
        return openAiTiktoken(tokenizer, 'Azure AI Foundry OpenAI-wire model uses tiktoken');
      }
      return openFamilyOr(ref, tokenizer, 'Azure AI Foundry Claude / Mistral / unknown deployment');
    case 'bedrock':
      return openFamilyOr(ref, tokenizer, 'Bedrock has no universal token API');
    case 'vertex':
      if ((tokenizer === 'gemini' || id.startsWith('gemini')) && !isLocalTokenizerInstalled('gemini')) {
        return {
          counter: approximateCounter(),
          exactPlan: true,
          remote: 'vertex-count-tokens',
          reason:
            'Vertex Gemini counts exactly with :countTokens; planned with the estimate (the Gemini tokenizer package is not installed: Dockerfile TOKENIZERS)',
        };
      }
      if (tokenizer === 'gemini' || id.startsWith('gemini')) {
        return {
          counter: localTokenizerCounter('gemini'),
          exactPlan: true,
          remote: 'vertex-count-tokens',
          reason: 'Vertex Gemini counts exactly with :countTokens; planned with the local Gemini tokenizer',
        };
      }
      if (tokenizer === 'claude' || id.startsWith('claude')) {
        return approx("Vertex's Anthropic publisher has no count_tokens endpoint");
      }
      return openFamilyOr(ref, tokenizer, 'Vertex MaaS model with no identified tokenizer');
    case 'ollama':
      return openFamilyOr(ref, tokenizer, 'Ollama model whose tag does not identify a bundled tokenizer');
    case 'local':
      return {
        counter: tiktokenCounter('o200k_base'),
        exactPlan: true,
        reason: 'local stand-in model counts with o200k_base',
      };
    default:
      return approx('unknown provider');
  }
}

import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** A context window a provider disclosed for one project's model. */
export interface LearnedWindow {
  provider: string;
  model: string;
  /** Tokens: the limit the provider's overflow answer named. */
  window: number;
  disclosedAt: Date;
}

/**
 * Windows providers disclosed in overflow answers that were smaller than the window planned against
 *, per project and model. Later plans use the smaller one; a change of the project's
 * LLM settings forgets them (the new settings may point at another server).
 */
@Injectable()
export class LearnedWindowsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Stores `window` for the project's model, keeping the smaller of it and any stored one. */
  async remember(projectId: string, provider: string, model: string, window: number): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO learned_windows (project_id, provider, model, window_tokens) VALUES ($1, $2, $3, $4)
       ON CONFLICT (project_id, provider, model) DO UPDATE
         SET window_tokens = LEAST(learned_windows.window_tokens, EXCLUDED.window_tokens),
             disclosed_at = CASE WHEN EXCLUDED.window_tokens < learned_windows.window_tokens THEN now() ELSE learned_windows.disclosed_at END`,
      [projectId, provider, model, Math.floor(window)],
    );
  }

  /** The window remembered for the project's model, or undefined. */
  async find(projectId: string, provider: string, model: string): Promise<LearnedWindow | undefined> {
    const rows = await this.dataSource.query(
      'SELECT provider, model, window_tokens, disclosed_at FROM learned_windows WHERE project_id = $1 AND provider = $2 AND model = $3',
      [projectId, provider, model],
    );
    return rows.length ? toLearned(rows[0]) : undefined;
  }

  /** Every window remembered for the project, by model. */
  async list(projectId: string): Promise<LearnedWindow[]> {
    const rows = await this.dataSource.query(
      'SELECT provider, model, window_tokens, disclosed_at FROM learned_windows WHERE project_id = $1 ORDER BY provider, model',
      [projectId],
    );
    return rows.map(toLearned);
  }

  /** Forgets the project's remembered windows (its LLM settings changed). Returns how many. */
  async forget(projectId: string): Promise<number> {
    const [, affected] = await this.dataSource.query('DELETE FROM learned_windows WHERE project_id = $1', [projectId]);
    return affected;
  }
}

function toLearned(r: { provider: string; model: string; window_tokens: number; disclosed_at: Date }): LearnedWindow {
  return { provider: r.provider, model: r.model, window: r.window_tokens, disclosedAt: r.disclosed_at };
}

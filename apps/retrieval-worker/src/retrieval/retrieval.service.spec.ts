import type { RetrieveJobData, RetrievedItem, SynthesizeJobData } from '@ask/ask-contracts';
import type { AskEventStream } from '@ask/event-stream';
import { loadConfig } from '@ask/config';
import type {
  EmbeddingSpace,
  ProjectsRepository,
  RetrievalRepository,
  SessionsRepository,
  StoredMessage,
} from '@ask/persistence';
import type { AskSynthesisProducer } from './ask-synthesis.producer';
import { RetrievalService } from './retrieval.service';

const job: RetrieveJobData = {
  askId: 'a1',
  projectId: '00000000-0000-4000-8000-000000000001',
  sessionId: 's1',
  question: 'How do HNSW indexes work?',
  acceptedAt: '2026-11-30T00:00:00.000Z',
};

function setup(
  project: unknown,
  items: RetrievedItem[] = [],
  otherSpaces: EmbeddingSpace[] = [],
  stored: Partial<StoredMessage> | null = null,
) {
  const published: Array<{ type: string; data: unknown }> = [];
  const enqueued: SynthesizeJobData[] = [];
  const searches: Array<{
    projectId: string;
    dims: number;
    topK: number;
    model: string;
    question?: string;
    weights?: unknown;
  }> = [];
  const service = new RetrievalService(
    {
      findForAsk: async () => (project ? { project, credentials: null, spaces: otherSpaces } : null),
    } as unknown as ProjectsRepository,
    {
      search: async (projectId: string, vector: number[], topK: number, model: string) => {
        searches.push({ projectId, dims: vector.length, topK, model });
        return items;
      },
      searchHybrid: async (
        projectId: string,
        question: string,
        vector: number[],
        topK: number,
        model: string,
        weights: unknown,
      ) => {
        searches.push({ projectId, dims: vector.length, topK, model, question, weights });
        return items;
      },
    } as unknown as RetrievalRepository,
    {
      publish: async (_: string, type: string, data: unknown) => void published.push({ type, data }),
    } as unknown as AskEventStream,
    { enqueue: async (data: SynthesizeJobData) => void enqueued.push(data) } as unknown as AskSynthesisProducer,
    loadConfig({}),
    { findByAsk: async () => stored } as unknown as SessionsRepository,
  );
  return { service, published, enqueued, searches };
}

describe(RetrievalService.name, () => {
  describe('retrieve', () => {
    it('ends an ask whose answer is stored from that answer: no embedding, no search, no synthesis job', async () => {
      const { service, published, enqueued, searches } = setup(
        { embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 }, topK: 7 },
        [],
        [],
        { id: 'm1', answer: 'Stored.', promptTokens: 10, completionTokens: 2, sources: [] },
      );
      await service.retrieve(job);
      expect([searches, enqueued]).toEqual([[], []]);
      expect(published).toEqual([
        { type: 'reset', data: { attempt: 0, reason: 'answer already stored; resending it' } },
        { type: 'delta', data: { text: 'Stored.' } },
        {
          type: 'done',
          data: { messageId: 'm1', usage: { promptTokens: 10, completionTokens: 2 }, sources: [] },
        },
      ]);
    });

    it('embeds the question locally, searches top-K, emits retrieved and enqueues synthesis with the items', async () => {
      const items: RetrievedItem[] = [
        { id: 'k1', kind: 'knowledge', title: 'HNSW', text: 't', score: 0.812345 },
        { id: 'i1', kind: 'insight', title: 'Latency', text: 't', score: 0.5 },
      ];
      const { service, published, enqueued, searches } = setup(
        {
          embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
          topK: 7,
          retrievalSettings: { method: 'vector' },
        },
        items,
      );
      await service.retrieve(job);
      expect(searches).toEqual([{ projectId: job.projectId, dims: 256, topK: 7, model: 'local/local-lexical-v1' }]);
      expect(published).toEqual([
        {
          type: 'retrieved',
          data: {
            counts: { insight: 1, recommendation: 0, knowledge: 1 },
            top: [
              { kind: 'knowledge', id: 'k1', title: 'HNSW', score: 0.8123 },
              { kind: 'insight', id: 'i1', title: 'Latency', score: 0.5 },
            ],
            method: 'vector',
          },
        },
      ]);
      expect(enqueued).toEqual([{ ...job, items }]);
    });

    it('searches both legs by default (no retrieval settings): hybrid, vector weight 0.5, full-text weight 1', async () => {
      const items: RetrievedItem[] = [
        {
          id: 'k1',
          kind: 'knowledge',
          title: 'HNSW',
          text: 't',
          score: 0.8,
          legs: { fulltext: { rank: 1, score: 0.1 }, fused: 1 / 61 },
        },
      ];
      const { service, published, searches } = setup(
        {
          embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
          topK: 7,
          retrievalSettings: null,
        },
        items,
      );
      await service.retrieve(job);
      expect(searches).toEqual([
        {
          projectId: job.projectId,
          dims: 256,
          topK: 7,
          model: 'local/local-lexical-v1',
          question: job.question,
          weights: { vector: 0.5, fulltext: 1 },
        },
      ]);
      expect((published[0].data as { method: string }).method).toBe('hybrid');
    });

    it('ends the ask with 412 embedding_not_configured when the provider was removed after acceptance', async () => {
      const { service, published, enqueued } = setup({ embeddingSettings: null, topK: 8 });
      await service.retrieve(job);
      expect(published).toEqual([
        { type: 'error', data: expect.objectContaining({ status: 412, code: 'embedding_not_configured' }) },
      ]);
      expect(enqueued).toEqual([]);
    });

    it('ends the ask with 409 embedding_space_changed, without searching, when vectors of another model are stored', async () => {
      const { service, published, enqueued, searches } = setup(
        { embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 }, topK: 8 },
        [],
        [{ model: 'openai/text-embedding-3-small', dimensions: 256 }],
      );
      await service.retrieve(job);
      expect(published).toEqual([
        {
          type: 'error',
          data: {
            status: 409,
            code: 'embedding_space_changed',
            error: "this project's knowledge was embedded with another embedding model",
            details:
              'stored=openai/text-embedding-3-small:256 current=local/local-lexical-v1:256; re-embed the project (POST /api/v1/projects/:projectId/reembed)',
          },
        },
      ]);
      expect([searches, enqueued]).toEqual([[], []]);
    });
  });
});

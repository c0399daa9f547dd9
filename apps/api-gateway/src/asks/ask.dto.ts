import { IsNotEmpty, IsOptional, IsString, IsUUID, MaxLength } from 'class-validator';

/** Longest question accepted, in characters (the token limit is checked against the model's budget). */
export const MAX_QUESTION_CHARS = 8_000;

/** Body of `POST /api/v1/projects/:projectId/ask`. */
export class AskDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_QUESTION_CHARS)
  question!: string;

  /** Continue this session; omit to start a new one. */
  @IsOptional()
  @IsUUID()
  sessionId?: string;
}

/** Answer of `POST …/ask` (202). */
export interface AskAccepted {
  askId: string;
  sessionId: string;
  eventsUrl: string;
}

import { IsOptional, IsString, MaxLength } from 'class-validator';

/** Body of `POST /api/v1/projects/:projectId/keys` (may be empty). */
export class CreateApiKeyDto {
  /** A label for people (`ci`, `dashboard`); at most 200 characters. */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;
}

/** 201 answer: the plaintext `key` appears here once and is never retrievable again. */
export interface CreatedApiKeyBody {
  id: string;
  projectId: string;
  prefix: string;
  name: string | null;
  key: string;
  createdAt: Date;
}

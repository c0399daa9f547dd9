import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';

/** Body of `POST /api/v1/projects/:projectId/keys` (may be empty). */
export class CreateApiKeyDto {
  /** A label for people (`ci`, `dashboard`); 1 to 200 characters (omit it for no label). */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
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
